/**
 * The demo shops' coupons (D20): shop campaigns, a welcome code, a free-shipping code and the discount codes of the
 * affiliate partners, each a pure function of (seed, shop, index) so the book extends into the future without state.
 * Orders use them (`applyOrderCoupon`): the discount is an order-level line per VAT rate that lowers the order total.
 */
import type { Currency, Language, ShopDefinition } from './catalogue.js';
import type { CatalogueModel } from './generateCatalogue.js';
import { roundForCurrency, withoutVat } from './money.js';
import { createRandom, type Random } from './random.js';
import { DAY_MS, HOUR_MS } from './time.js';
import type { GeneratedCoupon, GeneratedDiscountLine, GeneratedOrderItem } from './types.js';

/** A new shop campaign starts about every this many days. */
const CAMPAIGN_EVERY_DAYS = 18;
/** Partner (affiliate) discount codes per shop; partner `i` joins the programme `PARTNER_EVERY_DAYS * i` days into the window. */
export const DEMO_PARTNER_CODES = 12;
const PARTNER_EVERY_DAYS = 35;
/** Share of orders that use a coupon, by kind. */
const CAMPAIGN_SHARE = 0.07;
const PARTNER_SHARE = 0.035;
const WELCOME_SHARE = 0.06;

const SEASON_WORDS: Record<Language, [string, string, string, string]> = {
  sk: ['ZIMA', 'JAR', 'LETO', 'JESEN'],
  cs: ['ZIMA', 'JARO', 'LETO', 'PODZIM'],
  hu: ['TEL', 'TAVASZ', 'NYAR', 'OSZ'],
  pl: ['ZIMA', 'WIOSNA', 'LATO', 'JESIEN'],
};
const WELCOME_WORD: Record<Language, string> = { sk: 'VITAJ10', cs: 'VITEJ10', hu: 'UDV10', pl: 'WITAJ10' };
const FREE_SHIPPING_WORD: Record<Language, string> = { sk: 'DOPRAVAZDARMA', cs: 'DOPRAVAZDARMA', hu: 'INGYENSZALLITAS', pl: 'DARMOWADOSTAWA' };
/** Handles of the demo partners (bloggers, influencers, comparison sites); the affiliate programme links them by index. */
export const PARTNER_HANDLES = ['KATKA', 'MAREK', 'VARIME', 'ZUZA', 'DOMACNOST', 'PETRA', 'KUCHTIK', 'LUCIA', 'TOMAS', 'BYVANIE', 'EVA', 'GURMAN'];

function seasonOf(ms: number): number {
  return Math.floor((new Date(ms).getUTCMonth() + 1) / 3) % 4;
}

/** A fixed amount that reads naturally in the shop's currency (5 EUR, 100 CZK, 2000 HUF, 20 PLN), in minor units. */
function fixedAmount(rng: Random, currency: Currency): number {
  const major = { EUR: [5, 10, 15], CZK: [100, 200, 300], HUF: [2000, 3000, 5000], PLN: [20, 30, 50] }[currency];
  return rng.pick(major) * 100;
}

/** What every coupon of a shop is restricted to, drawn from the shop's real categories and products. */
function restriction(rng: Random, model: CatalogueModel): { categoryGuids: string[]; productCodes: string[] } {
  const r = rng.next();
  if (r < 0.2) {
    const leaves = model.catalogue.categories.filter((c) => model.catalogue.products.some((p) => p.categoryGuid === c.guid));
    return { categoryGuids: [rng.pick(leaves).guid], productCodes: [] };
  }
  if (r < 0.28) {
    const picked = new Set<string>();
    for (let i = 0; i < 5; i++) picked.add(rng.pick(model.catalogue.products).code);
    return { categoryGuids: [], productCodes: [...picked].sort() };
  }
  return { categoryGuids: [], productCodes: [] };
}

/** Shop campaign `k`: a seasonal percent or fixed-amount code, valid for a few weeks, sometimes limited or switched off early. */
function campaignCoupon(seed: number, shop: ShopDefinition, model: CatalogueModel, k: number): GeneratedCoupon {
  const rng = createRandom(seed, 'coupon-campaign', shop.code, k);
  const createdMs = model.windowStartMs - 40 * DAY_MS + k * CAMPAIGN_EVERY_DAYS * DAY_MS + rng.int(0, 5 * 24) * HOUR_MS;
  const validFromMs = createdMs + rng.int(0, 72) * HOUR_MS;
  const validUntilMs = validFromMs + rng.int(7, 40) * DAY_MS;
  const percent = rng.chance(0.7);
  const value = percent ? rng.pick([5, 10, 15, 20, 25]) : fixedAmount(rng, shop.currency);
  const word = SEASON_WORDS[shop.language][seasonOf(validFromMs)];
  const year = String(new Date(validFromMs).getUTCFullYear()).slice(2);
  const code = `${word}${year}${percent ? value : value / 100}${String.fromCharCode(65 + (k % 26))}`;
  const { categoryGuids, productCodes } = restriction(rng, model);
  // A few campaigns are switched off by the shop before they end.
  const disabledMs = rng.chance(0.1) ? validFromMs + rng.int(1, 6) * DAY_MS : null;
  return {
    code, name: `${word} ${year}: ${percent ? `${value} %` : `${value / 100} ${shop.currency}`}`,
    discount: percent ? { type: 'percent', percent: value } : { type: 'fixed', amountMinor: value },
    currency: shop.currency,
    minOrderMinor: rng.chance(0.4) ? roundForCurrency(shop.currency, shop.freeShippingFromMinor * rng.pick([0.5, 0.75, 1])) : null,
    validFrom: new Date(validFromMs), validUntil: new Date(validUntilMs),
    usageLimit: rng.chance(0.3) ? rng.pick([25, 50, 100, 200]) : null, perCustomerLimit: rng.chance(0.5) ? 1 : null,
    categoryGuids, productCodes, enabled: disabledMs === null,
    createdAt: new Date(createdMs), updatedAt: new Date(disabledMs ?? createdMs), disabledAt: disabledMs === null ? null : new Date(disabledMs),
    partnerIndex: null,
  };
}

