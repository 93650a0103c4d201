/**
 * Webhooks end to end on the shared Temporal dev server with the real dispatcher: fan-out from the outbox, the REST
 * and MCP reads, plan limits, and the operator command line as a real process.
 */
import { waitUntil } from '../helpers/wait.js';
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { workflowIds } from '../../src/temporal/constants.js';
import { ensureWebhookWorkflows } from '../../src/temporal/webhooks.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import { dispatchOutboxBatch } from '../../src/webhooks/dispatch.js';
import { deleteEndpoint, disableEndpoint, enableEndpoint, pingEndpoint, rotateEndpointSecret } from '../../src/webhooks/endpoints.js';
import { purgeDeliveryLog } from '../../src/webhooks/retention.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { accountId, emitOrderEvents, fakeDns, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';
import { TEST_CURSOR_SECRET } from '../helpers/constants.js';
import { recordEvent } from '../../src/events/outbox.js';
import { findShopByCode } from '../../src/queries/shops.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  worker: Worker;
  running: Promise<void>;
  closeWorkerConnection: () => Promise<void>;
  client: Client;
  connection: Connection;
  taskQueue: string;
  settings: ReturnType<typeof testSettings>;
  receivers: Receiver[];
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  // Endpoints are saved with a DNS that knows a public name; the worker's DNS does not, so nothing here can ever be
  // sent off this machine (only the loopback receivers are reachable).
  const settings = testSettings({ resolve: fakeDns({ 'hooks.example.com': ['93.184.215.14'] }).resolve });
  const workerSettings = { ...settings, resolve: fakeDns().resolve };
  const taskQueue = `test-webhooks-${crypto.randomBytes(4).toString('hex')}`;
  const address = process.env.TEMPORAL_ADDRESS!;
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db: database.db, temporalAddress: address, namespace: 'default', taskQueue, webhooks: workerSettings }));
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  await ensureWebhookWorkflows(client, taskQueue, { retentionSchedule: false });
  t.context = {
    database, server: await startTestServer(database.db), worker, running, closeWorkerConnection: () => workerConnection.close(),
    client, connection, taskQueue, settings, receivers: [],
  };
});

