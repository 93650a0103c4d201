/** GET /metrics (issue 29, point 3): what a process did, what the service has waiting, and who may read it. */
import type { AddressInfo } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { createApp } from '../../api/app.js';
import type { MetricsOptions } from '../../api/http/metrics.js';
import { createHttpServer } from '../../api/http/server.js';
import { findFreePort } from '../../src/infra/ports.js';
import { routeLabel } from '../../src/metrics/registry.js';
import { serveMetrics } from '../../src/metrics/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { modernRequest, rawMcp } from '../helpers/mcp.js';
import { api, issueKey, type TestServer } from '../helpers/server.js';
import { testAppDeps } from '../helpers/service.js';

interface Context {
  database: TestDatabase;
  open: TestServer;
  guarded: TestServer;
  hidden: TestServer;
  key: string;
}
const test = anyTest as TestFn<Context>;
const TOKEN = 'metrics-token-0123456789';

async function serve(database: TestDatabase, metrics?: MetricsOptions): Promise<TestServer> {
  const app = createApp({ ...testAppDeps(database.db, () => TEST_NOW), ...(metrics ? { metrics } : {}) });
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The value of one sample line `name{labels} value`, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return undefined;
}

test.before(async (t) => {
  const database = await createTestDatabase();
  t.context = {
    database,
    open: await serve(database),
    guarded: await serve(database, { requireToken: true, token: TOKEN }),
    hidden: await serve(database, { requireToken: true }),
    key: await issueKey(database.db),
  };
});

test.after.always(async (t) => {
  for (const server of [t.context.open, t.context.guarded, t.context.hidden]) await server?.close();
  await t.context.database?.drop();
});

test('When requests and MCP tool calls were answered, then /metrics counts them by route, tool and outcome', async (t) => {
  const { open, key } = t.context;
  t.is((await api(open, '/stores', key)).status, 200);
  t.is((await api(open, '/orders/NO-SUCH-ORDER-99999?market=sk', key)).status, 404);
  const ok = modernRequest('tools/call', { name: 'stores_list', arguments: {} }, key);
  t.is((await rawMcp(open, ok.body, ok.headers)).status, 200);
  const bad = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk', limit: 0 } }, key);
  t.is((await rawMcp(open, bad.body, bad.headers)).status, 200);
  const response = await fetch(`${open.baseUrl}/metrics`);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await response.text();
  t.is(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/v1/stores', status_class: '2xx' }), 1);
  t.is(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status_class: '4xx' }), 1);
  t.is(sample(text, 'mcp_tool_calls_total', { tool: 'stores_list', outcome: 'ok' }), 1);
  t.is(sample(text, 'mcp_tool_calls_total', { tool: 'orders_list', outcome: 'LIMIT_OUT_OF_RANGE' }), 1);
  t.is(sample(text, 'mcp_requests_total', { method: 'tools/call' }), 2);
  t.true((sample(text, 'process_cpu_seconds_total') ?? -1) >= 0, 'the Node process metrics are there too');
});

test('When the service has work waiting, then /metrics reads it from Postgres: outbox backlog, pending deliveries, sync lag per shop, e-mails', async (t) => {
  const { open, database } = t.context;
  const { db } = database;
  const undispatched = Number((await db('outbox_events').whereNull('dispatched_at').count({ n: '*' }))[0]!.n);
  const text = await (await fetch(`${open.baseUrl}/metrics`)).text();
  t.is(sample(text, 'outbox_backlog_events'), undispatched);
  t.is(sample(text, 'webhook_deliveries_pending'), Number((await db('webhook_deliveries').where('status', 'PENDING').count({ n: '*' }))[0]!.n));
  for (const shop of ['sk', 'cz', 'hu', 'pl']) {
    const lag = sample(text, 'sync_lag_seconds', { account: 'demo', shop });
    t.true(lag !== undefined && lag >= 0, `sync lag of demo/${shop}`);
  }
  t.is(sample(text, 'email_outbox_messages', { status: 'queued' }), Number((await db('email_outbox').where('status', 'queued').count({ n: '*' }))[0]!.n));
  // A new undispatched event moves the backlog by exactly one.
  const account = await db('accounts').where('code', 'demo').first();
  await db('outbox_events').insert({ event_id: '00000000-0000-4000-8000-000000000001', account_id: account.id, event_type: 'order.created', resource_type: 'order', resource_id: 'x', data: {}, occurred_at: new Date() });
  const after = await (await fetch(`${open.baseUrl}/metrics`)).text();
  t.is(sample(after, 'outbox_backlog_events'), undispatched + 1);
});

