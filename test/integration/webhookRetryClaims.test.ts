/**
 * WR1: a retry is made by the partition dispatcher when due while it runs, and by the delivery's workflow otherwise;
 * the claim in Postgres makes each attempt once. On a real Postgres against real receivers (the sender and the
 * workflow's attempt activity side by side, each held mid-request by the receiver), and end to end on the shared
 * Temporal dev server with the real dispatcher and delivery workflow.
 */
import crypto from 'node:crypto';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import type { Db } from '../../src/db/knex.js';
import { createWorker } from '../../src/entry/compose.js';
import { workflowIds } from '../../src/temporal/constants.js';
import { ensureWebhookWorkflows } from '../../src/temporal/webhooks.js';
import { attemptDelivery } from '../../src/webhooks/delivery.js';
import { DirectSender } from '../../src/webhooks/direct.js';
import { dispatchOutboxBatch } from '../../src/webhooks/dispatch.js';
import { workerName } from '../../src/webhooks/partitions.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, type Receiver, type Reply } from '../helpers/receiver.js';
import { testWorkerDeps } from '../helpers/service.js';
import { waitUntil } from '../helpers/wait.js';
import { emitOrderEvents, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
  settings: ReturnType<typeof testSettings>;
  receivers: Receiver[];
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  await database.db('accounts').where({ code: 'demo' }).update({ plan_code: 'custom' });
  t.context = { database, settings: testSettings({ timeoutMs: 5_000 }), receivers: [] };
});

test.after.always(async (t) => {
  for (const r of t.context.receivers ?? []) await r.close();
  await t.context.database?.drop();
});

/** A receiver answering the n-th request (0-based) with `replies[n]`, and 200 after them. */
async function receiver(t: { context: Context }, replies: Reply[]): Promise<Receiver> {
  const r = await startReceiver({ reply: (_req, i) => replies[i] ?? { status: 200 } });
  t.context.receivers.push(r);
  return r;
}

/** Only this test's endpoint gets the next event; its one delivery. */
async function oneDelivery(t: { context: Context }, rcv: Receiver, settings = t.context.settings) {
  const { db } = t.context.database;
  await db('webhook_endpoints').whereNot('state', 'disabled').update({ state: 'disabled' });
  const endpoint = await makeEndpoint(db, settings, { url: rcv.url, events: ['order.created'], shops: 'all' });
  rcv.secret = endpoint.secret;
  const [eventId] = await emitOrderEvents(db, 1, { prefix: `C${endpoint.id}-` });
  return { endpoint, eventId };
}

async function attemptsOf(db: Db, deliveryId: string) {
  return (await db('webhook_delivery_attempts').where({ delivery_id: deliveryId }).orderBy('attempt').select('attempt', 'outcome', 'http_status'))
    .map((a) => [a.attempt, a.outcome, a.http_status]);
}

/** The first attempt by a sender with a clock of its own, failed with 503; the delivery's row after it. */
async function failedFirstAttempt(t: ExecutionContext<Context>, rcv: Receiver) {
  const { db } = t.context.database;
  const { eventId } = await oneDelivery(t, rcv);
  await dispatchOutboxBatch(db);
  const clock = { now: Date.now() };
  const sender = new DirectSender(db, t.context.settings, { checkEndpoint: async () => {}, now: () => clock.now });
  t.is(await sender.fill(), 1);
  await waitUntil(async () => sender.active === 0, 20_000);
  const delivery = await db('webhook_deliveries').where({ event_id: eventId }).first();
  t.like(delivery, { status: 'PENDING', attempts: 1 });
  return { sender, clock, delivery, deliveryId: String(delivery.id) };
}

test.serial('When a retry falls due while the dispatcher runs, then the dispatcher makes it under its claim: the workflow\'s attempt meanwhile finds it claimed and sends nothing, and afterwards reports the dispatcher\'s result', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t, [{ status: 503 }, 'hang']);
  const { sender, clock, delivery, deliveryId } = await failedFirstAttempt(t, rcv);
  const input = { deliveryId, attempt: 2, retryScheduleMs: t.context.settings.retryScheduleMs };

  clock.now = (delivery.next_attempt_at as Date).getTime();
  t.is(await sender.fill(), 1, 'the dispatcher takes the retry when due');
  await rcv.waitFor((r) => r.length === 2);
  t.like(await db('webhook_deliveries').where({ id: deliveryId }).first(), { claimed_attempt: 2, claimed_by: workerName });

  const meanwhile = await attemptDelivery(db, t.context.settings, input);
  t.like(meanwhile, { outcome: 'claimed', status: 'PENDING' });
  t.true(meanwhile.retryDelayMs! > 0 && meanwhile.retryDelayMs! <= 5_000, 'the workflow looks again within 5 s');
  t.is(rcv.requests.length, 2, 'the workflow sent nothing while the dispatcher\'s request was under way');

  rcv.release(200);
  await waitUntil(async () => sender.active === 0, 20_000);
  t.like(await attemptDelivery(db, t.context.settings, input), { outcome: 'done', status: 'SENT', httpStatus: 200, lastAttempt: 2 });
  t.is(rcv.requests.length, 2, 'retry made once');
  t.deepEqual(await attemptsOf(db, deliveryId), [[1, 'http_error', 503], [2, 'success', 200]]);
});

