/**
 * Reads of the shop's coupons as the sync mirrored them, always within one shop. The derived state (active, scheduled,
 * expired, used up, disabled) and the usage count (orders carrying the code) are computed in SQL at the request's
 * instant, never stored, so they cannot go stale between syncs.
 */
import type { Db } from '../db/knex.js';
import type { PageRequest } from '../capabilities/types.js';
import { money } from '../money.js';
import { iso, keysetPage, toPage } from './keyset.js';

export const COUPON_STATES = ['active', 'scheduled', 'expired', 'used_up', 'disabled'] as const;
export type CouponState = (typeof COUPON_STATES)[number];

type CouponRow = Record<string, any> & { id: string; created_at: Date; state: CouponState; uses: number };

/**
 * The shop's coupons with `uses` and `state` at `now` (CC7: disabled, then expired, then scheduled, then used up). The
 * validity end is exclusive. Local times are the validity bounds as the shop's clock shows them.
 */
function couponsAt(db: Db, shopId: string, timeZone: string, now: Date) {
  const uses = db.raw(`(select count(*) from orders o where o.shop_id = c.shop_id and o.coupon_code = c.code and o.created_at <= ?::timestamptz)::int`, [now.toISOString()]);
  const inner = db('coupons as c').where('c.shop_id', shopId).select(
    'c.*',
    db.raw('? as uses', [uses]),
    db.raw(`to_char(c.valid_from at time zone ?, 'YYYY-MM-DD"T"HH24:MI:SS.MS') as valid_from_local`, [timeZone]),
    db.raw(`to_char(c.valid_until at time zone ?, 'YYYY-MM-DD"T"HH24:MI:SS.MS') as valid_until_local`, [timeZone]),
  );
  const at = now.toISOString();
  return db.from(inner.as('x')).select('x.*', db.raw(`case
      when not x.enabled then 'disabled'
      when x.valid_until is not null and ?::timestamptz >= x.valid_until then 'expired'
      when x.valid_from is not null and ?::timestamptz < x.valid_from then 'scheduled'
      when x.usage_limit is not null and x.uses >= x.usage_limit then 'used_up'
      else 'active' end as state`, [at, at]));
}

function toCoupon(row: CouponRow) {
  const currency = row.currency.trim();
  return {
    code: row.code,
    name: row.name,
    discount: {
      type: row.discount_type as 'percent' | 'fixed' | 'free_shipping',
      percent: row.discount_percent === null ? null : Number(row.discount_percent),
      amount: row.discount_amount === null ? null : money(row.discount_amount, currency),
    },
    minOrderWithVat: row.min_order_with_vat === null ? null : money(row.min_order_with_vat, currency),
    validFrom: iso(row.valid_from),
    validUntil: iso(row.valid_until),
    validFromLocal: row.valid_from_local,
    validUntilLocal: row.valid_until_local,
    usage: {
      orders: row.uses,
      limit: row.usage_limit,
      remaining: row.usage_limit === null ? null : Math.max(0, row.usage_limit - row.uses),
      perCustomerLimit: row.per_customer_limit,
    },
    restrictions: { categoryGuids: row.category_guids ?? [], productCodes: row.product_codes ?? [] },
    enabled: row.enabled,
    disabledAt: iso(row.disabled_at),
    state: row.state,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export type Coupon = ReturnType<typeof toCoupon>;

/** A page of the shop's coupons, newest first, optionally only those in one derived state at `now`. */
export async function listCoupons(db: Db, shop: { id: string; timeZone: string }, now: Date, state: CouponState | undefined, page: PageRequest) {
  const q = db.from(couponsAt(db, shop.id, shop.timeZone, now).as('s')).select('*');
  if (state !== undefined) q.where('state', state);
  const rows: CouponRow[] = await keysetPage(q, 'created_at', 'id', page);
  const result = toPage(rows, page, (r) => r.created_at, toCoupon);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/** One coupon of the shop by code at `now`, or null when the service has no record of it. */
export async function getCoupon(db: Db, shop: { id: string; timeZone: string }, code: string, now: Date): Promise<Coupon | null> {
  const row: CouponRow | undefined = await couponsAt(db, shop.id, shop.timeZone, now).where('x.code', code).first();
  return row ? toCoupon(row) : null;
}

/** The shop's platform and web-code status (the coupon-from-link prerequisites of `/stores/integration-status`). */
export async function shopCouponContext(db: Db, shopId: string) {
  const row = await db('shops').where({ id: shopId }).first('platform', 'base_url', 'web_code_installed', 'web_code_version', 'web_code_modules', 'coupon_link_ready');
  return {
    platform: row.platform as string,
    baseUrl: row.base_url as string,
    webCode: { installed: row.web_code_installed as boolean, version: row.web_code_version as string | null, modules: (row.web_code_modules ?? []) as string[] },
    couponFromLinkReady: row.coupon_link_ready as boolean,
  };
}
