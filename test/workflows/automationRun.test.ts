/**
 * Automation runs on Temporal's time-skipping test server (a two-day wait passes in seconds) against a real Postgres
 * and a real webhook receiver: matching, conditions on the entity as stored, durable waits, each step once, the
 * `automation.action` webhook through the normal delivery path, cancellation on disable.
 */
import { startTimeSkippingWorker } from '../helpers/timeSkipping.js';
import anyTest, { type TestFn } from 'ava';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { createDraft, publishAutomation, setAutomationEnabled, type Actor } from '../../src/automations/drafts.js';
import { cancelRunsOfDisabledAutomations, executeStep, matchOutboxBatch, startPendingRuns } from '../../src/automations/runs.js';
import type { Rule } from '../../src/automations/rule.js';
import { automationRunWorkflowsClient } from '../../src/temporal/automations.js';
import { webhookWorkflowsClient } from '../../src/temporal/webhooks.js';
import { startPendingDeliveries } from '../../src/webhooks/dispatch.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { fakeDns, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';
import { orderEvent, personActor, sampleRule } from '../helpers/automations.js';
import { waitUntil } from '../helpers/wait.js';

interface Context {
  database: TestDatabase;
  env: TestWorkflowEnvironment;
  stopWorker: () => Promise<void>;
  settings: ReturnType<typeof testSettings>;
  taskQueue: string;
  receiver: Receiver;
  endpointId: string;
  actor: Actor;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  await database.db('accounts').where({ code: 'demo' }).update({ plan_code: 'custom' });
  const settings = testSettings({ resolve: fakeDns({ 'receiver.test': ['127.0.0.1'] }).resolve, timeoutMs: 1_000 });
  const { env, taskQueue, stop } = await startTimeSkippingWorker(database.db, { queuePrefix: 'test-automation-run', webhooks: settings });
  const receiver = await startReceiver();
  const endpoint = await makeEndpoint(database.db, settings, { url: receiver.url.replace('127.0.0.1', 'receiver.test'), events: ['order.created'], shops: 'all', name: 'ERP' });
  receiver.secret = endpoint.secret;
  t.context = { database, env, stopWorker: stop, settings, taskQueue, receiver, endpointId: endpoint.id, actor: await personActor(database.db) };
});

test.after.always(async (t) => {
  await t.context.receiver?.close();
  await t.context.stopWorker?.();
  await t.context.database?.drop();
});

let requestSeq = 0;
/** A published, enabled automation of `rule` (made through the same functions as the CLI). */
async function enabledAutomation(t: { context: Context }, rule: Rule, opts: { publish?: boolean; enable?: boolean } = {}): Promise<string> {
  const { db } = t.context.database;
  const draft = await createDraft(db, t.context.actor, { clientRequestId: `run-test-${++requestSeq}`, rule });
  if (opts.publish !== false) await publishAutomation(db, t.context.actor, draft.workflow_id);
  if (opts.publish !== false && opts.enable !== false) await setAutomationEnabled(db, t.context.actor, draft.workflow_id, true);
  return draft.workflow_id;
}

const runsOf = (t: { context: Context }, workflowId: string) => t.context.database.db('automation_runs as r').join('automations as a', 'a.id', 'r.automation_id').where('a.workflow_id', workflowId).select('r.*').orderBy('r.id');
const stepsOf = (t: { context: Context }, runId: string) => t.context.database.db('automation_run_steps').where({ run_id: runId }).orderBy('position').select('node_id', 'action', 'status', 'wait_until', 'detail');
const workflows = (t: { context: Context }) => automationRunWorkflowsClient(t.context.env.client, t.context.taskQueue);

/** Disables every earlier automation, so an event of this test matches only this test's rules. */
async function onlyThese(t: { context: Context }) {
  await t.context.database.db('automations').update({ enabled: false });
}

