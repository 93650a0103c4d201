/**
 * Automations end to end on the Temporal dev server with a real worker: an outbox event is consumed twice, independently
 * — by webhook dispatch (subscribers get `order.paid`) and by the automation consumer (a run whose "send webhook" step
 * sends `automation.action`) — and disabling an automation cancels its waiting run within a second. Runs are read back
 * over REST and MCP.
 */
import anyTest, { type TestFn } from 'ava';
import { createDraft, publishAutomation, setAutomationEnabled, type Actor } from '../../src/automations/drafts.js';
import type { Rule } from '../../src/automations/rule.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { orderEvent, personActor, sampleRule } from '../helpers/automations.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';
import { fakeDns, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  worker: InProcessWorker;
  receiver: Receiver;
  endpointId: string;
  actor: Actor;
  key: string;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  await database.db('accounts').where({ code: 'demo' }).update({ plan_code: 'custom' });
  const settings = testSettings({ resolve: fakeDns({ 'receiver.test': ['127.0.0.1'] }).resolve });
  const worker = await startInProcessWorker(database.db, { prefix: 'test-automations', webhookWorkflows: true, automationWorkflows: true, webhooks: settings });
  const receiver = await startReceiver();
  const endpoint = await makeEndpoint(database.db, settings, { url: receiver.url.replace('127.0.0.1', 'receiver.test'), events: ['order.paid'], shops: 'all', name: 'ERP' });
  receiver.secret = endpoint.secret;
  t.context = {
    database, server: await startTestServer(database.db), worker,
    receiver, endpointId: endpoint.id, actor: await personActor(database.db), key: await issueKey(database.db),
  };
});

test.after.always(async (t) => {
  await t.context.worker?.stop();
  await t.context.receiver?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

let seq = 0;
async function enabled(t: { context: Context }, rule: Rule): Promise<string> {
  const { db } = t.context.database;
  await db('automations').update({ enabled: false });
  const draft = await createDraft(db, t.context.actor, { clientRequestId: `runs-${++seq}`, rule });
  await publishAutomation(db, t.context.actor, draft.workflow_id);
  await setAutomationEnabled(db, t.context.actor, draft.workflow_id, true);
  return draft.workflow_id;
}

test.serial('When an order is paid, then the subscriber gets order.paid and, from the automation run, automation.action — both signed, each once', async (t) => {
  const { db } = t.context.database;
  const workflowId = await enabled(t, sampleRule({
    trigger: { id: 'paid', event: 'order.paid', markets: ['sk'] },
    steps: [{ id: 'tag', action: 'add_tag', target: 'order', tag: 'paid-seen' }, { id: 'erp', action: 'send_webhook', endpointId: t.context.endpointId }],
  }));
  const { eventId, orderCode } = await orderEvent(db, 'order.paid');
  await t.context.receiver.waitFor((requests) => requests.filter((r) => r.body?.event_id === eventId || r.body?.data?.automation?.source_event === eventId).length >= 2, 60_000);
  const mine = t.context.receiver.requests.filter((r) => r.body?.event_id === eventId || r.body?.data?.automation?.source_event === eventId);
  t.deepEqual(mine.map((r) => r.body.event_type).sort(), ['automation.action', 'order.paid']);
  t.true(mine.every((r) => r.verifyError === null));
  const action = mine.find((r) => r.body.event_type === 'automation.action')!;
  t.is(action.body.data.automation.workflow_id, workflowId);
  t.is(action.body.data.automation.node_id, 'erp');
  t.is(action.body.data.order_code, orderCode);

  await waitUntil(async () => (await db('automation_runs').where({ event_id: eventId }).first())?.status === 'completed');
  const runs = await api(t.context.server, `/automations/${workflowId}/runs`, t.context.key);
  t.is(runs.status, 200);
  t.is(runs.body.data.length, 1);
  const [run] = runs.body.data;
  t.like(run, { runWorkflowId: `automation-run-${workflowId}-${eventId}`, status: 'completed', trigger: { eventId, eventType: 'order.paid', store: 'sk' }, entity: { type: 'order', id: orderCode } });
  t.deepEqual(run.steps.map((s: any) => [s.nodeId, s.status]), [['tag', 'done'], ['erp', 'done']]);
  t.truthy(run.finishedAt);
  const client = await connectModern(t.context.server, t.context.key);
  try {
    const viaMcp = await client.callTool({ name: 'automations_runs', arguments: { workflowId } });
    t.deepEqual((viaMcp.structuredContent as any).items, runs.body.data);
  } finally {
    await client.close();
  }
  // The webhook log shows the automation's delivery like any other.
  const delivery = await db('webhook_deliveries').where({ event_type: 'automation.action', endpoint_id: t.context.endpointId }).first();
  t.is(delivery.status, 'SENT');
});

test.serial('When a person disables an automation whose run waits, then the worker cancels the run within seconds', async (t) => {
  const { db } = t.context.database;
  const workflowId = await enabled(t, sampleRule({ steps: [{ id: 'wait', action: 'wait', duration: '1h' }, { id: 'tag', action: 'add_tag', target: 'order', tag: 'late' }] }));
  const { eventId } = await orderEvent(db, 'order.created');
  await waitUntil(async () => (await db('automation_runs').where({ event_id: eventId }).first())?.status === 'waiting', 30_000);
  const started = Date.now();
  await setAutomationEnabled(db, t.context.actor, workflowId, false);
  await waitUntil(async () => (await db('automation_runs').where({ event_id: eventId }).first())?.status === 'cancelled', 30_000);
  t.true(Date.now() - started < 10_000);
  const run = await db('automation_runs').where({ event_id: eventId }).first();
  // The workflow records the cancellation, then closes as cancelled.
  await waitUntil(async () => (await t.context.worker.client.workflow.getHandle(run.run_workflow_id).describe()).status.name === 'CANCELLED', 30_000);
  t.falsy(await db('automation_tags').where({ tag: 'late' }).first());
});
