/** Shipping over the real HTTP server and a real Postgres: carriers, shipments with cursors, detail, and statistics checked against figures computed here from raw rows. */
import { appTest, type AppContext } from '../helpers/app.js';
import type { ExecutionContext } from 'ava';
import { issueKey } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { knexRunner } from '../../src/rollups/orders.js';
import { refreshShipmentRollups } from '../../src/rollups/shipping.js';
import { get, assertError } from '../helpers/rest.js';
import { shopOf, type ShopInfo } from '../helpers/shops.js';
import { percentileCont, todayIn, daysBefore, hoursOf } from '../helpers/oracles.js';


const test = appTest({ scopes: ['shipping:read'] });
type Context = AppContext;


// ---- Reference figures, computed here from raw rows (plain selects, no aggregates) ----

interface RawShipment {
  id: string;
  carrier_code: string;
  country: string;
  outcome: string;
  created_at: Date;
  handed_over_at: Date | null;
}

/** Raw shipments of a shop created in [from, to] (calendar dates in the zone), optionally of one carrier. */
async function rawShipments(t: ExecutionContext<Context>, shop: ShopInfo, from: string, to: string, carrier?: string): Promise<RawShipment[]> {
  const q = t.context.database.db('shipments')
    .select('id', 'carrier_code', 'country', 'outcome', 'created_at', 'handed_over_at')
    .where({ shop_id: shop.id })
    .whereRaw('created_at >= (?::date)::timestamp at time zone ?', [from, shop.timeZone])
    .whereRaw('created_at < ((?::date) + 1)::timestamp at time zone ?', [to, shop.timeZone]);
  if (carrier) q.where({ carrier_code: carrier });
  return q;
}


/** delivered / settled, 4 decimals half up, in exact integer arithmetic; null without settled shipments. */
function rateOf(delivered: number, settled: number): number | null {
  if (settled === 0) return null;
  return Math.floor((2 * delivered * 10_000 + settled) / (2 * settled)) / 10_000;
}

interface Measured { shipment: RawShipment; deliveryMs: number | null }

function groupFigures(group: Measured[]) {
  const counted = group.filter((m) => m.shipment.outcome !== 'cancelled');
  const count = (outcome: string) => counted.filter((m) => m.shipment.outcome === outcome).length;
  const delivered = count('delivered');
  const returned = count('returned');
  const failed = count('failed');
  const times = counted.map((m) => m.deliveryMs).filter((ms): ms is number => ms !== null).sort((a, b) => a - b);
  return {
    total: counted.length,
    delivered,
    returned,
    failed,
    inTransit: count('in_transit'),
    cancelled: group.length - counted.length,
    deliveryRate: rateOf(delivered, delivered + returned + failed),
    delivery: {
      measured: times.length,
      medianHours: times.length ? hoursOf(percentileCont(times, 0.5)) : null,
      p90Hours: times.length ? hoursOf(percentileCont(times, 0.9)) : null,
    },
  };
}

