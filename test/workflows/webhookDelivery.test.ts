/**
 * The delivery workflow through every state of SPEC "Webhook delivery", on Temporal's time-skipping test server (the
 * 1, 5, 15, 60, 240-minute schedule passes in seconds), against real HTTP receivers and a real Postgres.
 */
import { startTimeSkippingWorker } from '../helpers/timeSkipping.js';
import { waitUntil } from '../helpers/wait.js';
import anyTest, { type TestFn } from 'ava';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Db } from '../../src/db/knex.js';
import { workflowIds } from '../../src/temporal/constants.js';
import { webhookWorkflowsClient } from '../../src/temporal/webhooks.js';
import { DirectSender } from '../../src/webhooks/direct.js';
import { dispatchOutboxBatch, startPendingDeliveries, wakeHeldDeliveries } from '../../src/webhooks/dispatch.js';
import { deleteEndpoint, disableEndpoint, retryDelivery, rotateEndpointSecret } from '../../src/webhooks/endpoints.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closedPort, startReceiver, type Receiver, type Reply } from '../helpers/receiver.js';
import { accountId, emitOrderEvents, fakeDns, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
  env: TestWorkflowEnvironment;
  stopWorker: () => Promise<void>;
  dns: ReturnType<typeof fakeDns>;
  settings: ReturnType<typeof testSettings>;
  taskQueue: string;
  receivers: Receiver[];
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  await database.db('accounts').where({ code: 'demo' }).update({ plan_code: 'custom' });
  const dns = fakeDns({ 'receiver.test': ['127.0.0.1'] });
  const settings = testSettings({ resolve: dns.resolve, timeoutMs: 1_000 });
  const { env, taskQueue, stop } = await startTimeSkippingWorker(database.db, { queuePrefix: 'test-webhook-delivery', webhooks: settings });
  t.context = { database, env, stopWorker: stop, dns, settings, taskQueue, receivers: [] };
});

test.after.always(async (t) => {
  for (const r of t.context.receivers ?? []) await r.close();
  await t.context.stopWorker?.();
  await t.context.database?.drop();
});

async function receiver(t: { context: Context }, reply?: (index: number) => Reply): Promise<Receiver> {
  const r = await startReceiver({ reply: reply ? (_req, i) => reply(i) : undefined });
  t.context.receivers.push(r);
  return r;
}

/** An endpoint with its secret given to the receiver, one event, its delivery row and the delivery workflow started. */
async function deliver(t: { context: Context }, url: string, rcv?: Receiver, options: { start?: boolean; account?: string; shop?: string } = {}) {
  const { db } = t.context.database;
  // Tests run one after another: earlier endpoints are switched off so a new event reaches only this test's endpoint.
  await db('webhook_endpoints').whereNot('state', 'disabled').update({ state: 'disabled' });
  const endpoint = await makeEndpoint(db, t.context.settings, { url, events: ['order.created'], shops: 'all', account: options.account });
  if (rcv) rcv.secret = endpoint.secret;
  const [eventId] = await emitOrderEvents(db, 1, { account: options.account, shop: options.shop, prefix: `D${endpoint.id}-` });
  await dispatchOutboxBatch(db);
  const delivery = await db('webhook_deliveries').where({ event_id: eventId, endpoint_id: endpoint.id }).first();
  const workflows = webhookWorkflowsClient(t.context.env.client, t.context.taskQueue, t.context.settings.retryScheduleMs, { searchAttributes: false });
  if (options.start !== false) await workflows.start({ deliveryId: String(delivery.id), endpointId: endpoint.id, firstAttempt: 1 });
  const handle = t.context.env.client.workflow.getHandle(workflowIds.webhookDelivery(String(delivery.id)));
  return { endpoint, eventId, deliveryId: String(delivery.id), handle, workflows };
}

async function attemptsOf(db: Db, deliveryId: string) {
  return db('webhook_delivery_attempts').where({ delivery_id: deliveryId }).orderBy('attempt').select('attempt', 'outcome', 'http_status');
}

async function timersOf(handle: { fetchHistory: () => Promise<{ events?: any[] | null }> }): Promise<number[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => Number(String(e.timerStartedEventAttributes.startToFireTimeout.seconds)));
}

