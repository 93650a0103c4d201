/**
 * Tracked links and the conversion beacon (issue 24 point 1) over real HTTP against the real database: the redirect
 * records the click with hashed address and user agent and sends the shopper to the shop with the attribution
 * parameter; targets off the shop's domain and unknown handles are refused without a redirect; a flood from one
 * address counts once and is then refused; the beacon attributes a synced order to the click inside the window and
 * records everything else as unattributed, never as an error to the shop.
 */
import http from 'node:http';
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { issueKey, startTestServer, api, type TestServer } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';

interface Context { database: TestDatabase; server: TestServer; key: string; clock: { now: Date }; shopId: string; accountId: string }
const test = anyTest as TestFn<Context>;
const DAY_MS = 86_400_000;

test.before(async (t) => {
  const database = await createTestDatabase();
  const clock = { now: TEST_NOW };
  const server = await startTestServer(database.db, () => clock.now);
  const shop = await database.db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id', 's.account_id');
  Object.assign(t.context, { database, server, clock, key: await issueKey(database.db), shopId: String(shop.id), accountId: String(shop.account_id) });
});
test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

/** A GET as a browser sends it (own address, user agent, cookies), never following the redirect. */
function browserGet(t: { context: Context }, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const url = new URL(path, t.context.server.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'GET', headers: { 'User-Agent': 'Mozilla/5.0 test-shopper', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const prefix = '/portal/demo/sk';
let seq = 0;
/** A fresh approved partner of the demo account (each test clicks its own partner's links). */
async function newPartner(t: { context: Context }, state = 'approved') {
  seq += 1;
  const handle = `TRK${seq}X${Math.floor(Math.random() * 1e6)}`;
  const [row] = await t.context.database.db('affiliate_partners').insert({
    account_id: t.context.accountId, handle, state, state_changed_at: TEST_NOW, kind: 'blogger', language: 'sk', registered_at: TEST_NOW,
  }).returning(['id', 'handle']);
  return { id: String(row.id), handle: row.handle as string };
}

/** Synced orders of the sk shop that carry no partner code and no visitor yet, newest first. */
async function freeOrders(t: { context: Context }, n: number) {
  const db = t.context.database.db;
  return db('orders as o').where('o.shop_id', t.context.shopId).whereNull('o.coupon_code')
    .whereNotExists(db('affiliate_order_visitors as v').whereRaw('v.shop_id = o.shop_id and v.order_code = o.code'))
    .whereNotExists(db('affiliate_conversions as c').whereRaw('c.order_id = o.id'))
    .orderBy('o.created_at', 'desc').limit(n).select('o.id', 'o.code', 'o.created_at');
}

test.serial('When a shopper follows an approved partner\'s link, then the click is recorded with hashed address and user agent and the shopper lands on the shop with the attribution parameter', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  const to = 'https://www.domov-kuchyna.sk/product/ABC-1';
  const res = await browserGet(t, `${prefix}/r/${p.handle.toLowerCase()}?to=${encodeURIComponent(to)}`);
  t.is(res.status, 302);
  const location = new URL(String(res.headers.location));
  t.is(`${location.origin}${location.pathname}`, to);
  const token = location.searchParams.get('aff_click');
  t.truthy(token);
  const cookie = (res.headers['set-cookie'] ?? []).find((c) => c.startsWith('aff_visitor='));
  t.truthy(cookie, 'the first-party visitor cookie is set');
  // The demo's default campaign has a 30-day attribution window.
  t.regex(cookie!, /Max-Age=2592000/);
  t.regex(cookie!, /HttpOnly/);
  const clicks = await db('affiliate_clicks').where({ partner_id: p.id }).select();
  t.is(clicks.length, 1);
  const [click] = clicks;
  t.is(click.token, token);
  t.is(click.target_type, 'product');
  t.is(click.target_ref, 'ABC-1');
  t.is(click.target_url, to);
  t.is(click.clicked_at.toISOString(), TEST_NOW.toISOString());
  t.truthy(click.ip_hash);
  t.false(JSON.stringify(click).includes('127.0.0.1'), 'the address is never stored in clear');
  t.false(JSON.stringify(click).includes('test-shopper'), 'the user agent is never stored in clear');
});

test.serial('When the link is followed by its portal\'s Host (address or active custom domain), then it redirects too; an unknown Host is a plain 404', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  // The demo's second account copies the first one's portal addresses; an address two portals share names neither.
  const ambiguous = await browserGet(t, `/r/${p.handle}`, { Host: 'partners.domov-kuchyna.sk' });
  t.is(ambiguous.status, 404);
  const acme = db('shops as s').join('accounts as a', 'a.id', 's.account_id').where('a.code', 'acme').select('s.id');
  await db('affiliate_portals').whereIn('shop_id', acme).update({ address: db.raw(`replace(address, 'partners.', 'partners-acme.')`), custom_domain: null });
  for (const host of ['partners.domov-kuchyna.sk', 'partneri.domov-kuchyna.sk']) {
    const res = await browserGet(t, `/r/${p.handle}`, { Host: host });
    t.is(res.status, 302, `${host}: ${res.body.toString()}`);
    t.true(String(res.headers.location).startsWith('https://www.domov-kuchyna.sk/?aff_click='), host);
  }
  const unknown = await browserGet(t, `/r/${p.handle}`, { Host: 'partners.unknown.example' });
  t.is(unknown.status, 404);
  t.is(unknown.headers.location, undefined);
});

test('When a link names a target outside the shop\'s domain, then it is refused with a plain page and no redirect, and nothing is recorded', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  for (const to of ['https://evil.example/', 'https://www.domov-kuchyna.sk.evil.example/', 'http://www.domov-kuchyna.sk/', '//evil.example/x', 'javascript:alert(1)', 'https://user@www.domov-kuchyna.sk/']) {
    const res = await browserGet(t, `${prefix}/r/${p.handle}?to=${encodeURIComponent(to)}`);
    t.is(res.status, 400, to);
    t.is(res.headers.location, undefined, to);
    t.regex(String(res.headers['content-type']), /text\/html/);
  }
  t.is((await db('affiliate_clicks').where({ partner_id: p.id })).length, 0);
});

