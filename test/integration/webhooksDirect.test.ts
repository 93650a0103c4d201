/**
 * The direct delivery path (issue 15): on the shared Temporal dev server with the real dispatcher, a delivery costs no
 * workflow — its first attempt and its retries are made by the dispatcher's sender, each retry the schedule's delay
 * after the failed attempt, FAILED after the last; LISTEN/NOTIFY wakes the dispatcher (its polling safety net is 10 s
 * here); a receiver that hangs or fails slows nobody else, and no receiver ever has more than 16 requests open.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { workflowIds } from '../../src/temporal/constants.js';
import { ensureWebhookWorkflows } from '../../src/temporal/webhooks.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import { DEFAULT_PER_ENDPOINT_CONCURRENCY } from '../../src/webhooks/direct.js';
import { disableEndpoint } from '../../src/webhooks/endpoints.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { takeCounts } from '../../src/logSummary.js';
import { accountId, emitOrderEvents, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
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

/**
 * Retries after 5 s (twice). Receivers time out after 60 s here, not 10 s: the fairness test holds its hanging
 * requests open until it releases them, so nothing it asserts depends on how fast a loaded machine runs. 5 s, not
 * less: the delivery's workflow is started by the upkeep a moment after the failed attempt, and a retry that succeeds
 * before that start leaves the delivery without one (WR3) — on a loaded machine that moment passed 1.5 s.
 */
const RETRY_MS = 5_000;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  await database.db('accounts').where({ code: 'acme' }).update({ plan_code: 'start' });
  // A request counts as stuck (T22, tested in webhooksSender) only after 60 s here: on a loaded machine the dispatcher
  // can take over a second to fill the hanging endpoint's lane, and a stuck request would narrow it to 2 midway.
  const settings = testSettings({ retryScheduleMs: [RETRY_MS, RETRY_MS], timeoutMs: 60_000, stuckAfterMs: 60_000 });
  const taskQueue = `test-webhooks-direct-${crypto.randomBytes(4).toString('hex')}`;
  const address = process.env.TEMPORAL_ADDRESS!;
  // The dispatcher's polling safety net is 10 s: anything faster was woken by NOTIFY.
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db: database.db, temporalAddress: address, namespace: 'default', taskQueue, webhooks: settings, dispatcherIdleMs: 10_000 }));
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  await ensureWebhookWorkflows(client, taskQueue, { retentionSchedule: false });
  t.context = { database, worker, running, closeWorkerConnection: () => workerConnection.close(), client, connection, taskQueue, settings, receivers: [] };
});

test.after.always(async (t) => {
  const { client, taskQueue } = t.context;
  await client?.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
  t.context.worker?.shutdown();
  await t.context.running;
  await t.context.closeWorkerConnection?.();
  await t.context.connection?.close();
  for (const r of t.context.receivers ?? []) await r.close();
  await t.context.database?.drop();
});

async function receiver(t: { context: Context }, reply?: Receiver['reply']): Promise<Receiver> {
  const r = await startReceiver({ reply });
  t.context.receivers.push(r);
  return r;
}

async function hasWorkflow(client: Client, deliveryId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId)).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

test.serial('When receivers answer 2xx at the first attempt, then every delivery is SENT with one logged attempt and no workflow of its own, woken by NOTIFY within a second', async (t) => {
  const { db } = t.context.database;
  const [first, second] = [await receiver(t), await receiver(t)];
  for (const r of [first, second]) r.secret = (await makeEndpoint(db, t.context.settings, { url: r.url, events: ['order.created'], shops: ['sk'] })).secret;
  // Let the dispatcher fall asleep on its 10 s safety net first.
  await new Promise((r) => setTimeout(r, 1_000));
  const emitted = Date.now();
  const eventIds = await emitOrderEvents(db, 20, { shop: 'sk', prefix: 'N' });
  await Promise.all([first, second].map((r) => r.waitFor((reqs) => reqs.length >= 20, 15_000)));
  const firstReceipt = Math.min(...[first, second].map((r) => r.requests[0].at));
  t.true(firstReceipt - emitted < 3_000, `the first delivery arrived ${firstReceipt - emitted} ms after the events, not after the 10 s poll`);

  const deliveries = await db('webhook_deliveries').whereIn('event_id', eventIds).select('id', 'status', 'attempts');
  t.is(deliveries.length, 40);
  await waitUntil(async () => (await db('webhook_deliveries').whereIn('event_id', eventIds).where('status', 'SENT')).length === 40);
  const attempts = await db('webhook_delivery_attempts').whereIn('delivery_id', deliveries.map((d) => d.id)).select('delivery_id', 'attempt', 'outcome');
  t.is(attempts.length, 40, 'one attempt each');
  t.true(attempts.every((a) => a.attempt === 1 && a.outcome === 'success'));
  for (const r of [first, second]) {
    t.deepEqual(r.requests.map((q) => q.body.event_id).sort(), [...eventIds].sort());
    t.true(r.requests.every((q) => q.verifyError === null), 'signed as on the workflow path');
    t.true(r.requests.every((q) => q.standardVerifyError === null), 'and verified by npm standardwebhooks');
  }
  const withWorkflow = await Promise.all(deliveries.map((d) => hasWorkflow(t.context.client, String(d.id))));
  t.false(withWorkflow.some(Boolean), 'no delivery answered 2xx at the first attempt has a workflow');
});

