/** The demo platform's data generator (D20): pure, seeded and streamable, so a million orders never sit in memory at once. */
import { CARRIERS, PEOPLE, type CountryCode, type ShopDefinition } from './catalogue.js';
import { customerAt, customerEmailHash, emailAsTyped } from './customers.js';
import { buildCatalogueModel, costAt, type CatalogueModel } from './generateCatalogue.js';
import { roundForCurrency, withoutVat } from './money.js';
import { createRandom, mixSeed, Random, type RandomState } from './random.js';
import { planShipment, TrackingNumbers, type ShipmentPlan, type TrackingState } from './shipments.js';
import { DAY_MS, HOUR_MS, localDateUtc, localMidnightInstant } from './time.js';
import { completePlan, orderAt, stockChangeTimes, type BaseOrderPlan, type OrderPlan } from './timeline.js';
import { applyOrderCoupon, CouponBook } from './coupons.js';
import type { GeneratedOrder, GeneratedOrderItem, GenerateOptions } from './types.js';

export { generateCatalogue, ean13CheckDigit } from './generateCatalogue.js';
export { customerEmailHash } from './customers.js';
export { orderAt, claimAt, ORDER_HORIZON_MS, type OrderPlan } from './timeline.js';
export type * from './types.js';

/** Relative order volume per local hour: a late-morning bump and a strong evening peak. */
const HOUR_WEIGHTS = [0.3, 0.15, 0.08, 0.05, 0.05, 0.1, 0.3, 0.6, 0.9, 1.1, 1.2, 1.2, 1.1, 1.1, 1.0, 1.0, 1.0, 1.1, 1.3, 1.6, 1.8, 1.7, 1.2, 0.6];
/** Relative volume per weekday (0 = Sunday): Sunday evenings are busy, Saturdays quiet. */
const WEEKDAY_WEIGHTS = [1.0, 1.12, 1.08, 1.02, 1.0, 0.88, 0.72];
/** Seasonality per month: garden season in spring, Christmas in November and December. */
const MONTH_WEIGHTS = [0.85, 0.85, 1.0, 1.15, 1.15, 1.0, 0.85, 0.85, 0.95, 1.0, 1.25, 1.35];
const ITEM_COUNT_WEIGHTS = [0.3, 0.28, 0.2, 0.13, 0.09];
const REPEAT_SHARE = 0.3;
const CANCEL_SHARE = 0.035;

/** The growth trend reaches this factor at the end of the history window and stays there afterwards. */
const GROWTH_AT_END = 1.7;
const HOUR_TOTAL = HOUR_WEIGHTS.reduce((a, b) => a + b, 0);

/**
 * A stretch of time whose orders are generated together: a local calendar day of the history window, the rest of the
 * last history day after its end, or a live day after that. Segments tile time without overlap.
 */
interface Segment {
  localDate: number;
  midnightMs: number;
  /** Orders are created in [startMs, endMs). */
  startMs: number;
  endMs: number;
  count: number;
  eurRate: number;
}

/** Everything order generation carries from one order to the next, as plain data so a stream can resume from it. */
interface GeneratorState {
  rng: RandomState;
  tracking: TrackingState;
  customers: number;
  yearSeq: Array<[number, number]>;
  /** Per product: the sum of every stock movement of the orders generated so far (their whole future included). */
  moved: number[];
  /** Per product: the latest stock-relevant instant of those orders. */
  stockTouched: number[];
  /** Uses so far per coupon code (usage limits). */
  couponUses: Array<[string, number]>;
}

/** Derives the seed of one shop of one account, so equal shop codes of different tenants get different data. */
export function shopSeed(seed: number, accountCode: string, shopCode: string): number {
  return mixSeed(seed, accountCode, shopCode);
}

function seasonFactor(date: Date): number {
  let season = MONTH_WEIGHTS[date.getUTCMonth()];
  if (date.getUTCMonth() === 11 && date.getUTCDate() > 20) season *= 0.55;
  // Black Friday: the last Friday of November.
  if (date.getUTCMonth() === 10 && date.getUTCDay() === 5 && date.getUTCDate() > 23) season *= 2.5;
  return season;
}

