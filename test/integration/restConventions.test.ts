/** REST conventions over the real HTTP server and a real Postgres: envelope, errors, auth, scopes, shops, periods, limits, cursors. */
import { appTest } from '../helpers/app.js';
import net from 'node:net';
import { hashKey, revokeAccessKey } from '../../src/auth/keys.js';
import { issueKey } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { get, assertErrorEnvelope as assertError } from '../helpers/rest.js';


const test = appTest();

/** GET with the full key; pass null for no credential at all. */

test('When a list is read, then the envelope has data and meta with requestId, count, hasMore and nextCursor', async (t) => {
  const res = await get(t, '/orders?market=sk&limit=3');
  t.is(res.status, 200);
  t.is(res.body.data.length, 3);
  t.deepEqual(Object.keys(res.body.meta).sort(), ['count', 'hasMore', 'market', 'nextCursor', 'requestId']);
  t.is(res.body.meta.count, 3);
  t.true(res.body.meta.hasMore);
  t.is(typeof res.body.meta.nextCursor, 'string');
});

test('When any method but GET or HEAD is used, then 405 with Allow comes before the key is examined', async (t) => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    const res = await get(t, '/orders?market=sk', null, { method });
    assertError(t, res, 405, 'METHOD_NOT_ALLOWED');
    t.is(res.headers.get('allow'), 'GET, HEAD');
  }
  const head = await fetch(`${t.context.server.baseUrl}/api/v1/stores`, { method: 'HEAD', headers: { Authorization: `Bearer ${t.context.key}` } });
  t.is(head.status, 200);
});

test('When the credential is missing, unknown, malformed, revoked, expired or MCP-only, then 401 with its own code', async (t) => {
  const db = t.context.database.db;
  assertError(t, await get(t, '/stores', null), 401, 'MISSING_CREDENTIALS');
  assertError(t, await get(t, '/stores', 'sk_' + 'A'.repeat(43)), 401, 'INVALID_CREDENTIALS');
  assertError(t, await get(t, '/stores', 'not-a-key'), 401, 'INVALID_CREDENTIALS');
  const revoked = await issueKey(db);
  // By its hash, not "the newest key": tests running beside this one issue keys too.
  const listed = await db('access_keys').where({ key_hash: hashKey(revoked) }).first();
  t.true(await revokeAccessKey(db, String(listed.account_id), listed.id));
  assertError(t, await get(t, '/stores', revoked), 401, 'CREDENTIALS_REVOKED');
  const expired = await issueKey(db, { expiresAt: new Date('2020-01-01T00:00:00Z') });
  assertError(t, await get(t, '/stores', expired), 401, 'CREDENTIALS_EXPIRED');
  const mcpOnly = await issueKey(db, { interfaces: ['mcp'] });
  const res = await get(t, '/stores', mcpOnly);
  assertError(t, res, 401, 'INTERFACE_NOT_ALLOWED');
  t.truthy(res.headers.get('www-authenticate'));
});

test('When the key lacks the scope of a call, then 403 INSUFFICIENT_SCOPE names the scope', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['stores:read'] });
  const res = await get(t, '/orders?market=sk', key);
  assertError(t, res, 403, 'INSUFFICIENT_SCOPE');
  t.is(res.body.error.details.requiredScope, 'orders:read');
});

test('When a shop-restricted key names another shop, then 403 SHOP_FORBIDDEN, and /stores lists only its shops', async (t) => {
  const key = await issueKey(t.context.database.db, { shops: ['sk'] });
  assertError(t, await get(t, '/orders?market=cz', key), 403, 'SHOP_FORBIDDEN');
  assertError(t, await get(t, '/orders?market=zz', key), 403, 'SHOP_FORBIDDEN');
  t.is((await get(t, '/orders?market=sk&limit=1', key)).status, 200);
  const stores = await get(t, '/stores', key);
  t.deepEqual(stores.body.data.map((s: any) => s.code), ['sk']);
  assertError(t, await get(t, '/orders?market=zz'), 404, 'SHOP_NOT_FOUND');
});

test('When `market` is missing on a per-shop call, then 400 MISSING_PARAMETER names it', async (t) => {
  for (const path of ['/orders', '/orders/1', '/products', '/products/X', '/categories']) {
    const res = await get(t, path);
    assertError(t, res, 400, 'MISSING_PARAMETER');
    t.is(res.body.error.details.param, 'market');
  }
});