test('When the handle is unknown, then the answer is a plain 404 page without a redirect', async (t) => {
  const res = await browserGet(t, `${prefix}/r/NO-SUCH-PARTNER?to=${encodeURIComponent('https://www.domov-kuchyna.sk/')}`);
  t.is(res.status, 404);
  t.is(res.headers.location, undefined);
  t.regex(res.body.toString(), /no such partner link/);
  const shop = await browserGet(t, '/portal/demo/nope/r/KATKA');
  t.is(shop.status, 404);
});

test('When the handle is another account\'s approved partner, then this portal answers the plain 404 and records nothing; the same handle of its own account redirects', async (t) => {
  const db = t.context.database.db;
  const acme = await db('accounts').where({ code: 'acme' }).first('id');
  const handle = `OTHERACC${Math.floor(Math.random() * 1e6)}`;
  const [other] = await db('affiliate_partners').insert({
    account_id: acme.id, handle, state: 'approved', state_changed_at: TEST_NOW, kind: 'blogger', language: 'sk', registered_at: TEST_NOW,
  }).returning('id');
  const res = await browserGet(t, `${prefix}/r/${handle.toLowerCase()}`, { 'User-Agent': 'other account handle' });
  t.is(res.status, 404);
  t.is(res.headers.location, undefined);
  t.is((await db('affiliate_clicks').where({ partner_id: other.id })).length, 0);
  const [own] = await db('affiliate_partners').insert({
    account_id: t.context.accountId, handle, state: 'approved', state_changed_at: TEST_NOW, kind: 'blogger', language: 'sk', registered_at: TEST_NOW,
  }).returning('id');
  const mine = await browserGet(t, `${prefix}/r/${handle.toLowerCase()}`, { 'User-Agent': 'other account handle' });
  t.is(mine.status, 302);
  t.is((await db('affiliate_clicks').where({ partner_id: own.id })).length, 1);
  t.is((await db('affiliate_clicks').where({ partner_id: other.id })).length, 0);
});

test('When a partner is not approved, then the link still takes the shopper to the shop but records no click and no attribution', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t, 'suspended');
  const res = await browserGet(t, `${prefix}/r/${p.handle}`);
  t.is(res.status, 302);
  t.is(res.headers.location, 'https://www.domov-kuchyna.sk/');
  t.is((await db('affiliate_clicks').where({ partner_id: p.id })).length, 0);
});

test('When one address floods a link, then it is counted as one click and after 21 requests refused with 429', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  const statuses: number[] = [];
  for (let i = 0; i < 23; i += 1) statuses.push((await browserGet(t, `${prefix}/r/${p.handle}`)).status);
  t.deepEqual(statuses, [...Array(21).fill(302), 429, 429]);
  const clicks = await db('affiliate_clicks').where({ partner_id: p.id }).select('repeats');
  t.is(clicks.length, 1, 'counted once');
  t.is(clicks[0].repeats, 20);
  // Another browser (another user agent) on the same address is another click.
  const other = await browserGet(t, `${prefix}/r/${p.handle}`, { 'User-Agent': 'Other browser' });
  t.is(other.status, 302);
  t.is((await db('affiliate_clicks').where({ partner_id: p.id })).length, 2);
});

