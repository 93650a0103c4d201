/**
 * The production shape (issue 29, point 1): two API processes behind a round-robin proxy and two worker processes,
 * NODE_ENV=production, one Postgres and one Temporal server — the entry points docker-compose runs. Any process answers
 * any request: REST, MCP in both eras, the OAuth flow (its interaction and session land on both processes), a proposal
 * approved through one process and written by a worker, and a webhook attempt made by a worker under production rules.
 */
import crypto from 'node:crypto';
import { Connection } from '@temporalio/client';
import Long from 'long';
import anyTest, { type TestFn } from 'ava';
import { findFreePort } from '../../src/infra/ports.js';
import { systemResolver } from '../../src/webhooks/addresses.js';
import { createEndpoint, pingEndpoint } from '../../src/webhooks/endpoints.js';
import { FormClient, makePerson } from '../helpers/application.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectLegacy, connectModern } from '../helpers/mcp.js';
import { connectWithOAuth, finishOAuth, startCallbackReceiver, TestOAuthProvider } from '../helpers/oauthClient.js';
import { startEntry, startRoundRobinProxy, type EntryProcess, type RoundRobinProxy } from '../helpers/productionProcesses.js';
import { api, issueKey, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  proxy: RoundRobinProxy;
  apis: EntryProcess[];
  workers: EntryProcess[];
  secretsKey: string;
  via: TestServer;
}
const test = anyTest as TestFn<Context>;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test.before(async (t) => {
  const database = await createTestDatabase();
  // An own namespace: the production entry points use the service's one task queue, which other test files' workers
  // on the shared dev server's default namespace may poll too.
  const namespace = `smoke-${crypto.randomBytes(4).toString('hex')}`;
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(86_400) } });
  await waitFor('the namespace', async () => (await connection.workflowService.describeNamespace({ namespace })).namespaceInfo?.name ?? undefined);
  await connection.close();

  const proxy = await startRoundRobinProxy();
  const secretsKey = crypto.randomBytes(32).toString('hex');
  const env = {
    NODE_ENV: 'production', DATABASE_URL: database.url, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!, TEMPORAL_NAMESPACE: namespace,
    PUBLIC_BASE_URL: proxy.baseUrl, CURSOR_SECRET: crypto.randomBytes(32).toString('hex'), SECRETS_KEY: secretsKey, HOST: '127.0.0.1', LOG_LEVEL: 'info',
  };
  const workers = [startEntry('worker', env), startEntry('worker', env)];
  const ports = [await findFreePort(), await findFreePort()];
  const apis = ports.map((port) => startEntry('server', { ...env, PORT: String(port) }));
  proxy.upstreams = ports;
  t.context = { database, proxy, apis, workers, secretsKey, via: { baseUrl: proxy.baseUrl, close: async () => {} } };
  await Promise.all(workers.map((worker) => worker.waitForLine(/"msg":"worker running"/)));
  for (const port of ports) await waitFor(`API on ${port} ready`, async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined));
});

test.after.always(async (t) => {
  await Promise.all([...(t.context.apis ?? []), ...(t.context.workers ?? [])].map((process) => process.stop()));
  await t.context.proxy?.close();
  await t.context.database?.drop();
});

test.serial('When REST and MCP in both eras go through the proxy, then both API processes answer, each request on its own', async (t) => {
  const { via, proxy, database } = t.context;
  const key = await issueKey(database.db);
  const before = new Map(proxy.served);
  for (let i = 0; i < 4; i++) t.is((await api(via, '/stores', key)).status, 200);
  for (const port of proxy.upstreams) t.true((proxy.served.get(port) ?? 0) - (before.get(port) ?? 0) >= 2, `API ${port} answered REST`);

  const modern = await connectModern(via, key);
  const orders = await modern.callTool({ name: 'orders_list', arguments: { market: 'sk', limit: 2 } });
  t.falsy(orders.isError);
  t.is((orders.structuredContent as { items: unknown[] }).items.length, 2);
  await modern.close();

  const legacy = await connectLegacy(via, key, '2025-06-18');
  const tools = await legacy.client.listTools();
  t.true(tools.tools.some((tool) => tool.name === 'orders_list'));
  const stores = await legacy.client.callTool({ name: 'stores_list', arguments: {} });
  t.falsy(stores.isError);
  await legacy.client.close();
});

