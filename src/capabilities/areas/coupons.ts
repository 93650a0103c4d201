/** Coupons of one shop: the mirror with derived state, what the platform can do, and links that apply an existing coupon. */
import { z } from 'zod';
import { couponCapabilitiesOf } from '../../coupons/platformCapabilities.js';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { COUPON_STATES, getCoupon, listCoupons, shopCouponContext, type Coupon } from '../../queries/coupons.js';
import type { CapabilityContext } from '../context.js';
import { cursor, limit, market } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const localTime = z.string().nullable().describe('The same instant on the shop\'s clock (its time zone), `YYYY-MM-DDTHH:mm:ss.SSS`.');
const couponCode = z.string().min(1).max(64).describe('Coupon code as the shop stores it, e.g. `VITAJ10`; codes come from coupons_list.');
const stateSchema = z.enum(COUPON_STATES).describe('Derived at the request\'s instant: `disabled` (switched off in the shop), `expired` (validity ended; the end is exclusive), `scheduled` (validity not started), `used_up` (usage limit reached by orders), `active`.');

export const couponSchema = z.object({
  code: z.string(),
  name: z.string(),
  discount: z.object({
    type: z.enum(['percent', 'fixed', 'free_shipping']),
    percent: z.number().nullable().describe('For `percent`: the percentage; null otherwise.'),
    amount: moneySchema.nullable().describe('For `fixed`: the amount off, in the shop currency; null otherwise.'),
  }),
  minOrderWithVat: moneySchema.nullable().describe('Goods total (with VAT, of the goods the coupon applies to) below which it does not apply.'),
  validFrom: timestamp.nullable().describe('Start of validity; null = from creation.'),
  validUntil: timestamp.nullable().describe('End of validity, exclusive; null = no end.'),
  validFromLocal: localTime,
  validUntilLocal: localTime,
  usage: z.object({
    orders: z.number().int().describe('Orders in the service\'s records that carry the code, up to the request\'s instant.'),
    limit: z.number().int().nullable().describe('Total uses allowed; null = unlimited.'),
    remaining: z.number().int().nullable(),
    perCustomerLimit: z.number().int().nullable(),
  }),
  restrictions: z.object({
    categoryGuids: z.array(z.string()).describe('Only goods of these categories; empty = no category restriction.'),
    productCodes: z.array(z.string()).describe('Only these products; empty = no product restriction.'),
  }),
  enabled: z.boolean().describe('The shop\'s own switch.'),
  disabledAt: timestamp.nullable(),
  state: stateSchema,
  createdAt: timestamp,
  updatedAt: timestamp,
});

async function couponOrFail(ctx: CapabilityContext, code: string): Promise<Coupon> {
  const coupon = await getCoupon(ctx.db, ctx.shop!, code, ctx.now());
  if (!coupon) throw new AppError('COUPON_NOT_FOUND', `No coupon \`${code}\` in the records of shop \`${ctx.shop!.code}\`.`, { param: 'couponCode' });
  return coupon;
}

/** Lists a shop's coupons with derived state, newest first, by cursor. */
export const couponsList = defineCapability({
  name: 'coupons.list',
  summary: 'Coupons with discount type and amount, validity, usage and derived state.',
  description: 'Returns the coupons of the shop `market` as last synced from the shop, newest first, each with its discount (percent, fixed amount in the shop currency, or free shipping), validity (UTC and the shop\'s local time), usage counted from orders, restrictions and the state derived at this instant: active, scheduled, expired, used_up or disabled; `state` filters on it. Paginated: send `nextCursor` back as `cursor` with the other parameters unchanged until `hasMore` is false.',
  path: '/coupons',
  scope: 'coupons:read',
  mcpTool: 'coupons_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market, limit: limit.optional(), cursor: cursor.optional(), state: stateSchema.optional() }).strict(),
  result: couponSchema,
  annotations: readOnly,
  handler: ({ params, ctx, page }) => listCoupons(ctx.db, ctx.shop!, ctx.now(), params.state, page),
});

