/**
 * Coupon writes (issue 13): ensure, update and remove through the shop platform's adapter, and a partner discount code
 * through the same path. The shop is the truth: every write first reads the coupon as the shop has it now (not the
 * mirror), and what the shop stored after the write is put into the mirror by the coupons sync apply step in the same
 * transaction, so /coupons shows it at once. Writes of one coupon are serialised by an advisory lock.
 */
import type { Knex } from 'knex';
import { AppError } from '../errors.js';
import type { Db } from '../db/knex.js';
import type { CapabilityContext, ShopRef } from '../capabilities/context.js';
import type { CouponInput, PlatformCouponState, ShopPlatformAdapter } from '../platforms/types.js';
import { formatMinor } from '../records/money.js';
import { findShopByCode } from '../queries/shops.js';
import { getCoupon, type Coupon } from '../queries/coupons.js';
import { applyCouponRemoval, applyCoupons } from '../sync/apply/coupons.js';
import { getSyncShop, type SyncShop } from '../sync/shops.js';
import type { Condition, Rule } from '../automations/rule.js';
import { platformUnsupported } from '../platforms/unsupported.js';
import { couponCapabilitiesOf, type CouponPlatformCapabilities } from './platformCapabilities.js';
import { consumeConfirmation, fingerprint, issueConfirmation, verifyConfirmation, type IssuedToken } from './confirmation.js';

export type DiscountInput = { type: 'percent'; percent: number } | { type: 'fixed'; amount: string; currency: string } | { type: 'free_shipping' };
export interface MoneyInput { amount: string; currency: string }

/** The fields a coupon write may set; an absent field is left as it is (update) or defaulted (create). */
export interface CouponFields {
  name?: string;
  discount?: DiscountInput;
  validFrom?: string | null;
  validUntil?: string | null;
  minOrderWithVat?: MoneyInput | null;
  usageLimit?: number | null;
  perCustomerLimit?: number | null;
  categoryGuids?: string[];
  productCodes?: string[];
  enabled?: boolean;
}

export const COUPON_FIELDS = ['name', 'discount', 'validFrom', 'validUntil', 'minOrderWithVat', 'usageLimit', 'perCustomerLimit', 'categoryGuids', 'productCodes', 'enabled'] as const;
export type CouponField = (typeof COUPON_FIELDS)[number];

/** A field's value as the tools show it. */
export type FieldValue = string | number | boolean | null | string[] | Record<string, unknown>;

export interface FieldChange {
  field: CouponField;
  before: FieldValue;
  after: FieldValue;
}

/** A shop a coupon write goes to: the caller's shop, its platform connection, adapter and the platform's coupon rules. */
export interface WriteShop {
  ref: ShopRef;
  platformShop: SyncShop;
  adapter: ShopPlatformAdapter;
  caps: CouponPlatformCapabilities;
}

/** Resolves a shop code for a write: the caller's shop scope, the account's shop, and a platform that can write coupons. */
export async function resolveWriteShop(ctx: CapabilityContext, code: string, param = 'market'): Promise<WriteShop> {
  let ref = ctx.shop && ctx.shop.code === code ? ctx.shop : null;
  if (!ref) {
    if (ctx.caller.shopCodes && !ctx.caller.shopCodes.has(code)) {
      throw new AppError('SHOP_FORBIDDEN', `This credential may not use shop \`${code}\`.`, { param, market: code });
    }
    ref = await findShopByCode(ctx.db, ctx.caller.account.id, code);
    if (!ref) throw new AppError('SHOP_NOT_FOUND', `The account has no shop \`${code}\`; codes come from GET /stores.`, { param, market: code });
  }
  const unavailable = (reason: string) => new AppError('PLATFORM_UNAVAILABLE', `Coupons of shop \`${code}\` cannot be written: ${reason}.`, { market: code, reason });
  if (!ctx.platforms) throw unavailable('this server has no shop platform adapters');
  const platformShop = await getSyncShop(ctx.db, ref.id);
  if (!platformShop.connected) throw unavailable('the shop has no platform connection');
  const adapter = ctx.platforms.get(platformShop.platform);
  if (!adapter) throw unavailable(`the service has no adapter for the \`${platformShop.platform}\` platform`);
  const caps = couponCapabilitiesOf(platformShop.platform);
  if (!adapter.capabilities.writes.includes('coupons') || !caps) throw platformUnsupported(platformShop.platform, 'coupons', code);
  return { ref, platformShop, adapter, caps };
}

