/** Writes generated demo data into Postgres with COPY, one transaction per shop, so a crash never leaves half a shop. */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Db } from '../../db/knex.js';
import { shopDefinition, type ShopDefinition } from './catalogue.js';
import { SYNC_AREAS } from '../types.js';
import { ensureClaimsSettings } from '../../claims/settings.js';
import { defaultClaimsSettings } from './seeders/claimsSettings.js';
import { bookCouponsAt } from './couponMirror.js';
import {
  couponRow, claimRow, documentRow, movementRow, orderItemRows, orderRow, rowValues, searchConsolePropertyRow, searchConsoleRunRow, shipmentRow,
  stockItemRow, trackingEventRows,
} from '../../sync/rows.js';
import type { DemoShopSettings } from './adapter.js';
import { CopyBuffer, IdReservation, type PgConnection } from './copy.js';
import { documentAt } from './documents.js';
import { rebuildBuyerCount, rebuildShopRollups } from '../../rollups/orders.js';
import { catalogueRecords } from './content.js';
import { writeCatalogueRecords } from '../../sync/apply/catalogue.js';
import { rebuildProductRollups } from '../../rollups/products.js';
import { refreshShippingDays } from '../../rollups/shipping.js';
import { OrderTimeline, shopSeed } from './generator.js';
import { formatMinor } from './money.js';
import { BENCH_ACCOUNT, DEMO_ACCOUNTS, type DemoAccountSpec } from './plan.js';
import { searchConsolePropertyAt, searchConsoleRuns } from './searchConsole.js';
import { companyCostsBetween } from './companyCosts.js';
import { companyCostRow } from '../../sync/apply/companyCosts.js';
import { adSpendDay, orderTracking, reportedDays, visitDay } from './analytics.js';
import { adSpendRow, trackingRow, visitRows } from '../../sync/apply/webAnalytics.js';
import { HOUR_MS, localMidnightInstant } from './time.js';
import { daysOfRun, searchConsoleDay } from './searchConsoleRows.js';
import { searchConsoleDayRows } from '../../sync/apply/searchConsoleRows.js';
import { StockModel } from './stock.js';
import { claimAt, orderAt, stockChangeTimes, type OrderPlan } from './timeline.js';
import type { GeneratedCatalogue } from './types.js';
import { settlePayouts, settleShopAffiliate } from '../../affiliate/attribution.js';
import { seedDemoAffiliateShop } from './seeders/affiliateProgramme.js';
import { pgRunner } from '../../affiliate/sql.js';
import { seedDemoSuppliers } from './seeders/suppliers.js';
import { seedDemoChatbot } from './seeders/chatbot.js';

export { DEMO_SIZES, DEMO_ACCOUNTS, BENCH_ACCOUNT, demoAccountSpec, type DemoAccountSpec } from './plan.js';

/** Row counts of one shop's demo data. */
export interface ShopDataCounts {
  orders: number;
  items: number;
  shipments: number;
  trackingEvents: number;
  products: number;
  categories: number;
  documents: number;
  claims: number;
  stockMovements: number;
}

export interface LoadShopInput {
  accountId: string;
  shopCode: string;
  seed: number;
  orders: number;
  days: number;
  endDate: Date;
  /** Called about every 50k written orders and at the end with (orders written, orders planned). */
  onProgress?: (done: number, total: number) => void;
  /** Orders per COPY batch (default 10k: small enough to keep the heap flat, large enough to amortise round trips). */
  batchSize?: number;
}