/** The partner discount code of demo partner `i` (10 % or 15 %, no end date). */
function partnerCoupon(seed: number, shop: ShopDefinition, model: CatalogueModel, i: number): GeneratedCoupon {
  const rng = createRandom(seed, 'coupon-partner', shop.code, i);
  const createdMs = model.windowStartMs + i * PARTNER_EVERY_DAYS * DAY_MS + rng.int(0, 10 * 24) * HOUR_MS;
  const percent = rng.pick([10, 10, 15]);
  return {
    code: `${PARTNER_HANDLES[i % PARTNER_HANDLES.length]}${percent}`, name: `Partner code ${PARTNER_HANDLES[i % PARTNER_HANDLES.length]}`,
    discount: { type: 'percent', percent }, currency: shop.currency, minOrderMinor: null,
    validFrom: new Date(createdMs), validUntil: null, usageLimit: null, perCustomerLimit: null,
    categoryGuids: [], productCodes: [], enabled: true,
    createdAt: new Date(createdMs), updatedAt: new Date(createdMs), disabledAt: null, partnerIndex: i,
  };
}

/** The standing codes: a welcome discount for first orders and free shipping above a minimum. */
function standingCoupons(seed: number, shop: ShopDefinition, model: CatalogueModel): GeneratedCoupon[] {
  const rng = createRandom(seed, 'coupon-standing', shop.code);
  const openedMs = model.windowStartMs - 200 * DAY_MS + rng.int(0, 30) * DAY_MS;
  const base = { currency: shop.currency, validUntil: null, usageLimit: null, categoryGuids: [], productCodes: [], enabled: true, disabledAt: null, partnerIndex: null };
  return [
    {
      ...base, code: WELCOME_WORD[shop.language], name: 'Welcome discount for a first order', discount: { type: 'percent', percent: 10 },
      minOrderMinor: null, validFrom: new Date(openedMs), perCustomerLimit: 1, createdAt: new Date(openedMs), updatedAt: new Date(openedMs),
    },
    {
      ...base, code: FREE_SHIPPING_WORD[shop.language], name: 'Free shipping', discount: { type: 'free_shipping' },
      minOrderMinor: roundForCurrency(shop.currency, shop.freeShippingFromMinor / 2), validFrom: new Date(openedMs + 30 * DAY_MS),
      perCustomerLimit: null, createdAt: new Date(openedMs + 30 * DAY_MS), updatedAt: new Date(openedMs + 30 * DAY_MS),
    },
  ];
}

/** Every coupon a demo shop has created up to an instant; deterministic, extends into the future as the clock runs. */
export class CouponBook {
  private readonly campaigns: GeneratedCoupon[] = [];
  private readonly partners: GeneratedCoupon[];
  private readonly standing: GeneratedCoupon[];

  constructor(private readonly seed: number, private readonly shop: ShopDefinition, private readonly model: CatalogueModel) {
    this.standing = standingCoupons(seed, shop, model);
    this.partners = Array.from({ length: DEMO_PARTNER_CODES }, (_, i) => partnerCoupon(seed, shop, model, i));
  }

  private campaignsThrough(ms: number): GeneratedCoupon[] {
    while (this.campaigns.length === 0 || this.campaigns[this.campaigns.length - 1].createdAt.getTime() <= ms) {
      this.campaigns.push(campaignCoupon(this.seed, this.shop, this.model, this.campaigns.length));
    }
    return this.campaigns;
  }

  /** Coupons created at or before `untilMs`, as they stand then (a coupon switched off later is still enabled). */
  couponsAt(untilMs: number): GeneratedCoupon[] {
    const all = [...this.standing, ...this.campaignsThrough(untilMs), ...this.partners].filter((c) => c.createdAt.getTime() <= untilMs);
    return all.map((c) => (c.disabledAt && c.disabledAt.getTime() > untilMs ? { ...c, enabled: true, updatedAt: c.createdAt } : c));
  }