// Serial: it adds an acme order, which the concurrent D9 walk below would otherwise see half-way.
test.serial('When a record of another shop or another account is asked for, then 404 NOT_FOUND', async (t) => {
  const db = t.context.database.db;
  // Order numbers are unique per shop only (P7): take a cz number that sk does not use as well.
  const czOrder = await db('orders as o').join('shops as s', 's.id', 'o.shop_id').join('accounts as a', 'a.id', 's.account_id').where({ 's.code': 'cz', 'a.code': 'demo' })
    .whereNotExists((q) => q.select(1).from('orders as x').whereRaw('x.code = o.code and x.shop_id <> o.shop_id')).orderBy('o.id').first('o.code');
  t.is((await get(t, `/orders/${czOrder.code}?market=cz`)).status, 200);
  assertError(t, await get(t, `/orders/${czOrder.code}?market=sk`), 404, 'NOT_FOUND');
  // An order only the other tenant has, in its shop with the same code `sk`.
  const acmeOrder = await db('orders as o').join('shops as s', 's.id', 'o.shop_id').join('accounts as a', 'a.id', 's.account_id').where({ 's.code': 'sk', 'a.code': 'acme' }).first('o.*');
  await db('orders').insert({ ...acmeOrder, id: undefined, code: 'ACME-ONLY-1' });
  t.is((await get(t, '/orders/ACME-ONLY-1?market=sk', await issueKey(db, { account: 'acme' }))).status, 200);
  assertError(t, await get(t, '/orders/ACME-ONLY-1?market=sk'), 404, 'NOT_FOUND');
  assertError(t, await get(t, '/products/does-not-exist?market=sk'), 404, 'NOT_FOUND');
});

test('When two accounts have shops with the same codes, then each key sees only its own account (D9)', async (t) => {
  const db = t.context.database.db;
  const acmeKey = await issueKey(db, { account: 'acme' });
  const acmeStores = await get(t, '/stores', acmeKey);
  const demoStores = await get(t, '/stores');
  t.deepEqual(acmeStores.body.data.map((s: any) => s.code).sort(), ['cz', 'sk']);
  t.deepEqual(demoStores.body.data.map((s: any) => s.code).sort(), ['cz', 'hu', 'pl', 'sk']);
  const expected = await db('orders as o').join('shops as s', 's.id', 'o.shop_id').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'acme', 's.code': 'sk' }).pluck('o.code');
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await get(t, `/orders?market=sk&limit=250${cursor ? `&cursor=${cursor}` : ''}`, acmeKey);
    t.is(res.status, 200);
    seen.push(...res.body.data.map((o: any) => o.code));
    cursor = res.body.meta.nextCursor;
  } while (cursor);
  t.deepEqual([...seen].sort(), [...expected].sort());
  // A cursor issued to one account is useless for the other: it is bound to the shop, which differs.
  const demoPage = await get(t, '/orders?market=sk&limit=1');
  assertError(t, await get(t, `/orders?market=sk&limit=1&cursor=${demoPage.body.meta.nextCursor}`, acmeKey), 400, 'CURSOR_MISMATCH');
});