test('When one area of a shop is behind the others, then its sync lag is the age of that least current area', async (t) => {
  const { open, database } = t.context;
  const { db } = database;
  const account = await db('accounts').where('code', 'demo').first();
  const pl = await db('shops').where({ account_id: account.id, code: 'pl' }).first();
  const areas = await db('sync_checkpoints').where({ shop_id: pl.id }).pluck('area');
  t.true(areas.length >= 2, 'the shop has several synced areas');
  // Every area current to ten minutes ago, one of them two hours behind: the shop is synced only up to two hours ago.
  await db('sync_checkpoints').where({ shop_id: pl.id }).update({ through: db.raw("now() - interval '10 minutes'") });
  await db('sync_checkpoints').where({ shop_id: pl.id, area: areas[0] }).update({ through: db.raw("now() - interval '2 hours'") });
  const lag = sample(await (await fetch(`${open.baseUrl}/metrics`)).text(), 'sync_lag_seconds', { account: 'demo', shop: 'pl' });
  t.true(lag !== undefined && lag >= 2 * 60 * 60 && lag < 2 * 60 * 60 + 60, `lag ${lag} s is the two hours of the least current area, not the ten minutes of the others`);
});

test('When METRICS_TOKEN is set, then /metrics needs it as a bearer token; in production without one it does not exist', async (t) => {
  const { guarded, hidden } = t.context;
  const none = await fetch(`${guarded.baseUrl}/metrics`);
  t.is(none.status, 401);
  t.is(((await none.json()) as { error: { code: string } }).error.code, 'MISSING_CREDENTIALS');
  t.regex(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  const wrong = await fetch(`${guarded.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}x` } });
  t.is(wrong.status, 401);
  t.is(((await wrong.json()) as { error: { code: string } }).error.code, 'INVALID_CREDENTIALS');
  const right = await fetch(`${guarded.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  t.is(right.status, 200);
  t.regex(await right.text(), /http_request_duration_seconds/);
  const absent = await fetch(`${hidden.baseUrl}/metrics`);
  t.is(absent.status, 404);
  t.is(((await absent.json()) as { error: { code: string } }).error.code, 'ROUTE_NOT_FOUND');
});

test('When a worker process serves its own /metrics, then it answers on its port with the same rules', async (t) => {
  const port = await findFreePort();
  const stop = await serveMetrics({ db: t.context.database.db, metrics: { requireToken: true, token: TOKEN } }, '127.0.0.1', port);
  try {
    t.is((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 401);
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    t.is(response.status, 200);
    t.regex(await response.text(), /webhook_attempts_total|outbox_backlog_events/);
  } finally {
    await stop();
  }
});

test('When a path names a record, then its route label replaces the id; a 404 is unmatched', (t) => {
  t.is(routeLabel('/api/v1/orders/SK-10001', 200), '/api/v1/orders/:id');
  t.is(routeLabel('/app/webhooks/42', 200), '/app/webhooks/:id');
  t.is(routeLabel('/app/people/psn_AbCdEf123', 200), '/app/people/:id');
  t.is(routeLabel('/api/v1/stores', 200), '/api/v1/stores');
  t.is(routeLabel('/api/v1/anything/at/all', 404), 'unmatched');
});
