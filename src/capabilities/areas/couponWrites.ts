/** Coupon writes over MCP (issue 13): ensure, update and remove (D25 preview → confirmation), and a partner's discount code. */
import { z } from 'zod';
import { couponSchema } from './coupons.js';
import { market } from '../params.js';
import { defineCapability, type ToolAnnotations } from '../types.js';
import { COUPON_FIELDS, ensureCoupons, ensurePartnerCode, removeCoupon, updateCoupon, type CouponFields } from '../../coupons/writes.js';

/** The shop's coupons change (the shop is outside the service), but repeating a call changes nothing more. */
const shopWrite: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
/** Overwrites or deletes what the shop has; a confirmed call repeated is refused (the token is single-use), so it changes nothing more. */
const shopOverwrite: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };

const code = z.string().min(1).max(64).describe('Coupon code, e.g. `VITAJ10`; on a platform with case-insensitive codes (demo) it is upper-cased.');
const timestamp = z.string().datetime({ offset: true }).describe('ISO 8601 instant, e.g. `2026-12-31T23:00:00.000Z`.');
const decimal = z.string().regex(/^\d{1,10}(\.\d{1,2})?$/, 'a decimal with at most two decimals, e.g. `5.00`');
const money = z.object({ amount: decimal, currency: z.string().length(3).describe('The shop\'s currency (ISO 4217).') }).strict();
const discount = z.discriminatedUnion('type', [
  z.object({ type: z.literal('percent'), percent: z.number().min(0.01).max(100).multipleOf(0.01).describe('Percent off, within the platform\'s range (coupons_capabilities).') }).strict(),
  z.object({ type: z.literal('fixed'), amount: decimal.describe('Amount off in the shop\'s currency, e.g. `5.00`.'), currency: z.string().length(3).describe('Must be the shop\'s currency.') }).strict(),
  z.object({ type: z.literal('free_shipping') }).strict(),
]).describe('The discount: percent, a fixed amount in the shop\'s currency, or free shipping.');
const guidList = z.array(z.string().min(1).max(64)).max(500);
const fields = {
  name: z.string().trim().min(1).max(120).describe('The coupon\'s name in the shop.'),
  validFrom: timestamp.nullable().describe('Start of validity; null = from creation.'),
  validUntil: timestamp.nullable().describe('End of validity, exclusive; null = no end.'),
  minOrderWithVat: money.nullable().describe('Goods total with VAT below which the coupon does not apply; null = none.'),
  usageLimit: z.number().int().min(1).max(1_000_000).nullable().describe('Total uses allowed; null = unlimited.'),
  perCustomerLimit: z.number().int().min(1).max(1000).nullable().describe('Uses per customer; null = unlimited.'),
  categoryGuids: guidList.describe('Restrict to goods of these categories (guids from categories_list); empty = no category restriction.'),
  productCodes: guidList.describe('Restrict to these products (codes from products_search); empty = no product restriction.'),
};
const confirmationToken = z.string().min(1).max(2048).describe('The token of the preview (first call); send it with exactly the same other arguments to make the change. Single use, expires after 10 minutes, only for the key or connection that got it.');

const jsonValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string()), z.record(z.string(), z.unknown())]);
const changeSchema = z.object({ field: z.enum(COUPON_FIELDS), before: jsonValue, after: jsonValue });
const dependencySchema = z.object({
  type: z.enum(['affiliate_partner', 'automation']),
  id: z.string().describe('Partner id, or the automation\'s workflowId.'),
  name: z.string(),
  state: z.string().describe('Partner state, or the automation\'s `enabled`, `disabled` or `draft`.'),
  blocking: z.boolean().describe('True for a live dependency (an approved partner\'s code, an enabled automation): the coupon is then not removed.'),
  reason: z.string(),
});

