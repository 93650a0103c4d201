/**
 * A payout draw-up that stays alive longer than its 10 s heartbeat time-out (issue 24 point 5, Q10), on the
 * time-skipping test server: the draw-up waits 12 s for a row lock the test holds. Its heartbeats on a timer keep the
 * attempt: the run finishes with every draw-up on its first attempt. Without them Temporal gives the attempt up after
 * 10 s of silence and starts attempt 2, as it should for a worker that died (affiliatePayoutCrash.test.ts).
 */
import anyTest, { type TestFn } from 'ava';
import crypto from 'node:crypto';
import { dueGroups } from '../helpers/oracles.js';
import { waitUntil } from '../helpers/wait.js';
import { startWorkerProcess, crashTestFile, type CrashTestContext } from '../helpers/workerProcess.js';

type Context = CrashTestContext;
const test = anyTest as TestFn<Context>;
crashTestFile(test);

test('When a payout draw-up waits 12 s for a row lock, more than its 10 s heartbeat time-out, then its heartbeats keep the attempt alive and no draw-up is tried twice', async (t) => {
  t.timeout(180_000);
  const { db } = t.context.database;
  const accountId = String((await db('accounts').where({ code: 'demo' }).first('id')).id);
  // The first commission of a payout the November run must draw up.
  const [group, ids] = [...(await dueGroups(db, accountId)).entries()][0]!;
  const held = { id: ids[0]!, shop_id: group.split('/')[0]! };
  t.truthy(held, 'the demo month has a commission due');

  const taskQueue = `test-payout-heartbeat-${crypto.randomBytes(4).toString('hex')}`;
  await startWorkerProcess('automationWorkerProcess', { TEST_DB_URL: t.context.database.url, TEMPORAL_ADDRESS: t.context.env.address, TEST_TASK_QUEUE: taskQueue, LOG_LEVEL: 'warn' }, t.context.children);
  const lock = await db.transaction();
  try {
    await lock.raw('select id from affiliate_conversions where id = ? for update', [held.id]);
    const handle = await t.context.env.client.workflow.start('affiliatePayoutRunWorkflow', {
      taskQueue, workflowId: `affiliate-payouts-demo-2026-11-heartbeat-${crypto.randomBytes(3).toString('hex')}`, args: [{ accountId, period: '2026-11', drawnUpBy: 'test' }],
    });
    // Positive signal: a draw-up waits for the test's lock.
    await waitUntil(async () => {
      const waiting = await db.raw('select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid where not l.granted and a.datname = current_database()');
      return waiting.rows[0].n > 0;
    }, 60_000);
    // Held on purpose past the 10 s heartbeat time-out (this server keeps real time while an activity runs).
    await new Promise((r) => setTimeout(r, 12_000));
    t.is(await db('affiliate_payouts').where({ shop_id: held.shop_id, period_to: '2026-11-30' }).count({ n: '*' }).first().then((r) => Number(r!.n)), 0, 'the held shop\'s draw-up had not committed');
    await lock.rollback();

    const results = await handle.result() as Array<{ shopId: string; created: Array<{ payoutId: string }> }>;
    t.true(results.find((r) => r.shopId === String(held.shop_id))!.created.length > 0, 'the held shop\'s payouts were drawn up');
    t.truthy((await db('affiliate_conversions').where({ id: held.id }).first('payout_id')).payout_id, 'the held commission is in a payout');
    const events = (await handle.fetchHistory()).events ?? [];
    const attempts = events.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 1);
    t.true(attempts.length > 0, 'activities ran');
    t.deepEqual(attempts.filter((a) => a > 1), [], 'every activity finished on its first attempt');
    t.is(events.filter((e) => e.activityTaskTimedOutEventAttributes).length, 0, 'none timed out');
  } finally {
    if (!lock.isCompleted()) await lock.rollback();
  }
});
