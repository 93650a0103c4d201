/** The demo platform's reads (D20): deterministic for a seed and a clock, resumable at any batch, history continuing live. */
import test from 'ava';
import type { Db } from '../../src/db/knex.js';
import { DemoPlatform, demoTime, type DemoShopSettings } from '../../src/platforms/demo/adapter.js';
import { SHOPS } from '../../src/platforms/demo/catalogue.js';
import { OrderTimeline, generateOrders } from '../../src/platforms/demo/generator.js';
import { ORDER_HORIZON_MS, orderAt } from '../../src/platforms/demo/timeline.js';
import type { ChangeBatch, PlatformShop, SyncArea } from '../../src/platforms/types.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const historyEnd = new Date('2026-03-15T10:30:00.000Z');
const settings: DemoShopSettings = { seed: 4711, orders: 1500, days: 365, historyEnd: historyEnd.toISOString() };
const shopOf = (code: string): PlatformShop => ({ id: '1', accountCode: 'demo', code, platform: 'demo', timeZone: SHOPS[code].timeZone, settings: { ...settings } });
// Reads never touch the database; only the platform's writes do.
const platform = (windowLimit?: number) => new DemoPlatform({ db: undefined as unknown as Db, windowLimit });

async function readAll<A extends SyncArea>(p: DemoPlatform, shop: PlatformShop, area: A, since: Date | null, until: Date, limit: number, resume: string | null = null) {
  const batches: Array<ChangeBatch<A>> = [];
  for await (const batch of p.readChanges(shop, area, { since, until, resume, limit })) batches.push(batch);
  return batches;
}

test('When reads follow each other (since = the previous until), then the kept window grows incrementally and equals a fresh read', async (t) => {
  const p = platform();
  const shop = shopOf('pl');
  let since = historyEnd;
  for (let step = 1; step <= 3; step++) {
    const until = new Date(historyEnd.getTime() + step * 9 * HOUR);
    for (const area of ['orders', 'stock'] as const) {
      const incremental = await readAll(p, shop, area, since, until, 1000);
      const fresh = await readAll(platform(0), shop, area, since, until, 1000);
      t.is(JSON.stringify(incremental), JSON.stringify(fresh), `${area} step ${step}`);
    }
    since = until;
  }
});

test('When the same seed and clock are read twice, then the changes are identical', async (t) => {
  const until = new Date(historyEnd.getTime() + 3 * DAY);
  for (const area of ['orders', 'shipments', 'stock', 'search_console'] as const) {
    const a = await readAll(platform(), shopOf('sk'), area, historyEnd, until, 50);
    const b = await readAll(platform(), shopOf('sk'), area, historyEnd, until, 50);
    t.true(a.length > 0, area);
    t.is(JSON.stringify(a), JSON.stringify(b), area);
  }
});

test('When a read is interrupted after any batch and resumed from its position, then the rest is exactly what an uninterrupted read gives', async (t) => {
  const until = new Date(historyEnd.getTime() + 2 * DAY);
  for (const area of ['orders', 'claims', 'stock', 'search_console'] as const) {
    const since = area === 'claims' ? new Date(historyEnd.getTime() - 40 * DAY) : historyEnd;
    const limit = area === 'claims' ? 1 : area === 'search_console' ? 1 : area === 'stock' ? 25 : 5;
    const whole = await readAll(platform(), shopOf('cz'), area, since, until, limit);
    t.true(whole.length > 2, `${area} has several batches`);
    const streamed = await readAll(platform(0), shopOf('cz'), area, since, until, limit);
    t.is(JSON.stringify(streamed), JSON.stringify(whole), `${area}: kept window and stream agree`);
    for (let k = 0; k < whole.length; k++) {
      // A fresh platform instance, as after a worker restart; every other one streams instead of keeping the window.
      const rest = await readAll(platform(k % 2 ? 0 : undefined), shopOf('cz'), area, since, until, limit, whole[k].position);
      t.deepEqual(JSON.stringify(rest.flatMap((b) => b.records)), JSON.stringify(whole.slice(k + 1).flatMap((b) => b.records)), `${area} after batch ${k}`);
    }
  }
});