test.serial('When a paid order over the limit matches, then the run waits two days, tags the order, e-mails and sends automation.action that a receiver verifies', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  const workflowId = await enabledAutomation(t, sampleRule({
    name: 'Big paid orders', trigger: { id: 'paid', event: 'order.paid' },
    conditions: { id: 'when', all: [{ id: 'over', field: 'order.totalWithVatEur', op: 'gt', value: 0.01 }] },
    steps: [
      { id: 'wait_2_days', action: 'wait', duration: '2d' },
      { id: 'tag_vip', action: 'add_tag', target: 'order', tag: 'vip' },
      { id: 'mail', action: 'send_email', template: 'high_value_order' },
      { id: 'erp', action: 'send_webhook', endpointId: t.context.endpointId },
    ],
  }));
  const { eventId, orderCode } = await orderEvent(db, 'order.paid');
  const startedAt = await t.context.env.currentTimeMs();
  t.like(await matchOutboxBatch(db), { runs: 1 });
  t.is(await startPendingRuns(db, workflows(t)), 1);
  const [run] = await runsOf(t, workflowId);
  t.is(run.run_workflow_id, `automation-run-${workflowId}-${eventId}`);
  const handle = t.context.env.client.workflow.getHandle(run.run_workflow_id);
  t.is(await handle.result(), 'completed');
  t.true((await t.context.env.currentTimeMs()) - startedAt >= 2 * 86_400_000, 'two days of workflow time passed');
  const history = await handle.fetchHistory();
  const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => Number(String(e.timerStartedEventAttributes!.startToFireTimeout!.seconds)));
  t.is(timers.length, 1, 'the wait is one durable timer');
  t.true(timers[0] > 172_790 && timers[0] <= 172_800, `two days from the event's match (${timers[0]} s)`);

  const done = (await runsOf(t, workflowId))[0];
  t.like(done, { status: 'completed', event_type: 'order.paid', entity_type: 'order', entity_id: orderCode });
  const steps = await stepsOf(t, done.id);
  t.deepEqual(steps.map((s) => [s.node_id, s.status]), [['wait_2_days', 'done'], ['tag_vip', 'done'], ['mail', 'done'], ['erp', 'done']]);
  t.truthy(await db('automation_tags').where({ entity_type: 'order', entity_code: orderCode, tag: 'vip' }).first());
  const mail = await db('email_outbox').where({ source: 'automation', dedupe_key: `automation:${done.id}:mail` }).first();
  t.is(mail.subject, `High-value order ${orderCode} in sk`);

  // The step's webhook goes through the normal delivery path: one delivery to the named endpoint only.
  const deliveries = await db('webhook_deliveries').where({ event_type: 'automation.action' }).select('*');
  t.is(deliveries.length, 1);
  t.is(String(deliveries[0].endpoint_id), t.context.endpointId);
  await startPendingDeliveries(db, webhookWorkflowsClient(t.context.env.client, t.context.taskQueue, t.context.settings.retryScheduleMs, { searchAttributes: false }));
  await t.context.receiver.waitFor((requests) => requests.some((r) => r.body?.event_type === 'automation.action'));
  const received = t.context.receiver.requests.find((r) => r.body.event_type === 'automation.action')!;
  t.is(received.verifyError, null, 'signed like every webhook');
  t.is(received.headers['x-service-event'], 'automation.action');
  t.like(received.body, { store: 'sk', resource: { type: 'order', id: orderCode } });
  t.deepEqual(received.body.data, { automation: { workflow_id: workflowId, run_id: run.run_workflow_id, node_id: 'erp', source_event: eventId }, order_code: orderCode });
  const runs = await t.context.database.db('automation_runs').where({ event_id: eventId });
  t.is(runs.length, 1);
});

test.serial('When the conditions do not hold for the order as stored, then the run ends not_matched without any step', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  const workflowId = await enabledAutomation(t, sampleRule({ conditions: { id: 'when', all: [{ id: 'huge', field: 'order.totalWithVat', op: 'gt', value: 1e12 }] } }));
  await orderEvent(db, 'order.created');
  await matchOutboxBatch(db);
  await startPendingRuns(db, workflows(t));
  const [run] = await runsOf(t, workflowId);
  t.is(await t.context.env.client.workflow.getHandle(run.run_workflow_id).result(), 'not_matched');
  const after = (await runsOf(t, workflowId))[0];
  t.like(after, { status: 'not_matched' });
  t.deepEqual(await stepsOf(t, after.id), []);
});

test.serial('When an automation is disabled while its run waits, then the run is cancelled cleanly and its later steps never run', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  const workflowId = await enabledAutomation(t, sampleRule({ steps: [{ id: 'wait', action: 'wait', duration: '3d' }, { id: 'tag', action: 'add_tag', target: 'order', tag: 'never' }] }));
  await orderEvent(db, 'order.created');
  await matchOutboxBatch(db);
  await startPendingRuns(db, workflows(t));
  const [run] = await runsOf(t, workflowId);
  await waitUntil(async () => (await runsOf(t, workflowId))[0].status === 'waiting');
  await setAutomationEnabled(db, t.context.actor, workflowId, false);
  t.is(await cancelRunsOfDisabledAutomations(db, workflows(t)), 1);
  const error = await t.throwsAsync(t.context.env.client.workflow.getHandle(run.run_workflow_id).result(), { instanceOf: WorkflowFailedError });
  t.regex(String(error?.cause?.message ?? error?.message), /cancel/i);
  const after = (await runsOf(t, workflowId))[0];
  t.like(after, { status: 'cancelled' });
  t.deepEqual((await stepsOf(t, after.id)).map((s) => [s.node_id, s.status]), [['wait', 'cancelled']]);
  t.falsy(await db('automation_tags').where({ tag: 'never' }).first());
  t.is(await cancelRunsOfDisabledAutomations(db, workflows(t)), 0, 'asked once');
});

