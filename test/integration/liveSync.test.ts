/** The sync against the demo platform on a real Postgres: every change stored and announced exactly once, per account. */
import anyTest, { type TestFn } from 'ava';
import type { Db } from '../../src/db/knex.js';
import { DemoPlatform, demoSettings } from '../../src/platforms/demo/adapter.js';
import { searchConsolePropertyAt, searchConsoleRuns } from '../../src/platforms/demo/searchConsole.js';
import { ORDER_HORIZON_MS } from '../../src/platforms/demo/timeline.js';
import { SYNC_AREAS, type PlatformOrder } from '../../src/platforms/types.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop, type SyncShop } from '../../src/sync/shops.js';
import { applyCouponRemoval, applyCoupons } from '../../src/sync/apply/coupons.js';
import { applyOrders } from '../../src/sync/apply/orders.js';
import { EventSink } from '../../src/sync/events.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { testParts } from '../helpers/service.js';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createSyncActivities } from '../../activities/sync.js';

interface Context { database: TestDatabase; server: TestServer }
const test = anyTest as TestFn<Context>;
const HOUR = 3_600_000;

test.before(async (t) => {
  const database = await createTestDatabase();
  t.context = { database, server: await startTestServer(database.db, () => new Date(TEST_NOW.getTime() + 3 * 24 * HOUR)) };
});
test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

async function syncShop(db: Db, platform: DemoPlatform, shop: SyncShop, until: Date, batchSize = 50) {
  const totals = { written: 0, events: 0, batches: 0 };
  for (const area of SYNC_AREAS) {
    const r = await syncArea(db, platform, shop, area, until, { batchSize });
    totals.written += r.written;
    totals.events += r.events;
    totals.batches += r.batches;
  }
  return totals;
}

async function eventsOf(db: Db, shopId: string): Promise<Array<{ event_type: string; resource_id: string; occurred_at: Date; data: any; account_id: string }>> {
  return db('outbox_events').where({ shop_id: shopId }).orderBy('id').select('event_type', 'resource_id', 'occurred_at', 'data', 'account_id');
}

const countBy = (rows: Array<{ event_type: string }>) => rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.event_type]: (acc[r.event_type] ?? 0) + 1 }), {});

/** What the platform says happened in (since, until]: counted straight from the order timelines, independently of the sync. */
function expectedCounts(platform: DemoPlatform, shop: SyncShop, since: number, until: number): Record<string, number> {
  const { timeline } = platform.model(shop);
  const inWindow = (t: number) => t > since && t <= until;
  const c: Record<string, number> = {};
  const add = (type: string, n = 1) => { if (n) c[type] = (c[type] ?? 0) + n; };
  for (const plan of timeline.plans(since - ORDER_HORIZON_MS, until)) {
    if (inWindow(plan.createdMs)) add('order.created');
    if (plan.paidMs !== null && inWindow(plan.paidMs)) add('order.paid');
    add('order.status_changed', plan.statusTimeline.slice(1).filter((s) => inWindow(s.at)).length);
    for (const s of plan.shipments) {
      if (inWindow(s.createdMs)) add('shipment.created');
      let previous = s.events[0].status;
      for (const e of s.events.slice(1)) {
        if (e.status === previous) continue;
        previous = e.status;
        if (!inWindow(e.occurredAt.getTime())) continue;
        add('shipment.status_changed');
        if (e.status === 'DELIVERED') add('shipment.delivered');
      }
    }
    add('invoice.created', plan.documents.filter((d) => d.type === 'invoice' && inWindow(d.issuedAt.getTime())).length);
    if (plan.claim) {
      if (inWindow(plan.claim.openedMs)) add('claim.created');
      add('claim.status_changed', plan.claim.statusTimeline.slice(1).filter((s) => inWindow(s.at)).length);
      if (inWindow(plan.claim.closedMs)) add('claim.closed');
    }
    add('inventory.stock_changed', plan.movements.filter((m) => inWindow(m.occurredAt.getTime())).length);
  }
  const { stock, settings, definition } = platform.model(shop);
  timeline.model.products.forEach((_, i) => add('inventory.stock_changed', stock.receiptsBetween(i, since, until).length));
  for (const run of searchConsoleRuns(settings.seed, definition, since, until, timeline.windowStartMs)) add(`search_console.sync.${run.status}`);
  const property = searchConsolePropertyAt(settings.seed, definition, until, timeline.windowStartMs);
  add('search_console.connection.changed', property.statusHistory.slice(1).filter((h) => inWindow(h.at.getTime())).length);
  return c;
}

