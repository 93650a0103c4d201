/** Coupons over the real HTTP server and a real Postgres: the synced mirror, derived state at boundary instants in the shop's zone, usage from orders, not found, links, and the sync removing a coupon removed in the shop. */
import { appTest, type AppContext } from '../helpers/app.js';
import type { ExecutionContext } from 'ava';
import { api, issueKey, startTestServer } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { get, assertError } from '../helpers/rest.js';
import { shopOf } from '../helpers/shops.js';

const test = appTest({ scopes: ['coupons:read', 'stores:read'] });
type Context = AppContext;


/** The state a coupon row has at `now`, by the rules (CC7), computed here from the raw row and raw orders. */
function expectedState(row: any, uses: number, now: Date): string {
  if (!row.enabled) return 'disabled';
  if (row.valid_until && now.getTime() >= row.valid_until.getTime()) return 'expired';
  if (row.valid_from && now.getTime() < row.valid_from.getTime()) return 'scheduled';
  if (row.usage_limit !== null && uses >= row.usage_limit) return 'used_up';
  return 'active';
}

/** Reads one coupon through a server whose clock stands at `now`. */
async function couponAt(t: ExecutionContext<Context>, market: string, code: string, now: Date) {
  const server = await startTestServer(t.context.database.db, () => now);
  try {
    const res = await api(server, `/coupons/${encodeURIComponent(code)}?market=${market}`, t.context.key);
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body.data;
  } finally {
    await server.close();
  }
}