test.serial('When attempts fail, then each delivery becomes its workflow webhook-delivery-<id> with search attributes, retried the schedule\'s delay after its failed attempt, and one failing every attempt is FAILED after the last', async (t) => {
  const { db } = t.context.database;
  takeCounts();
  const seen = new Set<string>();
  const rcv = await receiver(t, (req) => (seen.has(req.body.event_id) ? { status: 200 } : (seen.add(req.body.event_id), { status: 503 })));
  const endpoint = await makeEndpoint(db, t.context.settings, { url: rcv.url, events: ['order.created'], shops: ['cz'] });
  rcv.secret = endpoint.secret;
  const broken = await receiver(t, () => ({ status: 500 }));
  broken.secret = (await makeEndpoint(db, t.context.settings, { url: broken.url, events: ['order.created'], shops: ['cz'] })).secret;
  const eventIds = await emitOrderEvents(db, 3, { shop: 'cz', prefix: 'F' });
  await waitUntil(async () => (await db('webhook_deliveries').whereIn('event_id', eventIds).whereIn('status', ['SENT', 'FAILED'])).length === 6, 30_000);
  const deliveries = await db('webhook_deliveries').whereIn('event_id', eventIds).select('id', 'endpoint_id', 'status', 'attempts', 'next_attempt_at');
  for (const delivery of deliveries) {
    const id = String(delivery.id);
    const attempts = await db('webhook_delivery_attempts').where({ delivery_id: id }).orderBy('attempt').select('attempt', 'outcome', 'http_status', 'attempted_at', 'duration_ms');
    if (String(delivery.endpoint_id) === endpoint.id) {
      t.like(delivery, { status: 'SENT', attempts: 2, next_attempt_at: null });
      t.deepEqual(attempts.map((a) => [a.attempt, a.outcome, a.http_status]), [[1, 'http_error', 503], [2, 'success', 200]]);
    } else {
      t.like(delivery, { status: 'FAILED', attempts: 3, next_attempt_at: null });
      t.deepEqual(attempts.map((a) => [a.attempt, a.outcome, a.http_status]), [[1, 'http_error', 500], [2, 'http_error', 500], [3, 'http_error', 500]]);
    }
    for (let i = 1; i < attempts.length; i++) {
      const waited = (attempts[i].attempted_at as Date).getTime() - ((attempts[i - 1].attempted_at as Date).getTime() + attempts[i - 1].duration_ms);
      // Never early; how late depends on the machine's load (the bench measures it: scenario e).
      t.true(waited >= RETRY_MS - 10 && waited < RETRY_MS + 15_000, `attempt ${i + 1} came ${waited} ms after the failed attempt (schedule: ${RETRY_MS} ms)`);
    }
    t.true(await hasWorkflow(t.context.client, id), 'a failed first attempt makes the delivery a workflow (W3)');
    const handle = t.context.client.workflow.getHandle(workflowIds.webhookDelivery(id));
    // The workflow shows the end once its last attempt returned (a moment after Postgres has it).
    await waitUntil(async () => (await handle.describe()).status.name === 'COMPLETED', 10_000);
    const described = await handle.describe();
    const attribute = (name: string) => described.typedSearchAttributes.getAll().find((p) => p.key.name === name)?.value;
    t.is(attribute('WebhookEndpointId'), String(delivery.endpoint_id));
    t.is(attribute('WebhookAccount'), 'demo');
    t.is(attribute('WebhookShop'), 'cz');
    t.is(attribute('WebhookEventType'), 'order.created');
    t.is(attribute('WebhookDeliveryStatus'), delivery.status, 'the status the delivery ended in');
  }
  t.is(rcv.requests.length, 6);
  t.is(broken.requests.length, 9, 'three attempts each, then nothing more');
  t.true([...rcv.requests, ...broken.requests].every((q) => q.verifyError === null));
  // The minute's log summary counts the attempts this process made (issue 29): 3 + 9 failed, 3 delivered.
  const counted = { delivered: 0, failed: 0 };
  await waitUntil(async () => {
    const { webhookAttempts } = takeCounts();
    counted.delivered += webhookAttempts.delivered;
    counted.failed += webhookAttempts.failed;
    return counted.delivered >= 3 && counted.failed >= 12;
  }, 5_000);
  t.deepEqual(counted, { delivered: 3, failed: 12 });
});

