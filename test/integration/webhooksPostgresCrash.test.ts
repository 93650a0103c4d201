/**
 * "Nothing lost, nothing logged twice" when Postgres itself goes away: a Postgres server of this file's own (embedded,
 * so the shared one of the run keeps serving every other file) is stopped in the middle of a burst and started again
 * on the same data and port. The worker, which keeps running, recovers by itself: every delivery ends SENT with exactly
 * one successful attempt in the log and the receiver has seen every event_id.
 */
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import { createDb, migrateLatest, type Db } from '../../src/db/knex.js';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/infra/embeddedPostgres.js';
import { findFreePort } from '../../src/infra/ports.js';
import { workflowIds } from '../../src/temporal/constants.js';
import { ensureWebhookWorkflows } from '../../src/temporal/webhooks.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { assertDeliveredOnceAfterCrash, emitOrderEvents, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context { dir: string; cleanups: Array<() => Promise<void>> }
const test = anyTest as TestFn<Context>;

test.before((t) => {
  t.context = { dir: mkdtempSync(path.join(tmpdir(), 'store-ops-pg-crash-')), cleanups: [] };
});

test.after.always(async (t) => {
  for (const cleanup of (t.context.cleanups ?? []).reverse()) await cleanup().catch(() => {});
  if (t.context.dir) rmSync(t.context.dir, { recursive: true, force: true });
});

/** The schema and the one account and shop the events need (the demo data is not needed here). */
async function prepare(db: Db): Promise<void> {
  await migrateLatest(db);
  const [account] = await db('accounts').insert({ code: 'demo', name: 'Crash test', plan_code: 'custom', time_zone: 'Europe/Bratislava' }).returning('id');
  await db('shops').insert({ account_id: account.id, code: 'sk', name: 'Crash SK', platform: 'demo', currency: 'EUR', country: 'SK', language: 'sk', time_zone: 'Europe/Bratislava', base_url: 'https://crash.example' });
  await isolateWebhooks(db);
}

test('When Postgres is stopped in the middle of a burst and comes back, then every delivery is SENT exactly once in the log and every event reached the receiver, without restarting the worker', async (t) => {
  t.timeout(180_000);
  const options = { dataDir: path.join(t.context.dir, 'pg'), port: await findFreePort(), database: 'crash' };
  let postgres: RunningPostgres = await startEmbeddedPostgres(options);
  t.context.cleanups.push(() => postgres.stop());
  const db = createDb(postgres.url);
  t.context.cleanups.push(() => db.destroy());
  await prepare(db);

  const settings = testSettings();
  const receiver: Receiver = await startReceiver({ reply: () => ({ status: 200, delayMs: 500 }) });
  t.context.cleanups.push(() => receiver.close());
  receiver.secret = (await makeEndpoint(db, settings, { url: receiver.url, events: ['order.created'], shops: ['sk'] })).secret;

  const taskQueue = `test-pg-crash-${crypto.randomBytes(4).toString('hex')}`;
  const address = process.env.TEMPORAL_ADDRESS!;
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db, temporalAddress: address, namespace: 'default', taskQueue, webhooks: settings }));
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  t.context.cleanups.push(async () => {
    await client.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
    await connection.close();
    worker.shutdown();
    await running;
    await workerConnection.close();
  });
  await ensureWebhookWorkflows(client, taskQueue, { retentionSchedule: false });

  const events = 150;
  const eventIds = await emitOrderEvents(db, events, { prefix: 'P' });
  await receiver.waitFor((requests) => requests.length >= 30, 60_000);
  await postgres.stop();
  const seenAtStop = receiver.requests.length;
  t.true(seenAtStop < events, `stopped in the middle (${seenAtStop} of ${events} received)`);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const seenWhileDown = receiver.requests.length - seenAtStop;
  postgres = await startEmbeddedPostgres(options);

  const redelivered = await assertDeliveredOnceAfterCrash(t, db, eventIds, [receiver]);
  t.log(`received at the stop: ${seenAtStop}; while Postgres was down: ${seenWhileDown}; redelivered after it (de-duplicated by event_id): ${redelivered}`);
});
