/**
 * The `demo` shop platform (D20) behind the adapter interface. Reads are stateless: the shop's state at any instant is
 * a view of the deterministic order timelines, so "changes since a checkpoint" are the records whose timeline has a
 * change in (since, until]. The platform's clock runs from the end of the loaded history, at real time or faster.
 * Writes the service makes are kept in the platform's own table, as a shop back-end would store them.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Db } from '../../db/knex.js';
import type {
  AreaRecords, AvailabilityEntry, CatalogueRecord, ChangeBatch, ChangeRequest, ConnectionCheck, ConnectionRequest, ContentTexts, CouponInput, PlatformCouponState,
  PlatformOrder, PlatformShop,
  ShopPlatformAdapter, SyncArea,
} from '../types.js';
import type { Knex } from 'knex';
import { knexRunner } from '../../affiliate/sql.js';
import { DEMO_CAPABILITIES, DEMO_CREDENTIAL_FIELDS, DEMO_REJECTED_KEY_PREFIX } from './capabilities.js';
import { simulateDemoVisits } from './seeders/affiliateProgramme.js';
import { SHOPS } from './catalogue.js';
import { shopSeed } from './generator.js';
import { shopDefinition, type ShopDefinition } from './catalogue.js';
import { catalogueRecords, categoryTextsChanged, productTextsChanged } from './content.js';
import { documentAt, documentChangeTimes } from './documents.js';
import { OrderTimeline } from './generator.js';
import { searchConsolePropertyAt, searchConsoleRuns } from './searchConsole.js';
import { companyCostsBetween } from './companyCosts.js';
import { adSpendDay, orderTracking, reportedDays, visitDay } from './analytics.js';
import { HOUR_MS, localMidnightInstant } from './time.js';
import { daysOfRun, searchConsoleDay } from './searchConsoleRows.js';
import { shipmentAt } from './shipments.js';
import { StockModel } from './stock.js';
import { bookCouponsAt } from './couponMirror.js';
import { anyIn, claimAt, claimChangeTimes, orderAt, ORDER_HORIZON_MS, stockChangeTimes, type OrderPlan } from './timeline.js';

/** A coupon write as the demo shop stores it (JSON): dates as ISO strings; a field absent from an older write is left as the shop had it. */
type StoredCoupon = Omit<CouponInput, 'validUntil' | 'validFrom'> & { validUntil: string | null; validFrom?: string | null };

/** Connection settings of a demo shop (stored in shop_platform_settings when its history is loaded). */
export interface DemoShopSettings {
  /** The shop's own seed (already mixed with account and shop code). */
  seed: number;
  /** Orders and days of the history window, which ends at `historyEnd`. */
  orders: number;
  days: number;
  historyEnd: string;
}

export interface DemoPlatformOptions {
  db: Db;
  /** Simulated time runs this many times faster than real time from the end of the history (1 = real time). */
  clockSpeed?: number;
  /** The real clock (tests fix it). */
  wallClock?: () => Date;
  /** Most orders a read window keeps in memory (default 20,000); 0 always streams. */
  windowLimit?: number;
}

/** Per product, at a read's `until`: the sum of all order movements so far, the reserved quantity, the last change. */
interface StockSums {
  moved: number[];
  reserved: number[];
  touched: number[];
}

/** The orders with a change in (since, until] and the stock sums at `until`, kept between the reads of a run. */
interface ReadWindow {
  sinceMs: number;
  untilMs: number;
  relevant: OrderPlan[];
  sums: StockSums;
}

interface ShopModel {
  definition: ShopDefinition;
  timeline: OrderTimeline;
  stock: StockModel;
  settings: DemoShopSettings;
  windows: ReadWindow[];
}

/** Seed and history of a demo shop a person connects (CLI or application): a small shop with a quarter of history. */
const CONNECTED_SHOP_SEED = 20_240_601;
const CONNECTED_SHOP_HISTORY = { orders: 300, days: 90 } as const;

const MODEL_CACHE_SIZE = 32;
const YIELD_EVERY = 1000;
/** Windows with more orders than this are streamed instead of kept (a big shop's first read after a long pause). */
const WINDOW_CACHE_LIMIT = 20_000;
const WINDOWS_PER_SHOP = 4;

export function demoSettings(shop: PlatformShop): DemoShopSettings {
  const s = shop.settings as Partial<DemoShopSettings>;
  if (typeof s.seed !== 'number' || typeof s.orders !== 'number' || typeof s.days !== 'number' || typeof s.historyEnd !== 'string') {
    throw new Error(`Demo shop ${shop.accountCode}/${shop.code} has incomplete platform settings`);
  }
  return s as DemoShopSettings;
}