const ORDER_COLUMNS = [
  'id', 'shop_id', 'code', 'created_at', 'updated_at', 'status_id', 'status_name', 'status_changed_at', 'paid', 'paid_at', 'currency',
  'total_with_vat', 'total_without_vat', 'total_vat', 'shipping_with_vat', 'eur_rate', 'payment_method', 'shipping_method',
  'variable_symbol', 'customer_email_hash', 'customer_first_name', 'customer_last_name', 'customer_company', 'customer_email',
  'customer_phone', 'customer_street', 'customer_city', 'customer_zip', 'customer_country', 'coupon_code', 'discount_with_vat',
] as const;
const ITEM_COLUMNS = [
  'order_id', 'line_no', 'kind', 'product_code', 'name', 'quantity', 'unit_price_with_vat', 'unit_price_without_vat', 'vat_rate',
  'purchase_price_without_vat', 'coupon_code',
] as const;
const SHIPMENT_COLUMNS = [
  'id', 'shop_id', 'order_code', 'carrier_code', 'tracking_number', 'country', 'status', 'outcome', 'created_at', 'updated_at', 'handed_over_at', 'delivered_at',
] as const;
const EVENT_COLUMNS = ['shipment_id', 'occurred_at', 'status', 'description', 'location', 'is_delivery'] as const;
const DOCUMENT_COLUMNS = [
  'shop_id', 'type', 'code', 'order_code', 'issued_at', 'tax_date', 'due_date', 'currency', 'total_with_vat', 'total_without_vat', 'total_vat',
  'variable_symbol', 'customer_email_hash', 'related_code',
  'issue_date', 'payment_method', 'lines', 'vat_breakdown', 'pdf_available', 'lifecycle', 'source_state', 'valid', 'updated_at',
  'customer_first_name', 'customer_last_name', 'customer_company', 'customer_email', 'customer_phone', 'customer_street', 'customer_city',
  'customer_zip', 'customer_country',
] as const;
const CLAIM_COLUMNS = [
  'shop_id', 'code', 'order_code', 'type', 'reason', 'opened_at', 'updated_at', 'status_id', 'status_name', 'status_changed_at', 'closed_at',
  'resolution', 'currency', 'refund_with_vat', 'items', 'return_carrier_code', 'return_tracking_number', 'return_status', 'return_created_at',
  'return_delivered_at', 'customer_email_hash',
  // Issue 10 (migration 009).
  'status_history', 'process_id', 'deadline_at', 'tags', 'request_type', 'refund_to', 'refund_account_masked', 'rating', 'rating_comment', 'emails',
] as const;
const MOVEMENT_COLUMNS = ['shop_id', 'movement_id', 'item_code', 'kind', 'quantity', 'occurred_at', 'order_code', 'claim_code'] as const;
const SEARCH_CONSOLE_ROW_COLUMNS = ['shop_id', 'day', 'query', 'page', 'country', 'device', 'clicks', 'impressions', 'position', 'data_state', 'content_hash'] as const;
const STOCK_ITEM_COLUMNS = ['shop_id', 'code', 'sku', 'source', 'quantity', 'physical', 'reserved', 'available', 'updated_at'] as const;

/** Creates the account if it does not exist and returns its id; an existing account is left as it is (operators may have changed its plan). */
export async function ensureAccount(db: Db, input: { code: string; name: string; planCode: string; timeZone: string }): Promise<string> {
  await db('accounts')
    .insert({ code: input.code, name: input.name, plan_code: input.planCode, time_zone: input.timeZone })
    .onConflict('code').ignore();
  const row = await db('accounts').where({ code: input.code }).first('id');
  return String(row.id);
}

/** Creates the account's demo shops that do not exist yet (platform `demo`); returns shop ids by code. */
export async function ensureShops(db: Db, accountId: string, shops: ShopDefinition[]): Promise<Record<string, string>> {
  if (shops.length) {
    await db('shops')
      .insert(shops.map((s) => ({
        account_id: accountId, code: s.code, name: s.name, platform: 'demo', currency: s.currency, country: s.country,
        language: s.language, time_zone: s.timeZone, base_url: s.baseUrl,
        web_code_installed: s.webCode.installed, web_code_version: s.webCode.version,
        web_code_modules: s.webCode.modules, coupon_link_ready: s.webCode.couponLinkReady,
      })))
      .onConflict(['account_id', 'code']).ignore();
  }
  const rows: Array<{ id: string; code: string }> = await db('shops').where({ account_id: accountId }).whereIn('code', shops.map((s) => s.code)).select('id', 'code');
  return Object.fromEntries(rows.map((r) => [r.code, String(r.id)]));
}