/** Makes sure a coupon exists on the selected shops; an existing one with a different discount is reported, never overwritten. */
export const couponsEnsure = defineCapability({
  name: 'coupons.ensure',
  summary: 'Makes sure a coupon exists on selected shops; an existing coupon with a different discount is NOT overwritten.',
  description: 'For each shop in `markets`: when the shop has no coupon `code`, creates it with the given discount and optional fields and answers `created`; when it has one with the same discount, changes nothing and answers `exists` (listing any other fields that differ); when it has one with a DIFFERENT discount, changes nothing and answers `conflict` — use coupons_update (preview, then confirmation) to change it. Every shop and field is validated before anything is written (coupons_capabilities says what the platform takes); a code an affiliate partner\'s approved code request reserved in a shop is COUPON_CODE_TAKEN. The result of each shop is in /coupons at once. Repeating the call creates nothing more.',
  path: null,
  scope: 'coupons:write',
  mcpTool: 'coupons_ensure',
  kind: 'write',
  market: 'none',
  params: z.object({
    markets: z.array(z.string().min(1).max(32)).min(1).max(50).describe('Shop codes (from stores_list) to make sure the coupon exists on.'),
    code,
    discount,
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]> },
  }).strict(),
  result: z.object({
    code: z.string(),
    shops: z.array(z.object({
      market: z.string(),
      outcome: z.enum(['created', 'exists', 'conflict', 'failed']).describe('`conflict`: a coupon with this code and a different discount exists and was NOT overwritten; `failed`: the shop platform failed, nothing written there.'),
      message: z.string(),
      differences: z.array(z.object({ field: z.enum(COUPON_FIELDS), current: jsonValue, requested: jsonValue })).describe('Fields of the existing coupon that differ from the request; none were changed.'),
      coupon: couponSchema.nullable().describe('The coupon as the service now records it (as coupons_get).'),
    })),
  }),
  annotations: shopWrite,
  handler: async ({ params, ctx }) => {
    const { markets, ...spec } = params;
    const shops = await ensureCoupons(ctx, markets, spec);
    return { code: shops.find((s) => s.coupon)?.coupon?.code ?? params.code.toUpperCase(), shops };
  },
});

/** Updates an existing coupon after a preview and a confirmation (D25). */
export const couponsUpdate = defineCapability({
  name: 'coupons.update',
  summary: 'Explicit update of an existing coupon incl. product and category restrictions; preview, then confirmation.',
  description: 'Changes the fields in `changes` of the coupon `code` in the shop `market` (discount, name, validity, minimum order, limits, enabled, and the product and category restrictions — a list replaces the current one). The first call changes NOTHING: it returns `status: preview` with every changed field (`before`/`after`), what depends on the coupon, and a `confirmationToken`. Call again with exactly the same arguments plus that token (within 10 minutes, same key or connection, once) to apply it: `status: updated`. A token that is reused, altered, expired or from another credential is refused with its own error code; when the coupon changed in the shop since the preview, CONFIRMATION_STALE (nothing changed). An unknown code is COUPON_NOT_FOUND.',
  path: null,
  scope: 'coupons:write',
  mcpTool: 'coupons_update',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    code,
    changes: z.object({ ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])), discount: discount.optional(), enabled: z.boolean().optional().describe('The shop\'s own switch.') } as { [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]> } & { discount: z.ZodOptional<typeof discount>; enabled: z.ZodOptional<z.ZodBoolean> })
      .strict().describe('The fields to change; at least one.'),
    confirmationToken: confirmationToken.optional(),
  }).strict(),
  result: z.object({
    status: z.enum(['preview', 'unchanged', 'updated', 'declined', 'cancelled']).describe('`preview`: nothing changed yet, confirm with the token; `unchanged`: the coupon already has these values; `updated`: done; `declined`/`cancelled`: the person said no to (or dismissed) the question their client showed, nothing changed.'),
    market: z.string(),
    code: z.string(),
    changes: z.array(changeSchema).describe('Every field that changes (preview) or changed (updated), before and after.'),
    dependencies: z.array(dependencySchema),
    confirmationToken: z.string().nullable(),
    expiresAt: z.string().nullable().describe('When the token expires (ISO 8601).'),
    coupon: couponSchema.nullable().describe('The coupon as the service records it: before the change in a preview, after it once updated.'),
    message: z.string(),
  }),
  annotations: shopOverwrite,
  handler: ({ params, ctx }) => {
    const { confirmationToken: token, ...args } = params;
    return updateCoupon(ctx, params.market, params.code, params.changes as CouponFields, { tool: 'coupons_update', args, token });
  },
});