/** The code as the platform stores it: upper-cased where codes are case-insensitive (the demo platform's rule). */
export function normaliseCode(code: string, caps: CouponPlatformCapabilities): string {
  return caps.codeRules.caseSensitive ? code : code.toUpperCase();
}

const toMinor = (amount: string): number => {
  const [whole, fraction = ''] = amount.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2));
};

/** One field of a coupon as the tools show it (money as decimal strings with the currency, dates as ISO). */
function fieldView(c: PlatformCouponState, field: CouponField): FieldValue {
  switch (field) {
    case 'name': return c.name;
    case 'discount': {
      const d = c.discount;
      return { type: d.type, percent: d.type === 'percent' ? d.percent : null, amount: d.type === 'fixed' ? { amount: formatMinor(d.amountMinor), currency: c.currency } : null };
    }
    case 'validFrom': return c.validFrom?.toISOString() ?? null;
    case 'validUntil': return c.validUntil?.toISOString() ?? null;
    case 'minOrderWithVat': return c.minOrderMinor === null ? null : { amount: formatMinor(c.minOrderMinor), currency: c.currency };
    case 'usageLimit': return c.usageLimit;
    case 'perCustomerLimit': return c.perCustomerLimit;
    case 'categoryGuids': return c.categoryGuids;
    case 'productCodes': return c.productCodes;
    case 'enabled': return c.enabled;
  }
}

/** The fields that differ between two states, in COUPON_FIELDS order. */
export function diffCoupons(before: PlatformCouponState, after: PlatformCouponState, fields: readonly CouponField[] = COUPON_FIELDS): FieldChange[] {
  return fields.flatMap((field) => {
    const b = fieldView(before, field);
    const a = fieldView(after, field);
    return fingerprint(b) === fingerprint(a) ? [] : [{ field, before: b, after: a }];
  });
}

const sameDiscount = (a: PlatformCouponState['discount'], b: PlatformCouponState['discount']) => fingerprint(a) === fingerprint(b);

function bad(param: string, reason: string): AppError {
  return new AppError('INVALID_PARAMETER', `Parameter \`${param}\` is invalid: ${reason}.`, { param, reason });
}

/** Checks the fields against the platform's coupon rules and the shop's catalogue; throws a clear INVALID_PARAMETER. */
async function validateFields(db: Db | Knex.Transaction, shop: WriteShop, fields: CouponFields, prefix: string): Promise<void> {
  const { caps } = shop;
  const currency = shop.ref.currency;
  const d = fields.discount;
  if (d) {
    if (!caps.discountTypes.includes(d.type)) throw bad(`${prefix}discount.type`, `the platform does not support \`${d.type}\` coupons`);
    if (d.type === 'percent' && (d.percent < caps.percentRange.min || d.percent > caps.percentRange.max)) {
      throw bad(`${prefix}discount.percent`, `the platform takes ${caps.percentRange.min} to ${caps.percentRange.max} %`);
    }
    if (d.type === 'fixed' && d.currency !== currency) throw bad(`${prefix}discount.currency`, `shop \`${shop.ref.code}\` takes fixed amounts in its currency ${currency}`);
    if (d.type === 'fixed' && toMinor(d.amount) <= 0) throw bad(`${prefix}discount.amount`, 'a fixed discount is more than zero');
  }
  if (fields.minOrderWithVat) {
    if (!caps.restrictions.minimumOrder) throw bad(`${prefix}minOrderWithVat`, 'the platform has no minimum order');
    if (fields.minOrderWithVat.currency !== currency) throw bad(`${prefix}minOrderWithVat.currency`, `shop \`${shop.ref.code}\` takes amounts in ${currency}`);
  }
  if (fields.categoryGuids?.length) {
    if (!caps.restrictions.categories) throw bad(`${prefix}categoryGuids`, 'the platform cannot restrict coupons to categories');
    if (fields.categoryGuids.length > caps.restrictions.maxCategories) throw bad(`${prefix}categoryGuids`, `at most ${caps.restrictions.maxCategories} categories`);
    const known = new Set((await db('categories').where({ shop_id: shop.ref.id }).whereIn('guid', fields.categoryGuids).select('guid')).map((r: { guid: string }) => r.guid));
    const unknown = fields.categoryGuids.filter((g) => !known.has(g));
    if (unknown.length) throw new AppError('INVALID_PARAMETER', `Unknown categories in shop \`${shop.ref.code}\`: ${unknown.join(', ')} (guids come from categories_list).`, { param: `${prefix}categoryGuids`, reason: 'unknown category', unknown });
  }
  if (fields.productCodes?.length) {
    if (!caps.restrictions.products) throw bad(`${prefix}productCodes`, 'the platform cannot restrict coupons to products');
    if (fields.productCodes.length > caps.restrictions.maxProducts) throw bad(`${prefix}productCodes`, `at most ${caps.restrictions.maxProducts} products`);
    const known = new Set((await db('products').where({ shop_id: shop.ref.id }).whereIn('code', fields.productCodes).select('code')).map((r: { code: string }) => r.code));
    const unknown = fields.productCodes.filter((c) => !known.has(c));
    if (unknown.length) throw new AppError('INVALID_PARAMETER', `Unknown products in shop \`${shop.ref.code}\`: ${unknown.join(', ')} (codes come from products_search).`, { param: `${prefix}productCodes`, reason: 'unknown product', unknown });
  }
  if ((fields.usageLimit ?? null) !== null && !caps.limits.usageLimit) throw bad(`${prefix}usageLimit`, 'the platform has no usage limit');
  if ((fields.perCustomerLimit ?? null) !== null && !caps.limits.perCustomerLimit) throw bad(`${prefix}perCustomerLimit`, 'the platform has no per-customer limit');
}