/** Counts what a shop already holds (the idempotent answer of `loadShopData`). */
async function countShopData(conn: PgConnection, shopId: string): Promise<ShopDataCounts> {
  const r = await conn.query<Record<keyof ShopDataCounts, string>>(
    `select (select count(*) from orders where shop_id = $1) as orders,
            (select count(*) from order_items i join orders o on o.id = i.order_id where o.shop_id = $1) as items,
            (select count(*) from shipments where shop_id = $1) as shipments,
            (select count(*) from shipment_tracking_events e join shipments s on s.id = e.shipment_id where s.shop_id = $1) as "trackingEvents",
            (select count(*) from products where shop_id = $1) as products,
            (select count(*) from categories where shop_id = $1) as categories,
            (select count(*) from documents where shop_id = $1) as documents,
            (select count(*) from claims where shop_id = $1) as claims,
            (select count(*) from stock_movements where shop_id = $1) as "stockMovements"`,
    [shopId],
  );
  const row = r.rows[0];
  return {
    orders: Number(row.orders), items: Number(row.items), shipments: Number(row.shipments),
    trackingEvents: Number(row.trackingEvents), products: Number(row.products), categories: Number(row.categories),
    documents: Number(row.documents), claims: Number(row.claims), stockMovements: Number(row.stockMovements),
  };
}

/** Writes categories, products and carriers of a shop. */
async function writeCatalogue(conn: PgConnection, shopId: string, catalogue: GeneratedCatalogue): Promise<{ products: number; categories: number }> {
  const categories = new CopyBuffer('categories', ['shop_id', 'guid', 'name', 'parent_guid', 'position', 'url', 'created_at', 'updated_at']);
  for (const c of catalogue.categories) categories.add([shopId, c.guid, c.name, c.parentGuid, c.position, c.url ?? null, c.createdAt, c.updatedAt]);
  const products = new CopyBuffer('products', [
    'shop_id', 'code', 'name', 'ean', 'plu', 'category_guid', 'currency', 'price_with_vat', 'vat_rate', 'purchase_price', 'active', 'url', 'created_at', 'updated_at',
  ]);
  for (const p of catalogue.products) {
    products.add([
      shopId, p.code, p.name, p.ean, p.plu, p.categoryGuid, p.currency, formatMinor(p.priceWithVatMinor), p.vatRate,
      p.purchasePriceMinor === null ? null : formatMinor(p.purchasePriceMinor), p.active, p.url ?? null, p.createdAt, p.updatedAt,
    ]);
  }
  // Carriers are few and carry jsonb and bytea, so plain parameterised inserts are simplest.
  for (const c of catalogue.carriers) {
    await conn.query(
      'insert into carriers (shop_id, code, name, profiles, credentials_encrypted, connected_at) values ($1, $2, $3, $4, $5, $6)',
      [shopId, c.code, c.name, JSON.stringify(c.profiles), c.credentialsEncrypted, c.connectedAt],
    );
  }
  return { categories: await categories.copyInto(conn), products: await products.copyInto(conn) };
}

/** COPY buffers of one batch of orders, with parent ids already assigned. */
interface OrderBatch {
  buffers: CopyBuffer[];
  count: number;
}

/** Per-product figures summed over the whole history, for the stock items at its end. */
interface StockSums {
  moved: number[];
  reserved: number[];
  touched: number[];
}

