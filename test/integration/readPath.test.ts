/**
 * The read path's single round trips (issue 15 point 7): the credential, the issuing person's current rights and the
 * named shop come from one statement per request, the orders page with its items from another. Nothing of them is
 * kept between requests: a removed shop, a revoked key or a narrowed person fails the very next request.
 */
import anyTest, { type TestFn } from 'ava';
import { createAccessKey, hashKey } from '../../src/auth/keys.js';
import { findAccountByCode } from '../../src/queries/shops.js';
import { createPerson } from '../../src/people/people.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { connectModern, modernRequest, rawMcp } from '../helpers/mcp.js';
import { plainToolCall } from '../../api/mcp/router.js';
import { TEST_NOW } from '../helpers/constants.js';
import { get } from '../helpers/rest.js';
import { waitUntil } from '../helpers/wait.js';
import { mintOAuthToken } from '../helpers/oauthToken.js';
import { artifactKey } from '../../src/oauth/adapter.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  key: string;
  /** The server's clock, moved by tests that look at last_used_at. */
  clock: { now: Date };
  /** The same application with every MCP message through the SDK, to compare the router's direct answers with. */
  sdkServer: TestServer;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const clock = { now: TEST_NOW };
  const server = await startTestServer(database.db, () => clock.now);
  const sdkServer = await startTestServer(database.db, () => clock.now, { allowedOrigins: [], sdkOnly: true });
  Object.assign(t.context, { database, server, sdkServer, clock, key: await issueKey(database.db) });
});
test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.sdkServer?.close();
  await t.context.database?.drop();
});


async function demoShop(t: { context: Context }, code: string) {
  const account = (await findAccountByCode(t.context.database.db, 'demo'))!;
  return { account, where: { account_id: account.id, code } };
}

test.serial('When a shop is removed, then the very next request for it is SHOP_NOT_FOUND over REST and MCP; restored, it reads again', async (t) => {
  const db = t.context.database.db;
  const { where } = await demoShop(t, 'hu');
  t.is((await get(t, '/orders?market=hu&limit=1')).status, 200);
  const client = await connectModern(t.context.server, t.context.key);
  try {
    const before = await client.callTool({ name: 'orders_list', arguments: { market: 'hu', limit: 1 } });
    t.falsy(before.isError);
    await db('shops').where(where).update({ removed_at: TEST_NOW });
    const rest = await get(t, '/orders?market=hu&limit=1');
    t.is(rest.status, 404);
    t.is(rest.body.error.code, 'SHOP_NOT_FOUND');
    const mcp = await client.callTool({ name: 'orders_list', arguments: { market: 'hu', limit: 1 } });
    t.true(mcp.isError);
    t.is(JSON.parse((mcp.content as Array<{ text: string }>)[0].text).error.code, 'SHOP_NOT_FOUND');
    await db('shops').where(where).update({ removed_at: null });
    t.is((await get(t, '/orders?market=hu&limit=1')).status, 200);
  } finally {
    await db('shops').where(where).update({ removed_at: null });
    await client.close();
  }
});

test.serial('When an unknown or malformed market is named, then the combined lookup answers SHOP_NOT_FOUND, not a 500', async (t) => {
  const unknown = await get(t, '/orders?market=zz&limit=1');
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'SHOP_NOT_FOUND');
  const long = await get(t, `/orders?market=${'x'.repeat(300)}&limit=1`);
  t.true(long.status === 404 || long.status === 400, JSON.stringify(long.body));
  const nul = await get(t, '/orders?market=s%00k&limit=1');
  t.is(nul.status, 400);
  t.is(nul.body.error.code, 'INVALID_PARAMETER');
});

test.serial('When the issuing person loses a shop, a permission or is disabled, then the next request of their key is narrowed or refused', async (t) => {
  const db = t.context.database.db;
  const { account } = await demoShop(t, 'sk');
  const person = await createPerson(db, { accountId: account.id, email: 'readpath@example.com', password: 'a long enough password 1', role: 'member', permissions: ['personal-data'], shops: ['sk', 'cz'] });
  const { key } = await createAccessKey(db, { accountId: account.id, name: 'person key', scopes: ['orders:read', 'personal-data:read'], interfaces: ['rest'], shopCodes: null, expiresAt: null, createdBy: 'test', personId: person.id });
  const first = await get(t, '/orders?market=cz&limit=1', key);
  t.is(first.status, 200);
  t.true('email' in first.body.data[0].customer);
  t.is((await get(t, '/orders?market=pl&limit=1', key)).body.error.code, 'SHOP_FORBIDDEN');

  await db('people').where({ id: person.id }).update({ shop_codes: ['sk'], permissions: [] });
  t.is((await get(t, '/orders?market=cz&limit=1', key)).body.error.code, 'SHOP_FORBIDDEN');
  const narrowed = await get(t, '/orders?market=sk&limit=1', key);
  t.is(narrowed.status, 200);
  t.false('email' in narrowed.body.data[0].customer);

  await db('people').where({ id: person.id }).update({ disabled_at: TEST_NOW });
  const disabled = await get(t, '/orders?market=sk&limit=1', key);
  t.is(disabled.status, 401);
  t.is(disabled.body.error.code, 'CREDENTIALS_REVOKED');
});

