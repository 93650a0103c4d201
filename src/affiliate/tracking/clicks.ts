/**
 * Tracked links and the conversion beacon (issue 24 point 1). The redirect `/r/<handle>` on a shop's partner portal
 * records the click (shop, partner, campaign, target, time; the address and user agent only as keyed hashes) and
 * sends the shopper to the target on the shop's own domain with the attribution parameter; the beacon on the shop's
 * thank-you page hands back the order code and the click, and the order is attributed by the existing rule (A3).
 * Neither ever answers the shop with an error it would have to handle: a bad beacon is recorded as unattributed.
 */
import crypto from 'node:crypto';
import type { Db } from '../../db/knex.js';
import { attributeOrders, refreshCommissionStates } from '../attribution.js';
import { knexRunner } from '../sql.js';

/** The query parameter the shop's pages receive after the redirect and pass back in the beacon. */
export const ATTRIBUTION_PARAM = 'aff_click';
/** The first-party cookie of the portal that remembers the visitor for the campaign's window. */
export const VISITOR_COOKIE = 'aff_visitor';
/** Repeats of one address on one link within this window are counted on the first click, not as new clicks. */
export const FLOOD_WINDOW_MS = 10 * 60_000;
/** More repeats than this within the flood window are refused (429) instead of redirected. */
export const FLOOD_LIMIT = 20;

/** A portal's shop, as the request's Host or the development path prefix names it. */
export interface PortalShop {
  shopId: string;
  accountId: string;
  baseUrl: string;
}

/** Finds the shop whose portal answers at `host` (its address, or its custom domain once active); ambiguous → none. */
export async function portalShopByHost(db: Db, host: string): Promise<PortalShop | null> {
  const h = host.toLowerCase().replace(/:\d+$/, '');
  const rows = await db('affiliate_portals as p').join('shops as s', 's.id', 'p.shop_id')
    .where((w) => w.whereRaw(`lower(regexp_replace(p.address, '^[a-z]+://([^/:]+).*$', '\\1')) = ?`, [h])
      .orWhere((c) => c.whereRaw('lower(p.custom_domain) = ?', [h]).where('p.custom_domain_status', 'active')))
    .limit(2).select('s.id', 's.account_id', 's.base_url');
  if (rows.length !== 1) return null;
  return { shopId: String(rows[0].id), accountId: String(rows[0].account_id), baseUrl: rows[0].base_url };
}

/** The development address of a shop's portal: `/portal/<account>/<shop>` on the service itself. */
export async function portalShopByPath(db: Db, accountCode: string, shopCode: string): Promise<PortalShop | null> {
  const row = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').join('affiliate_portals as p', 'p.shop_id', 's.id')
    .where({ 'a.code': accountCode, 's.code': shopCode }).first('s.id', 's.account_id', 's.base_url');
  return row ? { shopId: String(row.id), accountId: String(row.account_id), baseUrl: row.base_url } : null;
}

/** Keyed hash: the address and user agent are never stored in clear, and a hash cannot be reversed by guessing. */
export function keyedHash(key: Buffer, kind: 'ip' | 'ua', value: string): string {
  return crypto.createHmac('sha256', key).update(`affiliate-click:${kind}:${value}`).digest('base64url');
}

/**
 * The target the shopper is sent to: the shop's home when none is given, otherwise a URL on the shop's own host (the
 * same scheme and host as its base URL). Anything else is refused — the redirect is never an open redirect.
 */
export function checkTarget(baseUrl: string, to: string | undefined): { url: URL } | { refused: string } {
  const base = new URL(baseUrl);
  if (to === undefined || to === '') return { url: new URL('/', base) };
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    return { refused: 'The link target is not a URL.' };
  }
  if (url.protocol !== base.protocol || url.host.toLowerCase() !== base.host.toLowerCase() || url.username || url.password) {
    return { refused: 'The link target is not on the shop\'s own domain.' };
  }
  return { url };
}

export type ClickOutcome =
  | { kind: 'unknown_partner' }
  | { kind: 'refused'; message: string }
  | { kind: 'flooded' }
  | { kind: 'redirect'; location: string; visitorId: string | null; windowDays: number | null; clickToken: string | null; counted: 'new' | 'repeat' | 'none' };

export interface ClickRequest {
  handle: string;
  campaignId?: string;
  to?: string;
  ip: string;
  userAgent: string;
  /** The portal's visitor cookie, when the browser has one. */
  visitorId?: string;
  now: Date;
}