function validateCode(code: string, caps: CouponPlatformCapabilities): void {
  const rules = caps.codeRules;
  if (code.length < rules.minLength || code.length > rules.maxLength || !new RegExp(rules.pattern).test(code)) {
    throw bad('code', `the platform takes codes of ${rules.minLength} to ${rules.maxLength} characters matching ${rules.pattern}`);
  }
}

/** The coupon after the fields are applied to `base`. */
function withFields(base: PlatformCouponState, fields: CouponFields): PlatformCouponState {
  const next: PlatformCouponState = { ...base };
  if (fields.name !== undefined) next.name = fields.name;
  if (fields.discount) {
    const d = fields.discount;
    next.discount = d.type === 'percent' ? { type: 'percent', percent: d.percent } : d.type === 'fixed' ? { type: 'fixed', amountMinor: toMinor(d.amount) } : { type: 'free_shipping' };
  }
  if (fields.validFrom !== undefined) next.validFrom = fields.validFrom === null ? null : new Date(fields.validFrom);
  if (fields.validUntil !== undefined) next.validUntil = fields.validUntil === null ? null : new Date(fields.validUntil);
  if (fields.minOrderWithVat !== undefined) next.minOrderMinor = fields.minOrderWithVat === null ? null : toMinor(fields.minOrderWithVat.amount);
  if (fields.usageLimit !== undefined) next.usageLimit = fields.usageLimit;
  if (fields.perCustomerLimit !== undefined) next.perCustomerLimit = fields.perCustomerLimit;
  if (fields.categoryGuids !== undefined) next.categoryGuids = [...fields.categoryGuids];
  if (fields.productCodes !== undefined) next.productCodes = [...fields.productCodes];
  if (fields.enabled !== undefined) next.enabled = fields.enabled;
  if (next.validFrom && next.validUntil && next.validFrom.getTime() >= next.validUntil.getTime()) throw bad('validUntil', 'the end of validity (exclusive) is after its start');
  return next;
}

/** The full write of a coupon state: every field, so nothing of a previous write is lost. */
function couponInput(c: PlatformCouponState): CouponInput {
  return {
    code: c.code, discountPercent: c.discount.type === 'percent' ? c.discount.percent : 0, validUntil: c.validUntil, discount: c.discount, name: c.name,
    validFrom: c.validFrom, minOrderMinor: c.minOrderMinor, usageLimit: c.usageLimit, perCustomerLimit: c.perCustomerLimit,
    categoryGuids: c.categoryGuids, productCodes: c.productCodes, enabled: c.enabled, note: c.note,
  };
}

/** The state a new coupon starts from (the platform fills created/updated times when it stores it). */
function blankCoupon(code: string, currency: string, now: Date): PlatformCouponState {
  return {
    code, name: code, discount: { type: 'percent', percent: 0 }, currency: currency as PlatformCouponState['currency'], minOrderMinor: null, validFrom: null,
    validUntil: null, usageLimit: null, perCustomerLimit: null, categoryGuids: [], productCodes: [], enabled: true, createdAt: now, updatedAt: now,
    disabledAt: null, partnerIndex: null, note: null,
  };
}

async function lockCoupon(trx: Knex.Transaction, shopId: string, code: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`coupon:${shopId}:${code}`]);
}