const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The whole expected `data` of /shipping/stats, computed in JS from raw shipments and tracking events. */
async function expectedStats(t: ExecutionContext<Context>, shop: ShopInfo, from: string, to: string, carrier?: string) {
  const db = t.context.database.db;
  const shipments = await rawShipments(t, shop, from, to, carrier);
  const events: { shipment_id: string; occurred_at: Date; is_delivery: boolean }[] = shipments.length === 0 ? [] : await db('shipment_tracking_events')
    .select('shipment_id', 'occurred_at', 'is_delivery')
    .whereIn('shipment_id', shipments.map((s) => s.id));
  const firstDelivery = new Map<string, number>();
  for (const e of events) {
    if (!e.is_delivery) continue;
    const at = e.occurred_at.getTime();
    const seen = firstDelivery.get(String(e.shipment_id));
    if (seen === undefined || at < seen) firstDelivery.set(String(e.shipment_id), at);
  }
  const measured: Measured[] = shipments.map((s) => {
    const delivered = firstDelivery.get(String(s.id));
    const usable = s.outcome !== 'cancelled' && s.handed_over_at !== null && delivered !== undefined;
    return { shipment: { ...s, country: s.country.trim() }, deliveryMs: usable ? delivered! - s.handed_over_at!.getTime() : null };
  });
  const names = new Map<string, string>((await db('carriers').select('code', 'name').where({ shop_id: shop.id })).map((c: { code: string; name: string }) => [c.code, c.name]));

  const groupBy = (keyOf: (m: Measured) => string) => {
    const groups = new Map<string, Measured[]>();
    for (const m of measured) groups.set(keyOf(m), [...(groups.get(keyOf(m)) ?? []), m]);
    return [...groups.entries()].map(([key, group]) => ({ key, group, figures: groupFigures(group) }))
      .filter((g) => g.figures.total > 0)
      .sort((a, b) => b.figures.total - a.figures.total || byCode(a.key, b.key));
  };

  const all = groupFigures(measured);
  return {
    shipments: { total: all.total, delivered: all.delivered, returned: all.returned, failed: all.failed, inTransit: all.inTransit, cancelled: all.cancelled },
    deliveryRate: all.deliveryRate,
    delivery: all.delivery,
    countries: groupBy((m) => m.shipment.country).map(({ key, figures }) => ({
      country: key,
      shipments: figures.total,
      delivered: figures.delivered,
      deliveryRate: figures.deliveryRate,
      medianHours: figures.delivery.medianHours,
    })),
    carriers: groupBy((m) => m.shipment.carrier_code).map(({ key, group, figures }) => ({
      carrierCode: key,
      carrierName: names.get(key) ?? null,
      shipments: figures.total,
      delivered: figures.delivered,
      returned: figures.returned,
      failed: figures.failed,
      inTransit: figures.inTransit,
      deliveryRate: figures.deliveryRate,
      delivery: figures.delivery,
      countries: [...new Set(group.filter((m) => m.shipment.outcome !== 'cancelled').map((m) => m.shipment.country))].sort(byCode),
    })),
  };
}

// ---- Statistics ----

test('When stats are read without a period, then they cover the last 30 days and equal the figures computed from raw rows', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const today = todayIn(shop.timeZone, TEST_NOW);
  const res = await get(t, '/shipping/stats?market=sk');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.meta.period, { from: daysBefore(today, 29), to: today, timeZone: shop.timeZone });
  const expected = await expectedStats(t, shop, daysBefore(today, 29), today);
  t.true(expected.shipments.total > 50, 'the demo data has shipments in the last 30 days');
  t.true(expected.delivery.measured > 0 && expected.delivery.measured <= expected.shipments.delivered);
  t.deepEqual(res.body.data, expected);
});

test('When stats are read for an explicit period, then they equal the figures computed from raw rows of that period', async (t) => {
  for (const market of ['cz', 'pl']) {
    const shop = await shopOf(t.context.database.db, 'demo', market);
    const res = await get(t, `/shipping/stats?market=${market}&from=2026-08-15&to=2026-10-10`);
    t.is(res.status, 200, JSON.stringify(res.body));
    t.deepEqual(res.body.meta.period, { from: '2026-08-15', to: '2026-10-10', timeZone: shop.timeZone });
    const expected = await expectedStats(t, shop, '2026-08-15', '2026-10-10');
    t.true(expected.shipments.total > 0);
    t.deepEqual(res.body.data, expected, market);
  }
});

test('When stats are filtered by carrier, then only that carrier is counted and the figures equal the raw computation', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const today = todayIn(shop.timeZone, TEST_NOW);
  const res = await get(t, '/shipping/stats?market=sk&carrier=packeta&from=2026-09-01');
  t.is(res.status, 200, JSON.stringify(res.body));
  const expected = await expectedStats(t, shop, '2026-09-01', today, 'packeta');
  t.deepEqual(res.body.data, expected);
  t.deepEqual(res.body.data.carriers.map((c: any) => c.carrierCode), ['packeta']);
  t.is(res.body.data.carriers[0].shipments, res.body.data.shipments.total);

  const none = await get(t, '/shipping/stats?market=sk&carrier=no_such_carrier');
  t.is(none.status, 200);
  t.deepEqual(none.body.data, {
    shipments: { total: 0, delivered: 0, returned: 0, failed: 0, inTransit: 0, cancelled: 0 },
    deliveryRate: null,
    delivery: { measured: 0, medianHours: null, p90Hours: null },
    countries: [],
    carriers: [],
  });
});