test.serial('When a person connects an MCP client with OAuth through the proxy, then sign-in, consent and tokens work whichever process answers', async (t) => {
  const { via, database } = t.context;
  const owner = await makePerson(database.db, { role: 'owner' });
  const callback = await startCallbackReceiver();
  try {
    const mcpUrl = new URL(`${via.baseUrl}/api/mcp`);
    const provider = new TestOAuthProvider(callback.url, false);
    const first = await connectWithOAuth(mcpUrl, provider);
    t.is(first.client, null);
    const authUrl = provider.authorizationUrl!;
    t.is(new URL(authUrl).origin, via.baseUrl, 'every published URL derives from PUBLIC_BASE_URL');
    const person = new FormClient(via.baseUrl);
    t.is((await person.signIn(owner.email, owner.password)).status, 303);
    let location = `${authUrl.pathname}${authUrl.search}`;
    let consent = '';
    for (let hops = 0; hops < 10 && !consent; hops++) {
      const page = await person.get(location);
      if (page.status >= 300 && page.status < 400) location = new URL(page.headers.get('location')!, via.baseUrl).pathname + new URL(page.headers.get('location')!, via.baseUrl).search;
      else consent = page.text;
    }
    t.regex(location, /^\/app\/consent\//);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(consent)?.[1] ?? '';
    const posted = await person.post(location, { _csrf: csrf, decision: 'allow', scopes: ['orders:read', 'stores:read'], shopChoice: 'all', writeMode: 'read_only' });
    t.is(posted.status, 303, posted.text.slice(0, 300));
    let target = new URL(posted.headers.get('location')!, via.baseUrl);
    for (let hops = 0; hops < 10 && target.origin === via.baseUrl; hops++) {
      const step = await person.get(`${target.pathname}${target.search}`);
      target = new URL(step.headers.get('location')!, via.baseUrl);
    }
    t.is(target.origin, new URL(callback.url).origin, 'the flow ends at the client callback');
    const client = await finishOAuth(mcpUrl, provider, first.transport, target);
    t.is(provider.savedTokens.scope.split(' ').sort().join(' '), 'orders:read stores:read');
    const orders = await client.callTool({ name: 'orders_list', arguments: { market: 'sk', limit: 1 } });
    t.falsy(orders.isError);
    await client.close();
  } finally {
    await callback.close();
  }
});

test.serial('When an assistant proposes a text and a person approves it through the proxy, then a worker writes it', async (t) => {
  const { via, database } = t.context;
  const { db } = database;
  const key = await issueKey(db, { writeMode: 'proposals' });
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id');
  const row = await db('products').where({ shop_id: shop.id }).whereNotNull('meta_title').orderBy('code').first('code');
  const content = (await api(via, `/products/${encodeURIComponent(row.code)}/content?market=sk`, key)).body.data;
  const modern = await connectModern(via, key);
  const proposed = await modern.callTool({ name: 'products_content_propose', arguments: { market: 'sk', products: [{ code: row.code, fingerprint: content.fingerprint, fields: { metaTitle: 'Written by a production worker' } }] } });
  await modern.close();
  t.falsy(proposed.isError, JSON.stringify(proposed).slice(0, 300));
  const draftId = (proposed.structuredContent as { data: { draftId: string } }).data.draftId;

  const approver = await makePerson(db, { role: 'owner' });
  const person = new FormClient(via.baseUrl);
  t.is((await person.signIn(approver.email, approver.password)).status, 303);
  const page = await person.get('/app/approvals');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const decided = await person.post(`/app/approvals/${draftId}/decide`, { _csrf: csrf, decision: 'approve', reason: '' });
  t.true(decided.status === 200 || decided.status === 303, `decision answered ${decided.status}`);
  const status = await waitFor('the proposal written', async () => {
    const draft = (await api(via, `/catalog/product-content-drafts/${draftId}`, key)).body.data;
    return draft.status === 'written' ? draft.status : undefined;
  });
  t.is(status, 'written');
  const after = (await api(via, `/products/${encodeURIComponent(row.code)}/content?market=sk`, key)).body.data;
  t.is(after.fields.metaTitle.value, 'Written by a production worker');
});

test.serial('When an endpoint\'s address is not public, then a production worker attempts the delivery and fails it at once without retry', async (t) => {
  const { database, secretsKey } = t.context;
  const { db } = database;
  const account = await db('accounts').where('code', 'demo').first('id');
  // Created with the development rule (loopback allowed), as if the address had once been public: production
  // processes check it again at every delivery (D17) and must refuse it.
  const { id } = await createEndpoint(db, { secretsKey: Buffer.from(secretsKey, 'hex'), allowLoopback: true, resolve: systemResolver }, {
    accountId: String(account.id), name: 'smoke', url: `http://127.0.0.1:${await findFreePort()}/hook`, events: 'all', shops: 'all', createdBy: 'test',
  });
  const { deliveryId } = await pingEndpoint(db, String(account.id), id);
  const delivery = await waitFor('the delivery decided', async () => {
    const row = await db('webhook_deliveries').where('id', deliveryId).first();
    return row && row.status !== 'PENDING' ? row : undefined;
  });
  t.is(delivery.status, 'FAILED');
  t.is(delivery.attempts, 1);
  const attempts = await db('webhook_delivery_attempts').where('delivery_id', deliveryId);
  t.is(attempts.length, 1);
  t.is(attempts[0].outcome, 'address_rejected');
});