test.serial('When one endpoint hangs and another answers 500, then healthy endpoints of the same and another account get everything while every hanging request is still open, no receiver ever has more than 16 requests open, and disabling skips what was under way', async (t) => {
  const { db } = t.context.database;
  const demo = await accountId(db);
  const hanging = await receiver(t, () => 'hang');
  const failing = await receiver(t, () => ({ status: 500 }));
  // Each request is answered 300 ms after it arrived, so the lane of 16 is full most of the time.
  const slowHealthy = await receiver(t, () => ({ status: 200, delayMs: 300 }));
  const otherAccount = await receiver(t);
  const endpoints = {
    hanging: await makeEndpoint(db, t.context.settings, { url: hanging.url, events: ['order.created'], shops: ['hu'] }),
    failing: await makeEndpoint(db, t.context.settings, { url: failing.url, events: ['order.created'], shops: ['hu'] }),
    healthy: await makeEndpoint(db, t.context.settings, { url: slowHealthy.url, events: ['order.created'], shops: ['hu', 'pl'] }),
    other: await makeEndpoint(db, t.context.settings, { url: otherAccount.url, events: ['order.created'], shops: 'all', account: 'acme' }),
  };
  hanging.secret = endpoints.hanging.secret;
  failing.secret = endpoints.failing.secret;
  slowHealthy.secret = endpoints.healthy.secret;
  otherAccount.secret = endpoints.other.secret;
  const hangingAttempts = async () => (await db('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.endpoint_id', endpoints.hanging.id)).length;

  /** Emits 64 events for the healthy endpoint (on `shop`) and 64 for the other account's; how long until both have them all. */
  const round = async (shop: string, prefix: string) => {
    const before = [slowHealthy.requests.length, otherAccount.requests.length];
    const emitted = Date.now();
    await emitOrderEvents(db, 64, { shop, prefix });
    await emitOrderEvents(db, 64, { account: 'acme', shop: 'cz', prefix: `${prefix}A` });
    await Promise.all([slowHealthy, otherAccount].map((r, i) => r.waitFor((reqs) => reqs.length >= before[i] + 64, 60_000)));
    return Math.max(...[slowHealthy, otherAccount].map((r, i) => r.requests[before[i] + 63].at)) - emitted;
  };
  // Alone first (pl reaches only the healthy endpoint), then beside the hanging and the failing one (hu reaches all three).
  const alone = await round('pl', 'L');
  const beside = await round('hu', 'H');
  t.log(`healthy endpoints: ${alone} ms alone, ${beside} ms beside a hanging and a failing endpoint`);
  await hanging.waitFor((reqs) => reqs.length >= DEFAULT_PER_ENDPOINT_CONCURRENCY, 30_000);
  // Not slowed, as an order of events rather than a time: everything reached the healthy endpoints while none of the
  // hanging endpoint's attempts had ended (they end only when released below, or after 60 s).
  t.is(await hangingAttempts(), 0, 'no attempt to the hanging endpoint had ended');
  t.is(hanging.open, DEFAULT_PER_ENDPOINT_CONCURRENCY, 'its whole lane was still open');
  // The bound, exactly: the hanging endpoint got its lane and not one request more; nobody ever had more than 16 open.
  t.is(hanging.requests.length, DEFAULT_PER_ENDPOINT_CONCURRENCY);
  for (const [name, r] of Object.entries({ hanging, failing, slowHealthy, otherAccount })) {
    t.true(r.maxOpen <= DEFAULT_PER_ENDPOINT_CONCURRENCY, `${name}: at most ${DEFAULT_PER_ENDPOINT_CONCURRENCY} requests open at once (${r.maxOpen})`);
  }
  t.true(slowHealthy.maxOpen > 1, 'the healthy endpoint was sent to in parallel');
  t.true([...slowHealthy.requests, ...otherAccount.requests].every((r) => r.verifyError === null));

  // Disabling the hanging endpoint while its requests are under way: they end SKIPPED, and nothing more is sent.
  t.is((await disableEndpoint(db, demo, endpoints.hanging.id)).state, 'disabled');
  hanging.release(500);
  await waitUntil(async () => (await hangingAttempts()) === DEFAULT_PER_ENDPOINT_CONCURRENCY, 30_000);
  t.deepEqual(await db('webhook_deliveries').where({ endpoint_id: endpoints.hanging.id }).distinct('status').pluck('status'), ['SKIPPED']);
  await new Promise((r) => setTimeout(r, 1_000));
  t.is(hanging.requests.length, DEFAULT_PER_ENDPOINT_CONCURRENCY, 'nothing was sent after the disable');

  // 30 failures in a row pause the failing endpoint (D14) through its actor, as on the workflow path.
  await waitUntil(async () => (await db('webhook_endpoints').where({ id: endpoints.failing.id }).first()).state === 'paused', 60_000);
  t.is((await db('webhook_endpoints').where({ id: endpoints.failing.id }).first()).pause_reason, 'consecutive_failures');
  await disableEndpoint(db, demo, endpoints.failing.id);
});
