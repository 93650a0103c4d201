/**
 * The endpoint actor and its pause rules (SPEC "Webhook endpoint", D14, D16) on Temporal's time-skipping test server:
 * 30 consecutive failed attempts pause it, more than 5,000 pending deliveries pause it, pending deliveries wait and are
 * delivered after a person re-enables it; disabling skips them.
 */
import { startTimeSkippingWorker } from '../helpers/timeSkipping.js';
import { waitUntil } from '../helpers/wait.js';
import anyTest, { type TestFn } from 'ava';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Db } from '../../src/db/knex.js';
import { webhookSignals, workflowIds } from '../../src/temporal/constants.js';
import { webhookWorkflowsClient } from '../../src/temporal/webhooks.js';
import { dispatchOutboxBatch, startPendingDeliveries } from '../../src/webhooks/dispatch.js';
import { disableEndpoint, enableEndpoint } from '../../src/webhooks/endpoints.js';
import { pauseIfOverLimits } from '../../src/webhooks/pause.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { accountId, bulkOrderEvents, emitOrderEvents, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
  env: TestWorkflowEnvironment;
  stopWorker: () => Promise<void>;
  settings: ReturnType<typeof testSettings>;
  taskQueue: string;
  workflows: ReturnType<typeof webhookWorkflowsClient>;
  receivers: Receiver[];
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  const settings = testSettings();
  const { env, taskQueue, stop } = await startTimeSkippingWorker(database.db, { queuePrefix: 'test-webhook-endpoint', webhooks: settings });
  t.context = {
    database, env, stopWorker: stop, settings, taskQueue,
    workflows: webhookWorkflowsClient(env.client, taskQueue, settings.retryScheduleMs, { searchAttributes: false }), receivers: [],
  };
});

test.after.always(async (t) => {
  for (const r of t.context.receivers ?? []) await r.close();
  await t.context.stopWorker?.();
  await t.context.database?.drop();
});


/**
 * Waits for delivery workflows one after another: each wait lets the test server skip time, and concurrent waits
 * unbalance its time-skipping lock.
 */
async function resultsOf(t: { context: Context }, deliveryIds: string[]): Promise<string[]> {
  const results: string[] = [];
  for (const id of deliveryIds) results.push(await t.context.env.client.workflow.getHandle(workflowIds.webhookDelivery(id)).result());
  return results;
}

const endpointRow = (db: Db, id: string) => db('webhook_endpoints').where({ id }).first();
const countWhere = async (db: Db, where: Record<string, unknown>) => Number((await db('webhook_deliveries').where(where).count<{ count: string }[]>('* as count').first())!.count);

/** A new endpoint on its own shop, so events of other tests never reach it. */
async function endpointFor(t: { context: Context }, url: string, shop: string) {
  const { db } = t.context.database;
  return makeEndpoint(db, t.context.settings, { url, events: ['order.created'], shops: [shop] });
}

test.serial('When 30 attempts in a row fail, then the actor pauses the endpoint with one notification, pending deliveries wait, and a re-enable delivers them', async (t) => {
  const { db } = t.context.database;
  let healthy = false;
  const rcv = await startReceiver({ reply: () => ({ status: healthy ? 200 : 503 }) });
  t.context.receivers.push(rcv);
  const endpoint = await endpointFor(t, rcv.url, 'cz');
  rcv.secret = endpoint.secret;
  const eventIds = await emitOrderEvents(db, 30, { shop: 'cz', prefix: 'P' });
  await dispatchOutboxBatch(db);
  t.is(await startPendingDeliveries(db, t.context.workflows), 30);

  // Every first attempt fails at once (no timer before it): the 30th failure reaches the threshold.
  await waitUntil(async () => (await endpointRow(db, endpoint.id)).state === 'paused');
  const paused = await endpointRow(db, endpoint.id);
  t.like(paused, { pause_reason: 'consecutive_failures' });
  t.true(paused.consecutive_failures >= 30);
  const notifications = await db('notifications').where({ kind: 'webhook_endpoint_paused' }).whereRaw(`details->>'endpointId' = ?`, [endpoint.id]);
  t.is(notifications.length, 1, 'one notification per pause (D16)');
  t.like(notifications[0].details, { reason: 'consecutive_failures' });

  // The retry timers fire while paused: the deliveries wait instead of being sent.
  await t.context.env.sleep('2 minutes');
  await waitUntil(async () => (await countWhere(db, { endpoint_id: endpoint.id, status: 'PENDING' })) === 30
    && (await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).whereNotNull('held_since').count<{ count: string }[]>('* as count').first())!.count === '30');
  t.is(rcv.requests.length, 30, 'nothing is sent while paused');

  // A person repairs the receiver and enables the endpoint again; the actor wakes the waiting deliveries.
  healthy = true;
  await enableEndpoint(db, await accountId(db), endpoint.id);
  await t.context.env.client.workflow.getHandle(workflowIds.webhookEndpoint(endpoint.id)).signal(webhookSignals.changed);
  const results = await resultsOf(t, (await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).pluck('id')).map(String));
  t.deepEqual([...new Set(results)], ['SENT']);
  const sent = rcv.requests.slice(30).filter((r) => r.verifyError === null);
  t.deepEqual(sent.map((r) => r.body.event_id).sort(), [...eventIds].sort(), 'every event is delivered after the re-enable');
  t.like(await endpointRow(db, endpoint.id), { state: 'enabled', consecutive_failures: 0 });
});

