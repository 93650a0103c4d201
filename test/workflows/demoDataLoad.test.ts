/** The demo data load runs as a Temporal workflow on a real Temporal server, with a readable ID, and is idempotent. */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { createDb, migrateLatest, type Db } from '../../src/db/knex.js';
import { runDemoDataWorkflow, databaseIsEmpty } from '../../src/platforms/registry.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import { workflowIds } from '../../src/temporal/constants.js';
import { databaseUrl } from '../helpers/db.js';
import { TEST_NOW, TEST_SEED } from '../helpers/constants.js';
import { createTestDatabase } from '../helpers/db.js';
import { ownedDataFingerprint } from '../helpers/ownedDataFingerprint.js';

interface Context { db: Db; name: string }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  // An empty database of its own: this test loads the demo data itself, as npm start does.
  const name = `svc_wf_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const db = createDb(databaseUrl(process.env.TEST_PG_ADMIN_URL!, name));
  await migrateLatest(db);
  t.context = { db, name };
});

test.after.always(async (t) => {
  await t.context.db?.destroy();
  const admin = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${t.context.name} with (force)`);
  await admin.end();
});

test('When the demo data workflow runs on an empty database, then it loads every shop under the ID demo-data-load-demo, and a second run changes nothing', async (t) => {
  const { db } = t.context;
  const address = process.env.TEMPORAL_ADDRESS!;
  const taskQueue = `test-demo-${crypto.randomBytes(4).toString('hex')}`;
  t.true(await databaseIsEmpty(db));
  const { worker, connection } = await createWorker(testWorkerDeps({ db, temporalAddress: address, namespace: 'default', taskQueue }));
  const running = worker.run();
  const clientConnection = await Connection.connect({ address });
  const client = new Client({ connection: clientConnection, namespace: 'default' });
  try {
    const first = await runDemoDataWorkflow(client, { seed: TEST_SEED, endDate: TEST_NOW, taskQueue }) as { accountCode: string; shopCode: string; counts: { orders: number } }[];
    t.deepEqual(first.map((r) => `${r.accountCode}/${r.shopCode}`).sort(), ['acme/cz', 'acme/sk', 'demo/cz', 'demo/hu', 'demo/pl', 'demo/sk']);
    t.false(await databaseIsEmpty(db));
    const orders = Number((await db('orders').count<{ count: string }[]>('* as count').first())!.count);
    t.is(orders, first.reduce((sum, r) => sum + r.counts.orders, 0));
    t.true(orders > 10_000, `a few thousand orders per demo shop (${orders})`);
    // The planner's statistics were refreshed after the bulk load (ANALYZE counts every row of a table this small).
    const stats = await db.raw(`select reltuples from pg_class where relname = 'orders' and relkind = 'r'`);
    t.is(Number(stats.rows[0].reltuples), orders, 'orders were analyzed after the load');

    // The workflow is visible under its business ID.
    const description = await client.workflow.getHandle(workflowIds.demoDataLoad('demo')).describe();
    t.is(description.status.name, 'COMPLETED');
    t.is(description.type, 'loadDemoDataWorkflow');

    // Loading again (e.g. a retried activity or a second start) adds nothing.
    await runDemoDataWorkflow(client, { seed: TEST_SEED, endDate: TEST_NOW, taskQueue });
    t.is(Number((await db('orders').count<{ count: string }[]>('* as count').first())!.count), orders);

    // The service-owned demo data (affiliate, chatbot, suppliers) of shops loaded in parallel equals that of the
    // template, whose shops were loaded one after another: it depends on the seed and the clock only.
    const template = await createTestDatabase();
    try {
      const loaded = await ownedDataFingerprint(db);
      for (const [table, value] of Object.entries(loaded)) t.not(value.split(':')[0], '0', `${table} has rows`);
      t.deepEqual(loaded, await ownedDataFingerprint(template.db));
    } finally {
      await template.drop();
    }
  } finally {
    await clientConnection.close();
    worker.shutdown();
    await running;
    await connection.close();
  }
});