/** Turns planned orders into COPY rows as they stand at `endMs`; yields to the event loop now and then so the previous batch's COPY keeps streaming. */
async function encodeBatch(
  shopId: string, plans: OrderPlan[], endMs: number, timeline: OrderTimeline, sums: StockSums, orderIds: IdReservation, shipmentIds: IdReservation,
  shop: ShopDefinition,
): Promise<OrderBatch> {
  await orderIds.ensure(plans.length);
  await shipmentIds.ensure(plans.reduce((n, p) => n + p.shipments.length, 0));
  const orders = new CopyBuffer('orders', ORDER_COLUMNS);
  const items = new CopyBuffer('order_items', ITEM_COLUMNS);
  const shipments = new CopyBuffer('shipments', SHIPMENT_COLUMNS);
  const events = new CopyBuffer('shipment_tracking_events', EVENT_COLUMNS);
  const documents = new CopyBuffer('documents', DOCUMENT_COLUMNS);
  const claims = new CopyBuffer('claims', CLAIM_COLUMNS);
  const movements = new CopyBuffer('stock_movements', MOVEMENT_COLUMNS);
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i];
    const o = orderAt(plan, endMs)!;
    const orderId = orderIds.next();
    orders.add(rowValues({ id: orderId, ...orderRow(shopId, o) }, ORDER_COLUMNS));
    for (const row of orderItemRows(orderId, o)) items.add(rowValues(row, ITEM_COLUMNS));
    for (const s of o.shipments) {
      const shipmentId = shipmentIds.next();
      shipments.add(rowValues({ id: shipmentId, ...shipmentRow(shopId, { ...s, orderCode: o.code }) }, SHIPMENT_COLUMNS));
      for (const row of trackingEventRows(shipmentId, s.events)) events.add(rowValues(row, EVENT_COLUMNS));
    }
    for (const d of plan.documents) if (d.issuedAt.getTime() <= endMs) documents.add(rowValues(documentRow(shopId, documentAt(plan, shop, d, endMs)), DOCUMENT_COLUMNS));
    const claim = claimAt(plan, endMs);
    if (claim) claims.add(rowValues(claimRow(shopId, claim), CLAIM_COLUMNS));
    for (const m of plan.movements) {
      if (m.occurredAt.getTime() > endMs) continue;
      movements.add(rowValues(movementRow(shopId, m), MOVEMENT_COLUMNS));
      sums.moved[timeline.productIndex.get(m.productCode)!] += m.quantity;
    }
    const open = endMs < plan.reservedUntilMs;
    const changedAt = Math.max(...stockChangeTimes(plan).filter((t) => t <= endMs));
    for (const it of plan.items) {
      const p = timeline.productIndex.get(it.productCode)!;
      if (open) sums.reserved[p] += it.quantity;
      if (changedAt > sums.touched[p]) sums.touched[p] = changedAt;
    }
    if (i % 2000 === 1999) await yieldToEventLoop();
  }
  return { buffers: [orders, items, shipments, events, documents, claims, movements], count: plans.length };
}

/** Writes one encoded batch; the COPYs run back to back on the shop's transaction. Returns rows per table. */
async function writeBatch(conn: PgConnection, batch: OrderBatch): Promise<number[]> {
  const written: number[] = [];
  for (const buffer of batch.buffers) written.push(await buffer.copyInto(conn));
  return written;
}

/** Generates the next `size` planned orders, yielding to the event loop so a COPY in flight is not starved. */
async function nextPlans(stream: Iterator<OrderPlan>, size: number): Promise<OrderPlan[]> {
  const out: OrderPlan[] = [];
  while (out.length < size) {
    const r = stream.next();
    if (r.done) break;
    out.push(r.value);
    if (out.length % 2000 === 0) await yieldToEventLoop();
  }
  return out;
}

/**
 * The rest of the shop's history at its end: purchase receipts and the stock items' figures, the search-console
 * property with its syncs, the platform settings, and a checkpoint per data area at the history's end — the first
 * sync continues from there, so history is never re-announced as news.
 */