test.after.always(async (t) => {
  const { client, taskQueue } = t.context;
  await client?.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
  t.context.worker?.shutdown();
  await t.context.running;
  await t.context.closeWorkerConnection?.();
  await t.context.connection?.close();
  for (const r of t.context.receivers ?? []) await r.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

async function receiver(t: { context: Context }, reply?: Receiver['reply']): Promise<Receiver> {
  const r = await startReceiver({ reply });
  t.context.receivers.push(r);
  return r;
}


test.serial('When events are recorded, then each subscribed endpoint whose shop scope covers them gets one delivery with the same event_id, and dispatching again adds nothing', async (t) => {
  const { db } = t.context.database;
  const [all, skOrders, czOnly] = [await receiver(t), await receiver(t), await receiver(t)];
  const a = await makeEndpoint(db, t.context.settings, { url: all.url, events: 'all', shops: 'all', name: 'everything' });
  const b = await makeEndpoint(db, t.context.settings, { url: skOrders.url, events: ['order.created'], shops: ['sk'], name: 'sk orders' });
  const c = await makeEndpoint(db, t.context.settings, { url: czOnly.url, events: ['order.created', 'order.paid'], shops: ['cz'], name: 'cz' });
  [all.secret, skOrders.secret, czOnly.secret] = [a.secret, b.secret, c.secret];
  // A paused endpoint keeps collecting its deliveries; a disabled one gets nothing (SPEC webhooks).
  const [pausedReceiver, disabledReceiver] = [await receiver(t), await receiver(t)];
  const p = await makeEndpoint(db, t.context.settings, { url: pausedReceiver.url, events: 'all', shops: 'all', name: 'paused' });
  const d = await makeEndpoint(db, t.context.settings, { url: disabledReceiver.url, events: 'all', shops: 'all', name: 'disabled' });
  await db('webhook_endpoints').where({ id: p.id }).update({ state: 'paused', paused_at: new Date(), pause_reason: 'consecutive_failures' });

  const account = await accountId(db);
  await disableEndpoint(db, account, d.id);
  const sk = (await findShopByCode(db, account, 'sk'))!;
  const created = await recordEvent(db, { accountId: account, shop: { id: sk.id, code: 'sk' }, type: 'order.created', resource: { id: 'F1' }, data: { order_code: 'F1' }, occurredAt: new Date() });
  const paid = await recordEvent(db, { accountId: account, shop: { id: sk.id, code: 'sk' }, type: 'order.paid', resource: { id: 'F1' }, data: { order_code: 'F1' }, occurredAt: new Date() });

  await all.waitFor((r) => r.length === 2);
  await skOrders.waitFor((r) => r.length === 1);
  t.deepEqual(all.requests.map((r) => r.body.event_id).sort(), [created.eventId, paid.eventId].sort());
  t.is(skOrders.requests[0].body.event_id, created.eventId, 'two endpoints receive the same event_id');
  t.not(skOrders.requests[0].headers['x-service-delivery'], all.requests.find((r) => r.body.event_id === created.eventId)!.headers['x-service-delivery'], 'one delivery per endpoint');
  t.true([...all.requests, ...skOrders.requests].every((r) => r.verifyError === null));

  // Dispatch running again over the same events (as after a crash) creates no second delivery.
  await db('outbox_events').whereIn('id', [created.id, paid.id]).update({ dispatched_at: null });
  await waitUntil(async () => (await db('outbox_events').whereIn('id', [created.id, paid.id]).whereNull('dispatched_at')).length === 0);
  t.is((await dispatchOutboxBatch(db)).deliveries, 0);
  const counts = await db('webhook_deliveries').whereIn('event_id', [created.eventId, paid.eventId]).select('endpoint_id').count<{ endpoint_id: string; count: string }[]>('* as count').groupBy('endpoint_id');
  t.deepEqual(counts.map((r) => [String(r.endpoint_id), Number(r.count)]).sort(), [[a.id, 2], [b.id, 1], [p.id, 2]].sort());
  await new Promise((r) => setTimeout(r, 300));
  t.is(all.requests.length, 2);
  t.is(czOnly.requests.length, 0, 'an event of a shop outside the scope is not sent');
  t.is(disabledReceiver.requests.length, 0);
  for (const id of [a.id, b.id, c.id, p.id, d.id]) await deleteEndpoint(db, account, id);
});

test.serial('When an account-level event (no shop) is recorded, then an endpoint limited to cz gets it and the cz event, and not the sk event', async (t) => {
  const { db } = t.context.database;
  const account = await accountId(db);
  const rcv = await receiver(t);
  const endpoint = await makeEndpoint(db, t.context.settings, { url: rcv.url, events: ['order.created'], shops: ['cz'], name: 'cz only' });
  rcv.secret = endpoint.secret;
  const shop = async (code: string) => ({ id: (await findShopByCode(db, account, code))!.id, code });
  const record = async (at: { id: string; code: string } | null, order: string) =>
    recordEvent(db, { accountId: account, shop: at, type: 'order.created', resource: { id: order }, data: { order_code: order }, occurredAt: new Date() });
  const accountLevel = await record(null, 'AL1');
  const sk = await record(await shop('sk'), 'AL2');
  const cz = await record(await shop('cz'), 'AL3');

  // The positive signal: all three are dispatched (their deliveries are written in that same transaction), and every
  // delivery the endpoint got is SENT, so the receiver has seen each of them.
  await waitUntil(async () => (await db('outbox_events').whereIn('id', [accountLevel.id, sk.id, cz.id]).whereNull('dispatched_at')).length === 0);
  await waitUntil(async () => (await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).whereNot('status', 'SENT')).length === 0);
  const delivered = await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).select('event_id', 'store');
  t.deepEqual(Object.fromEntries(delivered.map((d) => [d.event_id, d.store])), { [accountLevel.eventId]: null, [cz.eventId]: 'cz' }, 'the account-level event and the cz event, not the sk one');
  t.deepEqual(Object.fromEntries(rcv.requests.map((r) => [r.body.event_id, r.body.store])), { [accountLevel.eventId]: null, [cz.eventId]: 'cz' });
  t.true(rcv.requests.every((r) => r.verifyError === null));
  await deleteEndpoint(db, account, endpoint.id);
});

