/**
 * The Ops search attributes (issue 29 point 5) on the shared Temporal dev server, which registers them as `npm start`'s
 * does: a proposal is found by account, shop, kind, draft id and status — its status upserted when rejected — and a
 * sync run started by its shop's Schedule by account, shop and kind, and a payout run the monthly Schedule starts by
 * account, kind and month; all by `workflow list` queries, as an operator would.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { createWorker } from '../../src/entry/compose.js';
import { createAvailabilityProposal } from '../../src/proposals/create.js';
import { findAccountByCode, findShopByCode } from '../../src/queries/shops.js';
import { decideProposal, startProposalWorkflow } from '../../src/temporal/proposals.js';
import { reconcileSyncSchedules } from '../../src/sync/schedules.js';
import { ensureAffiliatePayoutSchedule } from '../../src/temporal/affiliate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { testWorkerDeps } from '../helpers/service.js';
import { waitUntil } from '../helpers/wait.js';

interface Context { database: TestDatabase; worker: Worker; running: Promise<void>; closeWorker: () => Promise<void>; client: Client; connection: Connection; taskQueue: string; schedules: string[] }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const taskQueue = `test-ops-attributes-${crypto.randomBytes(4).toString('hex')}`;
  const address = process.env.TEMPORAL_ADDRESS!;
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db: database.db, temporalAddress: address, taskQueue }));
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  t.context = { database, worker, running, closeWorker: () => workerConnection.close(), client, connection, taskQueue, schedules: [] };
});

test.after.always(async (t) => {
  const { client, schedules, worker, running, database, connection } = t.context;
  for (const id of schedules ?? []) await client.schedule.getHandle(id).delete().catch(() => {});
  worker?.shutdown();
  await running?.catch(() => {});
  await t.context.closeWorker?.();
  await connection?.close();
  await database?.drop();
});

/** The workflow ids a visibility query finds on our task queue (visibility is eventually consistent: callers wait). */
async function listIds(t: { context: Context }, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of t.context.client.workflow.list({ query: `TaskQueue = '${t.context.taskQueue}' AND ${query}` })) ids.push(w.workflowId);
  return ids;
}

test('a proposal is listed by account, shop, kind, draft id and status, its status following the decision', async (t) => {
  const db = t.context.database.db;
  const account = await findAccountByCode(db, 'demo');
  const shop = await findShopByCode(db, account!.id, 'sk');
  const entry = await db('availabilities').where({ shop_id: shop!.id }).orderBy('position').first();
  const draftId = await createAvailabilityProposal(db, { accountId: account!.id, shop: shop!, writeMode: 'proposals', createdBy: 'key:test' },
    [{ id: entry.availability_id, name: `${entry.name} +` }], null, new Date());
  await startProposalWorkflow(db, t.context.client, draftId, t.context.taskQueue);

  const pending = `OpsAccount = 'demo' AND OpsShop = 'sk' AND OpsKind = 'proposal.availabilities' AND OpsKey = '${draftId}' AND OpsStatus = 'pending'`;
  await waitUntil(async () => (await listIds(t, pending)).length === 1);
  t.deepEqual(await listIds(t, pending), [`proposal-${draftId}`]);
  t.deepEqual(await listIds(t, `OpsShop = 'cz' AND OpsKey = '${draftId}'`), [], 'another shop does not match');

  t.is((await decideProposal(t.context.client, draftId, { approve: false, by: 'person:1', reason: 'not now' })).status, 'rejected');
  const rejected = `OpsKey = '${draftId}' AND OpsStatus = 'rejected'`;
  await waitUntil(async () => (await listIds(t, rejected)).length === 1);
  t.deepEqual(await listIds(t, rejected), [`proposal-${draftId}`]);
  await waitUntil(async () => (await listIds(t, pending)).length === 0);
});

test("a sync run started by its shop's Schedule is listed by account, shop and kind", async (t) => {
  const { client, database, taskQueue } = t.context;
  const result = await reconcileSyncSchedules(client, database.db, { taskQueue, intervalMs: 3_600_000 });
  t.context.schedules.push(...result.created);
  t.true(result.created.includes('sync-demo-sk'));
  await client.schedule.getHandle('sync-demo-sk').trigger();
  const query = `OpsAccount = 'demo' AND OpsShop = 'sk' AND OpsKind = 'sync'`;
  await waitUntil(async () => (await listIds(t, query)).length === 1);
  const [id] = await listIds(t, query);
  t.regex(id!, /^sync-demo-sk-/, 'the run the Schedule started');
  t.deepEqual(await listIds(t, `OpsShop = 'sk' AND OpsKind = 'proposal.availabilities' AND WorkflowId = '${id}'`), []);
});

test("a payout run started by the monthly Schedule is listed like a person's: by account, kind and month", async (t) => {
  const { client, database, taskQueue } = t.context;
  const { db } = database;
  // The programme moves to an account of this test alone: the run's workflow id (affiliate-payouts-<account>-<month>)
  // is then unique on the shared dev server, and the Schedule's run covers no other account.
  const code = `pay${crypto.randomBytes(3).toString('hex')}`;
  const [account] = await db('accounts').insert({ code, name: 'Payout labels', plan_code: 'trial', time_zone: 'Europe/Bratislava' }).returning('id');
  const demo = await findAccountByCode(db, 'demo');
  await db('affiliate_programmes').where({ account_id: demo!.id }).update({ account_id: account.id });

  const scheduleId = `test-payouts-${crypto.randomBytes(4).toString('hex')}`;
  await ensureAffiliatePayoutSchedule(client, taskQueue, scheduleId);
  t.context.schedules.push(scheduleId);
  // AP2-4: the Schedule fires at 05:00 UTC on the 5th of each month.
  const fires = new Date();
  let next = Date.UTC(fires.getUTCFullYear(), fires.getUTCMonth(), 5, 5, 0, 0);
  if (next <= fires.getTime()) next = Date.UTC(fires.getUTCFullYear(), fires.getUTCMonth() + 1, 5, 5, 0, 0);
  const planned = (await client.schedule.getHandle(scheduleId).describe()).info.nextActionTimes;
  t.is(planned[0]?.toISOString(), new Date(next).toISOString());
  t.is(planned[1]?.getUTCDate(), 5);
  t.is(planned[1]?.toISOString().slice(11), '05:00:00.000Z');
  await client.schedule.getHandle(scheduleId).trigger();
  // The Schedule's run drafts the month before the one it runs in.
  const now = new Date();
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const period = `${month.getUTCFullYear()}-${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
  const child = `OpsAccount = '${code}' AND OpsKind = 'affiliate-payout' AND OpsKey = '${period}'`;
  await waitUntil(async () => (await listIds(t, child)).length === 1);
  t.deepEqual(await listIds(t, child), [`affiliate-payouts-${code}-${period}`]);
  const parents = await listIds(t, `OpsKind = 'affiliate-payouts-monthly'`);
  t.is(parents.length, 1);
  t.regex(parents[0]!, new RegExp(`^${scheduleId}-`), 'the Schedule\'s run itself is labelled');
});