  /** Coupons a customer can apply at an instant, by kind. */
  usableAt(ms: number): { campaigns: GeneratedCoupon[]; partners: GeneratedCoupon[]; welcome: GeneratedCoupon; freeShipping: GeneratedCoupon } {
    const usable = (c: GeneratedCoupon) => c.createdAt.getTime() <= ms && (c.validFrom === null || c.validFrom.getTime() <= ms)
      && (c.validUntil === null || ms < c.validUntil.getTime()) && (c.disabledAt === null || ms < c.disabledAt.getTime());
    return {
      campaigns: this.campaignsThrough(ms).filter(usable),
      partners: this.partners.filter(usable),
      welcome: this.standing[0],
      freeShipping: this.standing[1],
    };
  }
}

const categoryIndexes = new WeakMap<CatalogueModel, Map<string, string>>();

/** Product code → category guid of a catalogue, built once per catalogue. */
function categoryIndex(model: CatalogueModel): Map<string, string> {
  let index = categoryIndexes.get(model);
  if (!index) {
    index = new Map(model.catalogue.products.map((p) => [p.code, p.categoryGuid]));
    categoryIndexes.set(model, index);
  }
  return index;
}

export interface CouponContext {
  book: CouponBook;
  model: CatalogueModel;
  /** Uses so far per code, for usage limits (part of the generator's resumable state). */
  uses: Map<string, number>;
}

export interface OrderCouponResult {
  couponCode: string;
  lines: GeneratedDiscountLine[];
}

/**
 * Decides whether an order used a coupon and computes its discount lines, one per VAT rate of the goods it applies to
 * (free shipping: one line at the standard rate). Uses its own stream, so orders without a coupon are unchanged.
 */
export function applyOrderCoupon(
  ctx: CouponContext, seed: number, shop: ShopDefinition, order: { code: string; createdMs: number; newCustomer: boolean; items: GeneratedOrderItem[]; shippingWithVatMinor: number },
): OrderCouponResult | null {
  const rng = createRandom(seed, 'order-coupon', shop.code, order.code);
  const r = rng.next();
  const freeShippingDraw = r > 0.985 && order.shippingWithVatMinor > 0;
  if (r >= WELCOME_SHARE + PARTNER_SHARE + CAMPAIGN_SHARE && !freeShippingDraw) return null;
  const usable = ctx.book.usableAt(order.createdMs);
  let coupon: GeneratedCoupon | null = null;
  if (order.newCustomer && r < WELCOME_SHARE) coupon = usable.welcome;
  else if (r < WELCOME_SHARE + PARTNER_SHARE && usable.partners.length) coupon = rng.pick(usable.partners);
  else if (r < WELCOME_SHARE + PARTNER_SHARE + CAMPAIGN_SHARE && usable.campaigns.length) coupon = rng.pick(usable.campaigns);
  else if (freeShippingDraw) coupon = usable.freeShipping;
  if (!coupon) return null;
  if (coupon.usageLimit !== null && (ctx.uses.get(coupon.code) ?? 0) >= coupon.usageLimit) return null;

  const categoryOf = categoryIndex(ctx.model);
  const chosen = coupon;
  const qualifies = (it: GeneratedOrderItem) => (chosen.categoryGuids.length === 0 || chosen.categoryGuids.includes(categoryOf.get(it.productCode) ?? ''))
    && (chosen.productCodes.length === 0 || chosen.productCodes.includes(it.productCode));
  const byRate = new Map<number, number>();
  for (const it of order.items.filter(qualifies)) byRate.set(it.vatRate, (byRate.get(it.vatRate) ?? 0) + it.unitPriceWithVatMinor * it.quantity);
  const goods = [...byRate.values()].reduce((a, b) => a + b, 0);
  if (coupon.minOrderMinor !== null && goods < coupon.minOrderMinor) return null;

  const name = `Coupon ${chosen.code}`;
  const line = (vatRate: number, withVat: number): GeneratedDiscountLine => ({
    couponCode: chosen.code, name, vatRate, amountWithVatMinor: -withVat, amountWithoutVatMinor: -withoutVat(withVat, vatRate),
  });
  let lines: GeneratedDiscountLine[] = [];
  const discount = chosen.discount;
  if (discount.type === 'free_shipping') {
    if (order.shippingWithVatMinor === 0) return null;
    lines = [line(shop.vatRates[0], order.shippingWithVatMinor)];
  } else if (goods > 0) {
    const total = discount.type === 'percent'
      ? roundForCurrency(shop.currency, (goods * discount.percent) / 100)
      : Math.min(discount.amountMinor, goods);
    // Spread over the VAT rates in proportion to the goods at each rate; the rounding rest goes to the largest rate.
    const rates = [...byRate.entries()].sort((a, b) => b[1] - a[1]);
    let rest = total;
    const parts = rates.map(([rate, amount], i) => {
      const part = i === rates.length - 1 ? rest : roundForCurrency(shop.currency, (total * amount) / goods);
      rest -= part;
      return [rate, part] as const;
    });
    lines = parts.filter(([, amount]) => amount > 0).map(([rate, amount]) => line(rate, amount));
  }
  if (lines.length === 0) return null;
  ctx.uses.set(chosen.code, (ctx.uses.get(chosen.code) ?? 0) + 1);
  return { couponCode: chosen.code, lines };
}