test.serial('When the same browser follows a link again just inside 10 minutes of its click, then it is a repeat; at 10 minutes it is a new click', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  const at = async (offsetMs: number) => {
    t.context.clock.now = new Date(TEST_NOW.getTime() + offsetMs);
    t.is((await browserGet(t, `${prefix}/r/${p.handle}`, { 'User-Agent': 'window check' })).status, 302);
  };
  try {
    await at(0);
    await at(10 * 60_000 - 1_000);
    t.deepEqual((await db('affiliate_clicks').where({ partner_id: p.id }).select('repeats')).map((c) => c.repeats), [1], 'a repeat of the first click');
    await at(10 * 60_000 + 1_000);
    t.is((await db('affiliate_clicks').where({ partner_id: p.id })).length, 2, 'a new click after the window');
  } finally {
    t.context.clock.now = TEST_NOW;
  }
});

test.serial('When the thank-you page beacon reports a synced order with a click inside the window, then the order becomes the partner\'s click conversion; outside the window it stays unattributed', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  const [inside, outside] = await freeOrders(t, 2);
  const beaconOf = async (order: { code: string; created_at: Date }, gapMs: number) => {
    t.context.clock.now = new Date(order.created_at.getTime() - gapMs);
    const click = await browserGet(t, `${prefix}/r/${p.handle}`, { 'User-Agent': `shopper of ${order.code}` });
    const token = new URL(String(click.headers.location)).searchParams.get('aff_click')!;
    t.context.clock.now = TEST_NOW;
    const pixel = await browserGet(t, `${prefix}/b?order=${encodeURIComponent(order.code)}&click=${token}`);
    t.is(pixel.status, 200);
    t.is(pixel.headers['content-type'], 'image/gif');
  };
  // 30-day window: a click 29 days before the order attributes it, one 31 days before does not.
  await beaconOf(inside, 29 * DAY_MS);
  await beaconOf(outside, 31 * DAY_MS);
  const conversions = await api(t.context.server, `/affiliate/conversions?market=sk&partnerId=${p.id}`, t.context.key);
  t.is(conversions.status, 200);
  t.deepEqual(conversions.body.data.map((c: any) => [c.orderCode, c.source, c.partnerId]), [[inside.code, 'click', p.id]]);
  // Other shops' demo shoppers send beacons too (some with the same order codes): this shop's only.
  const beacons = await db('affiliate_beacons').where({ shop_id: t.context.shopId }).whereIn('order_code', [inside.code, outside.code]).orderBy('id').select('order_code', 'outcome', 'reason');
  t.deepEqual(beacons, [
    { order_code: inside.code, outcome: 'attributed', reason: null },
    { order_code: outside.code, outcome: 'unattributed', reason: 'outside_window' },
  ]);
});

test('When a beacon names an unknown click, an order not yet synced, or nothing, then the shop gets 204 or the pixel and the beacon is recorded as unattributed', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  const click = await browserGet(t, `${prefix}/r/${p.handle}`, { 'User-Agent': 'beacon-bad-input' });
  const token = new URL(String(click.headers.location)).searchParams.get('aff_click')!;
  const post = (body: string, type: string) => fetch(`${t.context.server.baseUrl}${prefix}/b`, { method: 'POST', body, headers: { 'Content-Type': type } });
  const unknownClick = await post(JSON.stringify({ order: 'BEACON-UNKNOWN-CLICK', click: 'nope' }), 'application/json');
  t.is(unknownClick.status, 204);
  t.is(unknownClick.headers.get('access-control-allow-origin'), '*');
  const notSynced = await post(`order=BEACON-NOT-SYNCED&click=${token}`, 'application/x-www-form-urlencoded');
  t.is(notSynced.status, 204);
  const malformed = await post('{not json', 'application/json');
  t.is(malformed.status, 204);
  const nothing = await browserGet(t, `${prefix}/b`);
  t.is(nothing.status, 200);
  const rows = await db('affiliate_beacons').where({ shop_id: t.context.shopId }).whereIn('order_code', ['BEACON-UNKNOWN-CLICK', 'BEACON-NOT-SYNCED']).orderBy('id').select('order_code', 'outcome', 'reason');
  t.deepEqual(rows, [
    { order_code: 'BEACON-UNKNOWN-CLICK', outcome: 'unattributed', reason: 'unknown_click' },
    { order_code: 'BEACON-NOT-SYNCED', outcome: 'unattributed', reason: 'order_not_synced' },
  ]);
  // The visitor is kept for the order, so the sync attributes it when the order arrives.
  const visitor = await db('affiliate_order_visitors').where({ shop_id: t.context.shopId, order_code: 'BEACON-NOT-SYNCED' }).first('visitor_id');
  t.truthy(visitor);
});