/** Writes the state to the shop and stores what the shop then has into the mirror (in `trx`). */
async function writeAndMirror(trx: Knex.Transaction, shop: WriteShop, next: PlatformCouponState): Promise<PlatformCouponState> {
  await shop.adapter.saveCoupon(shop.platformShop, couponInput(next));
  const stored = await shop.adapter.readCoupon(shop.platformShop, next.code);
  if (!stored) throw new AppError('PLATFORM_UNAVAILABLE', `Shop \`${shop.ref.code}\` did not keep coupon \`${next.code}\`.`, { market: shop.ref.code, reason: 'write not kept' });
  await applyCoupons(trx, shop.platformShop, [{ kind: 'coupon', coupon: stored }]);
  return stored;
}

async function mirrored(ctx: CapabilityContext, shop: WriteShop, code: string): Promise<Coupon | null> {
  return getCoupon(ctx.db, shop.ref, code, ctx.now());
}

// ---------------------------------------------------------------------------------------------------------------
// coupons_ensure

export interface EnsureSpec extends CouponFields {
  code: string;
  discount: DiscountInput;
}

export interface EnsureOutcome {
  market: string;
  outcome: 'created' | 'exists' | 'conflict' | 'failed';
  message: string;
  /** Fields of the existing coupon that differ from the request (none are changed by ensure). */
  differences: Array<{ field: CouponField; current: FieldValue; requested: FieldValue }>;
  coupon: Coupon | null;
}

/**
 * Refuses a code an approved partner code request has reserved in the shop (affiliate_code_requests_decide): the code
 * is that partner's, so coupons_ensure may not create it for anyone else, even before the partner's coupon exists.
 */
async function refuseReservedCode(db: Db | Knex.Transaction, shop: WriteShop, code: string): Promise<void> {
  const reservation = await db('affiliate_code_reservations').where({ shop_id: shop.ref.id }).whereRaw('upper(code) = upper(?)', [code]).first('partner_id');
  if (reservation) {
    throw new AppError('COUPON_CODE_TAKEN', `Code ${code} is reserved for an affiliate partner's approved code request in shop ${shop.ref.code}; choose another code.`, { param: 'code', partnerId: String(reservation.partner_id) });
  }
}

/** Ensures one coupon on one shop: created when missing; an existing one is never overwritten. */
async function ensureOnShop(ctx: CapabilityContext, shop: WriteShop, spec: EnsureSpec, note?: string | null): Promise<EnsureOutcome & { state: PlatformCouponState | null }> {
  const code = normaliseCode(spec.code, shop.caps);
  const market = shop.ref.code;
  const fields: CouponFields = { ...spec };
  const result = await ctx.db.transaction(async (trx) => {
    await lockCoupon(trx, shop.ref.id, code);
    // Again under the lock: a reservation approved since the check before any write still wins.
    await refuseReservedCode(trx, shop, code);
    const current = await shop.adapter.readCoupon(shop.platformShop, code);
    if (!current) {
      const next = withFields({ ...blankCoupon(code, shop.ref.currency, ctx.now()), note: note ?? null }, fields);
      const stored = await writeAndMirror(trx, shop, next);
      return { outcome: 'created' as const, current: stored, requested: next };
    }
    // The shop's coupon goes into the mirror as it is (a coupon created in the shop since the last sync is then known).
    await applyCoupons(trx, shop.platformShop, [{ kind: 'coupon', coupon: current }]);
    const requested = withFields(current, fields);
    return { outcome: sameDiscount(current.discount, requested.discount) ? 'exists' as const : 'conflict' as const, current, requested };
  });
  const touched = (Object.keys(spec) as Array<keyof EnsureSpec>).filter((k): k is CouponField => (COUPON_FIELDS as readonly string[]).includes(k));
  const differences = result.outcome === 'created' ? [] : diffCoupons(result.current, result.requested, touched).map((c) => ({ field: c.field, current: c.before, requested: c.after }));
  const message = result.outcome === 'created'
    ? `Coupon ${code} was created in shop ${market}.`
    : result.outcome === 'exists'
      ? `Coupon ${code} already exists in shop ${market} with this discount; nothing was changed${differences.length ? ` (it differs in ${differences.map((d) => d.field).join(', ')}: use coupons_update to change that)` : ''}.`
      : `Coupon ${code} already exists in shop ${market} with a DIFFERENT discount; it was NOT overwritten. Use coupons_update (preview, then confirmation) to change it, or choose another code.`;
  return { market, outcome: result.outcome, message, differences, coupon: await mirrored(ctx, shop, code), state: result.current };
}

