/**
 * A worker killed (SIGKILL) in the middle of a sync batch: the open transaction rolls back, the activity is retried
 * on another worker, resumes after the last committed batch, and the end state — rows and events — is exactly the
 * state of an uninterrupted sync of the same window.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import type { Db } from '../../src/db/knex.js';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import { SYNC_AREAS } from '../../src/platforms/types.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import type { ShopSyncResult } from '../../workflows/shopSync.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_NOW } from '../helpers/constants.js';
import { startWorkerProcess as startWorker } from '../helpers/workerProcess.js';

interface Context { reference: TestDatabase; crashed: TestDatabase }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context = { reference: await createTestDatabase(), crashed: await createTestDatabase() };
});
test.after.always(async (t) => {
  await t.context.reference?.drop();
  await t.context.crashed?.drop();
});

const UNTIL = new Date(TEST_NOW.getTime() + 36 * 3_600_000);
const BATCH = 5;

/** Everything the sync writes for a shop, in a comparable form (ids and event ids aside). */
async function snapshot(db: Db, shopId: string) {
  const events = await db('outbox_events').where({ shop_id: shopId }).select('event_type', 'resource_id', 'occurred_at', 'data');
  const tables: Record<string, number> = {};
  for (const table of ['orders', 'shipments', 'documents', 'claims', 'stock_items', 'stock_movements', 'search_console_sync_runs']) {
    tables[table] = Number((await db(table).where({ shop_id: shopId }).count<{ count: string }[]>('* as count'))[0].count);
  }
  const tracking = await db('shipment_tracking_events as e').join('shipments as s', 's.id', 'e.shipment_id').where('s.shop_id', shopId).count<{ count: string }[]>('* as count');
  return {
    // Shipment ids come from a sequence, which a rolled-back transaction advances too: compare by tracking number.
    events: events.map((e) => {
      const { shipment_id: _id, ...data } = e.data;
      return JSON.stringify([e.event_type, e.occurred_at.toISOString(), data]);
    }).sort(),
    tables: { ...tables, tracking: Number(tracking[0].count) },
    orders: await db('orders').where({ shop_id: shopId }).orderBy('code').select('code', 'status_id', 'status_changed_at', 'paid', 'paid_at', 'updated_at'),
    stock: await db('stock_items').where({ shop_id: shopId }).orderBy('code').select('code', 'quantity', 'physical', 'reserved', 'updated_at'),
    checkpoints: await db('sync_checkpoints').where({ shop_id: shopId }).orderBy('area').select('area', 'through', 'run_until', 'run_position'),
  };
}

function startWorkerProcess(dbUrl: string, taskQueue: string): Promise<ChildProcess> {
  return startWorker('syncWorkerProcess', { TEST_DB_URL: dbUrl, TEST_TASK_QUEUE: taskQueue, TEST_COMMIT_DELAY_MS: '3000' });
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('When the worker is killed in the middle of a batch, then the retried sync loses nothing and applies nothing twice', async (t) => {
  t.timeout(180_000);
  const address = process.env.TEMPORAL_ADDRESS!;

  // The reference: the same window synced without interruption.
  const ref = t.context.reference.db;
  const refShop = (await findSyncShop(ref, 'demo', 'cz'))!;
  const platform = new DemoPlatform({ db: ref });
  for (const area of SYNC_AREAS) await syncArea(ref, platform, refShop, area, UNTIL, { batchSize: BATCH });
  const expected = await snapshot(ref, refShop.id);
  t.true(expected.events.length > 50, `the window has plenty of changes (${expected.events.length})`);

  const { db, url } = t.context.crashed;
  const shop = (await findSyncShop(db, 'demo', 'cz'))!;
  const taskQueue = `test-sync-crash-${crypto.randomBytes(4).toString('hex')}`;
  const child = await startWorkerProcess(url, taskQueue);
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  try {
    const handle = await client.workflow.start('shopSyncWorkflow', {
      taskQueue, workflowId: `sync-demo-cz-crash-${crypto.randomBytes(4).toString('hex')}`,
      args: [{ accountCode: 'demo', shopCode: 'cz', until: UNTIL.toISOString(), batchSize: BATCH, heartbeatTimeout: '3 seconds' }],
    });

    // Wait until some batches are committed and the next one is open, with its writes done but not committed.
    const database = new URL(url).pathname.slice(1);
    const inFlight = await waitFor('a batch in flight', async () => {
      const committed = await db('sync_checkpoints').where({ shop_id: shop.id, area: 'orders' }).whereNotNull('run_position').first();
      if (!committed) return null;
      const open = await db.raw(
        `select pid from pg_stat_activity where datname = ? and backend_xid is not null and state = 'idle in transaction' and pid <> pg_backend_pid()`, [database],
      );
      return open.rows.length ? { pid: open.rows[0].pid as number } : null;
    });
    // The batch sleeps 3 s before its commit: time enough to note what is committed and kill the worker.
    const committed = async () => ({
      checkpoints: await db('sync_checkpoints').where({ shop_id: shop.id }).orderBy('area').select('area', 'through', 'run_until', 'run_position'),
      events: (await db('outbox_events').where({ shop_id: shop.id }).count<{ count: string }[]>('* as count'))[0].count,
    });
    const before = await committed();
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    await waitFor('the killed backend to go', async () => (await db.raw('select 1 from pg_stat_activity where pid = ?', [inFlight.pid])).rows.length === 0);
    t.deepEqual(await committed(), before, 'the batch in flight was rolled back as a whole');
    const after = await snapshot(db, shop.id);
    t.true(after.events.length < expected.events.length, 'the kill happened before the sync was done');

    // A new worker takes over; the activity is retried after its heartbeat times out and resumes after the last commit.
    const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db, temporalAddress: address, namespace: 'default', taskQueue }));
    const running = worker.run();
    try {
      const result = (await handle.result()) as ShopSyncResult;
      t.true(result.areas.some((a) => a.resumed), 'an area resumed from its last committed batch');
    } finally {
      worker.shutdown();
      await running;
      await workerConnection.close();
    }
    const final = await snapshot(db, shop.id);
    t.deepEqual(final.events, expected.events, 'every change announced exactly once');
    t.deepEqual(final.tables, expected.tables);
    t.deepEqual(final.orders, expected.orders);
    t.deepEqual(final.stock, expected.stock);
    t.deepEqual(final.checkpoints, expected.checkpoints);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await connection.close();
  }
});