test('When the demo was loaded, then its shoppers\' clicks and beacons went through the tracking rules: hashed, tokened, only approved partners, every click conversion beaconed', async (t) => {
  const db = t.context.database.db;
  const demo = await db('affiliate_clicks as k').join('affiliate_partners as p', 'p.id', 'k.partner_id').where('k.shop_id', t.context.shopId)
    .where('k.clicked_at', '<=', TEST_NOW).select('k.token', 'k.ip_hash', 'k.ua_hash', 'k.target_url', 'k.target_type', 'k.target_ref', 'p.state', 'p.partner_index');
  t.true(demo.length > 1000, `the demo's shoppers clicked (${demo.length})`);
  t.true(demo.every((c) => c.token && c.ip_hash && c.ua_hash && c.target_url?.startsWith('https://www.domov-kuchyna.sk/')), 'recorded as /r/ records a click');
  t.false(demo.some((c) => /^10\./.test(c.ip_hash) || /Mozilla/.test(c.ua_hash)), 'addresses and browsers only as keyed hashes');
  // The suspended partner (demo index 9) is suspended now: its links record nothing (A8), in the loaded history too.
  t.deepEqual([...new Set(demo.map((c) => c.state))], ['approved']);
  t.false(demo.some((c) => c.partner_index === 9));
  t.true(demo.some((c) => c.target_type === 'product' && c.target_ref), 'product links as partners make them');
  // Every click conversion of the history came from a thank-you page beacon with its click, attributed.
  const conversions = await db('affiliate_conversions').where({ shop_id: t.context.shopId, source: 'click' }).where('ordered_at', '<=', TEST_NOW).select('order_code', 'click_id');
  t.true(conversions.length > 10, `click conversions (${conversions.length})`);
  const beacons = new Map((await db('affiliate_beacons').where({ shop_id: t.context.shopId }).whereIn('order_code', conversions.map((c) => c.order_code))
    .select('order_code', 'outcome', 'click_id')).map((b) => [b.order_code, b]));
  for (const c of conversions) t.like(beacons.get(c.order_code), { outcome: 'attributed', click_id: c.click_id }, c.order_code);
  // About one in six demo clicks is older than the window: its beacon is unattributed, as a real one would be.
  const outside = await db('affiliate_beacons').where({ shop_id: t.context.shopId, outcome: 'unattributed', reason: 'outside_window' }).where('received_at', '<=', TEST_NOW).count({ n: '*' }).first();
  t.true(Number(outside!.n) > 0);
});

test('When one batch of clicks repeats an address on a link, then the flood rule counts it as the endpoint would: one click, 20 repeats, then refused', async (t) => {
  const db = t.context.database.db;
  const p = await newPartner(t);
  const { recordClicks } = await import('../../src/affiliate/tracking/clicks.js');
  const { knexRunner } = await import('../../src/affiliate/sql.js');
  const shop = { shopId: t.context.shopId, accountId: t.context.accountId, baseUrl: 'https://www.domov-kuchyna.sk' };
  const at = (minute: number) => new Date(TEST_NOW.getTime() - 60 * 60_000 + minute * 60_000);
  // 23 clicks within 10 minutes from one address and browser, then one 10 minutes after the first (a new click).
  const reqs = [...Array.from({ length: 23 }, (_, i) => ({ handle: p.handle, ip: '198.51.100.7', userAgent: 'batch', now: at(i * 0.25) })), { handle: p.handle, ip: '198.51.100.7', userAgent: 'batch', now: at(10.5) }];
  const outcomes = await db.transaction((trx) => recordClicks(knexRunner(trx), shop, Buffer.alloc(32, 7), [...reqs].reverse()));
  t.deepEqual(outcomes.map((o) => (o.kind === 'redirect' ? o.counted : o.kind)).reverse(), ['new', ...Array(20).fill('repeat'), 'flooded', 'flooded', 'new']);
  const clicks = await db('affiliate_clicks').where({ partner_id: p.id }).orderBy('clicked_at').select('repeats', 'clicked_at', 'last_seen_at');
  t.deepEqual(clicks.map((c) => c.repeats), [20, 0]);
  t.is(clicks[0].last_seen_at.toISOString(), at(5).toISOString());
  // The same address once more, a minute later, through the endpoint's function: a repeat of the second click.
  const again = await db.transaction((trx) => recordClicks(knexRunner(trx), shop, Buffer.alloc(32, 7), [{ handle: p.handle, ip: '198.51.100.7', userAgent: 'batch', now: at(11.5) }]));
  t.is(again[0].kind === 'redirect' && again[0].counted, 'repeat');
  t.deepEqual((await db('affiliate_clicks').where({ partner_id: p.id }).orderBy('clicked_at').pluck('repeats')), [20, 1]);
});