test.serial('When the demo platform moves on, then each change is stored and announced exactly once, and a re-sync announces nothing', async (t) => {
  const { db } = t.context.database;
  const platform = new DemoPlatform({ db });
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const historyEnd = Date.parse(demoSettings(shop).historyEnd);
  t.is(historyEnd, TEST_NOW.getTime(), 'the loaded history ends at the load instant');
  t.deepEqual(await eventsOf(db, shop.id), [], 'loading history announces nothing');

  const until1 = new Date(historyEnd + 20 * HOUR);
  const first = await syncShop(db, platform, shop, until1);
  const events1 = await eventsOf(db, shop.id);
  t.deepEqual(countBy(events1), expectedCounts(platform, shop, historyEnd, until1.getTime()));
  t.is(first.events, events1.length);
  t.true((countBy(events1)['order.created'] ?? 0) > 3, 'new orders keep arriving after the history');
  for (const e of events1) t.true(e.occurred_at.getTime() > historyEnd && e.occurred_at.getTime() <= until1.getTime(), 'occurred_at is when it happened in the shop');

  // The same window again: nothing changed, so nothing is written or announced.
  const again = await syncShop(db, platform, shop, until1);
  t.is(again.events, 0);
  t.is(again.batches, 0);
  t.is((await eventsOf(db, shop.id)).length, events1.length);

  // Further on: only the changes of the new window.
  const until2 = new Date(until1.getTime() + 2 * 24 * HOUR);
  await syncShop(db, platform, shop, until2, 7);
  const events2 = (await eventsOf(db, shop.id)).slice(events1.length);
  t.deepEqual(countBy(events2), expectedCounts(platform, shop, until1.getTime(), until2.getTime()));
  const keys = (await eventsOf(db, shop.id)).map((e) => `${e.event_type}|${e.resource_id}|${e.occurred_at.toISOString()}`);
  t.is(new Set(keys).size, keys.length, 'no change is announced twice');

  // The stored rows are the platform's state at the end of the window.
  const { timeline } = platform.model(shop);
  const live = [...timeline.plans(historyEnd, until2.getTime())];
  const stored = await db('orders').where({ shop_id: shop.id }).whereIn('code', live.map((p) => p.code)).select('code');
  t.is(stored.length, live.length, 'every new order is stored');
  const order = await db('orders').where({ shop_id: shop.id, code: live[0].code }).first();
  const expectedStatus = [...live[0].statusTimeline].reverse().find((s) => s.at <= until2.getTime())!;
  t.is(order.status_id, expectedStatus.statusId);
});

test.serial('When a change happens exactly at the end instant of the first sync, then it is history and not announced; with that end 1 ms earlier, it is announced (P14)', async (t) => {
  const { db } = t.context.database;
  const platform = new DemoPlatform({ db });
  // pl: no other test of this file syncs it, so its checkpoints are the load's (through = events_from = history end).
  const shop = (await findSyncShop(db, 'demo', 'pl'))!;
  const historyEnd = Date.parse(demoSettings(shop).historyEnd);
  const { timeline } = platform.model(shop);
  // The first order placed after the loaded history: its creation instant is the end of the window read here.
  const first = [...timeline.plans(historyEnd, historyEnd + 2 * 24 * HOUR)].filter((p) => p.createdMs > historyEnd).sort((a, b) => a.createdMs - b.createdMs)[0]!;
  const at = first.createdMs;
  /** The order events a sync of (history end, at] writes when the first sync ended at `eventsFrom`; rolled back after. */
  const announced = async (eventsFrom: number) => {
    const trx = await db.transaction();
    try {
      await trx('sync_checkpoints').where({ shop_id: shop.id, area: 'orders' }).update({ events_from: new Date(eventsFrom) });
      await syncArea(trx, platform, shop, 'orders', new Date(at), { batchSize: 50 });
      t.truthy(await trx('orders').where({ shop_id: shop.id, code: first.code }).first('id'), 'the order placed at the end instant is stored');
      return (await trx('outbox_events').where({ shop_id: shop.id }).orderBy('id').select('event_type', 'resource_id', 'occurred_at'))
        .map((e) => `${e.event_type} ${e.resource_id} ${e.occurred_at.toISOString()}`);
    } finally {
      await trx.rollback();
    }
  };
  t.deepEqual(await announced(at), [], 'every change up to and at the end instant is history');
  const justAfter = await announced(at - 1);
  t.true(justAfter.includes(`order.created ${first.code} ${new Date(at).toISOString()}`), 'the order placed 1 ms after the end is news');
  // Only the changes at that very instant are news then (the rest of the window is before it).
  const expected = Object.entries(expectedCounts(platform, shop, at - 1, at)).filter(([type]) => type.startsWith('order.')).reduce((n, [, c]) => n + c, 0);
  t.is(justAfter.length, expected);
});