test('When the history ends, then new orders keep arriving at the rate it ended with, numbered on, each with a future', (t) => {
  const timeline = new OrderTimeline(settings.seed, SHOPS.hu, { orders: settings.orders, days: settings.days, endDate: historyEnd });
  const end = historyEnd.getTime();
  const history = [...timeline.plans(-Infinity, end)];
  t.is(history.length, settings.orders);
  const live = [...timeline.plans(end, end + 60 * DAY)];
  t.true(live.every((p) => p.createdMs > end), 'live orders start after the history');
  const all = [...history, ...live];
  t.is(new Set(all.map((p) => p.code)).size, all.length, 'order numbers stay unique');
  for (let i = 1; i < all.length; i++) t.true(all[i].createdMs >= all[i - 1].createdMs);
  // Two weeks on either side of the end (same season): about the same number of orders.
  const before = history.filter((p) => p.createdMs > end - 14 * DAY).length;
  const after = live.filter((p) => p.createdMs <= end + 14 * DAY).length;
  t.true(after > before * 0.7 && after < before * 1.4, `${after} orders in the first live fortnight vs ${before} in the last history fortnight`);
  for (const p of all) t.true(p.lastChangeMs - p.createdMs <= ORDER_HORIZON_MS);
  // Viewing the history at its end is what the loader stores.
  t.deepEqual(JSON.stringify([...generateOrders(settings.seed, SHOPS.hu, { orders: settings.orders, days: settings.days, endDate: historyEnd })].slice(-20)),
    JSON.stringify(history.slice(-20).map((p) => orderAt(p, end))));
});

test('When documents and claims are planned, then proformas have no tax date, invoices follow payment and credit notes are negative', (t) => {
  const timeline = new OrderTimeline(settings.seed, SHOPS.sk, { orders: 3000, days: 365, endDate: historyEnd });
  const plans = [...timeline.plans(-Infinity, historyEnd.getTime())];
  const documents = plans.flatMap((p) => p.documents);
  const proformas = documents.filter((d) => d.type === 'proforma');
  t.true(proformas.length > 100);
  t.true(proformas.every((d) => d.taxDate === null));
  t.true(documents.filter((d) => d.type !== 'proforma').every((d) => /^\d{4}-\d{2}-\d{2}$/.test(d.taxDate!)));
  for (const p of plans.filter((x) => x.prepaidMs !== null)) {
    const invoice = p.documents.find((d) => d.type === 'invoice')!;
    t.true(invoice.issuedAt.getTime() >= p.prepaidMs!);
  }
  const credits = documents.filter((d) => d.type === 'credit_note');
  t.true(credits.length > 10 && credits.every((d) => d.totalWithVatMinor < 0 && d.relatedCode === `FA${d.orderCode}`));
  const claims = plans.flatMap((p) => (p.claim ? [p.claim] : []));
  t.true(claims.length > 50, `${claims.length} claims`);
  const outbound = new Set(plans.flatMap((p) => p.shipments.map((s) => s.trackingNumber)));
  for (const c of claims) {
    const times = c.statusTimeline.map((s) => s.at);
    t.deepEqual(times, [...times].sort((a, b) => a - b));
    t.is(c.statusTimeline[c.statusTimeline.length - 1].at, c.closedMs);
    t.false(outbound.has(c.returnShipment.trackingNumber));
  }
});

test('When stock is read, then a balance shop reports physical, reserved and available, and a product-card shop only quantity', async (t) => {
  const until = new Date(historyEnd.getTime() + DAY);
  for (const [code, source] of [['sk', 'balance'], ['pl', 'product_card']] as const) {
    const records = (await readAll(platform(), shopOf(code), 'stock', historyEnd, until, 500)).flatMap((b) => b.records);
    const items = records.flatMap((r) => (r.kind === 'item' ? [r.item] : []));
    t.is(items.length, 300);
    for (const item of items) {
      t.is(item.source, source);
      if (source === 'balance') {
        t.is(item.available, item.physical! - item.reserved!);
        t.is(item.quantity as number | null, item.available);
      } else {
        t.like(item, { physical: null, reserved: null, available: null });
      }
    }
    t.true(items.filter((i) => i.quantity > 0).length > 270, `${code}: stock is mostly positive`);
    t.true(records.some((r) => r.kind === 'movement'));
  }
});

test('When the demo clock runs faster, then simulated time moves by the speed from the end of the history and never before it', (t) => {
  const end = historyEnd.getTime();
  t.is(demoTime(settings, end + 60_000, 60).getTime(), end + HOUR);
  t.is(demoTime(settings, end + 60_000, 1).getTime(), end + 60_000);
  t.is(demoTime(settings, end - DAY, 60).getTime(), end);
});