test.serial('When endpoints are read over REST, then there are no secrets, the queue state and pending count show, and the log pages newest first without bodies', async (t) => {
  const { db } = t.context.database;
  const account = await accountId(db);
  const endpoint = await makeEndpoint(db, t.context.settings, { url: 'https://hooks.example.com/paused', events: ['order.created'], shops: ['hu'], name: 'paused one' });
  // A paused endpoint keeps collecting: its deliveries stay pending and are counted.
  await db('webhook_endpoints').where({ id: endpoint.id }).update({ state: 'paused', pause_reason: 'consecutive_failures', paused_at: db.fn.now() });
  await emitOrderEvents(db, 3, { shop: 'hu', prefix: 'R' });
  await waitUntil(async () => (await db('webhook_deliveries').where({ endpoint_id: endpoint.id })).length === 3);

  const key = await issueKey(db, { scopes: ['webhooks:read', 'account:read'] });
  const list = await api(t.context.server, '/webhooks/endpoints', key);
  t.is(list.status, 200);
  t.false(JSON.stringify(list.body).includes('whsec_'));
  t.false(JSON.stringify(list.body).toLowerCase().includes('secret"'), 'no secret field');
  const listed = list.body.data.find((e: any) => e.endpointId === endpoint.id);
  t.like(listed, { state: 'paused', pauseReason: 'consecutive_failures', queue: { pendingDeliveries: 3 }, events: { all: false, types: ['order.created'] }, shops: { all: false, codes: ['hu'] } });

  const one = await api(t.context.server, `/webhooks/endpoints/${endpoint.id}`, key);
  t.is(one.body.data.queue.pendingDeliveries, 3);
  t.is((await api(t.context.server, '/webhooks/endpoints/999999999999', key)).status, 404);

  const page1 = await api(t.context.server, `/webhooks/endpoints/${endpoint.id}/deliveries?limit=2`, key);
  t.is(page1.status, 200);
  t.is(page1.body.data.length, 2);
  t.true(page1.body.meta.hasMore);
  t.false('body' in page1.body.data[0]);
  const page2 = await api(t.context.server, `/webhooks/endpoints/${endpoint.id}/deliveries?limit=2&cursor=${encodeURIComponent(page1.body.meta.nextCursor)}`, key);
  t.is(page2.body.data.length, 1);
  t.false(page2.body.meta.hasMore);
  const ids = [...page1.body.data, ...page2.body.data].map((d: any) => Number(d.deliveryId));
  t.deepEqual(ids, [...ids].sort((x, y) => y - x), 'newest first');
  t.is((await api(t.context.server, `/webhooks/endpoints/${endpoint.id}/deliveries?status=SENT`, key)).body.data.length, 0);

  // A key of other shops does not see an endpoint covering only hu.
  const czKey = await issueKey(db, { scopes: ['webhooks:read'], shops: ['cz'] });
  t.is((await api(t.context.server, `/webhooks/endpoints/${endpoint.id}`, czKey)).status, 404);
  t.false((await api(t.context.server, '/webhooks/endpoints', czKey)).body.data.some((e: any) => e.endpointId === endpoint.id));

  const entitlements = await api(t.context.server, '/account/entitlements', key);
  const usage = await db('webhook_endpoints').where({ account_id: account }).whereNull('deleted_at').count<{ count: string }[]>('* as count').first();
  t.like(entitlements.body.data.features.find((f: any) => f.feature === 'webhooks'), { enabled: true, limit: 20, usage: Number(usage!.count) });
  await deleteEndpoint(db, account, endpoint.id);
  t.is((await api(t.context.server, `/webhooks/endpoints/${endpoint.id}`, key)).body.data.state, 'deleted', 'a deleted endpoint stays readable with its log');
  t.is((await api(t.context.server, `/webhooks/endpoints/${endpoint.id}/deliveries`, key)).body.data.length, 3);
});