async function writeHistoryEnd(
  conn: PgConnection, shopId: string, settings: DemoShopSettings, shop: ShopDefinition, timeline: OrderTimeline, sums: StockSums,
): Promise<number> {
  const endMs = timeline.historyEndMs;
  const stock = new StockModel(settings.seed, shop, timeline);
  const receipts = new CopyBuffer('stock_movements', MOVEMENT_COLUMNS);
  const items = new CopyBuffer('stock_items', STOCK_ITEM_COLUMNS);
  timeline.model.products.forEach((_, i) => {
    for (const m of stock.receiptsBetween(i, null, endMs)) receipts.add(rowValues(movementRow(shopId, m), MOVEMENT_COLUMNS));
    const item = stock.itemAt(i, endMs, { moved: sums.moved[i], reserved: sums.reserved[i], touchedMs: sums.touched[i] });
    items.add(rowValues(stockItemRow(shopId, item), STOCK_ITEM_COLUMNS));
  });
  const receiptCount = await receipts.copyInto(conn);
  await items.copyInto(conn);

  const runs = searchConsoleRuns(settings.seed, shop, null, endMs, timeline.windowStartMs);
  if (runs.length) {
    const rows = runs.map((r) => searchConsoleRunRow(shopId, r));
    const columns = Object.keys(rows[0]);
    const buffer = new CopyBuffer('search_console_sync_runs', columns);
    for (const row of rows) buffer.add(rowValues(row, columns));
    await buffer.copyInto(conn);
  }
  // Every day the history's runs delivered, as its last delivery left it (final replaces fresh).
  const delivered = new Map<number, 'fresh' | 'final'>();
  for (const run of runs) for (const d of daysOfRun(run)) delivered.set(d.localDate, d.dataState);
  const scRows = new CopyBuffer('search_console_rows', SEARCH_CONSOLE_ROW_COLUMNS);
  for (const [localDate, state] of [...delivered.entries()].sort((a, b) => a[0] - b[0])) {
    for (const row of searchConsoleDayRows(shopId, searchConsoleDay(settings.seed, shop, timeline.model.catalogue, localDate, state))) scRows.add(rowValues(row, SEARCH_CONSOLE_ROW_COLUMNS));
  }
  await scRows.copyInto(conn);

  const property = searchConsolePropertyRow(shopId, searchConsolePropertyAt(settings.seed, shop, endMs, timeline.windowStartMs));
  const propertyColumns = Object.keys(property);
  await conn.query(
    `insert into search_console_properties (${propertyColumns.join(', ')}) values (${propertyColumns.map((_, i) => `$${i + 1}`).join(', ')})`,
    rowValues(property, propertyColumns),
  );

  const costs = companyCostsBetween(settings.seed, shop, null, endMs, timeline.windowStartMs, timeline.ordersPerDayAtEnd, (ms) => timeline.eurRateAt(ms));
  if (costs.length) {
    const rows = costs.map((c) => companyCostRow(shopId, c));
    const columns = Object.keys(rows[0]);
    const buffer = new CopyBuffer('company_costs', columns);
    for (const row of rows) buffer.add(rowValues(row, columns));
    await buffer.copyInto(conn);
  }
  // The catalogue area as it stands at the history's end: capabilities, dictionary, texts, pages and articles.
  const exec = async (sql: string, bindings: unknown[]) => (await conn.query(sql, bindings)).rowCount ?? 0;
  await writeCatalogueRecords(exec, shopId, catalogueRecords(settings.seed, shop, timeline.model, null, endMs));

  await writeWebAnalytics(conn, shopId, settings, shop, timeline);

  await conn.query('insert into shop_platform_settings (shop_id, platform, settings) values ($1, $2, $3)', [shopId, 'demo', JSON.stringify(settings)]);
  // Issue 10: the claims module's settings (the service's own data) start from the demo defaults.
  await ensureClaimsSettings((sql, values) => conn.query(sql, values), shopId, defaultClaimsSettings(shop, settings.seed));
  // Issue 10: the shop's coupons as they stand at the history's end (the coupons area's checkpoint starts there).
  const couponRows = bookCouponsAt(timeline.coupons, endMs).map((c) => couponRow(shopId, c));
  if (couponRows.length) {
    const couponColumns = Object.keys(couponRows[0]);
    const coupons = new CopyBuffer('coupons', couponColumns);
    for (const row of couponRows) coupons.add(rowValues(row, couponColumns));
    await coupons.copyInto(conn);
  }
  for (const area of SYNC_AREAS) {
    await conn.query('insert into sync_checkpoints (shop_id, area, through, events_from) values ($1, $2, $3, $3)', [shopId, area, new Date(endMs)]);
  }
  return receiptCount;
}