test.serial('When the automation is a draft, or published but disabled, or for another shop, then an event starts no run', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  const draft = await enabledAutomation(t, sampleRule(), { publish: false });
  const disabled = await enabledAutomation(t, sampleRule(), { enable: false });
  const czOnly = await enabledAutomation(t, sampleRule({ trigger: { id: 't', event: 'order.created', markets: ['cz'] } }));
  const other = await enabledAutomation(t, sampleRule({ trigger: { id: 't', event: 'order.paid', markets: ['sk'] } }));
  await orderEvent(db, 'order.created');
  const result = await matchOutboxBatch(db);
  t.is(result.runs, 0);
  for (const id of [draft, disabled, czOnly, other]) t.deepEqual(await runsOf(t, id), [], id);
});

test.serial('When an event is looked at again (a second batch, a lost claim, a second start), then it still has one run and one workflow', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  const workflowId = await enabledAutomation(t, sampleRule());
  const { eventId } = await orderEvent(db, 'order.created');
  t.is((await matchOutboxBatch(db)).runs, 1);
  t.is((await matchOutboxBatch(db)).runs, 0);
  // As if the claim of the event were lost after its runs were made: the unique (automation, event) holds.
  const outbox = await db('outbox_events').where({ event_id: eventId }).first('id');
  await db('automation_outbox_seen').where({ outbox_event_id: outbox.id }).delete();
  t.like(await matchOutboxBatch(db), { events: 1, runs: 0 });
  const [run] = await runsOf(t, workflowId);
  await startPendingRuns(db, workflows(t));
  // A crash between the start and marking it started: the next start finds the workflow and does nothing.
  await db('automation_runs').where({ id: run.id }).update({ workflow_started_at: null });
  await startPendingRuns(db, workflows(t));
  t.is(await t.context.env.client.workflow.getHandle(run.run_workflow_id).result(), 'completed');
  await db('automation_runs').where({ id: run.id }).update({ workflow_started_at: null, status: 'pending' });
  await startPendingRuns(db, workflows(t));
  t.is((await db('automation_tags').where({ run_id: run.id })).length, 1, 'the run did its step once');
});

test.serial('When a step activity runs again after it committed (a retry after a crash), then the step is not repeated', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  const workflowId = await enabledAutomation(t, sampleRule({ steps: [{ id: 'erp', action: 'send_webhook', endpointId: t.context.endpointId }, { id: 'mail', action: 'send_email', template: 'order_attention' }] }));
  await orderEvent(db, 'order.created');
  await matchOutboxBatch(db);
  const [run] = await runsOf(t, workflowId);
  await db('automation_runs').where({ id: run.id }).update({ status: 'running' });
  const step = { id: 'erp', action: 'send_webhook' as const, endpointId: t.context.endpointId };
  const first = await executeStep(db, String(run.id), 0, step);
  const second = await executeStep(db, String(run.id), 0, step);
  t.deepEqual(second, first);
  const mail = { id: 'mail', action: 'send_email' as const, template: 'order_attention' };
  await executeStep(db, String(run.id), 1, mail);
  await executeStep(db, String(run.id), 1, mail);
  const events = await db('outbox_events').where({ event_type: 'automation.action' }).whereRaw("data->'automation'->>'run_id' = ?", [run.run_workflow_id]);
  t.is(events.length, 1);
  t.is((await db('email_outbox').where({ dedupe_key: `automation:${run.id}:mail` })).length, 1);
});

test.serial('When a rule waits until 08:00, then the timer ends at the next 08:00 in the shop\'s zone', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  const workflowId = await enabledAutomation(t, sampleRule({ steps: [{ id: 'morning', action: 'wait_until', timeOfDay: '08:00' }, { id: 'tag', action: 'add_tag', target: 'order', tag: 'morning' }] }));
  await orderEvent(db, 'order.created');
  await matchOutboxBatch(db);
  await startPendingRuns(db, workflows(t));
  const [run] = await runsOf(t, workflowId);
  t.is(await t.context.env.client.workflow.getHandle(run.run_workflow_id).result(), 'completed');
  const [wait] = await stepsOf(t, run.id);
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Bratislava', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(wait.wait_until);
  t.is(local, '08:00');
});

test.serial('When outbox events are older than the margin, then the consumer\'s own position passes them and forgets their claims; webhook dispatch is untouched', async (t) => {
  const { db } = t.context.database;
  await onlyThese(t);
  await orderEvent(db, 'order.created');
  await matchOutboxBatch(db);
  const newest = await db('outbox_events').max('id as id').first();
  const undispatchedBefore = await db('outbox_events').whereNull('dispatched_at').count<{ count: string }[]>('* as count');
  await db('outbox_events').update({ created_at: db.raw("now() - interval '2 minutes'") });
  await matchOutboxBatch(db);
  const consumer = await db('automation_outbox_consumer').where({ name: 'automations' }).first();
  t.is(String(consumer.position), String(newest!.id));
  t.deepEqual(await db('automation_outbox_seen').where('outbox_event_id', '<=', newest!.id), []);
  const undispatchedAfter = await db('outbox_events').whereNull('dispatched_at').count<{ count: string }[]>('* as count');
  t.deepEqual(undispatchedAfter, undispatchedBefore, 'the automation consumer never marks events dispatched');
});