test.serial('When shipments and claims are synced, then only outbound shipments produce shipment events; return shipments stay in their claim', async (t) => {
  const { db } = t.context.database;
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const shipmentEvents = await db('outbox_events').where({ shop_id: shop.id }).where('event_type', 'like', 'shipment.%').select('resource_id', 'data');
  t.true(shipmentEvents.length > 0);
  const ids = new Set((await db('shipments').where({ shop_id: shop.id }).select('id')).map((r) => String(r.id)));
  for (const e of shipmentEvents) t.true(ids.has(e.resource_id) && e.data.shipment_id === e.resource_id);
  const returns = await db('claims').where({ shop_id: shop.id }).whereNotNull('return_tracking_number').pluck('return_tracking_number');
  t.true(returns.length > 0, 'the history has claims with return shipments');
  t.is((await db('shipments').where({ shop_id: shop.id }).whereIn('tracking_number', returns).count<{ count: string }[]>('* as count'))[0].count, '0');
});

test.serial('When two accounts sync shops with the same code, then events and rows never cross accounts', async (t) => {
  const { db } = t.context.database;
  const platform = new DemoPlatform({ db });
  const demo = (await findSyncShop(db, 'demo', 'sk'))!;
  const acme = (await findSyncShop(db, 'acme', 'sk'))!;
  const until = new Date(TEST_NOW.getTime() + 2 * 24 * HOUR);
  await syncShop(db, platform, acme, until);
  const rows = await db('outbox_events as e').join('shops as s', 's.id', 'e.shop_id').select('e.account_id', 's.account_id as shop_account', 'e.store', 's.code');
  t.true(rows.length > 0);
  for (const r of rows) {
    t.is(r.account_id, r.shop_account);
    t.is(r.store, r.code);
  }
  const acmeEvents = await eventsOf(db, acme.id);
  t.true(acmeEvents.length > 0 && acmeEvents.every((e) => e.account_id === acme.accountId));
  // Each account's new orders are its own: the acme key sees acme's new orders, never demo's.
  const acmeNew = acmeEvents.filter((e) => e.event_type === 'order.created').map((e) => e.resource_id);
  const demoNew = (await eventsOf(db, demo.id)).filter((e) => e.event_type === 'order.created').map((e) => e.resource_id);
  const acmeKey = await issueKey(db, { account: 'acme' });
  for (const code of acmeNew.slice(0, 3)) t.is((await api(t.context.server, `/orders/${code}?market=sk`, acmeKey)).status, 200);
  for (const code of demoNew.filter((c) => !acmeNew.includes(c)).slice(0, 3)) t.is((await api(t.context.server, `/orders/${code}?market=sk`, acmeKey)).status, 404);
  const demoRows = await db('orders').where({ shop_id: demo.id }).whereIn('code', acmeNew).select('total_with_vat', 'code');
  const acmeRows = await db('orders').where({ shop_id: acme.id }).whereIn('code', acmeNew).select('total_with_vat', 'code');
  t.is(acmeRows.length, acmeNew.length);
  for (const r of demoRows) t.not(JSON.stringify(r), JSON.stringify(acmeRows.find((a) => a.code === r.code)), 'a coinciding order number is a different order');
});