test.serial('When a key is revoked between two requests, then the second is refused', async (t) => {
  const db = t.context.database.db;
  const key = await issueKey(db);
  t.is((await get(t, '/orders?market=sk&limit=1', key)).status, 200);
  await db('access_keys').where({ key_hash: hashKey(key) }).update({ revoked_at: TEST_NOW });
  const res = await get(t, '/orders?market=sk&limit=1', key);
  t.is(res.status, 401);
  t.is(res.body.error.code, 'CREDENTIALS_REVOKED');
});

test.serial('When a key is used, then last_used_at is written at the first use and again only after a minute', async (t) => {
  const db = t.context.database.db;
  const key = await issueKey(db);
  const keyId = (await db('access_keys').where({ key_hash: hashKey(key) }).first('id')).id;
  // Every value written to last_used_at is recorded by a trigger of the test database, so the test can see that a
  // write did NOT happen by the order of those that did (no sleep, no "nothing happened" after a pause).
  await db.raw(`create table if not exists test_key_use_writes (seq bigserial primary key, key_id text not null, value timestamptz)`);
  await db.raw(`create or replace function test_record_key_use() returns trigger language plpgsql as $$
    begin insert into test_key_use_writes (key_id, value) values (new.id, new.last_used_at); return new; end $$`);
  await db.raw(`create or replace trigger test_record_key_use after update of last_used_at on access_keys for each row execute function test_record_key_use()`);
  const writes = async () => (await db('test_key_use_writes').where({ key_id: keyId }).orderBy('seq').pluck('value')).map((v: Date) => v.toISOString());
  const start = t.context.clock.now;
  const at = (ms: number) => new Date(start.getTime() + ms).toISOString();
  try {
    await get(t, '/stores', key);
    await waitUntil(async () => (await writes()).length >= 1, 5_000);
    t.deepEqual(await writes(), [at(0)], 'the first use is written');
    t.context.clock.now = new Date(start.getTime() + 30_000);
    await get(t, '/stores', key);
    t.context.clock.now = new Date(start.getTime() + 61_000);
    await get(t, '/stores', key);
    // The 61 s write is the positive signal; a write at 30 s would have been sent before it.
    await waitUntil(async () => (await writes()).includes(at(61_000)), 5_000);
    t.deepEqual(await writes(), [at(0), at(61_000)], 'nothing written 30 s after the first use, again after 61 s');
    t.is((await db('access_keys').where({ id: keyId }).first('last_used_at')).last_used_at.toISOString(), at(61_000));
  } finally {
    t.context.clock.now = start;
  }
});