test('When coupons are listed, then every synced coupon comes once, newest first, with usage counted from orders and the state derived at the request\'s instant', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const rows = await db('coupons').where({ shop_id: shop.id }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).select('*');
  t.true(rows.length > 20, `${rows.length} coupons`);
  const seen: any[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any } = await get(t, `/coupons?market=sk&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    seen.push(...res.body.data);
    cursor = res.body.meta.nextCursor;
  } while (cursor);
  t.deepEqual(seen.map((c) => c.code), rows.map((r: any) => r.code));
  const usage = new Map<string, number>();
  for (const o of await db('orders').where({ shop_id: shop.id }).whereNotNull('coupon_code').where('created_at', '<=', TEST_NOW).select('coupon_code')) {
    usage.set(o.coupon_code, (usage.get(o.coupon_code) ?? 0) + 1);
  }
  const states = new Set<string>();
  for (const [i, c] of seen.entries()) {
    const row = rows[i];
    const uses = usage.get(row.code) ?? 0;
    t.is(c.usage.orders, uses, c.code);
    t.is(c.state, expectedState(row, uses, TEST_NOW), c.code);
    states.add(c.state);
    if (c.discount.type === 'percent') t.is(c.discount.percent, Number(row.discount_percent));
    if (c.discount.type === 'fixed') t.deepEqual(c.discount.amount, { amount: row.discount_amount, currency: 'EUR' });
  }
  t.true(usage.size > 5 && [...usage.values()].some((n) => n > 3), 'orders use the coupons');
  t.true(states.has('active') && states.has('expired'), [...states].join());

  const expired = await get(t, '/coupons?market=sk&state=expired&limit=250');
  t.deepEqual(expired.body.data.map((c: any) => c.code), seen.filter((c) => c.state === 'expired').map((c) => c.code));
  assertError(t, await get(t, '/coupons?market=sk&state=gone'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/coupons?market=sk&from=2026-01-01'), 400, 'UNKNOWN_PARAMETER');
});

test('When a coupon\'s validity begins and ends, then it is scheduled, active and expired exactly at the boundary instants, shown in the shop\'s zone', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'hu');
  // Valid for the local calendar days 1-14 December in Budapest: from local midnight to local midnight (exclusive).
  const validFrom = new Date('2026-11-30T23:00:00.000Z');
  const validUntil = new Date('2026-12-14T23:00:00.000Z');
  await db('coupons').insert({
    shop_id: shop.id, code: 'BOUNDARY15', name: 'Boundary', discount_type: 'percent', discount_percent: '15.00', currency: 'HUF',
    valid_from: validFrom, valid_until: validUntil, enabled: true, created_at: TEST_NOW, updated_at: TEST_NOW,
  });
  const ms = (d: Date, delta: number) => new Date(d.getTime() + delta);
  t.is((await couponAt(t, 'hu', 'BOUNDARY15', ms(validFrom, -1))).state, 'scheduled');
  const first = await couponAt(t, 'hu', 'BOUNDARY15', validFrom);
  t.is(first.state, 'active');
  t.is(first.validFromLocal, '2026-12-01T00:00:00.000');
  t.is(first.validUntilLocal, '2026-12-15T00:00:00.000');
  t.is((await couponAt(t, 'hu', 'BOUNDARY15', ms(validUntil, -1))).state, 'active');
  t.is((await couponAt(t, 'hu', 'BOUNDARY15', validUntil)).state, 'expired');
  // Switched off in the shop: disabled whatever the dates say.
  await db('coupons').where({ shop_id: shop.id, code: 'BOUNDARY15' }).update({ enabled: false, disabled_at: ms(validFrom, 3_600_000) });
  t.is((await couponAt(t, 'hu', 'BOUNDARY15', ms(validFrom, 7_200_000))).state, 'disabled');
});

test('When the orders using a coupon reach its usage limit, then it is used up from the instant of the last one, and active just before', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'cz');
  const used = await db('orders').where({ shop_id: shop.id }).whereNotNull('coupon_code').where('created_at', '<=', TEST_NOW)
    .groupBy('coupon_code').havingRaw('count(*) >= 3').select('coupon_code', db.raw('count(*)::int as n'), db.raw('max(created_at) as last')).first();
  t.truthy(used);
  await db('coupons').where({ shop_id: shop.id, code: used.coupon_code })
    .update({ usage_limit: used.n, valid_from: null, valid_until: null, enabled: true, disabled_at: null });
  const atLast = await couponAt(t, 'cz', used.coupon_code, used.last);
  t.deepEqual([atLast.state, atLast.usage.orders, atLast.usage.remaining], ['used_up', used.n, 0]);
  const before = await couponAt(t, 'cz', used.coupon_code, new Date(used.last.getTime() - 1));
  t.deepEqual([before.state, before.usage.orders, before.usage.remaining], ['active', used.n - 1, 1]);
});

test('When a coupon is not in the service\'s records, then coupons_get, the link and the status are 404 COUPON_NOT_FOUND, also for another shop\'s or tenant\'s code', async (t) => {
  const db = t.context.database.db;
  const pl = await shopOf(t.context.database.db, 'demo', 'pl');
  const plOnly = await db('coupons').where({ shop_id: pl.id }).where('code', 'like', 'DARMOWA%').first('code');
  t.is((await get(t, `/coupons/${plOnly.code}?market=pl`)).status, 200);
  for (const path of [`/coupons/${plOnly.code}?market=sk`, '/coupons/NOSUCHCODE?market=sk', '/coupons/activation-link?market=sk&couponCode=NOSUCHCODE', '/coupons/activation-status?market=sk&couponCode=NOSUCHCODE']) {
    const res = await get(t, path);
    assertError(t, res, 404, 'COUPON_NOT_FOUND');
    t.is(res.body.error.details.param, 'couponCode');
  }
  const acme = await shopOf(t.context.database.db, 'acme', 'sk');
  await db('coupons').insert({ shop_id: acme.id, code: 'ACMEONLY', name: 'x', discount_type: 'free_shipping', currency: 'EUR', enabled: true, created_at: TEST_NOW, updated_at: TEST_NOW });
  assertError(t, await get(t, '/coupons/ACMEONLY?market=sk'), 404, 'COUPON_NOT_FOUND');
  t.is((await get(t, '/coupons/ACMEONLY?market=sk', await issueKey(db, { account: 'acme', scopes: ['coupons:read'] }))).status, 200);
  assertError(t, await get(t, '/coupons?market=sk', await issueKey(db, { scopes: ['orders:read'] })), 403, 'INSUFFICIENT_SCOPE');
});

test('When capabilities, a link and its status are read, then they follow the platform and the shop\'s web code, and the link applies an existing coupon only', async (t) => {
  const stores = (await get(t, '/stores/integration-status')).body.data;
  const db = t.context.database.db;
  for (const market of ['sk', 'hu', 'pl']) {
    const caps = (await get(t, `/coupons/capabilities?market=${market}`)).body.data;
    const store = stores.find((s: any) => s.code === market);
    t.deepEqual(caps.discountTypes, ['percent', 'fixed', 'free_shipping']);
    t.is(caps.couponFromLink.ready, store.webCode.installed && store.couponFromLinkReady, market);

    const shop = await shopOf(t.context.database.db, 'demo', market);
    const active = (await get(t, `/coupons?market=${market}&state=active&limit=1`)).body.data[0];
    const link = await get(t, `/coupons/activation-link?market=${market}&couponCode=${active.code}&path=/kuchyna/hrnce`);
    t.is(link.status, 200, JSON.stringify(link.body));
    const url = new URL(link.body.data.url);
    t.is(url.searchParams.get('applyCoupon'), active.code);
    t.is(url.pathname, '/kuchyna/hrnce');
    t.is(link.body.data.usable, caps.couponFromLink.ready);
    const status = (await get(t, `/coupons/activation-status?market=${market}&couponCode=${active.code}`)).body.data;
    t.deepEqual(status.webCode, { ...store.webCode, couponFromLinkReady: store.couponFromLinkReady });
    t.is(status.usableViaLink, link.body.data.usable);
    t.is(status.coupon.state, 'active');
    t.deepEqual(status.blockers, link.body.data.blockers);
    // Nothing was created.
    t.is(await db('coupons').where({ shop_id: shop.id }).count<{ count: string }[]>('* as count').then((r) => Number(r[0].count)),
      (await get(t, `/coupons?market=${market}&limit=250`)).body.meta.count);
  }
  const expired = (await get(t, '/coupons?market=sk&state=expired&limit=1')).body.data[0];
  const status = (await get(t, `/coupons/activation-status?market=sk&couponCode=${expired.code}`)).body.data;
  t.false(status.usableViaLink);
  t.deepEqual(status.blockers, ['The coupon is expired.']);
  for (const path of ['//evil.example/x', 'no-slash', '/a b']) {
    assertError(t, await get(t, `/coupons/activation-link?market=sk&couponCode=${expired.code}&path=${encodeURIComponent(path)}`), 400, 'INVALID_PARAMETER');
  }
});

test('When the shop switches a coupon off, removes one and the sync runs, then the mirror shows it disabled and the removed one is not found', async (t) => {
  const db = t.context.database.db;
  const syncShop = (await findSyncShop(db, 'demo', 'pl'))!;
  const platform = new DemoPlatform({ db, wallClock: () => new Date(TEST_NOW.getTime() + 40 * 86_400_000) });
  const shop = await shopOf(t.context.database.db, 'demo', 'pl');
  const before = new Map((await db('coupons').where({ shop_id: shop.id }).select('code', 'enabled', 'updated_at')).map((r: any) => [r.code, r]));
  const removed = [...before.keys()].find((code) => code.startsWith('DARMOWA'))!;
  t.true(await platform.removeCoupon(syncShop, removed));

  const result = await syncArea(db, platform, syncShop, 'coupons', platform.now(syncShop), { batchSize: 10 });
  t.true(result.written > 0);
  assertError(t, await get(t, `/coupons/${removed}?market=pl`), 404, 'COUPON_NOT_FOUND');
  const after = await db('coupons').where({ shop_id: shop.id }).select('code', 'enabled', 'disabled_at', 'created_at');
  t.false(after.some((r: any) => r.code === removed));
  t.true(after.length >= before.size - 1, 'new campaigns arrived in the 40 days, nothing else was removed');
  t.true(after.some((r: any) => !before.has(r.code)), 'a campaign created in the 40 days is there');
  t.true(after.every((r: any) => r.enabled === (r.disabled_at === null)));

  // A second run with nothing new writes nothing.
  const again = await syncArea(db, platform, syncShop, 'coupons', new Date(platform.now(syncShop).getTime() + 1), { batchSize: 10 });
  t.is(again.written, 0);
});