test.serial('When a shop without loaded history is synced for the first time, then the backfill stores exactly what the loader stored and announces nothing', async (t) => {
  const { db } = t.context.database;
  const platform = new DemoPlatform({ db });
  const source = (await findSyncShop(db, 'demo', 'hu'))!;
  // A second connection to the same simulated shop (same settings), in an account of its own, with no rows yet.
  const [account] = await db('accounts').insert({ code: 'backfill', name: 'Backfill', plan_code: 'start', time_zone: 'Europe/Budapest' }).returning('id');
  const sourceShop = await db('shops').where({ id: source.id }).first();
  const { id: _id, account_id: _a, created_at: _c, last_synced_at: _l, ...shopColumns } = sourceShop;
  const [shopRow] = await db('shops').insert({ ...shopColumns, account_id: account.id }).returning('id');
  await db('shop_platform_settings').insert({ shop_id: shopRow.id, platform: 'demo', settings: JSON.stringify(source.settings) });
  const shop = (await findSyncShop(db, 'backfill', 'hu'))!;

  const result = await syncShop(db, platform, shop, TEST_NOW, 400);
  t.is(result.events, 0, 'history is not news');
  t.is((await eventsOf(db, shop.id)).length, 0);

  const tables: Array<[string, string[], string]> = [
    ['orders', ['code', 'created_at', 'updated_at', 'status_id', 'status_changed_at', 'paid', 'paid_at', 'total_with_vat', 'eur_rate', 'customer_email_hash'], 'code'],
    ['shipments', ['order_code', 'carrier_code', 'tracking_number', 'status', 'outcome', 'created_at', 'updated_at', 'handed_over_at', 'delivered_at'], 'tracking_number'],
    ['documents', ['type', 'code', 'issued_at', 'tax_date', 'total_with_vat'], 'code'],
    ['claims', ['code', 'status_id', 'status_changed_at', 'closed_at', 'return_tracking_number', 'refund_with_vat', 'status_history', 'tags', 'refund_account_masked', 'rating', 'emails'], 'code'],
    ['stock_items', ['code', 'source', 'quantity', 'physical', 'reserved', 'available', 'updated_at'], 'code'],
    ['stock_movements', ['movement_id', 'kind', 'quantity', 'occurred_at'], 'movement_id'],
    ['search_console_sync_runs', ['run_key', 'status', 'ran_at', 'sync_version'], 'run_key'],
    ['coupons', ['code', 'discount_type', 'discount_percent', 'discount_amount', 'valid_from', 'valid_until', 'usage_limit', 'category_guids', 'enabled', 'disabled_at', 'created_at', 'updated_at'], 'code'],
  ];
  for (const [table, columns, order] of tables) {
    const loaded = await db(table).where({ shop_id: source.id }).orderBy(order).select(columns);
    const synced = await db(table).where({ shop_id: shop.id }).orderBy(order).select(columns);
    t.true(loaded.length > 0, `${table} has history`);
    t.deepEqual(synced, loaded, table);
  }
  const trackingCount = async (shopId: string) => (await db('shipment_tracking_events as e').join('shipments as s', 's.id', 'e.shipment_id').where('s.shop_id', shopId).count<{ count: string }[]>('* as count'))[0].count;
  t.is(await trackingCount(shop.id), await trackingCount(source.id));
});

test.serial('When stock is read over REST, then a shop with a balance has physical, available and reserved, and a shop without has them null', async (t) => {
  const { db } = t.context.database;
  const key = await issueKey(db, { scopes: ['inventory:read'] });
  const sk = await db('stock_items as i').join('shops as s', 's.id', 'i.shop_id').join('accounts as a', 'a.id', 's.account_id')
    .where({ 'a.code': 'demo', 's.code': 'sk' }).where('i.reserved', '>', 0).first('i.code');
  const balance = await api(t.context.server, `/inventory/stock?market=sk&code=${sk.code}`, key);
  t.is(balance.status, 200, JSON.stringify(balance.body));
  const b = balance.body.data;
  t.is(b.source, 'balance');
  t.is(Number(b.available), Number(b.physical) - Number(b.reserved));
  t.is(b.quantity, b.available);
  const pl = await db('stock_items as i').join('shops as s', 's.id', 'i.shop_id').join('accounts as a', 'a.id', 's.account_id')
    .where({ 'a.code': 'demo', 's.code': 'pl' }).first('i.code');
  const card = await api(t.context.server, `/inventory/stock?market=pl&code=${pl.code}`, key);
  t.is(card.status, 200);
  t.like(card.body.data, { source: 'product_card', physical: null, available: null, reserved: null });
  t.regex(card.body.data.quantity, /^-?\d+(\.\d+)?$/);
  t.is((await api(t.context.server, `/inventory/stock?market=pl&code=NOPE-1`, key)).status, 404);
  t.is((await api(t.context.server, `/inventory/stock?market=sk&code=${pl.code}`, key)).status, 404, 'an item of another shop is not found');
});

