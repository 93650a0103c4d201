/**
 * The affiliate workflows (issue 24 point 5) on Temporal's test server with the real worker and Postgres: a payout run
 * by its business id draws up the month's drafts, and the same month run again (a new id run, the same activity
 * repeated) adds no payout and puts no commission in two payouts; a bulk decision decides every chosen commission.
 * Killing the worker mid-run: affiliatePayoutCrash.test.ts.
 */
import anyTest, { type TestFn } from 'ava';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startTimeSkippingWorker } from '../helpers/timeSkipping.js';
import { makePerson } from '../helpers/application.js';
import { runBulkDecision, runPayoutRun } from '../../src/temporal/affiliate.js';

interface Context { database: TestDatabase; env: TestWorkflowEnvironment; taskQueue: string; stop: () => Promise<void>; accountId: string }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const { env, taskQueue, stop } = await startTimeSkippingWorker(database.db, { queuePrefix: 'test-affiliate' });
  const account = await database.db('accounts').where({ code: 'demo' }).first('id');
  t.context = { database, env, taskQueue, stop, accountId: String(account.id) };
});
test.after.always(async (t) => {
  await t.context.stop?.();
  await t.context.database?.drop();
});

test.serial('When the payout run of a month runs, then its drafts exist; run again, it adds no payout and no commission is in two payouts', async (t) => {
  const db = t.context.database.db;
  const input = { accountId: t.context.accountId, accountCode: 'demo', period: '2026-11', drawnUpBy: 'test' };
  const first = await runPayoutRun(t.context.env.client, t.context.taskQueue, input);
  t.is(first.workflowId, 'affiliate-payouts-demo-2026-11');
  const created = first.results.reduce((n, r) => n + r.created.length, 0);
  t.true(created > 0);
  const drafts = await db('affiliate_payouts').where({ account_id: t.context.accountId, state: 'requested', period_to: '2026-11-30' }).count({ n: '*' }).first();
  t.is(Number(drafts!.n), created);
  // The same business id again: the finished run's result, nothing new.
  const same = await runPayoutRun(t.context.env.client, t.context.taskQueue, input);
  t.deepEqual(same.results, first.results);
  // A different workflow (as after a lost run) repeats the activity: it finds everything taken.
  const handle = await t.context.env.client.workflow.start('affiliatePayoutRunWorkflow', { taskQueue: t.context.taskQueue, workflowId: 'affiliate-payouts-demo-2026-11-repeat', args: [input] });
  const repeat = await handle.result() as Array<{ created: unknown[] }>;
  t.is(repeat.reduce((n, r) => n + r.created.length, 0), 0);
  const twice = await db.raw(`select count(*)::int as n from (select cv.id from affiliate_conversions cv join affiliate_payouts y on y.id = cv.payout_id group by cv.id having count(*) > 1) x`);
  t.is(twice.rows[0].n, 0);
  const perMonth = await db.raw(`select count(*)::int as n from (select 1 from affiliate_payouts where state <> 'cancelled' group by shop_id, partner_id, currency, period_to having count(*) > 1) x`);
  t.is(perMonth.rows[0].n, 0);
});

test.serial('When a bulk approval runs as a workflow, then every chosen commission is approved by the person', async (t) => {
  const db = t.context.database.db;
  const person = await makePerson(db, { role: 'member', permissions: ['affiliate:manage'] });
  const ids = (await db('affiliate_conversions as cv').join('shops as s', 's.id', 'cv.shop_id').where({ 's.account_id': t.context.accountId, 'cv.state_reason': 'awaiting_manual_approval' })
    .orderBy('cv.id').limit(30).pluck('cv.id')).map(String);
  t.is(ids.length, 30, 'two chunks of the workflow');
  const { workflowId, outcome } = await runBulkDecision(t.context.env.client, t.context.taskQueue, { accountCode: 'demo', personId: person.id, conversionIds: ids, decision: 'approve', reason: '' });
  t.regex(workflowId, /^affiliate-decide-demo-/);
  t.is(outcome.decided.length, 30);
  t.deepEqual(outcome.refused, []);
  const states = new Set(await db('affiliate_conversions').whereIn('id', ids).pluck('state_reason'));
  t.deepEqual([...states], ['approved_manually']);
});