/** Hour weights of a segment: each local hour weighted by the part of it that lies inside the segment. */
function hourMass(segment: Pick<Segment, 'midnightMs' | 'startMs' | 'endMs'>): number[] {
  return HOUR_WEIGHTS.map((w, h) => {
    const hourStart = segment.midnightMs + h * HOUR_MS;
    const span = Math.min(hourStart + HOUR_MS, segment.endMs) - Math.max(hourStart, segment.startMs);
    return span > 0 ? (w * span) / HOUR_MS : 0;
  });
}

/** Splits the history's order count over its days: weekday, season, growth trend and noise, rounded by largest remainder. */
function planDays(rng: Random, shop: ShopDefinition, options: GenerateOptions): { segments: Segment[]; scale: number } {
  const endMs = options.endDate.getTime();
  const lastLocal = localDateUtc(shop.timeZone, endMs);
  const segments: Segment[] = [];
  const weights: number[] = [];
  let rate = shop.eurRate;
  for (let d = 0; d < options.days; d++) {
    const localDate = lastLocal - (options.days - 1 - d) * DAY_MS;
    const midnightMs = localMidnightInstant(shop.timeZone, localDate);
    const date = new Date(localDate);
    const segment = { localDate, midnightMs, startMs: midnightMs, endMs: Math.min(localMidnightInstant(shop.timeZone, localDate + DAY_MS), endMs), count: 0, eurRate: 0 };
    const mass = hourMass(segment).reduce((a, b) => a + b, 0);
    const growth = 1 + (GROWTH_AT_END - 1) * (d / Math.max(1, options.days - 1));
    weights.push(Math.max(0, WEEKDAY_WEIGHTS[date.getUTCDay()] * growth * seasonFactor(date) * rng.logNormal(1, 0.12) * (mass / HOUR_TOTAL)));
    // The exchange rate wanders a little from day to day and is pulled back to its centre (D23).
    if (shop.currency !== 'EUR') rate = rate + (shop.eurRate - rate) * 0.05 + rng.normal(0, shop.eurRate * 0.002);
    segment.eurRate = Math.round(rate * 1e6) / 1e6;
    segments.push(segment);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (total > 0 ? (options.orders * w) / total : 0));
  let assigned = 0;
  exact.forEach((x, d) => {
    segments[d].count = Math.floor(x);
    assigned += segments[d].count;
  });
  const byRemainder = exact.map((x, d) => ({ d, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r || a.d - b.d);
  for (let i = 0; assigned < options.orders && i < byRemainder.length; i++, assigned++) segments[byRemainder[i].d].count++;
  return { segments, scale: total > 0 ? options.orders / total : 0 };
}

/** Sorted order instants of a segment, drawn from the hour profile. */
function orderTimes(rng: Random, segment: Segment): number[] {
  const weights = hourMass(segment);
  const hours = HOUR_WEIGHTS.map((_, h) => h);
  const times: number[] = [];
  for (let i = 0; i < segment.count; i++) {
    const h = rng.weighted(hours, weights);
    const hourStart = Math.max(segment.startMs, segment.midnightMs + h * HOUR_MS);
    const span = Math.min(segment.midnightMs + (h + 1) * HOUR_MS, segment.endMs) - hourStart;
    times.push(hourStart + Math.floor(rng.next() * span));
  }
  return times.sort((a, b) => a - b);
}

/** Picks a product by popularity; products launched after the order instant are skipped. */
function pickProduct(rng: Random, model: CatalogueModel, atMs: number, taken: Set<number>): number {
  const cum = model.popularityCumulative;
  for (let attempt = 0; attempt < 12; attempt++) {
    const target = rng.next() * cum[cum.length - 1];
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    if (model.products[lo].createdAtMs <= atMs && !taken.has(lo)) return lo;
  }
  // Rare fallback: the first available product not yet in this order.
  const fallback = model.products.findIndex((p, i) => p.createdAtMs <= atMs && !taken.has(i));
  return fallback >= 0 ? fallback : 0;
}

/** Mutable state shared by consecutive orders of one shop. */
interface OrderContext {
  seed: number;
  shop: ShopDefinition;
  model: CatalogueModel;
  rng: Random;
  tracking: TrackingNumbers;
  customers: number;
  yearSeq: Map<number, number>;
  moved: number[];
  stockTouched: number[];
  coupons: CouponBook;
  couponUses: Map<string, number>;
}

function buildItems(ctx: OrderContext, createdMs: number): GeneratedOrderItem[] {
  const { rng, model } = ctx;
  const count = rng.weighted([1, 2, 3, 4, 5], ITEM_COUNT_WEIGHTS);
  const taken = new Set<number>();
  const items: GeneratedOrderItem[] = [];
  for (let line = 1; line <= count; line++) {
    const index = pickProduct(rng, model, createdMs, taken);
    taken.add(index);
    const p = model.products[index];
    const quantity = rng.weighted([1, 2, 3], [0.8, 0.15, 0.05]);
    // Occasional 10 % promotion on a line.
    const unitWith = rng.chance(0.05) ? roundForCurrency(ctx.shop.currency, p.product.priceWithVatMinor * 0.9) : p.product.priceWithVatMinor;
    const cost = costAt(p, model.windowStartMs, createdMs);
    items.push({
      lineNo: line,
      productCode: p.product.code,
      name: p.product.name,
      quantity,
      unitPriceWithVatMinor: unitWith,
      unitPriceWithoutVatMinor: withoutVat(unitWith, p.product.vatRate),
      vatRate: p.product.vatRate,
      // Now and then the shop did not store a cost on the line even though the card has one.
      purchasePriceWithoutVatMinor: cost !== null && !rng.chance(0.01) ? cost : null,
    });
  }
  return items;
}

/** The next order code: year of the order + per-year sequence, e.g. 2026001234 (as shop back-ends number them). */
function nextOrderCode(ctx: OrderContext, localDate: number, firstYearStart: number): string {
  const year = new Date(localDate).getUTCFullYear();
  let seq = ctx.yearSeq.get(year);
  if (seq === undefined) seq = year === new Date(firstYearStart).getUTCFullYear() ? ctx.rng.int(1000, 9000) : 1;
  ctx.yearSeq.set(year, seq + 1);
  return `${year}${String(seq).padStart(6, '0')}`;
}

/** Plans one order with its whole future: payment, cancellation, shipments; nothing here depends on "now". */
function buildOrderPlan(ctx: OrderContext, createdMs: number, eurRate: number, code: string): BaseOrderPlan {
  const { rng, shop } = ctx;
  const returning = ctx.customers > 20 && rng.chance(REPEAT_SHARE);
  // Returning customers lean towards early (loyal) ones; the power skews the uniform draw.
  const customerIndex = returning ? Math.floor(ctx.customers * Math.pow(rng.next(), 1.5)) : ctx.customers++;
  const customer = customerAt(ctx.seed, shop, customerIndex);
  const email = emailAsTyped(rng, customer.email);

  const items = buildItems(ctx, createdMs);
  const stdRate = shop.vatRates[0];
  let goodsWith = 0;
  let goodsWithout = 0;
  for (const it of items) {
    const lineWith = it.unitPriceWithVatMinor * it.quantity;
    goodsWith += lineWith;
    // VAT is computed per line from the line total, as invoices do.
    goodsWithout += withoutVat(lineWith, it.vatRate);
  }
  const method = rng.weighted(shop.shippingMethods, shop.shippingMethods.map((m) => m.weight));
  const shippingWith = goodsWith >= shop.freeShippingFromMinor ? 0 : method.priceMinor;
  const shippingWithout = withoutVat(shippingWith, stdRate);
  // A coupon draws from its own stream, so the draws of every order (with or without one) stay as they were.
  const coupon = applyOrderCoupon({ book: ctx.coupons, model: ctx.model, uses: ctx.couponUses }, ctx.seed, shop, {
    code, createdMs, newCustomer: !returning, items, shippingWithVatMinor: shippingWith,
  });
  const discounts = coupon?.lines ?? [];
  const totalWith = goodsWith + shippingWith + discounts.reduce((sum, d) => sum + d.amountWithVatMinor, 0);
  const totalWithout = goodsWithout + shippingWithout + discounts.reduce((sum, d) => sum + d.amountWithoutVatMinor, 0);
  const payment = rng.weighted(shop.paymentMethods, shop.paymentMethods.map((m) => m.weight));

  let paidAt: number | null = null;
  if (payment.kind === 'card' || payment.kind === 'wallet') paidAt = createdMs + rng.int(20_000, 300_000);
  else if (payment.kind === 'transfer') paidAt = createdMs + Math.min(5 * DAY_MS, Math.max(HOUR_MS, rng.logNormal(20, 0.8) * HOUR_MS));
  if (paidAt !== null) paidAt = Math.round(paidAt);

  let cancelMs: number | null = null;
  const shipments: ShipmentPlan[] = [];
  if (rng.chance(CANCEL_SHARE)) {
    // Unpaid transfers are cancelled after a reminder period; others by the customer soon after ordering.
    cancelMs = createdMs + (payment.kind === 'transfer' ? rng.int(5, 10) * DAY_MS : rng.int(HOUR_MS / 2, 2 * DAY_MS));
    paidAt = null;
  } else {
    const readyFrom = payment.kind === 'transfer' ? paidAt! : createdMs;
    let shipMs = readyFrom + Math.min(96, Math.max(1, rng.logNormal(16, 0.6))) * HOUR_MS;
    const carrier = CARRIERS[method.carrier];
    const depots = PEOPLE[shop.country].cities.slice(0, 4).map((c) => c.name);
    // A cancelled label is followed by a replacement most of the time.
    for (let attempt = 0; attempt < 2; attempt++) {
      const cancelLabel = attempt === 0 && rng.chance(0.02);
      const shipment = planShipment({
        rng, carrier, trackingNumber: ctx.tracking.next(carrier), createdAtMs: Math.round(shipMs),
        country: customer.country as CountryCode, timeZone: shop.timeZone, depots, destinationCity: customer.city, cancel: cancelLabel,
      });
      shipments.push(shipment);
      if (!cancelLabel || !rng.chance(0.8)) break;
      shipMs = shipment.settledMs + rng.float(1, 24) * HOUR_MS;
    }
  }
  return {
    code,
    createdMs,
    currency: shop.currency,
    totalWithVatMinor: totalWith,
    totalWithoutVatMinor: totalWithout,
    totalVatMinor: totalWith - totalWithout,
    shippingWithVatMinor: shippingWith,
    eurRate,
    paymentMethod: payment.name,
    paymentKind: payment.kind,
    shippingMethod: method.name,
    // Shops in SK/CZ use the order number as the payment reference; it must fit 10 digits (D21).
    variableSymbol: code.length <= 10 ? code : code.slice(-10),
    customerEmailHash: customerEmailHash(email),
    customer: { ...customer, email },
    items,
    couponCode: coupon?.couponCode ?? null,
    discounts,
    prepaidMs: payment.kind === 'cod' ? null : paidAt,
    cancelMs,
    shipments,
  };
}

/**
 * The orders of one demo shop, past and future, as a deterministic function of (seed, shop, history options): the
 * history window ends at `endDate` with exactly `orders` orders, and new orders keep arriving afterwards at the rate the
 * history ended with. Generation is sequential; snapshots at segment starts let a read resume near any instant.
 */
export class OrderTimeline {
  readonly model: CatalogueModel;
  readonly historyEndMs: number;
  readonly windowStartMs: number;
  readonly productIndex: Map<string, number>;
  /** Expected orders per day at the end of the history window (for stock planning). */
  readonly ordersPerDayAtEnd: number;
  private readonly segments: Segment[];
  private readonly windowCount: number;
  private readonly scale: number;
  private readonly firstYearStart: number;
  private readonly snapshots = new Map<number, GeneratorState>();
  readonly coupons: CouponBook;

  constructor(readonly seed: number, readonly shop: ShopDefinition, readonly options: GenerateOptions) {
    this.model = buildCatalogueModel(seed, shop, options);
    this.historyEndMs = options.endDate.getTime();
    this.windowStartMs = this.model.windowStartMs;
    this.productIndex = new Map(this.model.products.map((p, i) => [p.product.code, i]));
    this.coupons = new CouponBook(seed, shop, this.model);
    const planned = planDays(createRandom(seed, 'days', shop.code), shop, options);
    this.segments = planned.segments;
    this.windowCount = planned.segments.length;
    this.scale = planned.scale;
    this.firstYearStart = planned.segments.length ? planned.segments[0].localDate : 0;
    this.ordersPerDayAtEnd = (options.orders / Math.max(1, options.days)) * (GROWTH_AT_END / ((1 + GROWTH_AT_END) / 2));
    const products = this.model.products.length;
    this.snapshots.set(0, {
      rng: createRandom(seed, 'orders', shop.code).getState(),
      tracking: new TrackingNumbers(createRandom(seed, 'tracking', shop.code)).snapshot(),
      customers: 0, yearSeq: [], moved: new Array<number>(products).fill(0), stockTouched: new Array<number>(products).fill(0), couponUses: [],
    });
  }

  /** The live segment after the history: k = 0 is the rest of the last history day, then whole local days. */
  private liveSegment(k: number): Segment {
    const { shop } = this;
    const lastLocal = localDateUtc(shop.timeZone, this.historyEndMs);
    const localDate = lastLocal + k * DAY_MS;
    const midnightMs = localMidnightInstant(shop.timeZone, localDate);
    // Strictly after the history's end, so an order at exactly that instant can never be both history and news.
    const startMs = k === 0 ? this.historyEndMs + 1 : midnightMs;
    const endMs = localMidnightInstant(shop.timeZone, localDate + DAY_MS);
    const segment: Segment = { localDate, midnightMs, startMs, endMs, count: 0, eurRate: shop.eurRate };
    const rng = createRandom(this.seed, 'live-day', shop.code, localDate);
    const date = new Date(localDate);
    const mass = hourMass(segment).reduce((a, b) => a + b, 0);
    const expected = Math.max(0, this.scale * WEEKDAY_WEIGHTS[date.getUTCDay()] * GROWTH_AT_END * seasonFactor(date) * rng.logNormal(1, 0.12) * (mass / HOUR_TOTAL));
    segment.count = Math.floor(expected) + (rng.next() < expected - Math.floor(expected) ? 1 : 0);
    if (shop.currency !== 'EUR') {
      const lastRate = this.windowCount ? this.segments[this.windowCount - 1].eurRate : shop.eurRate;
      const rate = shop.eurRate + (lastRate - shop.eurRate) * Math.pow(0.95, k) + rng.normal(0, shop.eurRate * 0.003);
      segment.eurRate = Math.round(rate * 1e6) / 1e6;
    }
    return segment;
  }

  private segment(index: number): Segment {
    while (this.segments.length <= index) this.segments.push(this.liveSegment(this.segments.length - this.windowCount));
    return this.segments[index];
  }

  /** Index of the segment that contains `ms` (0 for anything before the history window). */
  segmentIndexAt(ms: number): number {
    if (this.windowCount === 0 || ms >= this.historyEndMs) {
      const k = Math.max(0, Math.round((localDateUtc(this.shop.timeZone, Math.max(ms, this.historyEndMs)) - localDateUtc(this.shop.timeZone, this.historyEndMs)) / DAY_MS));
      return this.windowCount + k;
    }
    let lo = 0;
    let hi = this.windowCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.segments[mid].startMs <= ms) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** EUR per unit of the shop currency on the local day of `ms` (the rate its orders carry, D23). */
  eurRateAt(ms: number): number {
    return this.segment(this.segmentIndexAt(ms)).eurRate;
  }

  /** Orders created on a local date (UTC-midnight epoch), from the day plan; 0 outside the timeline. */
  ordersOnLocalDay(localDate: number): number {
    const index = this.segmentIndexAt(localMidnightInstant(this.shop.timeZone, localDate) + 12 * HOUR_MS);
    let orders = 0;
    for (let i = Math.max(0, index - 1); i <= index + 1; i++) if (this.segment(i).localDate === localDate) orders += this.segment(i).count;
    return orders;
  }

  /** Start instant of a segment. */
  segmentStartMs(index: number): number {
    return this.segment(index).startMs;
  }

  private contextFrom(state: GeneratorState): OrderContext {
    return {
      seed: this.seed, shop: this.shop, model: this.model, rng: Random.fromState(state.rng), tracking: TrackingNumbers.fromSnapshot(state.tracking),
      customers: state.customers, yearSeq: new Map(state.yearSeq), moved: [...state.moved], stockTouched: [...state.stockTouched],
      coupons: this.coupons, couponUses: new Map(state.couponUses),
    };
  }

  private record(index: number, ctx: OrderContext): void {
    if (this.snapshots.has(index)) return;
    this.snapshots.set(index, {
      rng: ctx.rng.getState(), tracking: ctx.tracking.snapshot(), customers: ctx.customers, yearSeq: [...ctx.yearSeq],
      moved: [...ctx.moved], stockTouched: [...ctx.stockTouched], couponUses: [...ctx.couponUses],
    });
  }

  /** Generates one whole segment, updating the context. */
  private *segmentPlans(ctx: OrderContext, index: number): Generator<OrderPlan> {
    const segment = this.segment(index);
    for (const t of orderTimes(ctx.rng, segment)) {
      const plan = completePlan(this.seed, this.shop, buildOrderPlan(ctx, t, segment.eurRate, nextOrderCode(ctx, segment.localDate, this.firstYearStart)));
      for (const m of plan.movements) ctx.moved[this.productIndex.get(m.productCode)!] += m.quantity;
      const touched = Math.max(...stockChangeTimes(plan));
      for (const it of plan.items) {
        const p = this.productIndex.get(it.productCode)!;
        if (touched > ctx.stockTouched[p]) ctx.stockTouched[p] = touched;
      }
      yield plan;
    }
  }

  /** The generator state at the start of a segment, generating forward from the nearest earlier snapshot if needed. */
  stateAt(index: number): GeneratorState {
    const known = this.snapshots.get(index);
    if (known) return known;
    let from = index;
    while (!this.snapshots.has(from)) from--;
    const ctx = this.contextFrom(this.snapshots.get(from)!);
    for (let i = from; i < index; i++) {
      for (const _plan of this.segmentPlans(ctx, i)) { /* advancing only */ }
      this.record(i + 1, ctx);
    }
    return this.snapshots.get(index)!;
  }

  /** Orders created in [fromMs, toMs], in creation order, each with its whole planned future. */
  *plans(fromMs: number, toMs: number): Generator<OrderPlan> {
    let index = this.segmentIndexAt(fromMs);
    const ctx = this.contextFrom(this.stateAt(index));
    for (; this.segment(index).startMs <= toMs; index++) {
      for (const plan of this.segmentPlans(ctx, index)) {
        if (plan.createdMs > toMs) return;
        if (plan.createdMs >= fromMs) yield plan;
      }
      this.record(index + 1, ctx);
    }
  }
}

/** Streams the history orders of one shop in time order, as they stand at `endDate`; memory stays flat for any count. */
export function* generateOrders(seed: number, shop: ShopDefinition, options: GenerateOptions): Generator<GeneratedOrder> {
  const endMs = options.endDate.getTime();
  for (const plan of new OrderTimeline(seed, shop, options).plans(-Infinity, endMs)) yield orderAt(plan, endMs)!;
}

/** Groups a stream into arrays of at most `size`, for batched writes. */
export function* inBatches<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}