test.serial('When the workflow is making a retry (no dispatcher had made it), then a dispatcher that finds it due takes nothing, and the attempt is made once', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t, [{ status: 503 }, 'hang']);
  const { sender, clock, delivery, deliveryId } = await failedFirstAttempt(t, rcv);

  const workflowAttempt = attemptDelivery(db, t.context.settings, { deliveryId, attempt: 2, retryScheduleMs: t.context.settings.retryScheduleMs });
  await rcv.waitFor((r) => r.length === 2);
  t.like(await db('webhook_deliveries').where({ id: deliveryId }).first(), { claimed_attempt: 2, claimed_by: 'workflow' });
  clock.now = (delivery.next_attempt_at as Date).getTime() + 60_000;
  t.is(await sender.fill(), 0, 'the retry is due, but claimed by its workflow');

  rcv.release(200);
  t.like(await workflowAttempt, { outcome: 'done', status: 'SENT', httpStatus: 200, lastAttempt: 2 });
  t.is(await sender.fill(), 0);
  t.is(rcv.requests.length, 2);
  t.deepEqual(await attemptsOf(db, deliveryId), [[1, 'http_error', 503], [2, 'success', 200]]);
});

test.serial('When a delivery\'s first attempt fails while the dispatcher runs, then its workflow waits with a durable timer, the dispatcher makes the retry when due exactly once, and the workflow records that attempt and ends SENT', async (t) => {
  const { db } = t.context.database;
  // A 3-second schedule (D17 allows short ones outside production): the retry falls due while the test waits.
  const settings = { ...t.context.settings, retryScheduleMs: [3_000] };
  const taskQueue = `test-webhook-claims-${crypto.randomBytes(4).toString('hex')}`;
  const address = process.env.TEMPORAL_ADDRESS!;
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db, temporalAddress: address, namespace: 'default', taskQueue, webhooks: settings }));
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  try {
    const rcv = await receiver(t, [{ status: 503 }]);
    const { eventId } = await oneDelivery(t, rcv, settings);
    await ensureWebhookWorkflows(client, taskQueue, { retentionSchedule: false });
    await rcv.waitFor((r) => r.length === 1);
    const delivery = await db('webhook_deliveries').where({ event_id: eventId }).first();
    const deliveryId = String(delivery.id);
    const handle = client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId));
    await waitUntil(async () => (await db('webhook_deliveries').where({ id: deliveryId }).first()).workflow_started_at !== null, 30_000);

    t.is(await handle.result(), 'SENT', 'the workflow ends with the delivery');
    const row = await db('webhook_deliveries').where({ id: deliveryId }).first();
    t.like(row, { status: 'SENT', attempts: 2, claimed_attempt: 2, claimed_by: workerName }, 'attempt 2 was the dispatcher\'s');
    t.deepEqual(await attemptsOf(db, deliveryId), [[1, 'http_error', 503], [2, 'success', 200]]);
    t.is(rcv.requests.length, 2, 'one retry');

    const history = (await handle.fetchHistory()).events ?? [];
    t.true(history.some((e) => e.timerStartedEventAttributes), 'the retry waited on a durable timer');
    // The local activity results the workflow recorded: attempt 2 as the dispatcher made it.
    const recorded = history.filter((e) => e.markerRecordedEventAttributes).flatMap((e) => Object.values(e.markerRecordedEventAttributes!.details ?? {})
      .flatMap((p) => (p.payloads ?? []).map((x) => Buffer.from(x.data ?? []).toString('utf8'))));
    t.true(recorded.some((text) => text.includes('"lastAttempt":2') && text.includes('"status":"SENT"') && text.includes('"httpStatus":200')), 'the workflow recorded attempt 2');
  } finally {
    await client.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
    worker.shutdown();
    await running;
    await workerConnection.close();
    await connection.close();
  }
});