test('When crafted shipments are added, then a second delivery scan, a missing hand-over and a cancellation move the figures exactly as the rules say', async (t) => {
  // Shop `hu` is used by no other test in this file, so the tests may run concurrently.
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'hu');
  const before = (await get(t, '/shipping/stats?market=hu')).body.data;
  const hour = 3_600_000;
  const base = TEST_NOW.getTime() - 5 * 24 * hour;
  const at = (hours: number) => new Date(base + hours * hour);
  const inserted: string[] = [];
  const insert = async (trackingNumber: string, outcome: string, status: string, handedOver: Date | null, events: [number, string, boolean][]) => {
    const [row] = await db('shipments').insert({
      shop_id: shop.id, order_code: `T-${trackingNumber}`, carrier_code: 'test_courier', tracking_number: trackingNumber, country: 'AT',
      status, outcome, created_at: at(0), updated_at: at(0), handed_over_at: handedOver,
      delivered_at: events.find((e) => e[2]) ? at(events.find((e) => e[2])![0]) : null,
    }).returning('id');
    inserted.push(String(row.id));
    await db('shipment_tracking_events').insert(events.map(([h, s, isDelivery]) => ({
      shipment_id: row.id, occurred_at: at(h), status: s, description: s, location: null, is_delivery: isDelivery,
    })));
  };
  // Delivered 20 h after hand-over, then a second DELIVERED scan 30 h later: 20 h counts, not 50 h.
  await insert('TC-1', 'delivered', 'DELIVERED', at(1), [[1, 'HANDED_OVER', false], [10, 'IN_TRANSIT', false], [21, 'DELIVERED', true], [51, 'DELIVERED', true]]);
  // Delivered, but the hand-over was never scanned: counted as delivered, left out of the times.
  await insert('TC-2', 'delivered', 'DELIVERED', null, [[15, 'IN_TRANSIT', false], [30, 'DELIVERED', true]]);
  // Cancelled (even with both points): counted only as cancelled.
  await insert('TC-3', 'cancelled', 'CANCELLED', at(1), [[1, 'HANDED_OVER', false], [5, 'DELIVERED', true], [6, 'CANCELLED', false]]);
  // In transit: in the total, neither success nor failure.
  await insert('TC-4', 'in_transit', 'IN_TRANSIT', at(2), [[2, 'HANDED_OVER', false], [8, 'IN_TRANSIT', false]]);
  // Rows written behind the sync's back: refresh their days' rollups as the sync's transaction would.
  await refreshShipmentRollups(knexRunner(db), shop.id, inserted);

  const after = (await get(t, '/shipping/stats?market=hu')).body.data;
  t.deepEqual(after.shipments, {
    total: before.shipments.total + 3,
    delivered: before.shipments.delivered + 2,
    returned: before.shipments.returned,
    failed: before.shipments.failed,
    inTransit: before.shipments.inTransit + 1,
    cancelled: before.shipments.cancelled + 1,
  });
  t.is(after.delivery.measured, before.delivery.measured + 1);
  const today = todayIn(shop.timeZone, TEST_NOW);
  t.deepEqual(after, await expectedStats(t, shop, daysBefore(today, 29), today));

  const crafted = await get(t, '/shipping/stats?market=hu&carrier=test_courier');
  t.deepEqual(crafted.body.data, {
    shipments: { total: 3, delivered: 2, returned: 0, failed: 0, inTransit: 1, cancelled: 1 },
    deliveryRate: 1,
    delivery: { measured: 1, medianHours: 20, p90Hours: 20 },
    countries: [{ country: 'AT', shipments: 3, delivered: 2, deliveryRate: 1, medianHours: 20 }],
    carriers: [{
      carrierCode: 'test_courier', carrierName: null, shipments: 3, delivered: 2, returned: 0, failed: 0, inTransit: 1,
      deliveryRate: 1, delivery: { measured: 1, medianHours: 20, p90Hours: 20 }, countries: ['AT'],
    }],
  });
});