// Serial: it adds hu orders while it walks, so no other test may read hu at the same time.
test.serial('When the cursor walk reads every page, then it equals the record set with nothing repeated, even while new orders arrive', async (t) => {
  const db = t.context.database.db;
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'hu' }).first('s.id');
  const expected = await db('orders').where({ shop_id: shop.id }).pluck('code');
  const seen: string[] = [];
  let cursor: string | null = null;
  let page = 0;
  do {
    const res: any = await get(t, `/orders?market=hu&limit=97${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200);
    t.is(res.body.meta.count, res.body.data.length);
    seen.push(...res.body.data.map((o: any) => o.code));
    const times = res.body.data.map((o: any) => o.createdAt);
    t.deepEqual(times, [...times].sort().reverse(), 'newest first');
    cursor = res.body.meta.nextCursor;
    t.is(res.body.meta.hasMore, cursor !== null);
    if (page++ % 3 === 0) {
      // A new order arrives (newest): it must neither appear in later pages nor displace an old one.
      const template = await db('orders').where({ shop_id: shop.id }).first();
      await db('orders').insert({ ...template, id: undefined, code: `NEW-${page}`, created_at: new Date() });
    }
  } while (cursor);
  t.is(new Set(seen).size, seen.length, 'no duplicates');
  t.deepEqual([...seen].sort(), [...expected].sort(), 'nothing skipped');
});

test('When a cursor is reused with another shop, period or filter, then 400 CURSOR_MISMATCH; a tampered cursor is 400 INVALID_CURSOR', async (t) => {
  const first = await get(t, '/orders?market=sk&limit=2&from=2026-06-01&to=2026-06-30');
  const cursor = first.body.meta.nextCursor as string;
  t.truthy(cursor);
  t.is((await get(t, `/orders?market=sk&limit=5&from=2026-06-01&to=2026-06-30&cursor=${cursor}`)).status, 200, 'limit may change');
  assertError(t, await get(t, `/orders?market=cz&from=2026-06-01&to=2026-06-30&cursor=${cursor}`), 400, 'CURSOR_MISMATCH');
  assertError(t, await get(t, `/orders?market=sk&from=2026-06-02&to=2026-06-30&cursor=${cursor}`), 400, 'CURSOR_MISMATCH');
  assertError(t, await get(t, `/orders?market=sk&cursor=${cursor}`), 400, 'CURSOR_MISMATCH');
  assertError(t, await get(t, `/orders?market=sk&todayOnly=true&cursor=${cursor}`), 400, 'CURSOR_MISMATCH');
  const [body, mac] = cursor.split('.');
  const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), i: '1' })).toString('base64url');
  assertError(t, await get(t, `/orders?market=sk&from=2026-06-01&to=2026-06-30&cursor=${forged}.${mac}`), 400, 'INVALID_CURSOR');
  assertError(t, await get(t, '/orders?market=sk&cursor=garbage'), 400, 'INVALID_CURSOR');
  assertError(t, await get(t, '/orders?market=sk&cursor='), 400, 'INVALID_PARAMETER');
});

test('When `query` is combined with cursor, from or to, then 400 INVALID_PARAMETER_COMBINATION; alone it searches without pagination', async (t) => {
  for (const extra of ['&cursor=abc', '&from=2026-01-01', '&to=2026-01-01']) {
    assertError(t, await get(t, `/products?market=sk&query=a${extra}`), 400, 'INVALID_PARAMETER_COMBINATION');
  }
  const product = await get(t, '/products?market=sk&limit=1');
  const code = product.body.data[0].code;
  const search = await get(t, `/products?market=sk&query=${encodeURIComponent(code)}`);
  t.is(search.status, 200);
  t.is(search.body.data[0].code, code, 'exact code match ranks first');
  t.false(search.body.meta.hasMore);
  t.is(search.body.meta.nextCursor, null);
  const ean = product.body.data[0].ean;
  if (ean) t.is((await get(t, `/products?market=sk&query=${ean}`)).body.data[0].code, code);
  const words = await get(t, `/products?market=sk&query=${encodeURIComponent(product.body.data[0].name.split(' ')[0])}&limit=100`);
  t.true(words.body.data.length <= 100);
  assertError(t, await get(t, '/products?market=sk&query=a&limit=101'), 400, 'LIMIT_OUT_OF_RANGE');
  // D6: a search without `limit` returns at most 20 (here more than 20 match).
  const broad = await get(t, '/products?market=sk&query=a&limit=100');
  t.true(broad.body.data.length > 21, String(broad.body.data.length));
  t.is((await get(t, '/products?market=sk&query=a')).body.meta.count, 20, 'search default 20');
});

test('When a period is reversed, longer than 366 days, or mixes todayOnly with from/to, then it is rejected with its code', async (t) => {
  assertError(t, await get(t, '/orders?market=sk&from=2026-05-02&to=2026-05-01'), 400, 'PERIOD_REVERSED');
  assertError(t, await get(t, '/orders?market=sk&from=2025-01-01&to=2026-01-02'), 400, 'PERIOD_TOO_LONG');
  t.is((await get(t, '/orders?market=sk&from=2025-01-01&to=2026-01-01')).status, 200, '366 days inclusive is allowed');
  assertError(t, await get(t, '/orders?market=sk&todayOnly=true&from=2026-05-01'), 400, 'INVALID_PARAMETER_COMBINATION');
  assertError(t, await get(t, '/orders?market=sk&todayOnly=true&to=2026-05-01'), 400, 'INVALID_PARAMETER_COMBINATION');
  assertError(t, await get(t, '/orders?market=sk&from=2026-02-30'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/orders?market=sk&from=yesterday'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/orders?market=sk&to=2026-05-01'), 400, 'MISSING_PARAMETER');
  assertError(t, await get(t, '/orders?market=sk&todayOnly=maybe'), 400, 'INVALID_PARAMETER');
});

test('When a period is given, then it covers inclusive dates in the shop\'s time zone and meta.period states it', async (t) => {
  const db = t.context.database.db;
  const res = await get(t, '/orders?market=sk&from=2026-10-01&to=2026-10-31&limit=250');
  t.deepEqual(res.body.meta.period, { from: '2026-10-01', to: '2026-10-31', timeZone: 'Europe/Bratislava' });
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id');
  const count = await db('orders').where({ shop_id: shop.id })
    .whereRaw(`created_at >= timestamp '2026-10-01 00:00' at time zone 'Europe/Bratislava'`)
    .whereRaw(`created_at < timestamp '2026-11-01 00:00' at time zone 'Europe/Bratislava'`).count<{ count: string }[]>('* as count').first();
  let total = res.body.meta.count;
  let cursor = res.body.meta.nextCursor;
  while (cursor) {
    const next: any = await get(t, `/orders?market=sk&from=2026-10-01&to=2026-10-31&limit=250&cursor=${cursor}`);
    total += next.body.meta.count;
    cursor = next.body.meta.nextCursor;
  }
  t.is(total, Number(count!.count));
  const today = await get(t, '/orders?market=sk&todayOnly=true');
  t.deepEqual(today.body.meta.period, { from: '2026-11-20', to: '2026-11-20', timeZone: 'Europe/Bratislava' });
  const onlyFrom = await get(t, '/orders?market=sk&from=2026-11-01&limit=1');
  t.deepEqual(onlyFrom.body.meta.period, { from: '2026-11-01', to: '2026-11-20', timeZone: 'Europe/Bratislava' });
});

test('When `limit` is out of range or not a whole number, then 400 and never a clamped page', async (t) => {
  for (const limit of ['0', '-1', '251', '1.5', 'ten']) {
    const res = await get(t, `/orders?market=sk&limit=${limit}`);
    t.is(res.status, 400, limit);
    t.true(['LIMIT_OUT_OF_RANGE', 'INVALID_PARAMETER'].includes(res.body.error.code), limit);
  }
  assertError(t, await get(t, '/orders?market=sk&limit=251'), 400, 'LIMIT_OUT_OF_RANGE');
  t.is((await get(t, '/orders?market=sk&limit=250')).body.meta.count, 250);
  t.is((await get(t, '/orders?market=sk')).body.meta.count, 50, 'default 50');
});

test('When a parameter is unknown or repeated, then 400 names it', async (t) => {
  const unknown = await get(t, '/orders?market=sk&colour=red');
  assertError(t, unknown, 400, 'UNKNOWN_PARAMETER');
  t.is(unknown.body.error.details.param, 'colour');
  assertError(t, await get(t, '/orders?market=sk&market=cz'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/nothing-here'), 404, 'ROUTE_NOT_FOUND');
});

test('When a value carries a NUL character, then 400 INVALID_PARAMETER names it (Postgres cannot take one; found by schemathesis)', async (t) => {
  for (const [path, param] of [
    ['/orders?market=s%00k', 'market'],
    ['/shipping/shipments?market=%C3%A1%00x', 'market'],
    ['/products/cz?market=5%00c', 'market'],
    ['/orders/2026%000001?market=sk', 'orderCode'],
    ['/products?market=sk&query=mug%00', 'query'],
  ] as const) {
    const res = await get(t, path);
    assertError(t, res, 400, 'INVALID_PARAMETER');
    t.is(res.body.error.details.param, param, path);
  }
  // A cursor with a NUL is a malformed cursor (the rule every paged operation lists), found by the held-out fuzz run.
  const cursor = await get(t, '/orders?market=sk&cursor=%00%7B%C3%9B');
  assertError(t, cursor, 400, 'INVALID_CURSOR');
  t.is(cursor.body.error.details.param, 'cursor');
});

test('When the URL and headers exceed 16 KB or the request cannot be parsed, then the D3 body still comes with 431 or 400 and a request id', async (t) => {
  const res = await get(t, `/orders?market=sk&cursor=${'x'.repeat(20_000)}`);
  assertError(t, res, 431, 'REQUEST_HEADERS_TOO_LARGE');
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(new URL(t.context.server.baseUrl).port), '127.0.0.1', () => socket.end('NONSENSE\r\n\r\n'));
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  t.regex(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.regex(raw, /\r\nRequest-Id: req_/);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  t.is(body.error.code, 'MALFORMED_REQUEST');
  t.regex(body.meta.requestId, /^req_/);
});

test('When the key lacks purchase-prices:read or personal-data:read, then those fields are absent, not null or zero', async (t) => {
  const db = t.context.database.db;
  const full = await get(t, '/orders?market=sk&limit=20');
  const narrow = await get(t, '/orders?market=sk&limit=20', await issueKey(db, { scopes: ['orders:read'] }));
  t.is(full.status, 200);
  t.is(narrow.status, 200);
  t.true(full.body.data.some((o: any) => o.items.some((i: any) => i.purchasePriceWithoutVat !== null)), 'full key sees purchase prices');
  t.true(full.body.data.every((o: any) => 'email' in o.customer && 'street' in o.customer));
  for (const order of narrow.body.data) {
    for (const item of order.items) t.false('purchasePriceWithoutVat' in item);
    t.deepEqual(Object.keys(order.customer).sort(), ['city', 'country']);
    t.is(order.customerEmailHash.length, 64);
  }
  const product = full.body.data[0].items[0].productCode;
  const withPrice = await get(t, `/products/${product}?market=sk`);
  const withoutPrice = await get(t, `/products/${product}?market=sk`, await issueKey(db, { scopes: ['products:read'] }));
  t.true('purchasePrice' in withPrice.body.data);
  t.false('purchasePrice' in withoutPrice.body.data);
});

test('When /capabilities is called, then it lists exactly what the key may call', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['orders:read', 'stores:read'] });
  const res = await get(t, '/capabilities', key);
  t.is(res.status, 200);
  t.deepEqual(res.body.data.map((c: any) => c.path).sort(), ['/api/v1/account/connection', '/api/v1/orders', '/api/v1/orders/{orderCode}', '/api/v1/stores', '/api/v1/stores/integration-status']);
  const all = await get(t, '/capabilities');
  t.true(all.body.data.length > res.body.data.length);
  assertError(t, await get(t, '/capabilities', null), 401, 'MISSING_CREDENTIALS');
});

test('When /account/connection and /account/entitlements are read, then they describe this key and the plan', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['stores:read', 'account:read', 'orders:read'], shops: ['sk', 'cz'] });
  const connection = await get(t, '/account/connection', key);
  t.is(connection.status, 200);
  t.deepEqual(connection.body.data.shops, { all: false, codes: ['cz', 'sk'] });
  const orders = connection.body.data.permissions.find((p: any) => p.area === 'orders');
  t.deepEqual(orders, { area: 'orders', granted: ['orders:read'], missing: [] });
  const purchase = connection.body.data.permissions.find((p: any) => p.area === 'purchase-prices');
  t.deepEqual(purchase.missing, ['purchase-prices:read']);
  const entitlements = await get(t, '/account/entitlements', key);
  t.is(entitlements.body.data.plan.code, 'growth');
  t.deepEqual(entitlements.body.data.features.find((f: any) => f.feature === 'webhooks'), { feature: 'webhooks', enabled: true, limit: 20, usage: 0 });
  // SPEC "Limits": outbound webhooks and endpoint count per plan (custom: per agreement, no fixed limit).
  const plans = await t.context.database.db('plan_features').where({ feature: 'webhooks' }).select('plan_code', 'enabled', 'limit_value');
  t.deepEqual(Object.fromEntries(plans.map((p) => [p.plan_code, [p.enabled, p.limit_value]])), {
    trial: [false, 0], beginner: [false, 0], start: [true, 5], growth: [true, 20], pro: [true, 50], custom: [true, null],
  });
});

test('When a key expires exactly now, then it is refused; one millisecond later, it still works (both sides of the expiry instant)', async (t) => {
  const db = t.context.database.db;
  // The test server's clock stands at TEST_NOW.
  const atNow = await issueKey(db, { expiresAt: new Date(TEST_NOW.getTime()) });
  assertError(t, await get(t, '/stores', atNow), 401, 'CREDENTIALS_EXPIRED');
  const justAfter = await issueKey(db, { expiresAt: new Date(TEST_NOW.getTime() + 1) });
  t.is((await get(t, '/stores', justAfter)).status, 200);
});
