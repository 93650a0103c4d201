/** The sync Schedules follow the shops: one per live shop with a readable ID and overlap SKIP, gone when the shop is. */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { reconcileSyncSchedules } from '../../src/sync/schedules.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import type { ShopSyncResult } from '../../workflows/shopSync.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_NOW } from '../helpers/constants.js';

interface Context { database: TestDatabase; connection: Connection; client: Client; taskQueue: string; accounts: string[] }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  // Account codes of their own: Schedule IDs are business IDs and the Temporal server is shared by parallel test files.
  const suffix = crypto.randomBytes(3).toString('hex');
  const accounts = [`demo${suffix}`, `acme${suffix}`];
  await database.db('accounts').where({ code: 'demo' }).update({ code: accounts[0] });
  await database.db('accounts').where({ code: 'acme' }).update({ code: accounts[1] });
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  t.context = { database, connection, client: new Client({ connection, namespace: 'default' }), taskQueue: `test-sync-schedules-${suffix}`, accounts };
});

test.after.always(async (t) => {
  const { client, taskQueue } = t.context;
  if (client) {
    for await (const s of client.schedule.list()) {
      if ((s.memo as { taskQueue?: string } | undefined)?.taskQueue === taskQueue) await client.schedule.getHandle(s.scheduleId).delete().catch(() => undefined);
    }
  }
  await t.context.connection?.close();
  await t.context.database?.drop();
});

test('When schedules are reconciled, then every live shop has one Schedule sync-<account>-<shop> with overlap SKIP, and a removed shop loses its own', async (t) => {
  t.timeout(120_000);
  const { database: { db }, client, taskQueue, accounts: [demo, acme] } = t.context;
  const intervalMs = 3_600_000;
  const first = await reconcileSyncSchedules(client, db, { taskQueue, intervalMs });
  const ids = [`sync-${acme}-cz`, `sync-${acme}-sk`, `sync-${demo}-cz`, `sync-${demo}-hu`, `sync-${demo}-pl`, `sync-${demo}-sk`];
  t.deepEqual([...first.created].sort(), ids);

  for (const id of ids) {
    const d = await client.schedule.getHandle(id).describe();
    t.is(d.policies.overlap, 'SKIP');
    // P20: after an outage one run catches up within a minute; missed runs are not replayed.
    t.is(d.policies.catchupWindow, 60_000);
    t.is(d.spec.intervals?.[0]?.every, intervalMs);
    t.is(d.action.workflowType, 'shopSyncWorkflow');
    t.is(d.action.taskQueue, taskQueue);
    t.is(d.action.workflowId, id);
  }

  // Reconciling again changes nothing.
  const second = await reconcileSyncSchedules(client, db, { taskQueue, intervalMs });
  t.deepEqual([...second.kept].sort(), ids);
  t.deepEqual(second.created, []);

  // A scheduled run really syncs the shop: trigger it and wait for its workflow.
  const { worker, connection } = await createWorker(testWorkerDeps({ db, temporalAddress: process.env.TEMPORAL_ADDRESS!, namespace: 'default', taskQueue }));
  const running = worker.run();
  try {
    const handle = client.schedule.getHandle(`sync-${demo}-pl`);
    await handle.trigger();
    let workflowId: string | undefined;
    for (let i = 0; i < 200 && !workflowId; i++) {
      workflowId = (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId;
      if (!workflowId) await new Promise((r) => setTimeout(r, 100));
    }
    t.truthy(workflowId);
    t.true(workflowId!.startsWith(`sync-${demo}-pl`));
    const result = (await client.workflow.getHandle(workflowId!).result()) as ShopSyncResult;
    t.is(result.skipped, null);
    t.true(Date.parse(result.until!) > TEST_NOW.getTime());
    t.true(result.areas.find((a) => a.area === 'orders')!.events > 0, 'the run synced the changes since the history');
    const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': demo, 's.code': 'pl' }).first('s.last_synced_at');
    t.is(shop.last_synced_at.toISOString(), result.until);

    // The reconciliation workflow (what the Schedule shop-sync-reconcile runs) uses the worker's own client and task queue.
    const reconciled = await client.workflow.execute('reconcileSyncSchedulesWorkflow', {
      taskQueue, workflowId: `test-reconcile-${crypto.randomBytes(4).toString('hex')}`, args: [{ intervalMs }],
    }) as { kept: string[]; created: string[] };
    t.deepEqual([...reconciled.kept].sort(), ids);
    t.deepEqual(reconciled.created, []);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }

  // A removed shop loses its Schedule; the others keep theirs.
  const removed = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': acme, 's.code': 'cz' }).first('s.id');
  await db('shops').where({ id: removed.id }).update({ removed_at: new Date() });
  let third = await reconcileSyncSchedules(client, db, { taskQueue, intervalMs });
  // Listing Schedules is eventually consistent: a fresh Schedule may need a moment to be listed.
  for (let i = 0; i < 50 && !third.deleted.length; i++) {
    await new Promise((r) => setTimeout(r, 200));
    third = await reconcileSyncSchedules(client, db, { taskQueue, intervalMs });
  }
  t.deepEqual(third.deleted, [`sync-${acme}-cz`]);
  await t.throwsAsync(client.schedule.getHandle(`sync-${acme}-cz`).describe(), { instanceOf: ScheduleNotFoundError });
  t.truthy(await client.schedule.getHandle(`sync-${acme}-sk`).describe());

  // A changed interval replaces the Schedules with the new one.
  const fourth = await reconcileSyncSchedules(client, db, { taskQueue, intervalMs: 60_000 });
  t.is(fourth.replaced.length, 5);
  t.is((await client.schedule.getHandle(`sync-${demo}-sk`).describe()).spec.intervals?.[0]?.every, 60_000);
});
