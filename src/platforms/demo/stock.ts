/**
 * Stock of the demo shops: an opening balance per product, purchase receipts on a per-product rhythm sized to the
 * product's demand, and the movements orders cause (sales, goods coming back). Reservations are derived from open
 * orders. Everything is a function of (seed, shop, time), like the orders.
 */
import type { ShopDefinition } from './catalogue.js';
import { createRandom } from './random.js';
import { DAY_MS, HOUR_MS } from './time.js';
import type { OrderTimeline } from './generator.js';
import type { GeneratedStockItem, GeneratedStockMovement } from './types.js';

const ITEM_COUNT_MEAN = 0.3 * 1 + 0.28 * 2 + 0.2 * 3 + 0.13 * 4 + 0.09 * 5;
const QUANTITY_MEAN = 0.8 * 1 + 0.15 * 2 + 0.05 * 3;

interface ProductStockPlan {
  code: string;
  opening: number;
  periodMs: number;
  phaseMs: number;
  baseQuantity: number;
}

/** Receipt schedules and opening balances of one shop's products. */
export class StockModel {
  readonly products: ProductStockPlan[];
  private readonly cumulative: number[][];

  constructor(private readonly seed: number, private readonly shop: ShopDefinition, private readonly timeline: OrderTimeline) {
    const model = timeline.model;
    const cum = model.popularityCumulative;
    const total = cum[cum.length - 1];
    const unitsPerDay = timeline.ordersPerDayAtEnd * ITEM_COUNT_MEAN * QUANTITY_MEAN;
    const rng = createRandom(seed, 'stock', shop.code);
    this.products = model.products.map((p, i) => {
      const share = (cum[i] - (i > 0 ? cum[i - 1] : 0)) / total;
      const demand = unitsPerDay * share;
      // Fast movers are restocked weekly or fortnightly, slow movers monthly.
      const periodDays = demand * 7 >= 1 ? rng.pick([7, 14]) : 28;
      return {
        code: p.product.code,
        opening: Math.ceil(demand * 45) + rng.int(2, 8),
        periodMs: periodDays * DAY_MS,
        phaseMs: rng.int(0, periodDays - 1) * DAY_MS + rng.int(8 * HOUR_MS, 15 * HOUR_MS),
        baseQuantity: Math.max(1, Math.ceil(demand * periodDays * 1.15)),
      };
    });
    this.cumulative = this.products.map(() => []);
  }

  private receiptMs(i: number, k: number): number {
    const p = this.products[i];
    return this.timeline.windowStartMs + p.phaseMs + k * p.periodMs;
  }

  private receiptQuantity(i: number, k: number): number {
    const rng = createRandom(this.seed, 'receipt', this.shop.code, i, k);
    return Math.max(1, Math.round(this.products[i].baseQuantity * rng.float(0.8, 1.5)));
  }

  /** Index of the last receipt at or before `atMs` (-1 when none). */
  private lastReceiptIndex(i: number, atMs: number): number {
    const p = this.products[i];
    return Math.floor((atMs - this.timeline.windowStartMs - p.phaseMs) / p.periodMs);
  }

  /** Total received quantity of product `i` up to `atMs`. */
  receivedUpTo(i: number, atMs: number): number {
    const last = this.lastReceiptIndex(i, atMs);
    if (last < 0) return 0;
    const cum = this.cumulative[i];
    while (cum.length <= last) cum.push((cum.length ? cum[cum.length - 1] : 0) + this.receiptQuantity(i, cum.length));
    return cum[last];
  }

  /** Instant of the last receipt of product `i` at or before `atMs`, or null. */
  lastReceiptAt(i: number, atMs: number): number | null {
    const last = this.lastReceiptIndex(i, atMs);
    return last < 0 ? null : this.receiptMs(i, last);
  }

  /** Receipts of product `i` in (sinceMs, untilMs]; a null `sinceMs` means from the beginning. */
  receiptsBetween(i: number, sinceMs: number | null, untilMs: number): GeneratedStockMovement[] {
    const out: GeneratedStockMovement[] = [];
    const first = sinceMs === null ? 0 : Math.max(0, this.lastReceiptIndex(i, sinceMs) + 1);
    for (let k = first; k <= this.lastReceiptIndex(i, untilMs); k++) {
      out.push({
        id: `P-${this.products[i].code}-${k}`, productCode: this.products[i].code, kind: 'receipt', quantity: this.receiptQuantity(i, k),
        occurredAt: new Date(this.receiptMs(i, k)), orderCode: null, claimCode: null,
      });
    }
    return out;
  }

  /** The item as the shop reports it, from the sums of order movements and reservations up to that instant. */
  itemAt(i: number, atMs: number, figures: { moved: number; reserved: number; touchedMs: number }): GeneratedStockItem {
    const physical = this.products[i].opening + this.receivedUpTo(i, atMs) + figures.moved;
    const available = physical - figures.reserved;
    const balance = this.shop.stockKeeping === 'balance';
    const updatedMs = Math.max(figures.touchedMs, this.lastReceiptAt(i, atMs) ?? 0, this.timeline.windowStartMs);
    return {
      code: this.products[i].code,
      sku: this.products[i].code,
      source: this.shop.stockKeeping,
      // A shop without a balance shows one figure on the product card, lowered when an order is placed.
      quantity: available,
      physical: balance ? physical : null,
      reserved: balance ? figures.reserved : null,
      available: balance ? available : null,
      updatedAt: new Date(updatedMs),
    };
  }
}