test.serial('When dispatch brings an endpoint to 5,000 pending deliveries nothing happens; at 5,001 the actor pauses it and the deliveries remain', async (t) => {
  const { db } = t.context.database;
  const endpoint = await endpointFor(t, 'http://127.0.0.1:9/never', 'hu');
  const check = async () => {
    let result;
    do {
      result = await dispatchOutboxBatch(db, 1_000);
      for (const id of result.overPendingLimit) await t.context.workflows.checkEndpoint(id);
    } while (result.events > 0);
  };
  // Only PENDING deliveries count: five earlier ones, one SENT, two FAILED, two SKIPPED, stand beside the 5,000.
  await bulkOrderEvents(db, 5, { shop: 'hu' });
  await check();
  const earlier = await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).orderBy('id').pluck('id');
  t.is(earlier.length, 5);
  for (const [ids, status] of [[earlier.slice(0, 1), 'SENT'], [earlier.slice(1, 3), 'FAILED'], [earlier.slice(3), 'SKIPPED']] as const) {
    await db('webhook_deliveries').whereIn('id', ids).update({ status });
  }
  await bulkOrderEvents(db, 5_000, { shop: 'hu' });
  await check();
  t.is(await countWhere(db, { endpoint_id: endpoint.id, status: 'PENDING' }), 5_000);
  t.is((await endpointRow(db, endpoint.id)).state, 'enabled', '5,000 is not more than 5,000');
  t.like(await pauseIfOverLimits(db, endpoint.id), { paused: false, pending: 5_000 }, 'the five delivered, failed or skipped ones are not pending');

  await bulkOrderEvents(db, 1, { shop: 'hu' });
  await check();
  await waitUntil(async () => (await endpointRow(db, endpoint.id)).state === 'paused');
  t.is((await endpointRow(db, endpoint.id)).pause_reason, 'pending_deliveries');
  t.is(await countWhere(db, { endpoint_id: endpoint.id, status: 'PENDING' }), 5_001, 'pending deliveries remain');
  const [notification] = await db('notifications').whereRaw(`details->>'endpointId' = ?`, [endpoint.id]);
  t.like(notification.details, { reason: 'pending_deliveries', pendingDeliveries: 5_001 });

  // Disabling turns them into SKIPPED.
  const disabled = await disableEndpoint(db, await accountId(db), endpoint.id);
  t.is(disabled.skipped, 5_001);
  t.is(await countWhere(db, { endpoint_id: endpoint.id, status: 'SKIPPED' }), 5_001 + 2, 'the 5,001 beside the two skipped before');
});

test.serial('When an endpoint is disabled while its deliveries wait in a pause, then they become SKIPPED and their workflows end at once', async (t) => {
  const { db } = t.context.database;
  const rcv = await startReceiver();
  t.context.receivers.push(rcv);
  const endpoint = await endpointFor(t, rcv.url, 'pl');
  await db('webhook_endpoints').where({ id: endpoint.id }).update({ state: 'paused', pause_reason: 'consecutive_failures', paused_at: db.fn.now() });
  await emitOrderEvents(db, 3, { shop: 'pl', prefix: 'S' });
  await dispatchOutboxBatch(db);
  const ids: string[] = (await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).pluck('id')).map(String);
  t.is(ids.length, 3, 'a paused endpoint keeps collecting deliveries');
  t.is(await startPendingDeliveries(db, t.context.workflows), 0, 'the dispatcher starts none while the endpoint is paused');
  for (const id of ids) await t.context.workflows.start({ deliveryId: id, endpointId: endpoint.id, firstAttempt: 1 });
  await waitUntil(async () => (await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).whereNotNull('held_since').pluck('id')).length === 3);

  await disableEndpoint(db, await accountId(db), endpoint.id);
  await t.context.env.client.workflow.signalWithStart('webhookEndpointWorkflow', {
    taskQueue: t.context.taskQueue, workflowId: workflowIds.webhookEndpoint(endpoint.id), args: [{ endpointId: endpoint.id }], signal: webhookSignals.changed, signalArgs: [],
  });
  t.deepEqual(await resultsOf(t, ids), ['SKIPPED', 'SKIPPED', 'SKIPPED']);
  t.is(rcv.requests.length, 0, 'nothing was sent');
});

test.serial('When an endpoint is disabled while a delivery waits for its retry, then it becomes SKIPPED and its workflow ends at once, not when the timer fires', async (t) => {
  const { db } = t.context.database;
  const rcv = await startReceiver({ reply: () => ({ status: 500 }) });
  t.context.receivers.push(rcv);
  const endpoint = await endpointFor(t, rcv.url, 'sk');
  await emitOrderEvents(db, 1, { shop: 'sk', prefix: 'R' });
  await dispatchOutboxBatch(db);
  t.is(await startPendingDeliveries(db, t.context.workflows), 1);
  const [id] = (await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).pluck('id')).map(String);
  // The first attempt failed: the workflow now waits one minute for the second (no client awaits it, so no time skips).
  await waitUntil(async () => (await db('webhook_delivery_attempts').where({ delivery_id: id })).length === 1);
  const handle = t.context.env.client.workflow.getHandle(workflowIds.webhookDelivery(id));

  await disableEndpoint(db, await accountId(db), endpoint.id);
  t.is((await db('webhook_deliveries').where({ id }).first()).status, 'SKIPPED');
  await t.context.env.client.workflow.signalWithStart('webhookEndpointWorkflow', {
    taskQueue: t.context.taskQueue, workflowId: workflowIds.webhookEndpoint(endpoint.id), args: [{ endpointId: endpoint.id }], signal: webhookSignals.changed, signalArgs: [],
  });
  await waitUntil(async () => (await handle.describe()).status.name === 'COMPLETED', 20_000);
  t.is(await handle.result(), 'SKIPPED');
  const history = await handle.fetchHistory();
  t.false(history.events!.some((event) => event.timerFiredEventAttributes), 'the retry timer was cancelled, never fired');
  t.is(rcv.requests.length, 1, 'no second attempt');
});