/** Reads one coupon by code; a code the service has no record of is COUPON_NOT_FOUND. */
export const couponsGet = defineCapability({
  name: 'coupons.get',
  summary: 'One coupon by code with its derived state; not found when not in the service\'s records.',
  description: 'Returns one coupon of the shop `market` by its code, with discount, validity, usage, restrictions and derived state. A code the service has no record of (never in the shop, or removed there) is a 404 `COUPON_NOT_FOUND`, never an empty object.',
  path: '/coupons/{couponCode}',
  scope: 'coupons:read',
  mcpTool: 'coupons_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, couponCode }).strict(),
  result: couponSchema,
  annotations: readOnly,
  handler: ({ params, ctx }) => couponOrFail(ctx, params.couponCode),
});

/** What the shop's platform can do with coupons; read before creating one. */
export const couponsCapabilities = defineCapability({
  name: 'coupons.capabilities',
  summary: 'What the shop platform can do with coupons: types, restrictions, limits, coupon-from-link.',
  description: 'Returns what the platform of the shop `market` supports for coupons — discount types, percent range, restrictions (categories, products, minimum order), limits (total, per customer, validity), code rules — and whether coupon-from-link works for this shop now (the platform supports it AND the shop\'s web code is installed and ready). Read it before creating or changing a coupon.',
  path: '/coupons/capabilities',
  scope: 'coupons:read',
  mcpTool: 'coupons_capabilities',
  kind: 'get',
  market: 'required',
  params: z.object({ market }).strict(),
  result: z.object({
    platform: z.string(),
    supported: z.boolean().describe('False when the service knows nothing about this platform\'s coupons; the other fields are then empty or false.'),
    discountTypes: z.array(z.enum(['percent', 'fixed', 'free_shipping'])),
    percentRange: z.object({ min: z.number(), max: z.number() }).nullable(),
    fixedAmountCurrencies: z.enum(['shop_currency', 'any']).nullable(),
    restrictions: z.object({ categories: z.boolean(), products: z.boolean(), minimumOrder: z.boolean(), maxCategories: z.number().int(), maxProducts: z.number().int() }).nullable(),
    limits: z.object({ usageLimit: z.boolean(), perCustomerLimit: z.boolean(), validFrom: z.boolean(), validUntil: z.boolean() }).nullable(),
    codeRules: z.object({ minLength: z.number().int(), maxLength: z.number().int(), pattern: z.string(), caseSensitive: z.boolean() }).nullable(),
    canDisable: z.boolean(),
    canDelete: z.boolean(),
    couponFromLink: z.object({
      platformSupports: z.boolean(),
      webCodeInstalled: z.boolean(),
      ready: z.boolean().describe('Whether a link from coupons_activation_link applies the coupon in this shop now.'),
    }),
  }),
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const shop = await shopCouponContext(ctx.db, ctx.shop!.id);
    const caps = couponCapabilitiesOf(shop.platform);
    const platformSupports = caps?.couponFromLink ?? false;
    return {
      platform: shop.platform,
      supported: caps !== null,
      discountTypes: caps?.discountTypes ?? [],
      percentRange: caps?.percentRange ?? null,
      fixedAmountCurrencies: caps?.fixedAmountCurrencies ?? null,
      restrictions: caps?.restrictions ?? null,
      limits: caps?.limits ?? null,
      codeRules: caps?.codeRules ?? null,
      canDisable: caps?.canDisable ?? false,
      canDelete: caps?.canDelete ?? false,
      couponFromLink: { platformSupports, webCodeInstalled: shop.webCode.installed, ready: platformSupports && shop.webCode.installed && shop.couponFromLinkReady },
    };
  },
});

const shopPath = z.string().min(1).max(200).regex(/^\/(?!\/)[A-Za-z0-9\-._~/%]*$/, 'a path on the shop starting with a single `/`')
  .describe('Page of the shop the link opens, e.g. `/kitchen/pans`; default `/` (home).');