test.serial('When the plan limits endpoints, then the limit holds, a lower plan keeps endpoints but blocks new ones until under it, and a plan without webhooks blocks creation but not rotation', async (t) => {
  const { db } = t.context.database;
  const acme = await accountId(db, 'acme');
  const create = (n: number) => makeEndpoint(db, t.context.settings, { url: `https://hooks.example.com/acme/${n}`, account: 'acme' });
  await db('accounts').where({ id: acme }).update({ plan_code: 'growth' });
  const created = [];
  for (let i = 0; i < 7; i++) created.push(await create(i));
  await db('accounts').where({ id: acme }).update({ plan_code: 'start' });
  t.is((await db('webhook_endpoints').where({ account_id: acme }).whereNull('deleted_at')).length, 7, 'a lower plan deletes nothing');
  await t.throwsAsync(create(7), { message: /allows 5/ });
  await deleteEndpoint(db, acme, created[0].id);
  await deleteEndpoint(db, acme, created[1].id);
  const atLimit = await t.throwsAsync(create(8));
  t.like(atLimit, { code: 'PLAN_LIMIT_REACHED', details: { limit: 5, usage: 5 } });
  await deleteEndpoint(db, acme, created[2].id);
  await t.notThrowsAsync(create(9), 'under the limit again');

  await db('accounts').where({ id: acme }).update({ plan_code: 'trial' });
  t.like(await t.throwsAsync(create(10)), { code: 'PLAN_FEATURE_UNAVAILABLE' });
  const rotated = await rotateEndpointSecret(db, t.context.settings, acme, created[3].id);
  t.regex(rotated.secret, /^whsec_/, 'secret rotation works without webhooks in the plan');
  await db('accounts').where({ id: acme }).update({ plan_code: 'beginner' });
  t.like(await t.throwsAsync(create(11)), { code: 'PLAN_FEATURE_UNAVAILABLE' });
  await db('accounts').where({ id: acme }).update({ plan_code: 'start' });
  for (const e of await db('webhook_endpoints').where({ account_id: acme }).whereNull('deleted_at')) await deleteEndpoint(db, acme, String(e.id));
});

/** The real CLI over this file's database, with the worker's settings (loopback receivers allowed). */
async function cli(t: { context: Context }, ...args: string[]): Promise<CliResult & { json: any }> {
  const result = await runCli(t.context.database.url, args, {
    WEBHOOK_ALLOW_LOOPBACK: 'true', SECRETS_KEY: t.context.settings.secretsKey.toString('hex'), CURSOR_SECRET: TEST_CURSOR_SECRET,
  });
  return { ...result, json: result.code === 0 && args.includes('--json') ? JSON.parse(result.stdout) : null };
}

test.serial('When an operator uses the webhooks commands, then create shows the secret once, ping and retry go the production path, disable skips, and plan set changes the plan', async (t) => {
  const { db } = t.context.database;
  let reply = 302;
  const rcv = await receiver(t, () => ({ status: reply }));
  const created = await cli(t, 'webhooks', 'create', '--name', 'ops', '--url', rcv.url, '--events', 'order.created,order.paid', '--shops', 'sk,cz', '--json');
  t.is(created.code, 0, created.stderr);
  t.regex(created.json.secret, /^whsec_/);
  const id = created.json.id;
  rcv.secret = created.json.secret;

  const listed = await cli(t, 'webhooks', 'list', '--json');
  t.true(listed.json.endpoints.some((e: any) => e.endpointId === id));
  t.false(listed.stdout.includes(created.json.secret.slice(6)), 'the secret is never shown again');
  t.false(JSON.stringify(await db('webhook_endpoints').where({ id }).first()).includes(created.json.secret.slice(6)), 'stored encrypted');

  // A ping that meets a redirect fails at once; the retry of that FAILED delivery reaches the repaired receiver.
  const failedPing = await cli(t, 'webhooks', 'ping', id, '--json');
  t.is(failedPing.code, 0, failedPing.stderr);
  t.like(failedPing.json, { status: 'FAILED', attempts: 1, httpStatus: 302 });
  reply = 200;
  const retried = await cli(t, 'webhooks', 'retry', failedPing.json.deliveryId, '--json');
  t.like(retried.json, { deliveryId: failedPing.json.deliveryId, status: 'SENT', attempts: 2, httpStatus: 200 });
  t.is(rcv.requests.length, 2);
  t.like(rcv.requests[1], { verifyError: null, body: { event_type: 'ping', event_id: failedPing.json.eventId, data: { endpoint: id } } });
  t.is(rcv.requests[1].headers['x-service-delivery'], failedPing.json.deliveryId);
  t.is((await cli(t, 'webhooks', 'retry', failedPing.json.deliveryId)).code, 2, 'a SENT delivery cannot be retried');

  const rotated = await cli(t, 'webhooks', 'rotate-secret', id, '--json');
  rcv.secret = rotated.json.secret;
  const ping = await cli(t, 'webhooks', 'ping', id, '--json');
  t.like(ping.json, { status: 'SENT' });
  t.is(rcv.requests[2].verifyError, null, 'signed with the new secret');

  const shown = await cli(t, 'webhooks', 'show', id, '--json');
  t.is(shown.json.endpoint.endpointId, id);
  t.is(shown.json.recentDeliveries.length, 2);
  t.false(shown.stdout.includes('whsec_'));

  const disabled = await cli(t, 'webhooks', 'disable', id, '--json');
  t.like(disabled.json, { state: 'disabled' });
  t.is((await cli(t, 'webhooks', 'ping', id)).code, 2, 'a disabled endpoint gets no test delivery');
  const enabled = await cli(t, 'webhooks', 'enable', id, '--json');
  t.like(enabled.json, { state: 'enabled', previousState: 'disabled' });
  const deleted = await cli(t, 'webhooks', 'delete', id, '--json');
  t.like(deleted.json, { deleted: true });
  t.is((await cli(t, 'webhooks', 'show', id, '--json')).json.endpoint.state, 'deleted');

  const plan = await cli(t, 'plan', 'set', 'pro', '--account', 'acme', '--json');
  t.like(plan.json, { account: 'acme', plan: 'pro', webhooks: { enabled: true, limit: 50 } });
  t.is((await db('accounts').where({ code: 'acme' }).first()).plan_code, 'pro');
  await cli(t, 'plan', 'set', 'start', '--account', 'acme');
});