test.serial('When the receiver answers 2xx, then the delivery is SENT after one signed attempt with the headers and the envelope, to the verified address only', async (t) => {
  const rcv = await receiver(t);
  const url = rcv.url.replace('127.0.0.1', 'receiver.test');
  const { handle, deliveryId, eventId, endpoint, workflows } = await deliver(t, url, rcv, { start: false });
  const lookupsBefore = t.context.dns.lookups.get('receiver.test') ?? 0;
  await workflows.start({ deliveryId, endpointId: endpoint.id, firstAttempt: 1 });
  t.is(await handle.result(), 'SENT');
  t.is(rcv.requests.length, 1);
  const [req] = rcv.requests;
  t.is(req.verifyError, null, 'the receiver\'s own verification accepts the signature');
  t.is(req.standardVerifyError, null, 'npm standardwebhooks accepts the Standard Webhooks signature');
  t.is(req.headers['webhook-id'], eventId);
  t.is(req.method, 'POST');
  t.is(req.headers['content-type'], 'application/json');
  t.is(req.headers['user-agent'], 'Service-Webhooks/1');
  t.is(req.headers['x-service-event'], 'order.created');
  t.is(req.headers['x-service-event-id'], eventId);
  t.is(req.headers['x-service-delivery'], deliveryId);
  t.regex(String(req.headers['x-service-timestamp']), /^\d+$/);
  t.deepEqual(Object.keys(req.body), ['event_id', 'event_type', 'version', 'occurred_at', 'tenant', 'store', 'resource', 'data']);
  t.like(req.body, { event_id: eventId, event_type: 'order.created', version: 1, tenant: 'demo', store: 'sk', resource: { type: 'order' } });
  t.deepEqual(Object.keys(req.body.data), ['order_code'], 'identifiers only, no personal data');
  t.regex(req.body.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // receiver.test exists only in the test's DNS: the connection used the verified address, resolved once per attempt.
  t.is((t.context.dns.lookups.get('receiver.test') ?? 0) - lookupsBefore, 1);
  t.deepEqual(await attemptsOf(t.context.database.db, deliveryId), [{ attempt: 1, outcome: 'success', http_status: 200 }]);
  const endpointRow = await t.context.database.db('webhook_endpoints').where({ id: endpoint.id }).first();
  t.is(endpointRow.consecutive_failures, 0);
});

test.serial('When every connection is refused, then six attempts follow the 1, 5, 15, 60 and 240-minute schedule and the delivery is FAILED', async (t) => {
  const port = await closedPort();
  const started = await t.context.env.currentTimeMs();
  const { handle, deliveryId } = await deliver(t, `http://127.0.0.1:${port}/hooks`);
  t.is(await handle.result(), 'FAILED');
  t.deepEqual(await timersOf(handle), [60, 300, 900, 3_600, 14_400], 'timers of 1, 5, 15, 60 and 240 minutes');
  const attempts = await attemptsOf(t.context.database.db, deliveryId);
  t.deepEqual(attempts.map((a) => a.attempt), [1, 2, 3, 4, 5, 6]);
  t.true(attempts.every((a) => a.outcome === 'connection_error' && a.http_status === null));
  t.true((await t.context.env.currentTimeMs()) - started >= 321 * 60_000, 'the schedule took 321 minutes of workflow time');
  const row = await t.context.database.db('webhook_deliveries').where({ id: deliveryId }).first();
  t.like(row, { status: 'FAILED', attempts: 6, next_attempt_at: null });
  t.truthy(row.completed_at);
});

test.serial('When the receiver answers 503, then 404, then 200, then the delivery is SENT at attempt 3 with the same body bytes and a fresh signature each time', async (t) => {
  const statuses = [503, 404, 200];
  const rcv = await receiver(t, (i) => ({ status: statuses[i] ?? 200 }));
  const { handle, deliveryId } = await deliver(t, rcv.url, rcv);
  t.is(await handle.result(), 'SENT');
  t.deepEqual(await attemptsOf(t.context.database.db, deliveryId), [
    { attempt: 1, outcome: 'http_error', http_status: 503 },
    { attempt: 2, outcome: 'http_error', http_status: 404 },
    { attempt: 3, outcome: 'success', http_status: 200 },
  ]);
  t.deepEqual(await timersOf(handle), [60, 300]);
  t.is(rcv.requests.length, 3);
  t.true(rcv.requests.every((r) => r.verifyError === null && r.raw.equals(rcv.requests[0].raw)), 'D19: the same bytes, each attempt signed with its own timestamp');
  t.is(new Set(rcv.requests.map((r) => r.headers['x-service-event-id'])).size, 1);
});

test.serial('When the receiver answers 302, then the delivery is FAILED at once without retry and the redirect is not followed', async (t) => {
  const rcv = await receiver(t, () => ({ status: 302, headers: { Location: '/elsewhere' } }));
  const { handle, deliveryId } = await deliver(t, rcv.url, rcv);
  t.is(await handle.result(), 'FAILED');
  t.deepEqual(await attemptsOf(t.context.database.db, deliveryId), [{ attempt: 1, outcome: 'redirect', http_status: 302 }]);
  t.deepEqual(await timersOf(handle), []);
  t.deepEqual(rcv.requests.map((r) => r.path), ['/hooks']);
});

test.serial('When the receiver does not answer in time, then the attempt is a time-out and the retry delivers it', async (t) => {
  const rcv = await receiver(t, (i) => (i === 0 ? 'hang' : { status: 204 }));
  const { handle, deliveryId } = await deliver(t, rcv.url, rcv);
  t.is(await handle.result(), 'SENT');
  t.deepEqual((await attemptsOf(t.context.database.db, deliveryId)).map((a) => a.outcome), ['timeout', 'success']);
});

test.serial('When the name resolves to a private address at delivery time after a public one at save, then the delivery is FAILED at once and nothing is connected', async (t) => {
  t.context.dns.set('hooks.customer.example', ['93.184.215.14']);
  const { handle, deliveryId, endpoint, workflows } = await deliver(t, 'https://hooks.customer.example/webhooks', undefined, { start: false });
  t.context.dns.set('hooks.customer.example', ['10.0.0.7']);
  await workflows.start({ deliveryId, endpointId: endpoint.id, firstAttempt: 1 });
  t.is(await handle.result(), 'FAILED');
  const [attempt] = await t.context.database.db('webhook_delivery_attempts').where({ delivery_id: deliveryId });
  t.like(attempt, { attempt: 1, outcome: 'address_rejected', http_status: null });
  t.regex(attempt.error, /10\.0\.0\.7/);
  t.deepEqual(await timersOf(handle), []);
});

test.serial('When the endpoint is disabled while a delivery waits for its retry, then the delivery is SKIPPED and nothing more is sent', async (t) => {
  const rcv = await receiver(t, () => ({ status: 500 }));
  const { handle, deliveryId, endpoint } = await deliver(t, rcv.url, rcv);
  await rcv.waitFor((r) => r.length === 1);
  await waitUntil(async () => (await t.context.database.db('webhook_deliveries').where({ id: deliveryId }).first()).attempts === 1);
  const result = await disableEndpoint(t.context.database.db, await accountId(t.context.database.db), endpoint.id);
  t.is(result.skipped, 1);
  t.is(await handle.result(), 'SKIPPED');
  t.is(rcv.requests.length, 1);
});

test.serial('When the endpoint is deleted before sending, then the delivery is SKIPPED and the log keeps it', async (t) => {
  const rcv = await receiver(t);
  const { handle, deliveryId, endpoint, workflows } = await deliver(t, rcv.url, rcv, { start: false });
  await deleteEndpoint(t.context.database.db, await accountId(t.context.database.db), endpoint.id);
  await workflows.start({ deliveryId, endpointId: endpoint.id, firstAttempt: 1 });
  t.is(await handle.result(), 'SKIPPED');
  t.is(rcv.requests.length, 0);
  t.like(await t.context.database.db('webhook_deliveries').where({ id: deliveryId }).first(), { status: 'SKIPPED', attempts: 0 });
});

test.serial('When a FAILED delivery is retried manually (D15), then one attempt is made at once with the same id, event and body; a failing manual retry is FAILED again without a schedule', async (t) => {
  const { db } = t.context.database;
  let answer = 302;
  const rcv = await receiver(t, () => ({ status: answer }));
  const { handle, deliveryId, workflows } = await deliver(t, rcv.url, rcv);
  t.is(await handle.result(), 'FAILED');
  const account = await accountId(db);

  answer = 500;
  await retryDelivery(db, account, deliveryId);
  t.is(await startPendingDeliveries(db, workflows), 1, 'the dispatcher starts the retried delivery');
  t.is(await handle.result(), 'FAILED');
  t.deepEqual(await timersOf(handle), [], 'a failing manual retry has no schedule');

  answer = 200;
  await retryDelivery(db, account, deliveryId);
  await startPendingDeliveries(db, workflows);
  t.is(await handle.result(), 'SENT');
  t.deepEqual((await attemptsOf(db, deliveryId)).map((a) => [a.attempt, a.outcome]), [[1, 'redirect'], [2, 'http_error'], [3, 'success']]);
  t.is(rcv.requests.length, 3);
  t.true(rcv.requests.every((r) => r.headers['x-service-delivery'] === deliveryId && r.raw.equals(rcv.requests[0].raw) && r.verifyError === null));
  await t.throwsAsync(retryDelivery(db, account, deliveryId), { message: /only a FAILED delivery/ });
});

test.serial('When a first attempt made by the dispatcher failed and no dispatcher runs, then the delivery\'s workflow makes the retry itself when its durable timer fires, under its own claim, once (WR1)', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t, (i) => ({ status: i === 0 ? 503 : 200 }));
  const { deliveryId, handle, workflows } = await deliver(t, rcv.url, rcv, { start: false });
  // The dispatcher's sender makes the first attempt (direct path), then stops: nothing but the workflow is left.
  const sender = new DirectSender(db, t.context.settings, { checkEndpoint: async () => {} });
  t.is(await sender.fill(), 1);
  await waitUntil(async () => sender.active === 0);
  const afterFirst = await db('webhook_deliveries').where({ id: deliveryId }).first();
  t.like(afterFirst, { status: 'PENDING', attempts: 1, claimed_attempt: null });
  t.is(await startPendingDeliveries(db, workflows, 500, 32, { workflowOnly: true }), 1, 'the failed first attempt makes it a workflow');

  t.is(await handle.result(), 'SENT');
  t.like(await db('webhook_deliveries').where({ id: deliveryId }).first(), { status: 'SENT', attempts: 2, claimed_attempt: 2, claimed_by: 'workflow' });
  t.deepEqual((await attemptsOf(db, deliveryId)).map((a) => [a.attempt, a.outcome]), [[1, 'http_error'], [2, 'success']]);
  t.is(rcv.requests.length, 2);
  // One timer: the 1 minute after the first attempt plus the dispatcher's 2 s turn (DISPATCHER_FIRST_MS), not less.
  const [timer, ...more] = await timersOf(handle);
  t.deepEqual(more, []);
  t.true(timer >= 60 && timer <= 62, `the retry timer was ${timer} s`);
});