/** Web analytics of the history: every reported day of visits and ad spend, and the tracking of the loaded orders. */
async function writeWebAnalytics(conn: PgConnection, shopId: string, settings: DemoShopSettings, shop: ShopDefinition, timeline: OrderTimeline): Promise<void> {
  const copyRows = async (table: string, rows: Array<Record<string, unknown>>) => {
    if (!rows.length) return;
    const columns = Object.keys(rows[0]);
    const buffer = new CopyBuffer(table, columns);
    for (const row of rows) buffer.add(rowValues(row as never, columns));
    await buffer.copyInto(conn);
  };
  const days = reportedDays(shop, null, timeline.historyEndMs, timeline.windowStartMs);
  const visits = [];
  const ads = [];
  for (const d of days) {
    const orders = timeline.ordersOnLocalDay(d);
    visits.push(...visitRows(shopId, visitDay(settings.seed, shop, d, orders)));
    const rate = shop.currency === 'EUR' ? 1 : timeline.eurRateAt(localMidnightInstant(shop.timeZone, d) + 12 * HOUR_MS);
    ads.push(...adSpendDay(settings.seed, shop, d, orders, rate).map((a) => adSpendRow(shopId, a)));
  }
  await copyRows('web_visits', visits);
  await copyRows('ad_spend_daily', ads);
  const orders = await conn.query<{ code: string; created_at: Date }>('select code, created_at from orders where shop_id = $1', [shopId]);
  const tracking = [];
  for (const o of orders.rows) {
    const t = orderTracking(settings.seed, shop, o.code, o.created_at.getTime());
    if (t) tracking.push(trackingRow(shopId, t));
  }
  await copyRows('order_tracking', tracking);
}

/**
 * Loads one demo shop: if it already has orders or products nothing is written and the existing counts are returned;
 * otherwise everything is generated and COPYed in one transaction. Safe to retry and to run twice at once (row lock on the shop).
 */