/** Why a coupon cannot be applied from a link now; empty when it can. */
function linkBlockers(coupon: Coupon, shop: Awaited<ReturnType<typeof shopCouponContext>>): string[] {
  const reasons: string[] = [];
  if (coupon.state !== 'active') reasons.push(`The coupon is ${coupon.state.replace('_', ' ')}.`);
  if (!couponCapabilitiesOf(shop.platform)?.couponFromLink) reasons.push('The shop platform cannot apply a coupon from a link.');
  if (!shop.webCode.installed) reasons.push('The service\'s web code is not installed in the shop.');
  else if (!shop.couponFromLinkReady) reasons.push('The web code\'s coupon-from-link module is not ready.');
  return reasons;
}

/** A link that applies an EXISTING coupon in the shop's cart; creates nothing. */
export const couponsActivationLink = defineCapability({
  name: 'coupons.activationLink',
  summary: 'A link applying an EXISTING coupon in the shop\'s cart; creates nothing.',
  description: 'Returns a URL of the shop `market` that opens `path` (default the home page) and applies the existing coupon `couponCode` in the cart through the service\'s web code. It creates no coupon: an unknown code is a 404 `COUPON_NOT_FOUND`. `usable` and `blockers` say whether the link works now (the coupon\'s derived state and the web code status, as coupons_activation_status).',
  path: '/coupons/activation-link',
  scope: 'coupons:read',
  mcpTool: 'coupons_activation_link',
  kind: 'get',
  market: 'required',
  params: z.object({ market, couponCode, path: shopPath.optional() }).strict(),
  result: z.object({
    couponCode: z.string(),
    url: z.string().describe('The shop URL with `applyCoupon=<code>`; the web code applies the coupon and removes the parameter.'),
    usable: z.boolean(),
    blockers: z.array(z.string()),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const coupon = await couponOrFail(ctx, params.couponCode);
    const shop = await shopCouponContext(ctx.db, ctx.shop!.id);
    const url = new URL(params.path ?? '/', shop.baseUrl.endsWith('/') ? shop.baseUrl : `${shop.baseUrl}/`);
    url.searchParams.set('applyCoupon', coupon.code);
    const blockers = linkBlockers(coupon, shop);
    return { couponCode: coupon.code, url: url.toString(), usable: blockers.length === 0, blockers };
  },
});

/** Whether an existing coupon is usable through a link: the coupon mirror plus the shop's web code status. */
export const couponsActivationStatus = defineCapability({
  name: 'coupons.activationStatus',
  summary: 'Whether the coupon is usable via the link: coupon mirror + web code status.',
  description: 'Returns, for the coupon `couponCode` of the shop `market`, its derived state and validity from the service\'s records and the shop\'s web code status (installed, version, modules, coupon-from-link readiness, as stores_integration_status), and whether a link from coupons_activation_link applies it now (`usableViaLink`, with `blockers`). An unknown code is a 404 `COUPON_NOT_FOUND`.',
  path: '/coupons/activation-status',
  scope: 'coupons:read',
  mcpTool: 'coupons_activation_status',
  kind: 'get',
  market: 'required',
  params: z.object({ market, couponCode }).strict(),
  result: z.object({
    couponCode: z.string(),
    coupon: couponSchema.pick({ state: true, enabled: true, validFrom: true, validUntil: true, usage: true }),
    webCode: z.object({ installed: z.boolean(), version: z.string().nullable(), modules: z.array(z.string()), couponFromLinkReady: z.boolean() }),
    usableViaLink: z.boolean(),
    blockers: z.array(z.string()),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const coupon = await couponOrFail(ctx, params.couponCode);
    const shop = await shopCouponContext(ctx.db, ctx.shop!.id);
    const blockers = linkBlockers(coupon, shop);
    return {
      couponCode: coupon.code,
      coupon: { state: coupon.state, enabled: coupon.enabled, validFrom: coupon.validFrom, validUntil: coupon.validUntil, usage: coupon.usage },
      webCode: { ...shop.webCode, couponFromLinkReady: shop.couponFromLinkReady },
      usableViaLink: blockers.length === 0,
      blockers,
    };
  },
});