test.serial('When the secret is rotated between two attempts, then the next attempt is signed with the new secret and the old one no longer verifies', async (t) => {
  const rcv = await receiver(t, (i) => ({ status: i === 0 ? 503 : 200 }));
  const { handle, endpoint } = await deliver(t, rcv.url, rcv);
  await rcv.waitFor((r) => r.length === 1);
  const oldSecret = rcv.secret;
  const rotated = await rotateEndpointSecret(t.context.database.db, t.context.settings, await accountId(t.context.database.db), endpoint.id);
  rcv.secret = rotated.secret;
  t.is(await handle.result(), 'SENT');
  t.is(rcv.requests[1].verifyError, null);
  const { verifyWebhook } = await import('../helpers/receiver.js');
  t.is(verifyWebhook(oldSecret!, rcv.requests[1].headers, rcv.requests[1].raw), 'signature mismatch');
});

test.serial('When the plan has no webhooks, then a delivery waits (PENDING) and is delivered once the plan is restored', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t);
  const { handle, deliveryId, endpoint, workflows } = await deliver(t, rcv.url, rcv, { account: 'acme', shop: 'cz', start: false });
  await db('accounts').where({ code: 'acme' }).update({ plan_code: 'trial' });
  await workflows.start({ deliveryId, endpointId: endpoint.id, firstAttempt: 1 });
  await waitUntil(async () => (await db('webhook_deliveries').where({ id: deliveryId }).first()).held_since !== null);
  t.is(rcv.requests.length, 0, 'nothing is sent while the plan has no webhooks');
  t.is(await wakeHeldDeliveries(db, workflows), 0, 'nothing is woken while the plan has no webhooks');
  t.like(await db('webhook_deliveries').where({ id: deliveryId }).first(), { status: 'PENDING', attempts: 0 });
  await db('accounts').where({ code: 'acme' }).update({ plan_code: 'start' });
  t.is(await wakeHeldDeliveries(db, workflows), 1, 'the dispatcher wakes it once the plan is restored');
  t.is(await handle.result(), 'SENT');
  t.is(rcv.requests.length, 1);
});