/** coupons_ensure: validates every shop first (nothing is written when one is refused), then ensures shop by shop. */
export async function ensureCoupons(ctx: CapabilityContext, markets: string[], spec: EnsureSpec): Promise<EnsureOutcome[]> {
  const shops: WriteShop[] = [];
  for (const [i, code] of [...new Set(markets)].entries()) shops.push(await resolveWriteShop(ctx, code, `markets.${i}`));
  if (spec.validFrom && spec.validUntil && new Date(spec.validFrom).getTime() >= new Date(spec.validUntil).getTime()) {
    throw bad('validUntil', 'the end of validity (exclusive) is after its start');
  }
  for (const shop of shops) {
    const code = normaliseCode(spec.code, shop.caps);
    validateCode(code, shop.caps);
    await validateFields(ctx.db, shop, spec, '');
    await refuseReservedCode(ctx.db, shop, code);
  }
  const outcomes: EnsureOutcome[] = [];
  for (const shop of shops) {
    try {
      const { state: _state, ...outcome } = await ensureOnShop(ctx, shop, spec);
      outcomes.push(outcome);
    } catch (error) {
      // One shop's platform failing does not undo the shops already written; the answer says which.
      const message = error instanceof AppError ? error.message : 'The shop platform failed; nothing was written to this shop.';
      outcomes.push({ market: shop.ref.code, outcome: 'failed', message, differences: [], coupon: null });
    }
  }
  return outcomes;
}

// ---------------------------------------------------------------------------------------------------------------
// Dependencies

export interface CouponDependency {
  type: 'affiliate_partner' | 'automation';
  id: string;
  name: string;
  state: string;
  /** True for a live dependency: the coupon is then not removed. */
  blocking: boolean;
  reason: string;
}

const USING_OPS = new Set(['eq', 'in', 'contains']);

/** Whether a rule's conditions select orders by this coupon code (eq / in the code, or contains part of it). */
export function ruleUsesCoupon(rule: Pick<Rule, 'conditions'>, code: string): boolean {
  const upper = code.toUpperCase();
  const walk = (c: Condition): boolean => {
    if ('field' in c) {
      if (c.field !== 'order.couponCode' || !USING_OPS.has(c.op)) return false;
      const values = (Array.isArray(c.value) ? c.value : [c.value]).filter((v): v is string => typeof v === 'string').map((v) => v.toUpperCase());
      return c.op === 'contains' ? values.some((v) => v.length > 0 && upper.includes(v)) : values.includes(upper);
    }
    return [...(c.all ?? []), ...(c.any ?? [])].some(walk);
  };
  return rule.conditions ? walk(rule.conditions) : false;
}

/**
 * What depends on a coupon of a shop (CW decisions): partner discount codes (live when the partner is approved) and
 * automations whose conditions use the code in this shop (live when enabled; drafts and disabled ones are listed only).
 */
export async function couponDependencies(db: Db | Knex.Transaction, accountId: string, shop: ShopRef, code: string): Promise<CouponDependency[]> {
  const deps: CouponDependency[] = [];
  const partners = await db('affiliate_discount_codes as dc').join('affiliate_partners as p', 'p.id', 'dc.partner_id')
    .where('dc.shop_id', shop.id).whereRaw('upper(dc.code) = upper(?)', [code]).orderBy('p.id').select('p.id', 'p.handle', 'p.state');
  for (const p of partners) {
    const live = p.state === 'approved';
    deps.push({
      type: 'affiliate_partner', id: String(p.id), name: p.handle, state: p.state, blocking: live,
      reason: live ? 'The discount code of an approved affiliate partner: the partner promotes it.' : `The discount code of a partner in state ${p.state}.`,
    });
  }
  const automations = await db('automations as a')
    .leftJoin('automation_versions as v', function join() { this.on('v.automation_id', 'a.id').andOn('v.version', 'a.published_version'); })
    .where('a.account_id', accountId).orderBy('a.id').select('a.workflow_id', 'a.name', 'a.state', 'a.enabled', 'a.dsl', 'v.dsl as published_dsl');
  for (const a of automations) {
    const rule = (a.enabled ? a.published_dsl ?? a.dsl : a.dsl) as Rule;
    const markets = rule?.trigger?.markets;
    if (!rule || (markets && !markets.includes(shop.code)) || !ruleUsesCoupon(rule, code)) continue;
    const state = a.enabled ? 'enabled' : a.state === 'published' ? 'disabled' : 'draft';
    deps.push({
      type: 'automation', id: a.workflow_id, name: a.name, state, blocking: a.enabled,
      reason: a.enabled ? 'An enabled automation whose conditions use this coupon code.' : `An automation (${state}) whose conditions use this coupon code.`,
    });
  }
  return deps;
}