/** Removes a coupon from one shop after a preview with its dependencies and a confirmation (D25); never one with a live dependency. */
export const couponsRemove = defineCapability({
  name: 'coupons.remove',
  summary: 'Irreversible deletion on a selected shop: a preview with dependencies first, the deletion only with confirmation.',
  description: 'Removes the coupon `code` from the shop `market` — irreversibly. The first call removes NOTHING: it returns the coupon and what depends on it. When nothing live depends on it, `status: preview` with a `confirmationToken`: call again with the same arguments plus the token (within 10 minutes, same key or connection, once) to remove it (`status: removed`; it is then gone from /coupons). A coupon with a live dependency — the discount code of an approved affiliate partner, or an enabled automation whose conditions use the code — is never removed: `status: blocked` with no token (and COUPON_HAS_DEPENDENCIES if one appears before the confirmation). Token refusals have their own codes; CONFIRMATION_STALE when the coupon changed since the preview. An unknown code is COUPON_NOT_FOUND.',
  path: null,
  scope: 'coupons:delete',
  mcpTool: 'coupons_remove',
  kind: 'write',
  market: 'required',
  params: z.object({ market, code, confirmationToken: confirmationToken.optional() }).strict(),
  result: z.object({
    status: z.enum(['preview', 'blocked', 'removed', 'declined', 'cancelled']).describe('`preview`: nothing removed, confirm with the token; `blocked`: a live dependency, no token; `removed`: done; `declined`/`cancelled`: the person said no to (or dismissed) the question their client showed, nothing removed.'),
    market: z.string(),
    code: z.string(),
    coupon: couponSchema.nullable().describe('The coupon that is (preview) or was (removed) in the service\'s records.'),
    dependencies: z.array(dependencySchema),
    confirmationToken: z.string().nullable(),
    expiresAt: z.string().nullable(),
    message: z.string(),
  }),
  annotations: shopOverwrite,
  handler: ({ params, ctx }) => {
    const { confirmationToken: token, ...args } = params;
    return removeCoupon(ctx, params.market, params.code, { tool: 'coupons_remove', args, token });
  },
});

/** Ensures an approved partner's discount code on a shop: a coupon created or reused (never overwritten), linked, with the shop note. */
export const affiliateDiscountCodesEnsure = defineCapability({
  name: 'affiliate.discountCodes.ensure',
  summary: 'Ensures a partner discount code on a shop: coupon created or an existing one reused, linked to the partner, shop note written.',
  description: 'Makes the coupon `code` of the shop `market` the discount code of the approved partner `partnerId`. When the shop has no such coupon it is created (as coupons_ensure) with `discount` (required then); an existing coupon is reused as it is — when `discount` is given and differs, nothing is written or linked (`conflict`). The coupon\'s shop note is written automatically (whose code it is), and the code is linked to the partner (affiliate_discount_codes_list, attribution of orders). A code of another partner is COUPON_CODE_TAKEN; a partner that is not approved is STATE_CONFLICT. Repeating the call changes nothing more (`already_linked`).',
  path: null,
  scope: 'coupons:write',
  mcpTool: 'affiliate_discount_codes_ensure',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    partnerId: z.string().regex(/^\d{1,18}$/, 'digits').describe('The partner (affiliate_partners_list).'),
    code,
    discount: discount.optional().describe('Required when the coupon does not exist yet; when it exists and this differs, nothing is changed.'),
    name: fields.name.optional(),
    validUntil: fields.validUntil.optional(),
  }).strict(),
  result: z.object({
    market: z.string(),
    partnerId: z.string(),
    code: z.string(),
    outcome: z.enum(['created', 'reused', 'already_linked', 'conflict']),
    shopNote: z.string().nullable().describe('The note written on the coupon in the shop; null when nothing was written (`conflict`).'),
    message: z.string(),
    coupon: couponSchema.nullable(),
  }),
  annotations: shopWrite,
  handler: ({ params, ctx }) => ensurePartnerCode(ctx, params),
});