test.serial('When webhooks commands get bad input, then they exit 2 with the refusal\'s code and change nothing', async (t) => {
  const { db } = t.context.database;
  const before = (await db('webhook_endpoints')).length;
  const cases: [string[], RegExp][] = [
    [['webhooks', 'create', '--name', 'x', '--url', 'http://10.0.0.1:8080/', '--events', 'all', '--shops', 'all'], /WEBHOOK_URL_REJECTED/],
    [['webhooks', 'create', '--name', 'x', '--url', 'https://169.254.169.254/', '--events', 'all', '--shops', 'all'], /WEBHOOK_URL_REJECTED/],
    [['webhooks', 'create', '--name', 'x', '--url', 'http://127.0.0.1:9/', '--events', 'order.shipped', '--shops', 'all'], /INVALID_PARAMETER.*order\.shipped/],
    [['webhooks', 'create', '--name', 'x', '--url', 'http://127.0.0.1:9/', '--events', 'all', '--shops', 'sk,xx'], /Unknown shop/],
    [['webhooks', 'create', '--name', 'x', '--url', 'http://127.0.0.1:9/', '--events', 'all', '--shops', 'all', '--account', 'nobody'], /No account/],
    [['webhooks', 'create', '--name', 'x', '--url', 'http://127.0.0.1:9/', '--shops', 'all'], /--events/],
    [['webhooks', 'show', '424242424242'], /No webhook endpoint/],
    [['webhooks', 'enable', '424242424242'], /NOT_FOUND/],
    [['webhooks', 'retry', '424242424242'], /NOT_FOUND/],
    [['webhooks', 'frobnicate'], /webhooks create\|list/],
    [['plan', 'set', 'platinum'], /Unknown plan/],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(t, ...args)));
  cases.forEach(([args, message], i) => {
    t.is(results[i].code, 2, args.join(' '));
    t.regex(results[i].stderr, message, args.join(' '));
  });
  t.is((await db('webhook_endpoints')).length, before);
});