// ---------------------------------------------------------------------------------------------------------------
// coupons_update and coupons_remove (D25)

export interface ConfirmedCall {
  tool: string;
  /** Every argument but the token: what the token is bound to. */
  args: Record<string, unknown>;
  token?: string;
}

export interface UpdateResult {
  status: 'preview' | 'unchanged' | 'updated';
  market: string;
  code: string;
  changes: FieldChange[];
  dependencies: CouponDependency[];
  confirmationToken: string | null;
  expiresAt: string | null;
  coupon: Coupon | null;
  message: string;
}

async function currentOrNotFound(ctx: CapabilityContext, shop: WriteShop, code: string, trx?: Knex.Transaction): Promise<PlatformCouponState> {
  const inRecords = await (trx ?? ctx.db)('coupons').where({ shop_id: shop.ref.id, code }).first('id');
  const current = inRecords ? await shop.adapter.readCoupon(shop.platformShop, code) : null;
  if (!current) {
    // Gone from the shop: the record goes too (as the next sync would), and the answer is "not found" (SPEC "Errors").
    if (inRecords) await ctx.db.transaction((t) => applyCouponRemoval(t, shop.platformShop, code));
    throw new AppError('COUPON_NOT_FOUND', `No coupon \`${code}\` in the records of shop \`${shop.ref.code}\`.`, { param: 'code' });
  }
  return current;
}

function stale(shop: WriteShop, code: string): AppError {
  return new AppError('CONFIRMATION_STALE', `Coupon ${code} of shop ${shop.ref.code} changed since the preview; nothing was changed. Call without \`confirmationToken\` for a new preview.`, { param: 'confirmationToken' });
}

/** coupons_update: a preview with a token, or with a valid token the update. */
export async function updateCoupon(ctx: CapabilityContext, market: string, rawCode: string, changes: CouponFields, call: ConfirmedCall): Promise<UpdateResult> {
  const shop = await resolveWriteShop(ctx, market);
  const code = normaliseCode(rawCode, shop.caps);
  if (Object.keys(changes).length === 0) throw bad('changes', 'name at least one field to change');
  // The token is checked before anything else is read: a bad token is refused the same whatever the shop holds.
  const verified = call.token ? verifyConfirmation(call.token, ctx.caller, call.tool, call.args, ctx.now(), ctx.cursorSecret) : null;
  await validateFields(ctx.db, shop, changes, 'changes.');
  const base = { market: shop.ref.code, code };
  if (!verified) {
    const current = await currentOrNotFound(ctx, shop, code);
    const diff = diffCoupons(current, withFields(current, changes));
    const dependencies = await couponDependencies(ctx.db, ctx.caller.account.id, shop.ref, code);
    if (diff.length === 0) {
      return { ...base, status: 'unchanged', changes: [], dependencies, confirmationToken: null, expiresAt: null, coupon: await mirrored(ctx, shop, code), message: 'The coupon already has these values; there is nothing to confirm.' };
    }
    const issued: IssuedToken = issueConfirmation(ctx.caller, call.tool, call.args, current, ctx.now(), ctx.cursorSecret);
    return {
      ...base, status: 'preview', changes: diff, dependencies, confirmationToken: issued.token, expiresAt: issued.expiresAt, coupon: await mirrored(ctx, shop, code),
      message: `Nothing was changed yet. To apply these ${diff.length} change(s), call coupons_update again with the same arguments and this confirmationToken before ${issued.expiresAt}.`,
    };
  }
  const diff = await ctx.db.transaction(async (trx) => {
    await consumeConfirmation(trx, verified, { caller: ctx.caller, tool: call.tool, shopId: shop.ref.id, code, now: ctx.now() });
    await lockCoupon(trx, shop.ref.id, code);
    const current = await currentOrNotFound(ctx, shop, code, trx);
    if (fingerprint(current) !== verified.state) throw stale(shop, code);
    const next = withFields(current, changes);
    const stored = await writeAndMirror(trx, shop, next);
    return diffCoupons(current, stored);
  });
  return {
    ...base, status: 'updated', changes: diff, dependencies: await couponDependencies(ctx.db, ctx.caller.account.id, shop.ref, code), confirmationToken: null,
    expiresAt: null, coupon: await mirrored(ctx, shop, code), message: `Coupon ${code} of shop ${shop.ref.code} was updated.`,
  };
}