export async function loadShopData(db: Db, input: LoadShopInput): Promise<ShopDataCounts> {
  const shop = shopDefinition(input.shopCode);
  const conn = (await db.client.acquireConnection()) as PgConnection;
  let open = false;
  try {
    await conn.query('begin');
    open = true;
    // Only this transaction's commit matters for durability of a re-creatable demo load.
    await conn.query('set local synchronous_commit = off');
    const found = await conn.query<{ id: string; account_code: string }>(
      `select s.id, a.code as account_code from shops s join accounts a on a.id = s.account_id
        where s.account_id = $1 and s.code = $2 for update of s`,
      [input.accountId, input.shopCode],
    );
    if (!found.rows.length) throw new Error(`Shop ${input.shopCode} of account ${input.accountId} does not exist; call ensureShops first`);
    const shopId = String(found.rows[0].id);
    const has = await conn.query<{ has: boolean }>(
      'select exists(select 1 from orders where shop_id = $1) or exists(select 1 from products where shop_id = $1) as has', [shopId],
    );
    if (has.rows[0].has) {
      const counts = await countShopData(conn, shopId);
      // Issue 10: a data directory loaded before the claims settings existed gets their defaults now (idempotent).
      const seedOfShop = shopSeed(input.seed, found.rows[0].account_code, input.shopCode);
      await ensureClaimsSettings((sql, values) => conn.query(sql, values), shopId, defaultClaimsSettings(shop, seedOfShop));
      await conn.query('commit');
      open = false;
      return counts;
    }

    const seed = shopSeed(input.seed, found.rows[0].account_code, input.shopCode);
    const settings: DemoShopSettings = { seed, orders: input.orders, days: input.days, historyEnd: input.endDate.toISOString() };
    const timeline = new OrderTimeline(seed, shop, input);
    const endMs = timeline.historyEndMs;
    const catalogueCounts = await writeCatalogue(conn, shopId, timeline.model.catalogue);
    const totals = { orders: 0, items: 0, shipments: 0, trackingEvents: 0, documents: 0, claims: 0, stockMovements: 0 };
    const products = timeline.model.products.length;
    const sums: StockSums = { moved: new Array(products).fill(0), reserved: new Array(products).fill(0), touched: new Array(products).fill(0) };
    const batchSize = input.batchSize ?? 10_000;
    const orderIds = new IdReservation(conn, 'orders', Math.min(100_000, Math.max(1000, input.orders)));
    const shipmentIds = new IdReservation(conn, 'shipments', Math.min(100_000, Math.max(1000, input.orders)));
    const stream = timeline.plans(-Infinity, endMs)[Symbol.iterator]();

    // Two-stage pipeline: while batch k is COPYed, batch k+1 is generated and encoded.
    let inFlight: Promise<void> | null = null;
    let reported = 0;
    for (;;) {
      const plans = await nextPlans(stream, batchSize);
      if (!plans.length) break;
      // Id reservation shares the connection, so it waits for the COPY in flight; chunked reservation keeps that rare.
      const batch = await encodeBatch(shopId, plans, endMs, timeline, sums, orderIds, shipmentIds, shop);
      if (inFlight) await inFlight;
      const writing = writeBatch(conn, batch).then((written) => {
        totals.orders += written[0];
        totals.items += written[1];
        totals.shipments += written[2];
        totals.trackingEvents += written[3];
        totals.documents += written[4];
        totals.claims += written[5];
        totals.stockMovements += written[6];
        // Progress about every 50k orders (and at the end), whatever the batch size.
        if (Math.floor(totals.orders / 50_000) > reported || totals.orders === input.orders) {
          reported = Math.floor(totals.orders / 50_000);
          input.onProgress?.(totals.orders, input.orders);
        }
      });
      // Marks the rejection as handled: it is awaited (and rethrown) before the next batch or at the end.
      writing.catch(() => undefined);
      inFlight = writing;
    }
    if (inFlight) await inFlight;
    totals.stockMovements += await writeHistoryEnd(conn, shopId, settings, shop, timeline, sums);
    // Statistics of the rows just copied (ANALYZE sees this transaction's own rows): without them the affiliate
    // settlement below was planned as over empty tables and ran for most of a million-order load.
    // A small shop (the demo's 3,000 orders) is settled fast under any plan; its ANALYZE cost ~2 s a shop, on the
    // critical path of every test run and demo start. The final analyzeLoadedTables covers what is read afterwards.
    if (input.orders >= ANALYZE_FROM_ORDERS) await conn.query(`analyze ${LOADED_TABLES.join(', ')}`);
    // The service's own affiliate programme, on the same transaction, so its conversions point at these orders.
    const affiliate = pgRunner(db, conn);
    await seedDemoAffiliateShop(affiliate, {
      accountId: input.accountId, accountCode: found.rows[0].account_code, seed: input.seed, shopId, shop, shopSeed: seed,
      windowStartMs: timeline.windowStartMs, historyEndMs: endMs, partnerCoupons: timeline.coupons.couponsAt(endMs).filter((c) => c.partnerIndex !== null),
    });
    if (input.orders >= ANALYZE_FROM_ORDERS) await conn.query('analyze affiliate_conversions');
    await settleShopAffiliate(affiliate, { id: shopId, accountId: input.accountId }, new Date(endMs));
    // The loaded history's months were paid out as if a person had run them (live months wait for a person).
    await settlePayouts(affiliate, { id: shopId, accountId: input.accountId }, new Date(endMs));
    await seedDemoSuppliers(affiliate, { accountId: input.accountId, accountCode: found.rows[0].account_code, seed: input.seed, shopId, shop, shopSeed: seed, historyEndMs: endMs });
    // Rollups of the loaded history, in the same transaction as its rows.
    const run = async (text: string, values: unknown[]) => (await conn.query(text, values)).rows;
    await rebuildShopRollups(run, shopId);
    await rebuildProductRollups(run, shopId);
    await refreshShippingDays(run, shopId, null);
    await rebuildBuyerCount(run, shopId);
    await seedDemoChatbot(affiliate, { shopId, shop, shopSeed: seed, historyEndMs: endMs });
    await conn.query('update shops set last_synced_at = $2 where id = $1', [shopId, input.endDate]);
    await conn.query('commit');
    open = false;
    return { ...totals, products: catalogueCounts.products, categories: catalogueCounts.categories };
  } catch (err) {
    if (open) await conn.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await db.client.releaseConnection(conn);
  }
}