test.serial('When the service writes to the demo platform, then the shop stores texts without scripts, coupons and availability entries', async (t) => {
  const { db } = t.context.database;
  const platform = new DemoPlatform({ db });
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const stored = await platform.writeProductTexts(shop, 'SK-10001', { description: '<p onclick="x()">Nice<script>alert(1)</script></p>', metaTitle: 'Pan' });
  t.deepEqual(stored, { description: '<p>Nice</p>', metaTitle: 'Pan' });
  t.deepEqual(await platform.writeProductTexts(shop, 'SK-10001', { metaTitle: 'Pan 2' }), { description: '<p>Nice</p>', metaTitle: 'Pan 2' });
  await platform.saveCoupon(shop, { code: 'WELCOME10', discountPercent: 10, validUntil: null });
  t.true(await platform.removeCoupon(shop, 'WELCOME10'));
  t.false(await platform.removeCoupon(shop, 'WELCOME10'));
  const entry = { id: 'in-stock', name: 'Skladom', meaning: 'in_stock' as const, onStockHours: 0, deliveryHours: 24 };
  t.deepEqual(await platform.writeAvailabilities(shop, [entry]), [entry]);
  t.is((await db('demo_shop_writes').where({ shop_id: shop.id }).count<{ count: string }[]>('* as count'))[0].count, '2');
});

test.serial('When a shop\'s coupons sync with a code another shop also has, or the shop\'s set shrinks, then only that shop\'s coupons change', async (t) => {
  const { db } = t.context.database;
  const sk = (await findSyncShop(db, 'demo', 'sk'))!;
  const cz = (await findSyncShop(db, 'demo', 'cz'))!;
  const czCode = (await db('coupons').where({ shop_id: cz.id }).whereNotIn('code', db('coupons').where({ shop_id: sk.id }).select('code')).orderBy('code').first('code')).code;
  const skCodes = (await db('coupons').where({ shop_id: sk.id }).orderBy('code').select('code')).map((r) => r.code as string);
  t.true(skCodes.length > 1);
  // Demo codes never repeat across shops: cz gets a copy of sk's second coupon under the same code.
  const { id: _id, ...copy } = await db('coupons').where({ shop_id: sk.id, code: skCodes[1] }).first();
  await db('coupons').insert({ ...copy, shop_id: cz.id });
  const czBefore = JSON.stringify(await db('coupons').where({ shop_id: cz.id }).orderBy('code').select('*'));
  const now = new Date(TEST_NOW);
  const coupon = {
    code: czCode, name: 'Same code in sk', discount: { type: 'percent' as const, percent: 7 }, currency: 'EUR' as const, minOrderMinor: null, validFrom: null, validUntil: null,
    usageLimit: null, perCustomerLimit: null, categoryGuids: [], productCodes: [], enabled: true, createdAt: now, updatedAt: now, disabledAt: null, partnerIndex: null,
  };
  await db.transaction(async (trx) => {
    // A new sk coupon under a code cz has: inserted in sk; the shop's set without one of its own codes: that one goes.
    await applyCoupons(trx, sk, [{ kind: 'coupon', coupon }, { kind: 'present', codes: [...skCodes.slice(1), czCode] }]);
    // The service's own removal of a coupon in sk.
    await applyCouponRemoval(trx, sk, skCodes[1]!);
  });
  t.like(await db('coupons').where({ shop_id: sk.id, code: czCode }).first('name', 'discount_percent'), { name: 'Same code in sk', discount_percent: '7.00' });
  t.falsy(await db('coupons').where({ shop_id: sk.id, code: skCodes[0] }).first('id'), 'the code no longer in the shop\'s set is removed');
  t.falsy(await db('coupons').where({ shop_id: sk.id, code: skCodes[1] }).first('id'));
  t.is(JSON.stringify(await db('coupons').where({ shop_id: cz.id }).orderBy('code').select('*')), czBefore, 'no coupon of cz changed');
});