export interface RemoveResult {
  status: 'preview' | 'blocked' | 'removed';
  market: string;
  code: string;
  coupon: Coupon | null;
  dependencies: CouponDependency[];
  confirmationToken: string | null;
  expiresAt: string | null;
  message: string;
}

function dependencyError(shop: WriteShop, code: string, dependencies: CouponDependency[]): AppError {
  return new AppError('COUPON_HAS_DEPENDENCIES', `Coupon ${code} of shop ${shop.ref.code} has a live dependency and is not removed: ${dependencies.filter((d) => d.blocking).map((d) => `${d.type} ${d.name}`).join(', ')}.`, { dependencies });
}

/** coupons_remove: a preview with its dependencies (and a token when nothing live depends on it), or with a valid token the removal. */
export async function removeCoupon(ctx: CapabilityContext, market: string, rawCode: string, call: ConfirmedCall): Promise<RemoveResult> {
  const shop = await resolveWriteShop(ctx, market);
  if (!shop.caps.canDelete) throw new AppError('PLATFORM_UNAVAILABLE', `The \`${shop.platformShop.platform}\` platform cannot delete coupons.`, { market, reason: 'cannot delete' });
  const code = normaliseCode(rawCode, shop.caps);
  const verified = call.token ? verifyConfirmation(call.token, ctx.caller, call.tool, call.args, ctx.now(), ctx.cursorSecret) : null;
  const base = { market: shop.ref.code, code };
  if (!verified) {
    const current = await currentOrNotFound(ctx, shop, code);
    const dependencies = await couponDependencies(ctx.db, ctx.caller.account.id, shop.ref, code);
    const coupon = await mirrored(ctx, shop, code);
    if (dependencies.some((d) => d.blocking)) {
      return { ...base, status: 'blocked', coupon, dependencies, confirmationToken: null, expiresAt: null, message: dependencyError(shop, code, dependencies).message };
    }
    const issued = issueConfirmation(ctx.caller, call.tool, call.args, current, ctx.now(), ctx.cursorSecret);
    return {
      ...base, status: 'preview', coupon, dependencies, confirmationToken: issued.token, expiresAt: issued.expiresAt,
      message: `Nothing was removed yet. Removal is irreversible: to remove coupon ${code} from shop ${shop.ref.code}, call coupons_remove again with the same arguments and this confirmationToken before ${issued.expiresAt}.`,
    };
  }
  const coupon = await mirrored(ctx, shop, code);
  await ctx.db.transaction(async (trx) => {
    await consumeConfirmation(trx, verified, { caller: ctx.caller, tool: call.tool, shopId: shop.ref.id, code, now: ctx.now() });
    await lockCoupon(trx, shop.ref.id, code);
    const current = await currentOrNotFound(ctx, shop, code, trx);
    if (fingerprint(current) !== verified.state) throw stale(shop, code);
    const dependencies = await couponDependencies(trx, ctx.caller.account.id, shop.ref, code);
    if (dependencies.some((d) => d.blocking)) throw dependencyError(shop, code, dependencies);
    await shop.adapter.removeCoupon(shop.platformShop, code);
    await applyCouponRemoval(trx, shop.platformShop, code);
  });
  return { ...base, status: 'removed', coupon, dependencies: [], confirmationToken: null, expiresAt: null, message: `Coupon ${code} was removed from shop ${shop.ref.code}.` };
}

// ---------------------------------------------------------------------------------------------------------------
// affiliate_discount_codes_ensure

export interface PartnerCodeResult {
  market: string;
  partnerId: string;
  code: string;
  outcome: 'created' | 'reused' | 'already_linked' | 'conflict';
  shopNote: string | null;
  message: string;
  coupon: Coupon | null;
}

/** The shop note on a partner's coupon: whose code it is, so nobody in the shop deletes or reuses it unknowingly. */
export function partnerShopNote(partner: { id: string; handle: string }): string {
  return `Affiliate partner discount code of ${partner.handle} (partner ${partner.id}); managed by the affiliate programme, do not delete or reuse.`;
}

/**
 * Ensures a partner's discount code on a shop: the coupon is created through coupons_ensure's path or an existing one
 * is reused (never overwritten: a different discount is a `conflict`, nothing linked), its shop note is written, and
 * the code is linked to the partner.
 */
