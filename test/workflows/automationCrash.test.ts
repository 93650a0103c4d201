/**
 * A worker killed (SIGKILL) in the middle of an automation run, on the time-skipping test server: another worker takes
 * the run over after the two-day wait, and no step is executed twice (each step activity is scheduled exactly once).
 */
import anyTest, { type TestFn } from 'ava';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { createDraft, publishAutomation, setAutomationEnabled } from '../../src/automations/drafts.js';
import { matchOutboxBatch, startPendingRuns } from '../../src/automations/runs.js';
import { automationRunWorkflowsClient } from '../../src/temporal/automations.js';
import { orderEvent, personActor, sampleRule } from '../helpers/automations.js';
import { waitUntil } from '../helpers/wait.js';
import { startWorkerProcess as startWorker, crashTestFile, type CrashTestContext } from '../helpers/workerProcess.js';

type Context = CrashTestContext;
const test = anyTest as TestFn<Context>;
crashTestFile(test);

function startWorkerProcess(t: { context: Context }, taskQueue: string): Promise<ChildProcess> {
  return startWorker('automationWorkerProcess', { TEST_DB_URL: t.context.database.url, TEMPORAL_ADDRESS: t.context.env.address, TEST_TASK_QUEUE: taskQueue, LOG_LEVEL: 'warn' }, t.context.children);
}

test('When the worker is killed while a run waits, then another worker finishes it and no step runs twice', async (t) => {
  t.timeout(180_000);
  const { db } = t.context.database;
  const taskQueue = `test-automation-crash-${crypto.randomBytes(4).toString('hex')}`;
  const actor = await personActor(db);
  const draft = await createDraft(db, actor, {
    clientRequestId: 'crash-1',
    rule: sampleRule({ steps: [
      { id: 'tag_before', action: 'add_tag', target: 'order', tag: 'before' },
      { id: 'mail', action: 'send_email', template: 'order_attention' },
      { id: 'wait', action: 'wait', duration: '2d' },
      { id: 'tag_after', action: 'add_tag', target: 'order', tag: 'after' },
    ] }),
  });
  await publishAutomation(db, actor, draft.workflow_id);
  await setAutomationEnabled(db, actor, draft.workflow_id, true);
  const { eventId } = await orderEvent(db, 'order.created');

  const first = await startWorkerProcess(t, taskQueue);
  await matchOutboxBatch(db);
  await startPendingRuns(db, automationRunWorkflowsClient(t.context.env.client, taskQueue));
  const run = await db('automation_runs').where({ event_id: eventId }).first();
  await waitUntil(async () => (await db('automation_runs').where({ id: run.id }).first()).status === 'waiting', 60_000);
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));

  await startWorkerProcess(t, taskQueue);
  const handle = t.context.env.client.workflow.getHandle(run.run_workflow_id);
  t.is(await handle.result(), 'completed');

  const steps = await db('automation_run_steps').where({ run_id: run.id }).orderBy('position').select('node_id', 'status');
  t.deepEqual(steps.map((s) => [s.node_id, s.status]), [['tag_before', 'done'], ['mail', 'done'], ['wait', 'done'], ['tag_after', 'done']]);
  t.is((await db('automation_tags').where({ run_id: run.id })).length, 2);
  t.is((await db('email_outbox').where({ dedupe_key: `automation:${run.id}:mail` })).length, 1);
  const history = await handle.fetchHistory();
  const executed = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeAutomationStep');
  t.is(executed.length, 3, 'each of the three non-wait steps was scheduled once, none repeated after the crash');
});