/** From this many orders a shop's load analyzes its tables inside its transaction (the bench's million needs it). */
const ANALYZE_FROM_ORDERS = 50_000;

/** Every table the loader COPYs into. */
const LOADED_TABLES = ['availabilities', 'content_articles', 'shop_content_capabilities', 'categories', 'products', 'orders', 'order_items', 'shipments', 'shipment_tracking_events', 'documents', 'claims', 'stock_movements', 'stock_items', 'search_console_sync_runs'];

/** The rollups the loader builds in its transaction: summaries read them, so they need statistics as much. */
const ROLLUP_TABLES = ['order_daily_rollups', 'customer_rollups', 'customer_daily_rollups', 'shipping_daily_rollups', 'shipment_delivery_times', 'shipping_delivery_histograms', 'shipping_delivery_groups'];

/**
 * Refreshes the planner's statistics after a bulk load. Autovacuum does it only later: until then a listing of a
 * freshly loaded million orders was planned as if the table were empty and answered in about a second, not 30 ms.
 */
export async function analyzeLoadedTables(db: Db): Promise<void> {
  await db.raw(`analyze ${[...LOADED_TABLES, ...ROLLUP_TABLES].join(', ')}`);
}

/** Ensures one account spec and its shops exist; returns the account id. */
export async function ensureDemoAccount(db: Db, spec: DemoAccountSpec): Promise<string> {
  const accountId = await ensureAccount(db, { code: spec.code, name: spec.name, planCode: spec.planCode, timeZone: spec.timeZone });
  await ensureShops(db, accountId, spec.shops);
  return accountId;
}

/** Loads the demo tenant (`demo`, four shops) and the isolation tenant (`acme`, overlapping shop codes). */
export async function loadDemoAccounts(
  db: Db, input: { seed: number; endDate: Date; onShop?: (accountCode: string, shopCode: string, counts: ShopDataCounts) => void },
): Promise<Array<{ accountCode: string; shopCode: string; counts: ShopDataCounts }>> {
  const results: Array<{ accountCode: string; shopCode: string; counts: ShopDataCounts }> = [];
  for (const spec of DEMO_ACCOUNTS) {
    const accountId = await ensureDemoAccount(db, spec);
    for (const shop of spec.shops) {
      const counts = await loadShopData(db, { accountId, shopCode: shop.code, seed: input.seed, orders: spec.ordersPerShop, days: spec.days, endDate: input.endDate });
      input.onShop?.(spec.code, shop.code, counts);
      results.push({ accountCode: spec.code, shopCode: shop.code, counts });
    }
  }
  await analyzeLoadedTables(db);
  return results;
}

/** Loads the benchmark tenant: account `bench`, shop `sk`, a million orders by default; progress every ~50k orders. */
export async function loadBenchAccount(
  db: Db, input: { seed: number; endDate: Date; orders?: number; onProgress?: (done: number, total: number) => void },
): Promise<ShopDataCounts> {
  const accountId = await ensureDemoAccount(db, BENCH_ACCOUNT);
  const counts = await loadShopData(db, {
    accountId, shopCode: BENCH_ACCOUNT.shops[0].code, seed: input.seed, orders: input.orders ?? BENCH_ACCOUNT.ordersPerShop,
    days: BENCH_ACCOUNT.days, endDate: input.endDate, onProgress: input.onProgress,
  });
  await analyzeLoadedTables(db);
  return counts;
}