test.serial('When the retention clean-up runs, then log entries older than 30 days go, newer ones and pending deliveries stay', async (t) => {
  const { db } = t.context.database;
  const account = await accountId(db);
  const endpoint = await makeEndpoint(db, t.context.settings, { url: 'https://hooks.example.com/retention', events: ['order.created'], shops: ['pl'] });
  await db('webhook_endpoints').where({ id: endpoint.id }).update({ state: 'paused' }); // collect, never send
  await emitOrderEvents(db, 3, { shop: 'pl', prefix: 'Z' });
  await waitUntil(async () => (await db('webhook_deliveries').where({ endpoint_id: endpoint.id })).length === 3);
  const [oldSent, newSent, oldPending] = (await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).orderBy('id').pluck('id')).map(String);
  const now = new Date();
  const days = (n: number, seconds = 0) => new Date(now.getTime() - n * 86_400_000 - seconds * 1000);
  // Both sides of the bound: one second past 30 days goes, one second short of it stays.
  await db('webhook_deliveries').where({ id: oldSent }).update({ status: 'SENT', attempts: 1, completed_at: days(30, 1) });
  await db('webhook_deliveries').where({ id: newSent }).update({ status: 'SENT', attempts: 1, completed_at: days(30, -1) });
  await db('webhook_delivery_attempts').insert([
    { delivery_id: oldSent, attempt: 1, outcome: 'success', http_status: 200, attempted_at: days(30, 1), duration_ms: 5 },
    { delivery_id: newSent, attempt: 1, outcome: 'success', http_status: 200, attempted_at: days(30, -1), duration_ms: 5 },
    { delivery_id: oldPending, attempt: 1, outcome: 'http_error', http_status: 500, attempted_at: days(40), duration_ms: 5 },
  ]);
  const removed = await purgeDeliveryLog(db, now);
  t.true(removed.attempts >= 2 && removed.deliveries >= 1);
  t.deepEqual((await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).orderBy('id').pluck('id')).map(String), [newSent, oldPending], 'a pending delivery is never removed');
  t.deepEqual((await db('webhook_delivery_attempts').whereIn('delivery_id', [oldSent, newSent, oldPending]).pluck('delivery_id')).map(String), [newSent]);
  await deleteEndpoint(db, account, endpoint.id);
});

test.serial('When a paused endpoint is enabled again, then its count of consecutive failures starts from 0, so one more failure does not pause it again (D14: 30 in a row)', async (t) => {
  const { db } = t.context.database;
  const endpoint = await makeEndpoint(db, t.context.settings, { url: 'https://hooks.example.com/re-enabled', events: ['order.created'], shops: ['hu'], name: 're-enabled' });
  await db('webhook_endpoints').where({ id: endpoint.id }).update({ state: 'paused', pause_reason: 'consecutive_failures', paused_at: db.fn.now(), consecutive_failures: 30 });
  const result = await enableEndpoint(db, await accountId(db), endpoint.id);
  t.like(result, { state: 'enabled', previousState: 'paused' });
  t.like(await db('webhook_endpoints').where({ id: endpoint.id }).first('state', 'consecutive_failures', 'paused_at', 'pause_reason'),
    { state: 'enabled', consecutive_failures: 0, paused_at: null, pause_reason: null });
});

test.serial('When a test delivery is asked for a paused or a disabled endpoint, then it is STATE_CONFLICT and nothing is queued; an enabled one gets it', async (t) => {
  const { db } = t.context.database;
  const account = await accountId(db);
  const endpoint = await makeEndpoint(db, t.context.settings, { url: 'https://hooks.example.com/ping-states', events: ['order.created'], shops: ['hu'], name: 'ping states' });
  const deliveries = async () => (await db('webhook_deliveries').where({ endpoint_id: endpoint.id })).length;
  for (const state of ['paused', 'disabled'] as const) {
    await db('webhook_endpoints').where({ id: endpoint.id }).update(state === 'paused' ? { state, pause_reason: 'consecutive_failures', paused_at: db.fn.now() } : { state, pause_reason: null, paused_at: null });
    const error = await t.throwsAsync(pingEndpoint(db, account, endpoint.id));
    t.is((error as { code?: string }).code, 'STATE_CONFLICT', state);
    t.is(await deliveries(), 0, `${state}: nothing queued`);
  }
  await db('webhook_endpoints').where({ id: endpoint.id }).update({ state: 'enabled', pause_reason: null, paused_at: null });
  const ping = await pingEndpoint(db, account, endpoint.id);
  t.truthy(ping.deliveryId);
  t.is(await deliveries(), 1, 'enabled: the test delivery is queued');
});