export async function ensurePartnerCode(ctx: CapabilityContext, input: { partnerId: string; code: string; discount?: DiscountInput; name?: string; validUntil?: string | null }): Promise<PartnerCodeResult> {
  const shop = await resolveWriteShop(ctx, ctx.shop!.code);
  const code = normaliseCode(input.code, shop.caps);
  validateCode(code, shop.caps);
  const partnerRow = await ctx.db('affiliate_partners').where({ account_id: ctx.caller.account.id, id: input.partnerId }).first('id', 'handle', 'state');
  if (!partnerRow) throw new AppError('NOT_FOUND', `No affiliate partner \`${input.partnerId}\` in this account.`, { param: 'partnerId' });
  const partner = { id: String(partnerRow.id), handle: partnerRow.handle as string };
  if (partnerRow.state !== 'approved') {
    throw new AppError('STATE_CONFLICT', `Partner ${partner.handle} is ${partnerRow.state}: only an approved partner gets a discount code.`, { state: partnerRow.state, param: 'partnerId' });
  }
  const fields: CouponFields = { ...(input.discount ? { discount: input.discount } : {}), ...(input.name !== undefined ? { name: input.name } : {}), ...(input.validUntil !== undefined ? { validUntil: input.validUntil } : {}) };
  await validateFields(ctx.db, shop, fields, '');
  const note = partnerShopNote(partner);
  const base = { market: shop.ref.code, partnerId: partner.id, code };
  const result = await ctx.db.transaction(async (trx) => {
    await lockCoupon(trx, shop.ref.id, code);
    const link = await trx('affiliate_discount_codes').where({ shop_id: shop.ref.id }).whereRaw('upper(code) = upper(?)', [code]).first('partner_id');
    if (link && String(link.partner_id) !== partner.id) {
      throw new AppError('COUPON_CODE_TAKEN', `Code ${code} is already the discount code of another partner in shop ${shop.ref.code}.`, { param: 'code', partnerId: String(link.partner_id) });
    }
    // A code approved for another partner's request is reserved for that partner (affiliate_code_requests_decide).
    const reservation = await trx('affiliate_code_reservations').where({ shop_id: shop.ref.id }).whereRaw('upper(code) = upper(?)', [code]).first('partner_id');
    if (reservation && String(reservation.partner_id) !== partner.id) {
      throw new AppError('COUPON_CODE_TAKEN', `Code ${code} is reserved for another partner's approved code request in shop ${shop.ref.code}.`, { param: 'code', partnerId: String(reservation.partner_id) });
    }
    const current = await shop.adapter.readCoupon(shop.platformShop, code);
    let outcome: PartnerCodeResult['outcome'];
    if (!current) {
      if (!input.discount) throw new AppError('MISSING_PARAMETER', `Coupon ${code} does not exist in shop ${shop.ref.code}: \`discount\` is required to create it.`, { param: 'discount' });
      await writeAndMirror(trx, shop, withFields({ ...blankCoupon(code, shop.ref.currency, ctx.now()), note }, fields));
      outcome = 'created';
    } else {
      if (input.discount && !sameDiscount(current.discount, withFields(current, { discount: input.discount }).discount)) {
        await applyCoupons(trx, shop.platformShop, [{ kind: 'coupon', coupon: current }]);
        return 'conflict' as const;
      }
      // Reused as it is; only the note is written (the same values otherwise), so the shop shows whose code it is.
      if (current.note !== note) await writeAndMirror(trx, shop, { ...current, note });
      else await applyCoupons(trx, shop.platformShop, [{ kind: 'coupon', coupon: current }]);
      outcome = link ? 'already_linked' : 'reused';
    }
    if (!link) await trx('affiliate_discount_codes').insert({ shop_id: shop.ref.id, partner_id: partner.id, code, created_at: ctx.now() });
    return outcome;
  });
  const coupon = await mirrored(ctx, shop, code);
  if (result === 'conflict') {
    return { ...base, outcome: 'conflict', shopNote: null, coupon, message: `Coupon ${code} exists in shop ${shop.ref.code} with a DIFFERENT discount; it was NOT overwritten and NOT linked to ${partner.handle}. Omit \`discount\` to reuse it as it is, or choose another code.` };
  }
  const messages = {
    created: `Coupon ${code} was created in shop ${shop.ref.code} and linked to partner ${partner.handle}; the shop note was written.`,
    reused: `The existing coupon ${code} was reused and linked to partner ${partner.handle}; the shop note was written.`,
    already_linked: `Coupon ${code} was already partner ${partner.handle}'s discount code; the shop note is in place.`,
  };
  return { ...base, outcome: result, shopNote: note, coupon, message: messages[result] };
}