/** The demo platform's time for a wall-clock instant: the history's end plus the elapsed real time times the speed. */
export function demoTime(settings: DemoShopSettings, wallMs: number, speed: number): Date {
  const end = Date.parse(settings.historyEnd);
  return new Date(Math.floor(end + Math.max(0, wallMs - end) * speed));
}

type Position = { phase: string; n: number };

function parsePosition(text: string | null): Position | null {
  if (!text) return null;
  const m = /^([a-z]+):(\d+)$/.exec(text);
  if (!m) throw new Error(`Bad demo read position: ${text}`);
  return { phase: m[1], n: Number(m[2]) };
}

/** Removes what a shop's editor refuses to store: scripts, styles, inline event handlers, javascript: links. */
function sanitizeMarkup(text: string): string {
  return text
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/\s+on[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '')
    .replace(/(href|src)\s*=\s*(["'])\s*javascript:[^"']*\2/gi, '$1=$2#$2');
}

export class DemoPlatform implements ShopPlatformAdapter {
  readonly platform = 'demo';
  // Every area (DEMO_CAPABILITIES); `products` reads nothing: the demo's catalogue is loaded with its history and never changes.
  readonly capabilities = DEMO_CAPABILITIES;
  readonly credentialFields = DEMO_CREDENTIAL_FIELDS;
  private readonly models = new Map<string, ShopModel>();
  private readonly clockSpeed: number;
  private readonly wallClock: () => Date;
  private readonly windowLimit: number;

  constructor(private readonly options: DemoPlatformOptions) {
    this.clockSpeed = options.clockSpeed ?? 1;
    this.wallClock = options.wallClock ?? (() => new Date());
    this.windowLimit = options.windowLimit ?? WINDOW_CACHE_LIMIT;
  }

  /** A demo shop exists for each code of the demo catalogue; the key is refused only when it says so (DEMO_REJECTED_KEY_PREFIX). */
  async verifyConnection(request: ConnectionRequest): Promise<ConnectionCheck> {
    const definition = SHOPS[request.shopCode];
    if (!definition) {
      return { ok: false, reason: 'invalid', message: `The demo platform has no shop \`${request.shopCode}\`; its shops are ${Object.keys(SHOPS).join(', ')}.` };
    }
    const apiKey = request.credentials.apiKey ?? '';
    if (!apiKey || apiKey.startsWith(DEMO_REJECTED_KEY_PREFIX)) return { ok: false, reason: 'credentials_rejected', message: 'The demo shop refused the API key.' };
    if (request.currency !== definition.currency) {
      return { ok: false, reason: 'invalid', message: `The demo shop \`${request.shopCode}\` sells in ${definition.currency}, not ${request.currency}.` };
    }
    const historyEnd = new Date(Math.floor(this.wallClock().getTime() / 1000) * 1000).toISOString();
    const settings: DemoShopSettings = { seed: shopSeed(CONNECTED_SHOP_SEED, request.accountCode, request.shopCode), ...CONNECTED_SHOP_HISTORY, historyEnd };
    return { ok: true, settings: { ...settings } };
  }

  /** Demo shops have no real shoppers: simulated ones (from the shop's seed) click and send beacons through the service's tracking (AM1). */
  async simulateTrackedVisits(trx: Knex.Transaction, shop: PlatformShop, orders: PlatformOrder[]): Promise<void> {
    if (typeof shop.settings.seed !== 'number') return;
    await simulateDemoVisits(knexRunner(trx), { id: shop.id, code: shop.code, seed: shop.settings.seed },
      orders.map((o) => ({ code: o.code, created_at: o.createdAt, coupon_code: o.couponCode ?? null })));
  }

  now(shop: PlatformShop): Date {
    return demoTime(demoSettings(shop), this.wallClock().getTime(), this.clockSpeed);
  }

  /** The shop's timeline and stock model; kept per process, since building them costs a catalogue and a day plan. */
  model(shop: PlatformShop): ShopModel {
    const settings = demoSettings(shop);
    const key = `${shop.code}|${settings.seed}|${settings.orders}|${settings.days}|${settings.historyEnd}`;
    let model = this.models.get(key);
    if (model) {
      this.models.delete(key);
      this.models.set(key, model);
      return model;
    }
    const definition = shopDefinition(shop.code);
    const timeline = new OrderTimeline(settings.seed, definition, { orders: settings.orders, days: settings.days, endDate: new Date(settings.historyEnd) });
    model = { definition, timeline, stock: new StockModel(settings.seed, definition, timeline), settings, windows: [] };
    this.models.set(key, model);
    if (this.models.size > MODEL_CACHE_SIZE) this.models.delete(this.models.keys().next().value!);
    return model;
  }

  /**
   * Where a read must start generating: far enough back that every order with a change after `since` is included.
   * Reaching that point the first time means generating the history before it; done a few days at a time with
   * pauses, so a big shop's first read never blocks the process (heartbeats keep flowing).
   */
  private async scanStart(model: ShopModel, sinceMs: number | null): Promise<{ fromMs: number; index: number }> {
    if (sinceMs === null) return { fromMs: -Infinity, index: 0 };
    const index = model.timeline.segmentIndexAt(sinceMs - ORDER_HORIZON_MS);
    for (let i = 0; i < index; i += 5) {
      model.timeline.stateAt(i);
      await yieldToEventLoop();
    }
    return { fromMs: model.timeline.segmentStartMs(index), index };
  }

  async *readChanges<A extends SyncArea>(shop: PlatformShop, area: A, request: ChangeRequest): AsyncIterable<ChangeBatch<A>> {
    const model = this.model(shop);
    const sinceMs = request.since ? request.since.getTime() : null;
    const untilMs = request.until.getTime();
    if ((sinceMs !== null && sinceMs >= untilMs) || area === 'products') return;
    const resume = parsePosition(request.resume);
    let source: AsyncGenerator<ChangeBatch<SyncArea>>;
    if (area === 'stock') source = this.stockChanges(model, sinceMs, untilMs, resume, request.limit);
    else if (area === 'search_console') source = this.searchConsoleChanges(model, sinceMs, untilMs, resume, request.limit);
    else if (area === 'company_costs') source = this.companyCostChanges(model, sinceMs, untilMs, resume, request.limit);
    else if (area === 'catalogue') source = this.catalogueChanges(shop, model, sinceMs, untilMs, resume, request.limit);
    else if (area === 'web_analytics') source = this.webAnalyticsChanges(model, sinceMs, untilMs, resume, request.limit);
    else if (area === 'coupons') source = this.couponChanges(shop, model, untilMs, resume, request.limit);
    else if (area === 'search_console_data') source = this.searchConsoleDataChanges(model, sinceMs, untilMs, resume, request.limit);
    else source = this.planChanges(model, area, sinceMs, untilMs, resume, request.limit);
    yield* source as AsyncGenerator<ChangeBatch<A>>;
  }

  /** Records of one order-derived area that changed in (since, until], as they stand at `until`. */
  private recordsOf(area: SyncArea, plan: OrderPlan, since: number, until: number, shop: ShopDefinition): Array<AreaRecords[SyncArea]> {
    switch (area) {
      case 'orders': {
        if (!anyIn(plan.changeTimes, since, until)) return [];
        const { shipments: _shipments, ...order } = orderAt(plan, until)!;
        return [order];
      }
      case 'documents':
        // A document is news when issued and again when its state moves (payment, settlement, credit note, cancellation).
        return plan.documents
          .filter((d) => d.issuedAt.getTime() <= until && anyIn(documentChangeTimes(plan, d), since, until))
          .map((d) => documentAt(plan, shop, d, until));
      case 'shipments':
        return plan.shipments
          .filter((s) => anyIn(s.events.map((e) => e.occurredAt.getTime()), since, until))
          .map((s) => ({ ...shipmentAt(s, until)!, orderCode: plan.code }));
      case 'claims':
        return anyIn(claimChangeTimes(plan), since, until) ? [claimAt(plan, until)!] : [];
      default:
        throw new Error(`Area ${area} is not derived from orders`);
    }
  }

  /** Adds one order's effect on stock up to `untilMs` (and after `afterMs`) to the sums. */
  private addStock(model: ShopModel, sums: StockSums, plan: OrderPlan, afterMs: number, untilMs: number): void {
    const index = model.timeline.productIndex;
    for (const m of plan.movements) {
      const at = m.occurredAt.getTime();
      if (at > afterMs && at <= untilMs) sums.moved[index.get(m.productCode)!] += m.quantity;
    }
    let changedAt = -Infinity;
    for (const t of stockChangeTimes(plan)) if (t > afterMs && t <= untilMs && t > changedAt) changedAt = t;
    for (const it of plan.items) {
      const p = index.get(it.productCode)!;
      if (changedAt > sums.touched[p]) sums.touched[p] = changedAt;
    }
  }

  private reservedAt(model: ShopModel, plans: OrderPlan[], untilMs: number): number[] {
    const reserved = new Array<number>(model.timeline.model.products.length).fill(0);
    for (const plan of plans) {
      if (plan.createdMs <= untilMs && untilMs < plan.reservedUntilMs) {
        for (const it of plan.items) reserved[model.timeline.productIndex.get(it.productCode)!] += it.quantity;
      }
    }
    return reserved;
  }

  /**
   * The orders with a change in (since, until] — every order whose last change is after `since` — in creation order,
   * with the stock sums at `until`. Streams through the timeline; read positions count these orders only, so a
   * position means the same whether the orders came from the stream or from the window cache.
   */
  private async *relevantPlans(model: ShopModel, sinceMs: number | null, untilMs: number, sums: StockSums, collect?: OrderPlan[]): AsyncGenerator<OrderPlan> {
    const { timeline } = model;
    const { fromMs, index } = await this.scanStart(model, sinceMs);
    const base = timeline.stateAt(index);
    sums.moved.splice(0, sums.moved.length, ...base.moved);
    sums.touched.splice(0, sums.touched.length, ...base.stockTouched);
    const since = sinceMs ?? -Infinity;
    let scanned = 0;
    const open: OrderPlan[] = [];
    for (const plan of timeline.plans(fromMs, untilMs)) {
      if (++scanned % YIELD_EVERY === 0) await yieldToEventLoop();
      this.addStock(model, sums, plan, -Infinity, untilMs);
      if (plan.lastChangeMs <= since) continue;
      if (untilMs < plan.reservedUntilMs) open.push(plan);
      collect?.push(plan);
      yield plan;
    }
    sums.reserved.splice(0, sums.reserved.length, ...this.reservedAt(model, open, untilMs));
  }

  /**
   * The relevant orders of (since, until] kept in memory, so the areas of one run generate them once and the next
   * run (since = this until) only adds what is new. Null for a backfill or a window too big to keep.
   */
  private async window(model: ShopModel, sinceMs: number | null, untilMs: number): Promise<ReadWindow | null> {
    if (sinceMs === null || this.windowLimit === 0) return null;
    const windows = model.windows;
    const hit = windows.find((w) => w.sinceMs === sinceMs && w.untilMs === untilMs);
    if (hit) return hit;
    const products = model.timeline.model.products.length;
    const base = windows.filter((w) => w.sinceMs <= sinceMs && sinceMs <= w.untilMs && w.untilMs <= untilMs).sort((a, b) => b.untilMs - a.untilMs)[0];
    let built: ReadWindow;
    if (base) {
      const fresh = [...model.timeline.plans(base.untilMs + 1, untilMs)];
      const sums: StockSums = { moved: [...base.sums.moved], reserved: [], touched: [...base.sums.touched] };
      for (const plan of [...base.relevant, ...fresh]) this.addStock(model, sums, plan, base.untilMs, untilMs);
      const relevant = [...base.relevant.filter((p) => p.lastChangeMs > sinceMs), ...fresh];
      sums.reserved = this.reservedAt(model, relevant, untilMs);
      built = { sinceMs, untilMs, relevant, sums };
    } else {
      const sums: StockSums = { moved: new Array(products).fill(0), reserved: new Array(products).fill(0), touched: new Array(products).fill(0) };
      const relevant: OrderPlan[] = [];
      for await (const _plan of this.relevantPlans(model, sinceMs, untilMs, sums, relevant)) {
        if (relevant.length > this.windowLimit) return null;
      }
      built = { sinceMs, untilMs, relevant, sums };
    }
    windows.push(built);
    if (windows.length > WINDOWS_PER_SHOP) windows.shift();
    return built;
  }

  private async *planChanges(model: ShopModel, area: SyncArea, sinceMs: number | null, untilMs: number, resume: Position | null, limit: number) {
    const since = sinceMs ?? -Infinity;
    const skip = resume?.n ?? 0;
    const window = await this.window(model, sinceMs, untilMs);
    const sums: StockSums = { moved: [], reserved: [], touched: [] };
    const plans: Iterable<OrderPlan> | AsyncIterable<OrderPlan> = window ? window.relevant : this.relevantPlans(model, sinceMs, untilMs, sums);
    let consumed = 0;
    let records: Array<AreaRecords[SyncArea]> = [];
    for await (const plan of plans) {
      consumed++;
      if (consumed <= skip) continue;
      records.push(...this.recordsOf(area, plan, since, untilMs, model.definition));
      if (records.length >= limit) {
        yield { records, position: `p:${consumed}` };
        records = [];
      }
    }
    if (records.length) yield { records, position: `p:${consumed}` };
  }

  /**
   * Stock: movements of the orders (in order), then purchase receipts (per product), then every item's figures at
   * `until`. The item figures need sums over all orders, so a resumed read goes through them again without re-emitting.
   */
  private async *stockChanges(model: ShopModel, sinceMs: number | null, untilMs: number, resume: Position | null, limit: number) {
    const since = sinceMs ?? -Infinity;
    const { timeline, stock } = model;
    const products = timeline.model.products.length;
    const phaseRank = { p: 0, r: 1, i: 2 } as Record<string, number>;
    const resumeRank = resume ? phaseRank[resume.phase] : -1;
    const done = (phase: string, n: number) => resume !== null && (phaseRank[phase] < resumeRank || (phaseRank[phase] === resumeRank && n <= resume.n));

    const window = await this.window(model, sinceMs, untilMs);
    const sums: StockSums = window?.sums ?? { moved: new Array(products).fill(0), reserved: new Array(products).fill(0), touched: new Array(products).fill(0) };
    const plans: Iterable<OrderPlan> | AsyncIterable<OrderPlan> = window ? window.relevant : this.relevantPlans(model, sinceMs, untilMs, sums);
    let records: Array<AreaRecords['stock']> = [];
    let consumed = 0;
    for await (const plan of plans) {
      consumed++;
      if (done('p', consumed)) continue;
      for (const m of plan.movements) {
        const at = m.occurredAt.getTime();
        if (at > since && at <= untilMs) records.push({ kind: 'movement', movement: m });
      }
      if (records.length >= limit) {
        yield { records, position: `p:${consumed}` };
        records = [];
      }
    }
    if (records.length) yield { records, position: `p:${consumed}` };
    records = [];
    for (let i = 0; i < products; i++) {
      if (!done('r', i + 1)) for (const m of stock.receiptsBetween(i, sinceMs, untilMs)) records.push({ kind: 'movement', movement: m });
      if (records.length >= limit || (i === products - 1 && records.length)) {
        yield { records, position: `r:${i + 1}` };
        records = [];
      }
    }
    for (let i = 0; i < products; i++) {
      if (done('i', i + 1)) continue;
      records.push({ kind: 'item', item: stock.itemAt(i, untilMs, { moved: sums.moved[i], reserved: sums.reserved[i], touchedMs: sums.touched[i] }) });
      if (records.length >= limit || i === products - 1) {
        yield { records, position: `i:${i + 1}` };
        records = [];
      }
    }
  }

  private async *searchConsoleChanges(model: ShopModel, sinceMs: number | null, untilMs: number, resume: Position | null, limit: number) {
    const { settings, definition, timeline } = model;
    const runs = searchConsoleRuns(settings.seed, definition, sinceMs, untilMs, timeline.windowStartMs);
    const skip = resume?.phase === 'r' ? resume.n : resume ? runs.length : 0;
    for (let i = skip; i < runs.length; i += limit) {
      const slice = runs.slice(i, i + limit);
      yield { records: slice.map((run) => ({ kind: 'run' as const, run })), position: `r:${i + slice.length}` };
    }
    if (resume?.phase !== 'c') {
      yield { records: [{ kind: 'property' as const, property: searchConsolePropertyAt(settings.seed, definition, untilMs, timeline.windowStartMs) }], position: 'c:1' };
    }
  }

  /** Monthly company costs booked in (since, until]. */
  private async *companyCostChanges(model: ShopModel, sinceMs: number | null, untilMs: number, resume: Position | null, limit: number) {
    const { settings, definition, timeline } = model;
    const costs = companyCostsBetween(settings.seed, definition, sinceMs, untilMs, timeline.windowStartMs, timeline.ordersPerDayAtEnd, (ms) => timeline.eurRateAt(ms));
    for (let i = resume?.n ?? 0; i < costs.length; i += limit) {
      const slice = costs.slice(i, i + limit);
      yield { records: slice, position: `c:${i + slice.length}` };
    }
  }

  /**
   * The catalogue area: capabilities and dictionary on every read (the sync writes only differences), then what changed.
   * What the service wrote (texts, dictionary entries) is part of the shop's state: a written field stands until a later
   * revision by the shop's staff, and every written product and category is in every read (a small set), so the
   * catalogue the service serves is what the shop stores.
   */
  private async *catalogueChanges(shop: PlatformShop, model: ShopModel, sinceMs: number | null, untilMs: number, resume: Position | null, limit: number) {
    const records = await this.withWrites(shop, model, catalogueRecords(model.settings.seed, model.definition, model.timeline.model, sinceMs, untilMs), untilMs);
    for (let i = resume?.n ?? 0; i < records.length; i += limit) {
      const slice = records.slice(i, i + limit);
      yield { records: slice, position: `c:${i + slice.length}` };
    }
  }

  /** The generated catalogue records with the service's writes applied (writes made after `until` on the demo clock are not yet visible). */
  private async withWrites(shop: PlatformShop, model: ShopModel, records: CatalogueRecord[], untilMs: number): Promise<CatalogueRecord[]> {
    const rows: Array<{ kind: string; key: string; value: Record<string, unknown> }> = await this.options.db('demo_shop_writes')
      .where({ shop_id: shop.id }).whereIn('kind', ['product_texts', 'category_texts', 'availability']).select('kind', 'key', 'value');
    if (rows.length === 0) return records;
    const visible = (value: Record<string, unknown>) => typeof value.__atMs !== 'number' || (value.__atMs as number) <= untilMs;
    const of = (kind: string) => new Map(rows.filter((r) => r.kind === kind && visible(r.value)).map((r) => [r.key, r.value]));
    const products = of('product_texts');
    const categories = of('category_texts');
    const entries = of('availability');
    const texts = <T extends Record<string, string | null>>(generated: T, generatedAtMs: number, written: Record<string, unknown> | undefined): T => {
      if (!written || (typeof written.__atMs === 'number' && written.__atMs < generatedAtMs)) return generated;
      const out: Record<string, string | null> = { ...generated };
      for (const field of Object.keys(generated)) if (typeof written[field] === 'string') out[field] = written[field] as string;
      return out as T;
    };
    const at = (written: Record<string, unknown> | undefined, generated: Date) =>
      new Date(Math.max(generated.getTime(), typeof written?.__atMs === 'number' ? written.__atMs : 0));
    const out = records.map((r): CatalogueRecord => {
      if (r.kind === 'availability' && entries.has(r.availability.id)) {
        const e = entries.get(r.availability.id)!;
        return { kind: 'availability', availability: { ...r.availability, name: e.name as string, meaning: e.meaning as typeof r.availability.meaning, onStockHours: e.onStockHours as number | null, deliveryHours: e.deliveryHours as number | null } };
      }
      if (r.kind === 'product' && products.has(r.product.code)) {
        const w = products.get(r.product.code);
        products.delete(r.product.code);
        return { kind: 'product', product: { ...r.product, texts: texts(r.product.texts, r.product.updatedAt.getTime(), w), updatedAt: at(w, r.product.updatedAt) } };
      }
      if (r.kind === 'category' && categories.has(r.category.guid)) {
        const w = categories.get(r.category.guid);
        categories.delete(r.category.guid);
        return { kind: 'category', category: { ...r.category, texts: texts(r.category.texts, r.category.updatedAt.getTime(), w), updatedAt: at(w, r.category.updatedAt) } };
      }
      return r;
    });
    // Written records that did not change otherwise in this read: their current generated state with the writes on top.
    if (products.size > 0) {
      for (const p of productTextsChanged(model.settings.seed, model.definition, model.timeline.model, null, untilMs).filter((x) => products.has(x.code))) {
        const w = products.get(p.code);
        out.push({ kind: 'product', product: { ...p, texts: texts(p.texts, p.updatedAt.getTime(), w), updatedAt: at(w, p.updatedAt) } });
      }
    }
    if (categories.size > 0) {
      for (const c of categoryTextsChanged(model.settings.seed, model.definition, model.timeline.model, null, untilMs).filter((x) => categories.has(x.guid))) {
        const w = categories.get(c.guid);
        out.push({ kind: 'category', category: { ...c, texts: texts(c.texts, c.updatedAt.getTime(), w), updatedAt: at(w, c.updatedAt) } });
      }
    }
    return out;
  }

  /**
   * Web analytics in three phases: days of visits and days of ad spend reported in (since, until], then the tracking
   * of the orders created in (since, until]. Positions count records within a phase (`v:`, `a:`, `t:`).
   */
  private async *webAnalyticsChanges(model: ShopModel, sinceMs: number | null, untilMs: number, resume: Position | null, limit: number) {
    const { settings, definition, timeline } = model;
    const rank: Record<string, number> = { v: 0, a: 1, t: 2 };
    const skip = (phase: string) => (resume === null || rank[resume.phase] < rank[phase] ? 0 : rank[resume.phase] > rank[phase] ? Infinity : resume.n);
    const days = reportedDays(definition, sinceMs, untilMs, timeline.windowStartMs);
    const noon = (d: number) => localMidnightInstant(definition.timeZone, d) + 12 * HOUR_MS;
    let records: Array<AreaRecords['web_analytics']> = [];
    for (const [phase, make] of [
      ['v', (d: number) => ({ kind: 'visits' as const, day: visitDay(settings.seed, definition, d, timeline.ordersOnLocalDay(d)) })],
      ['a', (d: number) => ({ kind: 'ads' as const, day: new Date(d).toISOString().slice(0, 10), rows: adSpendDay(settings.seed, definition, d, timeline.ordersOnLocalDay(d), definition.currency === 'EUR' ? 1 : timeline.eurRateAt(noon(d))) })],
    ] as const) {
      for (let i = Math.min(skip(phase), days.length); i < days.length; i++) {
        records.push(make(days[i]));
        if (records.length >= Math.max(1, Math.floor(limit / 50)) || i === days.length - 1) {
          yield { records, position: `${phase}:${i + 1}` };
          records = [];
        }
      }
    }
    let n = 0;
    const start = skip('t');
    const fromMs = sinceMs === null ? -Infinity : sinceMs + 1;
    for (const plan of timeline.plans(fromMs, untilMs)) {
      if (++n % YIELD_EVERY === 0) await yieldToEventLoop();
      if (n <= start) continue;
      const tracking = orderTracking(settings.seed, definition, plan.code, plan.createdMs);
      if (tracking) records.push({ kind: 'tracking', tracking });
      if (records.length >= limit) {
        yield { records, position: `t:${n}` };
        records = [];
      }
    }
    if (records.length) yield { records, position: `t:${n}` };
  }

  /**
   * Coupons (issue 10): the whole set at `until` — the coupon book as it stands then, with the coupons the service
   * wrote on top and those it removed left out — in batches, then the list of codes (how the sync sees removals).
   */
  private async *couponChanges(shop: PlatformShop, model: ShopModel, untilMs: number, resume: Position | null, limit: number) {
    const coupons = await this.couponsAt(shop, model, untilMs);
    const skip = resume?.phase === 'c' ? resume.n : resume ? coupons.length : 0;
    for (let i = skip; i < coupons.length; i += limit) {
      const slice = coupons.slice(i, i + limit);
      yield { records: slice.map((coupon) => ({ kind: 'coupon' as const, coupon })), position: `c:${i + slice.length}` };
    }
    yield { records: [{ kind: 'present' as const, codes: coupons.map((c) => c.code) }], position: 'z:1' };
  }

  /** The shop's coupons at an instant: the book's, the service's writes on top (they apply at once, whatever the demo clock), minus removed codes. */
  async couponsAt(shop: PlatformShop, model: ShopModel, untilMs: number): Promise<PlatformCouponState[]> {
    const byCode = new Map<string, PlatformCouponState>();
    for (const c of bookCouponsAt(model.timeline.coupons, untilMs)) byCode.set(c.code, { ...c, note: null });
    const writes: Array<{ kind: string; key: string; value: StoredCoupon; updated_at: Date }> = await this.options.db('demo_shop_writes')
      .where({ shop_id: shop.id }).whereIn('kind', ['coupon', 'coupon_removed']).orderBy('updated_at').select('kind', 'key', 'value', 'updated_at');
    for (const w of writes) {
      if (w.kind === 'coupon_removed') {
        byCode.delete(w.key);
        continue;
      }
      const existing = byCode.get(w.key);
      const v = w.value;
      // A field the write did not carry stays as the shop had it (the first writes carried only percent and validity).
      const pick = <K extends keyof StoredCoupon, T>(key: K, fallback: T, map: (value: NonNullable<StoredCoupon[K]> | null) => T): T =>
        (key in v ? map((v[key] ?? null) as NonNullable<StoredCoupon[K]> | null) : fallback);
      const enabled = pick('enabled', true, (e) => e !== false);
      byCode.set(w.key, {
        code: w.key, name: pick('name', existing?.name ?? w.key, (n) => n ?? w.key),
        discount: v.discount ?? { type: 'percent', percent: v.discountPercent }, currency: model.definition.currency,
        minOrderMinor: pick('minOrderMinor', existing?.minOrderMinor ?? null, (m) => m),
        validFrom: pick('validFrom', existing?.validFrom ?? null, (d) => (d ? new Date(d) : null)),
        validUntil: v.validUntil ? new Date(v.validUntil) : null,
        usageLimit: pick('usageLimit', existing?.usageLimit ?? null, (n) => n),
        perCustomerLimit: pick('perCustomerLimit', existing?.perCustomerLimit ?? null, (n) => n),
        categoryGuids: pick('categoryGuids', existing?.categoryGuids ?? [], (g) => g ?? []),
        productCodes: pick('productCodes', existing?.productCodes ?? [], (p) => p ?? []),
        enabled, createdAt: existing?.createdAt ?? w.updated_at, updatedAt: w.updated_at, disabledAt: enabled ? null : w.updated_at,
        partnerIndex: existing?.partnerIndex ?? null, note: pick('note', existing?.note ?? null, (n) => n),
      });
    }
    return [...byCode.values()].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  }

  /** The days of search-console rows delivered by the completed runs in (since, until], in run order. */
  private async *searchConsoleDataChanges(model: ShopModel, sinceMs: number | null, untilMs: number, resume: Position | null, limit: number) {
    const { settings, definition, timeline } = model;
    const days = searchConsoleRuns(settings.seed, definition, sinceMs, untilMs, timeline.windowStartMs).flatMap(daysOfRun);
    // A day holds about a hundred rows, so a batch carries a few days.
    const perBatch = Math.max(1, Math.floor(limit / 100));
    for (let i = resume?.n ?? 0; i < days.length; i += perBatch) {
      const slice = days.slice(i, i + perBatch);
      yield {
        records: slice.map((d) => searchConsoleDay(settings.seed, definition, timeline.model.catalogue, d.localDate, d.dataState)),
        position: `d:${i + slice.length}`,
      };
    }
  }

  private async store(shop: PlatformShop, kind: string, key: string, value: unknown): Promise<void> {
    await this.options.db('demo_shop_writes')
      .insert({ shop_id: shop.id, kind, key, value: JSON.stringify(value), updated_at: new Date() })
      .onConflict(['shop_id', 'kind', 'key']).merge();
  }

  async writeAvailabilities(shop: PlatformShop, entries: AvailabilityEntry[]): Promise<AvailabilityEntry[]> {
    for (const e of entries) await this.store(shop, 'availability', e.id, { ...e, __atMs: this.now(shop).getTime() });
    return entries;
  }

  async writeProductTexts(shop: PlatformShop, productCode: string, texts: ContentTexts): Promise<ContentTexts> {
    return this.writeTexts(shop, 'product_texts', productCode, texts);
  }

  async writeCategoryTexts(shop: PlatformShop, categoryGuid: string, texts: ContentTexts): Promise<ContentTexts> {
    return this.writeTexts(shop, 'category_texts', categoryGuid, texts);
  }

  private async writeTexts(shop: PlatformShop, kind: string, key: string, texts: ContentTexts): Promise<ContentTexts> {
    const row = await this.options.db('demo_shop_writes').where({ shop_id: shop.id, kind, key }).first('value');
    const { __atMs: _previous, ...earlier } = (row?.value ?? {}) as ContentTexts & { __atMs?: number };
    const stored: ContentTexts = { ...earlier };
    for (const [field, text] of Object.entries(texts) as Array<[keyof ContentTexts, string]>) stored[field] = sanitizeMarkup(text);
    // Stamped with the shop's clock: a later revision by the shop's staff replaces it, an earlier one does not.
    await this.store(shop, kind, key, { ...stored, __atMs: this.now(shop).getTime() });
    return stored;
  }

  async saveCoupon(shop: PlatformShop, coupon: CouponInput): Promise<CouponInput> {
    const stored: StoredCoupon = { ...coupon, validUntil: coupon.validUntil?.toISOString() ?? null, validFrom: coupon.validFrom === undefined ? undefined : coupon.validFrom?.toISOString() ?? null };
    await this.store(shop, 'coupon', coupon.code, stored);
    await this.options.db('demo_shop_writes').where({ shop_id: shop.id, kind: 'coupon_removed', key: coupon.code }).delete();
    return coupon;
  }

  async removeCoupon(shop: PlatformShop, code: string): Promise<boolean> {
    const written = (await this.options.db('demo_shop_writes').where({ shop_id: shop.id, kind: 'coupon', key: code }).delete()) > 0;
    // A coupon of the generated book cannot be deleted from it: the removal is recorded and hides it from then on.
    const inBook = this.model(shop).timeline.coupons.couponsAt(this.now(shop).getTime()).some((c) => c.code === code);
    if (inBook) await this.store(shop, 'coupon_removed', code, { removedAt: new Date().toISOString() });
    return written || inBook;
  }

  async readCoupon(shop: PlatformShop, code: string): Promise<PlatformCouponState | null> {
    const coupons = await this.couponsAt(shop, this.model(shop), this.now(shop).getTime());
    return coupons.find((c) => c.code === code) ?? null;
  }
}