test.serial('When orders are listed (first page, after a cursor, within a period), then each equals orders_get of the same order', async (t) => {
  const pages = [];
  const first = await get(t, '/orders?market=sk&limit=20');
  t.is(first.status, 200);
  pages.push(first.body.data);
  const second = await get(t, `/orders?market=sk&limit=20&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
  t.is(second.status, 200);
  pages.push(second.body.data);
  const day = first.body.data[0].createdAt.slice(0, 10);
  const from = new Date(Date.parse(day) - 20 * 86_400_000).toISOString().slice(0, 10);
  const period = await get(t, `/orders?market=sk&limit=20&from=${from}&to=${day}`);
  t.is(period.status, 200);
  t.true(period.body.data.length > 0);
  pages.push(period.body.data);
  const orders = pages.flat();
  t.true(orders.some((o: any) => o.items.length > 1), 'orders with several items');
  t.true(orders.some((o: any) => o.items.some((i: any) => i.purchasePriceWithoutVat !== undefined)), 'purchase prices present with the scope');
  t.is(new Set(pages[0].concat(pages[1]).map((o: any) => o.code)).size, 40, 'the second page continues the first');
  for (const order of orders) {
    const one = await get(t, `/orders/${encodeURIComponent(order.code)}?market=sk`);
    t.deepEqual(order, one.body.data);
  }
});

/** The response without what differs per request (the request id), for comparing two servers' answers. */
function withoutRequestIds(body: any): any {
  const copy = JSON.parse(JSON.stringify(body));
  if (copy.result?._meta) delete copy.result._meta.requestId;
  for (const block of copy.result?.content ?? []) {
    if (!copy.result.isError) continue;
    const parsed = JSON.parse(block.text);
    delete parsed.meta.requestId;
    block.text = parsed;
  }
  return copy;
}

/** The calls both eras' router answers are compared on: data, a cursor page, business errors, another scope, no tool. */
function comparedCalls(cursor: string): Array<Record<string, unknown> & { name: string }> {
  return [
    { name: 'orders_list', arguments: { market: 'sk', limit: 3 } },
    { name: 'orders_list', arguments: { market: 'sk', limit: 3, cursor } },
    { name: 'orders_list', arguments: { market: 'zz' } },
    { name: 'orders_list', arguments: { market: 'sk', limit: 0 } },
    { name: 'orders_list' },
    { name: 'stores_list', arguments: {} },
    { name: 'no_such_tool', arguments: {} },
  ];
}

test.serial('When a plain 2026-07-28 tools/call is answered by the router, then it is exactly what the SDK answers (data, cursor page, business errors, a tool of another scope, unknown tool)', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['orders:read'] });
  const first = await rawMcp(t.context.server, modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk', limit: 3 } }).body, modernRequest('tools/call', { name: 'orders_list' }, key).headers);
  const cursor = first.body.result.structuredContent.nextCursor;
  t.is(typeof cursor, 'string');
  const calls = comparedCalls(cursor);
  for (const params of calls) {
    const request = modernRequest('tools/call', params, key);
    const direct = await rawMcp(t.context.server, request.body, request.headers);
    const viaSdk = await rawMcp(t.context.sdkServer, request.body, request.headers);
    t.is(direct.status, viaSdk.status, params.name);
    // The router answers with a length, the SDK streams chunks: proof of which path answered.
    if (params.name === 'orders_list') t.truthy(direct.headers.get('content-length'), 'answered by the router');
    t.falsy(viaSdk.headers.get('content-length'), 'answered by the SDK');
    t.deepEqual(withoutRequestIds(direct.body), withoutRequestIds(viaSdk.body), JSON.stringify(params));
    if (direct.body.result?.structuredContent) {
      t.deepEqual(JSON.parse(direct.body.result.content[0].text), direct.body.result.structuredContent, 'the text block is the JSON of structuredContent');
    }
  }
});

test.serial('When a plain 2025-era tools/call is answered by the router, then it is exactly what the SDK streams (data, cursor page, business errors, a tool of another scope, unknown tool), an unknown session id is 404, and the SDK still answers a progress token', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['orders:read'] });
  const headers = (version: string) => ({ Authorization: `Bearer ${key}`, 'MCP-Protocol-Version': version });
  const legacyCall = (params: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params });
  const first = await rawMcp(t.context.server, legacyCall({ name: 'orders_list', arguments: { market: 'sk', limit: 3 } }), headers('2025-11-25'));
  const cursor = first.body.result.structuredContent.nextCursor;
  t.is(typeof cursor, 'string');
  const calls = comparedCalls(cursor);
  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
    for (const params of calls) {
      const direct = await rawMcp(t.context.server, legacyCall(params), headers(version));
      const viaSdk = await rawMcp(t.context.sdkServer, legacyCall(params), headers(version));
      t.is(direct.status, viaSdk.status, params.name);
      for (const header of ['content-type', 'cache-control', 'x-accel-buffering']) t.is(direct.headers.get(header), viaSdk.headers.get(header), header);
      // The router answers with a length, the SDK streams chunks: proof of which path answered.
      if (params.name === 'orders_list') t.truthy(direct.headers.get('content-length'), 'answered by the router');
      t.falsy(viaSdk.headers.get('content-length'), 'answered by the SDK');
      t.deepEqual(withoutRequestIds(direct.body), withoutRequestIds(viaSdk.body), `${version} ${JSON.stringify(params)}`);
      if (direct.body.result?.structuredContent) {
        t.deepEqual(JSON.parse(direct.body.result.content[0].text), direct.body.result.structuredContent, 'the text block is the JSON of structuredContent');
      }
    }
  }
  // A session id this server never issued is not found (ME2); a progress token is left to the SDK.
  const withSession = await rawMcp(t.context.server, legacyCall({ name: 'orders_list', arguments: { market: 'sk', limit: 1 } }), { ...headers('2025-11-25'), 'Mcp-Session-Id': 'abc' });
  t.is(withSession.status, 404);
  const withProgress = await rawMcp(t.context.server, legacyCall({ name: 'orders_list', arguments: { market: 'sk', limit: 1 }, _meta: { progressToken: 1 } }), headers('2025-11-25'));
  t.falsy(withProgress.headers.get('content-length'), 'a progress token is the SDK\'s');
  t.is(withProgress.body.result.structuredContent.items.length, 1);
});

test('When a tools/call carries more than a name, arguments and the envelope, or the client does not accept JSON, then the SDK answers it', (t) => {
  const caller = { account: { id: '1', code: 'demo', timeZone: 'UTC' }, scopes: new Set(['orders:read'] as const), shopCodes: null, credentialId: 'k', interface: 'mcp' as const, writeMode: 'read_only' as const };
  const accept = 'application/json, text/event-stream';
  const plain = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk' } }).body;
  t.truthy(plainToolCall(plain, accept, caller));
  t.is(plainToolCall(plain, 'application/json', caller), null);
  const withProgress = modernRequest('tools/call', { name: 'orders_list', arguments: {} }).body as any;
  withProgress.params._meta.progressToken = 1;
  t.is(plainToolCall(withProgress, accept, caller), null);
  const withTask = modernRequest('tools/call', { name: 'orders_list', arguments: {}, task: { ttl: 1 } }).body;
  t.is(plainToolCall(withTask, accept, caller), null);
  const otherScope = modernRequest('tools/call', { name: 'stores_list', arguments: {} }).body;
  t.is(plainToolCall(otherScope, accept, { ...caller, scopes: new Set(['reports:read'] as const) }), null);
  const badArgs = modernRequest('tools/call', { name: 'orders_list', arguments: [1] }).body;
  t.is(plainToolCall(badArgs, accept, caller), null);
  const notification = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'orders_list' } };
  t.is(plainToolCall(notification, accept, caller), null);
  // The 2025 era: no `_meta` at all (a progress token or anything else in it goes to the SDK), and the envelope is not one.
  const legacy = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'orders_list', arguments: { market: 'sk' } } };
  t.truthy(plainToolCall(legacy, accept, caller, 'legacy'));
  t.is(plainToolCall(legacy, 'application/json', caller, 'legacy'), null);
  t.is(plainToolCall({ ...legacy, params: { ...legacy.params, _meta: { progressToken: 1 } } }, accept, caller, 'legacy'), null);
  t.is(plainToolCall(plain, accept, caller, 'legacy'), null);
});

test('When an OAuth access token expires exactly now, then MCP refuses it with CREDENTIALS_EXPIRED; expiring one millisecond later, it still works (both sides of the expiry instant)', async (t) => {
  const db = t.context.database.db;
  const call = async (token: string) => {
    const request = modernRequest('tools/call', { name: 'stores_list', arguments: {} }, token);
    return rawMcp(t.context.server, request.body, request.headers);
  };
  // The server's clock stands at TEST_NOW; the stored expiry is what it checks.
  const expiringAt = async (at: Date) => {
    const token = await mintOAuthToken(db, t.context.server);
    t.is(await db('oauth_artifacts').where({ kind: 'AccessToken', id: artifactKey(token) }).update({ expires_at: at }), 1);
    return token;
  };
  const atNow = await call(await expiringAt(new Date('2026-11-20T11:00:00.000Z')));
  t.is(atNow.status, 401, atNow.text.slice(0, 200));
  t.true(atNow.text.includes('CREDENTIALS_EXPIRED'), atNow.text.slice(0, 200));
  t.regex(atNow.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="The access token expired at 2026-11-20T11:00:00\.000Z\."/);
  const justAfter = await call(await expiringAt(new Date('2026-11-20T11:00:00.001Z')));
  t.is(justAfter.status, 200, justAfter.text.slice(0, 200));
  t.falsy(justAfter.body?.result?.isError, justAfter.text.slice(0, 200));
});

test('When an OAuth token was consumed, was issued for another resource, or its connection is revoked, then MCP refuses it with 401 and its code', async (t) => {
  const db = t.context.database.db;
  const call = async (token: string) => {
    const request = modernRequest('tools/call', { name: 'stores_list', arguments: {} }, token);
    return rawMcp(t.context.server, request.body, request.headers);
  };
  const valid = await mintOAuthToken(db, t.context.server);
  t.is((await call(valid)).status, 200, 'the same kind of token, untouched, works');
  const consumed = await mintOAuthToken(db, t.context.server);
  await db('oauth_artifacts').where({ kind: 'AccessToken', id: artifactKey(consumed) }).update({ consumed_at: new Date() });
  const other = await mintOAuthToken(db, t.context.server, { audience: 'https://other.example.com/api/mcp' });
  const revoked = await mintOAuthToken(db, t.context.server);
  const grantId = (await db('oauth_artifacts').where({ kind: 'AccessToken', id: artifactKey(revoked) }).first('payload')).payload.grantId;
  await db('oauth_connections').where({ id: grantId }).update({ revoked_at: new Date() });
  for (const [token, code] of [[consumed, 'INVALID_CREDENTIALS'], [other, 'INVALID_CREDENTIALS'], [revoked, 'CREDENTIALS_REVOKED']]) {
    const res = await call(token);
    t.is(res.status, 401, `${code}: ${res.text.slice(0, 200)}`);
    t.true(res.text.includes(code), `${code}: ${res.text.slice(0, 200)}`);
  }
});