test.serial('When a shop\'s sync keeps failing, then /stores says since when: the first failure\'s instant stays through the retries, and a completed run clears it', async (t) => {
  const { db } = t.context.database;
  const shop = (await findSyncShop(db, 'demo', 'pl'))!;
  // The shop refuses every batch (the seam runs inside each batch's transaction, so nothing is stored).
  const activities = createSyncActivities({ db, platforms: testParts(db).platforms, beforeSyncCommit: async () => { throw new Error('the shop refused the read'); } });
  // Quiet: each refused attempt is expected here.
  const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  const input = { shopId: shop.id, area: 'orders' as const, until: new Date(TEST_NOW.getTime() + 30 * 24 * HOUR).toISOString(), batchSize: 50 };
  const before = Date.now();
  await t.throwsAsync(env.run(activities.syncShopArea, input), { message: /refused/ });
  const first = await db('shops').where({ id: shop.id }).first('sync_error', 'sync_error_at');
  t.is(first.sync_error, 'orders: the shop refused the read');
  t.true(first.sync_error_at.getTime() >= before - 1_000 && first.sync_error_at.getTime() <= Date.now() + 1_000, 'a first failure is failing since now');
  // Failing since a fixed morning; the retry fails again: still failing since that morning.
  await db('shops').where({ id: shop.id }).update({ sync_error_at: new Date('2026-11-20T08:00:00.000Z') });
  await t.throwsAsync(env.run(activities.syncShopArea, input), { message: /refused/ });
  const key = await issueKey(db);
  const failing = (await api(t.context.server, '/stores', key)).body.data.find((s: { code: string }) => s.code === 'pl');
  t.deepEqual({ error: failing.sync.error, failingSince: failing.sync.failingSince }, { error: 'orders: the shop refused the read', failingSince: '2026-11-20T08:00:00.000Z' });
  // A completed run (up to where the shop already was) clears both.
  await activities.completeShopSync({ shopId: shop.id, until: failing.sync.lastSyncedAt ?? TEST_NOW.toISOString() });
  const cleared = (await api(t.context.server, '/stores', key)).body.data.find((s: { code: string }) => s.code === 'pl');
  t.like(cleared.sync, { error: null, failingSince: null });
});

test.serial('When an order moved twice in one batch (New → Processing → Shipped), then each order.status_changed names the status just before it: Processing after New, Shipped after Processing', async (t) => {
  const { db } = t.context.database;
  const platform = new DemoPlatform({ db });
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const historyEnd = Date.parse(demoSettings(shop).historyEnd);
  // A real order of the shop as the platform reads it, made new (its own code) with a history of three statuses.
  let base: PlatformOrder | undefined;
  for await (const batch of platform.readChanges(shop, 'orders', { since: new Date(historyEnd), until: new Date(historyEnd + 20 * HOUR), resume: null, limit: 5 })) {
    base = batch.records[0];
    break;
  }
  const at = (hours: number) => new Date(historyEnd + hours * HOUR);
  const order: PlatformOrder = {
    ...base!, code: `${base!.code}-K13`, createdAt: at(1), updatedAt: at(3), paid: false, paidAt: null,
    statusId: 3, statusName: 'Shipped', statusChangedAt: at(3),
    statusHistory: [{ statusId: 1, at: at(1) }, { statusId: 2, at: at(2) }, { statusId: 3, at: at(3) }],
  };
  const trx = await db.transaction();
  try {
    const sink = new EventSink(trx, shop, historyEnd);
    await applyOrders(trx, shop, [order], sink);
    await sink.flush();
    const changes = await trx('outbox_events').where({ shop_id: shop.id, event_type: 'order.status_changed', resource_id: order.code }).orderBy('id').select('data', 'occurred_at');
    t.deepEqual(changes.map((e) => [e.data.status_id, e.data.previous_status_id, e.occurred_at.toISOString()]), [
      [2, 1, at(2).toISOString()],
      [3, 2, at(3).toISOString()],
    ]);
  } finally {
    await trx.rollback();
  }
});