/** Records a click on a partner's tracked link and says where to send the shopper. */
export async function recordClick(db: Db, shop: PortalShop, hashKey: Buffer, req: ClickRequest): Promise<ClickOutcome> {
  const partner = await db('affiliate_partners').where({ account_id: shop.accountId }).whereRaw('lower(handle) = lower(?)', [req.handle])
    .first('id', 'state');
  if (!partner) return { kind: 'unknown_partner' };
  const target = checkTarget(shop.baseUrl, req.to);
  if ('refused' in target) return { kind: 'refused', message: target.refused };
  // A link of a partner who is not approved, or of a campaign no longer available, still takes the shopper to the
  // shop; it records nothing and carries no attribution (A8: only an approved partner's link records clicks).
  const plain = { kind: 'redirect' as const, location: target.url.toString(), visitorId: null, windowDays: null, clickToken: null, counted: 'none' as const };
  if (partner.state !== 'approved') return plain;
  const campaigns = db('affiliate_campaigns as c').where({ 'c.shop_id': shop.shopId, 'c.enabled': true })
    .where((w) => w.where('c.availability', 'all').orWhereExists(db('affiliate_campaign_partners as cp').whereRaw('cp.campaign_id = c.id').where('cp.partner_id', partner.id)))
    .select('c.id', 'c.attribution_window_days');
  const campaign = (req.campaignId && /^\d{1,18}$/.test(req.campaignId) ? await campaigns.clone().where('c.id', req.campaignId).first() : undefined)
    ?? await campaigns.clone().orderBy([{ column: 'c.is_default', order: 'desc' }, { column: 'c.id' }]).first();
  if (!campaign) return plain;

  const ipHash = keyedHash(hashKey, 'ip', req.ip);
  const uaHash = keyedHash(hashKey, 'ua', req.userAgent);
  const withParam = (token: string) => {
    const url = new URL(target.url);
    url.searchParams.set(ATTRIBUTION_PARAM, token);
    return url.toString();
  };
  return db.transaction(async (trx) => {
    // One address hammering one link: the first click counts, the repeats are tallied on it, a flood is refused.
    const recent = await trx('affiliate_clicks').where({ shop_id: shop.shopId, ip_hash: ipHash, ua_hash: uaHash, partner_id: partner.id, campaign_id: campaign.id })
      .where('clicked_at', '>', new Date(req.now.getTime() - FLOOD_WINDOW_MS)).orderBy('clicked_at', 'desc').forUpdate().first('id', 'token', 'visitor_id', 'repeats');
    if (recent) {
      if (recent.repeats >= FLOOD_LIMIT) return { kind: 'flooded' as const };
      await trx('affiliate_clicks').where({ id: recent.id }).update({ repeats: recent.repeats + 1, last_seen_at: req.now });
      return { kind: 'redirect' as const, location: withParam(recent.token), visitorId: recent.visitor_id, windowDays: campaign.attribution_window_days, clickToken: recent.token, counted: 'repeat' as const };
    }
    const visitorId = req.visitorId && /^[A-Za-z0-9_-]{8,64}$/.test(req.visitorId) ? req.visitorId : crypto.randomBytes(12).toString('base64url');
    const token = crypto.randomBytes(16).toString('base64url');
    const targetType = /^\/product\//.test(target.url.pathname) ? 'product' : /^\/category\//.test(target.url.pathname) ? 'category' : 'home';
    const targetRef = targetType === 'home' ? null : decodeURIComponent(target.url.pathname.split('/')[2] ?? '') || null;
    await trx('affiliate_clicks').insert({
      shop_id: shop.shopId, partner_id: partner.id, campaign_id: campaign.id, visitor_id: visitorId, clicked_at: req.now, target_type: targetType,
      target_ref: targetRef, token, ip_hash: ipHash, ua_hash: uaHash, target_url: target.url.toString(), last_seen_at: req.now,
    });
    return { kind: 'redirect' as const, location: withParam(token), visitorId, windowDays: campaign.attribution_window_days, clickToken: token, counted: 'new' as const };
  });
}

export interface BeaconRequest {
  orderCode?: string;
  clickToken?: string;
  visitorId?: string;
  now: Date;
}

export type BeaconOutcome = { outcome: 'attributed' | 'unattributed' | 'ignored'; reason: string | null };

/**
 * Records the thank-you page's beacon: which visitor (by the click token, else the portal cookie) placed which order.
 * When the order is already synced it is attributed at once; otherwise the sync attributes it when it arrives.
 */
export async function recordBeacon(db: Db, shop: PortalShop, req: BeaconRequest): Promise<BeaconOutcome> {
  const orderCode = req.orderCode?.trim();
  // Without an order code there is nothing to record (and nothing to tell the shop either).
  if (!orderCode || orderCode.length > 64) return { outcome: 'ignored', reason: 'no_order_code' };
  const token = req.clickToken && req.clickToken.length <= 64 ? req.clickToken : undefined;
  return db.transaction(async (trx) => {
    const click = token
      ? await trx('affiliate_clicks').where({ shop_id: shop.shopId, token }).first('id', 'visitor_id')
      : req.visitorId && req.visitorId.length <= 64
        ? await trx('affiliate_clicks').where({ shop_id: shop.shopId, visitor_id: req.visitorId }).where('clicked_at', '<=', req.now).orderBy([{ column: 'clicked_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first('id', 'visitor_id')
        : undefined;
    let outcome: BeaconOutcome;
    if (click) {
      await trx('affiliate_order_visitors').insert({ shop_id: shop.shopId, order_code: orderCode, visitor_id: click.visitor_id, recorded_at: req.now }).onConflict(['shop_id', 'order_code']).ignore();
      const order = await trx('orders').where({ shop_id: shop.shopId, code: orderCode }).first('id');
      if (!order) outcome = { outcome: 'unattributed', reason: 'order_not_synced' };
      else {
        const run = knexRunner(trx);
        await attributeOrders(run, shop.shopId, req.now, [orderCode]);
        await refreshCommissionStates(run, shop.shopId, req.now, [orderCode]);
        const conversion = await trx('affiliate_conversions').where({ order_id: order.id }).first('source', 'click_id');
        outcome = !conversion ? { outcome: 'unattributed', reason: 'outside_window' }
          : conversion.source === 'coupon' ? { outcome: 'attributed', reason: 'coupon' } : { outcome: 'attributed', reason: null };
      }
    } else outcome = { outcome: 'unattributed', reason: token ? 'unknown_click' : 'no_click' };
    await trx('affiliate_beacons').insert({ shop_id: shop.shopId, order_code: orderCode, click_token: token ?? null, click_id: click?.id ?? null, outcome: outcome.outcome, reason: outcome.reason, received_at: req.now });
    return outcome;
  });
}