test('When the stats period is invalid, then it is a 400 with its own code', async (t) => {
  assertError(t, await get(t, '/shipping/stats?market=sk&from=2026-10-10&to=2026-10-01'), 400, 'PERIOD_REVERSED');
  assertError(t, await get(t, '/shipping/stats?market=sk&limit=5'), 400, 'UNKNOWN_PARAMETER');
});

// ---- Shipments listing ----

test('When shipments are listed without a period, then the last 30 days in the shop\'s zone are used, newest first', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const today = todayIn(shop.timeZone, TEST_NOW);
  t.is(today, '2026-11-20');
  const res = await get(t, '/shipping/shipments?market=sk&limit=5');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.meta.period, { from: daysBefore(today, 29), to: today, timeZone: shop.timeZone });
  t.is(res.body.meta.count, 5);
  t.true(res.body.meta.hasMore);
  const raw = (await rawShipments(t, shop, daysBefore(today, 29), today))
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || Number(BigInt(b.id) - BigInt(a.id)));
  t.deepEqual(res.body.data.map((s: any) => s.shipmentId), raw.slice(0, 5).map((s) => String(s.id)));
  const first = res.body.data[0];
  t.deepEqual(Object.keys(first).sort(), ['carrierCode', 'country', 'createdAt', 'deliveredAt', 'handedOverAt', 'orderCode', 'outcome', 'shipmentId', 'status', 'trackingNumber']);
  t.regex(first.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

test('When the whole carrier-filtered listing is walked by cursor, then it equals the filtered record set without duplicates', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const today = todayIn(shop.timeZone, TEST_NOW);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: any } = await get(t, `/shipping/shipments?market=sk&carrier=dpd&limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    t.true(res.body.data.every((s: any) => s.carrierCode === 'dpd'));
    seen.push(...res.body.data.map((s: any) => s.shipmentId));
    cursor = res.body.meta.nextCursor;
    t.is(res.body.meta.hasMore, cursor !== null);
    pages++;
  } while (cursor && pages < 100);
  t.true(pages > 1, 'more than one page');
  t.is(new Set(seen).size, seen.length, 'no duplicates');
  const raw = (await rawShipments(t, shop, daysBefore(today, 29), today, 'dpd'))
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || Number(BigInt(b.id) - BigInt(a.id)));
  t.deepEqual(seen, raw.map((s) => String(s.id)));
});

test('When a cursor is sent back with another carrier, then 400 CURSOR_MISMATCH', async (t) => {
  const first = await get(t, '/shipping/shipments?market=sk&carrier=dpd&limit=2');
  t.truthy(first.body.meta.nextCursor);
  const cursor = encodeURIComponent(first.body.meta.nextCursor);
  assertError(t, await get(t, `/shipping/shipments?market=sk&carrier=gls&limit=2&cursor=${cursor}`), 400, 'CURSOR_MISMATCH');
  assertError(t, await get(t, `/shipping/shipments?market=sk&limit=2&cursor=${cursor}`), 400, 'CURSOR_MISMATCH');
  t.is((await get(t, `/shipping/shipments?market=sk&carrier=dpd&limit=5&cursor=${cursor}`)).status, 200);
});

// ---- Detail ----

test('When one shipment is read, then it has all its tracking events in chronological order', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  // Prefer a shipment with a second delivery scan: every event must still be listed.
  const twice = await db('shipment_tracking_events as e').join('shipments as s', 's.id', 'e.shipment_id')
    .where({ 's.shop_id': shop.id, 'e.is_delivery': true }).select('e.shipment_id', 'e.id').orderBy('e.id');
  const counts = new Map<string, number>();
  for (const row of twice) counts.set(String(row.shipment_id), (counts.get(String(row.shipment_id)) ?? 0) + 1);
  const shipmentId = [...counts.entries()].find(([, n]) => n > 1)?.[0] ?? String(twice[0].shipment_id);

  const res = await get(t, `/shipping/shipments/${shipmentId}?market=sk`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const raw = await db('shipment_tracking_events').where({ shipment_id: shipmentId }).orderBy([{ column: 'occurred_at' }, { column: 'id' }])
    .select('occurred_at', 'status', 'description', 'location', 'is_delivery');
  t.true(raw.length >= 3);
  t.deepEqual(res.body.data.trackingEvents, raw.map((e: any) => ({
    occurredAt: e.occurred_at.toISOString(), status: e.status, description: e.description, location: e.location, isDelivery: e.is_delivery,
  })));
  const shipment = await db('shipments').where({ id: shipmentId }).first();
  t.is(res.body.data.shipmentId, shipmentId);
  t.is(res.body.data.trackingNumber, shipment.tracking_number);
  t.is(res.body.data.handedOverAt, shipment.handed_over_at ? shipment.handed_over_at.toISOString() : null);
});

test('When a shipment of another shop or another account is asked for, then 404 NOT_FOUND; a non-numeric id is a 400', async (t) => {
  const db = t.context.database.db;
  const otherShop = await shopOf(t.context.database.db, 'demo', 'cz');
  const otherAccountShop = await shopOf(t.context.database.db, 'acme', 'sk');
  const ofOtherShop = await db('shipments').where({ shop_id: otherShop.id }).first('id');
  const ofOtherAccount = await db('shipments').where({ shop_id: otherAccountShop.id }).first('id');
  t.truthy(ofOtherShop && ofOtherAccount);
  t.is((await get(t, `/shipping/shipments/${ofOtherShop.id}?market=cz`)).status, 200);
  assertError(t, await get(t, `/shipping/shipments/${ofOtherShop.id}?market=sk`), 404, 'NOT_FOUND');
  assertError(t, await get(t, `/shipping/shipments/${ofOtherAccount.id}?market=sk`), 404, 'NOT_FOUND');
  assertError(t, await get(t, '/shipping/shipments/99999999999?market=sk'), 404, 'NOT_FOUND');
  const invalid = await get(t, '/shipping/shipments/abc?market=sk');
  assertError(t, invalid, 400, 'INVALID_PARAMETER');
  t.is(invalid.body.error.details.param, 'shipmentId');
  assertError(t, await get(t, '/shipping/shipments/1e3?market=sk'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/shipping/shipments/99999999999999999999?market=sk'), 400, 'INVALID_PARAMETER');
});

// ---- Carriers ----

test('When carriers are read, then every connected carrier comes with profiles and nothing credential-like', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  // Whatever the demo stores, make sure there is something secret to leak.
  await db('carriers').where({ shop_id: shop.id }).update({ credentials_encrypted: Buffer.from('{"credentialApiKey":"TOPSECRET"}') });
  const res = await get(t, '/shipping/carriers?market=sk');
  t.is(res.status, 200, JSON.stringify(res.body));
  const body = JSON.stringify(res.body).toLowerCase();
  t.false(body.includes('credential'));
  t.false(body.includes('topsecret'));
  const raw = await db('carriers').where({ shop_id: shop.id }).orderBy('code').select('code', 'name', 'profiles', 'connected_at');
  t.true(raw.length > 0);
  t.deepEqual(res.body.data, raw.map((c: any) => ({ code: c.code, name: c.name, profiles: c.profiles, connectedAt: c.connected_at.toISOString() })));
  t.deepEqual({ count: res.body.meta.count, hasMore: res.body.meta.hasMore, nextCursor: res.body.meta.nextCursor }, { count: raw.length, hasMore: false, nextCursor: null });
  assertError(t, await get(t, '/shipping/carriers?market=sk&limit=5'), 400, 'UNKNOWN_PARAMETER');
});

// ---- Scope ----

test('When the key lacks shipping:read, then every shipping call is 403 INSUFFICIENT_SCOPE', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['orders:read'] });
  for (const path of ['/shipping/carriers?market=sk', '/shipping/shipments?market=sk', '/shipping/shipments/1?market=sk', '/shipping/stats?market=sk']) {
    assertError(t, await get(t, path, key), 403, 'INSUFFICIENT_SCOPE');
  }
});
