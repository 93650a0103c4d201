/**
 * A worker killed (SIGKILL) in the middle of a payout run (issue 24 point 5), on the time-skipping test server: the
 * first shop's drafts are committed, the second shop's draw-up is inside its transaction (held at the commissions'
 * row lock by the test) when the worker dies. Another worker finishes the run: every partner and currency of the month
 * has exactly one payout, each holds exactly the commissions that were due, and none is in two payouts.
 */
import anyTest, { type TestFn } from 'ava';
import crypto from 'node:crypto';
import { dueGroups } from '../helpers/oracles.js';
import { waitUntil } from '../helpers/wait.js';
import { startWorkerProcess, crashTestFile, type CrashTestContext } from '../helpers/workerProcess.js';

type Context = CrashTestContext;
const test = anyTest as TestFn<Context>;
crashTestFile(test);

test('When the worker is killed while a payout run is inside a shop\'s draw-up, then another worker finishes it and no payout or commission is there twice', async (t) => {
  t.timeout(180_000);
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const accountId = String(account.id);
  const expected = await dueGroups(db, accountId);
  const shopsWithPayouts = [...new Set([...expected.keys()].map((k) => k.split('/')[0]!))].sort((a, b) => Number(a) - Number(b));
  t.true(shopsWithPayouts.length >= 2, 'the demo month has payouts in two shops at least');
  const programmeShops = (await db('shops as s').join('affiliate_programmes as p', 'p.account_id', 's.account_id').where('s.account_id', accountId).orderBy('s.id').pluck('s.id')).map(String);
  // The run goes shop by shop in id order: hold the second shop that has payouts, so at least one before it commits.
  const heldShop = shopsWithPayouts[1]!;
  const before = programmeShops.slice(0, programmeShops.indexOf(heldShop));

  const taskQueue = `test-payout-crash-${crypto.randomBytes(4).toString('hex')}`;
  const env = { TEST_DB_URL: t.context.database.url, TEMPORAL_ADDRESS: t.context.env.address, TEST_TASK_QUEUE: taskQueue, LOG_LEVEL: 'warn' };
  const first = await startWorkerProcess('automationWorkerProcess', env, t.context.children);

  // The test's own transaction locks one commission the held shop's draw-up must lock too.
  const lock = await db.transaction();
  try {
    await lock.raw(`select id from affiliate_conversions where id = ? for update`, [expected.get([...expected.keys()].find((k) => k.startsWith(`${heldShop}/`))!)![0]]);
    const handle = await t.context.env.client.workflow.start('affiliatePayoutRunWorkflow', {
      taskQueue, workflowId: `affiliate-payouts-demo-2026-11-crash-${crypto.randomBytes(3).toString('hex')}`, args: [{ accountId, period: '2026-11', drawnUpBy: 'test' }],
    });
    // Positive signals: the shops before it are drawn up (committed) and the held draw-up waits for the test's lock.
    await waitUntil(async () => {
      const drafted = await db('affiliate_payouts').whereIn('shop_id', before).where({ period_to: '2026-11-30' }).count({ n: '*' }).first();
      const expectedBefore = [...expected.keys()].filter((k) => before.includes(k.split('/')[0]!)).length;
      const waiting = await db.raw(`select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid where not l.granted and a.datname = current_database()`);
      return Number(drafted!.n) === expectedBefore && waiting.rows[0].n > 0;
    }, 60_000);
    t.is(await db('affiliate_payouts').where({ shop_id: heldShop, period_to: '2026-11-30' }).count({ n: '*' }).first().then((r) => Number(r!.n)), 0, 'the held shop has nothing committed');
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await lock.rollback();

    await startWorkerProcess('automationWorkerProcess', env, t.context.children);
    // The dead worker's activity is given up after its 10 s heartbeat time-out (real time on this server), not after
    // the 2-minute start-to-close.
    const results = await handle.result() as Array<{ shopId: string; created: Array<{ payoutId: string }> }>;
    t.deepEqual(results.map((r) => r.shopId), programmeShops, 'every shop once in the run\'s result');

    const payouts = await db('affiliate_payouts').where({ account_id: accountId, period_to: '2026-11-30' }).whereNot({ state: 'cancelled' }).select('id', 'shop_id', 'partner_id', 'currency');
    t.deepEqual(payouts.map((p) => `${p.shop_id}/${p.partner_id}/${p.currency}`).sort(), [...expected.keys()].sort(), 'one payout per shop, partner and currency due');
    for (const p of payouts) {
      const taken = (await db('affiliate_conversions').where({ payout_id: p.id }).orderBy('id').pluck('id')).map(String);
      t.deepEqual(taken, expected.get(`${p.shop_id}/${p.partner_id}/${p.currency}`), `payout ${p.id} holds exactly its commissions`);
    }
    const history = await handle.fetchHistory();
    const drawUps = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'affiliateDrawUpShopPayouts');
    t.is(drawUps.length, programmeShops.length, 'each shop\'s draw-up was scheduled once; the interrupted one was retried as the same activity');
    const retried = (history.events ?? []).filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
    t.is(retried.length, 1, 'one draw-up was tried again (its attempt 2 finished the run)');
  } finally {
    if (!lock.isCompleted()) await lock.rollback();
  }
});
