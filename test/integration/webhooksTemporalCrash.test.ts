/**
 * "Nothing lost, nothing logged twice" when the Temporal server itself crashes: a dev server of its own (its SQLite
 * file is the state that must survive) is killed with SIGKILL in the middle of a burst and started again on the same
 * file and port; the worker, which kept running, reconnects. Every delivery ends SENT with exactly one successful
 * attempt in the log and the receiver has seen every event_id. This file starts its own Temporal on purpose: crashing
 * the shared one would fail every other test of the run.
 */
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import { findFreePort } from '../../src/infra/ports.js';
import { startTemporalDevServer, type RunningTemporal } from '../../src/infra/temporalDevServer.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import { ensureWebhookWorkflows } from '../../src/temporal/webhooks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { assertDeliveredOnceAfterCrash, emitOrderEvents, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context { database: TestDatabase; dir: string; cleanups: Array<() => Promise<void>> }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  t.context = { database, dir: mkdtempSync(path.join(tmpdir(), 'store-ops-temporal-crash-')), cleanups: [] };
});

test.after.always(async (t) => {
  for (const cleanup of (t.context.cleanups ?? []).reverse()) await cleanup().catch(() => {});
  await t.context.database?.drop();
  if (t.context.dir) rmSync(t.context.dir, { recursive: true, force: true });
});

test('When the Temporal server is killed in the middle of a burst and comes back, then every delivery is SENT exactly once in the log and every event reached the receiver', async (t) => {
  t.timeout(180_000);
  const { db } = t.context.database;
  const settings = testSettings();
  // Each reply takes 500 ms (stopping a server takes a while, and deliveries go on meanwhile), so the direct path's 16 requests at once leave the burst unfinished at the crash.
  const receiver: Receiver = await startReceiver({ reply: () => ({ status: 200, delayMs: 500 }) });
  t.context.cleanups.push(() => receiver.close());
  receiver.secret = (await makeEndpoint(db, settings, { url: receiver.url, events: ['order.created'], shops: ['sk'] })).secret;

  const port = await findFreePort();
  const serverOptions = { dbFile: path.join(t.context.dir, 'temporal.db'), port, uiPort: null, namespace: 'default' };
  let temporal: RunningTemporal = await startTemporalDevServer(serverOptions);
  t.context.cleanups.push(() => temporal.stop());
  const taskQueue = `test-temporal-crash-${crypto.randomBytes(4).toString('hex')}`;
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db, temporalAddress: temporal.address, namespace: 'default', taskQueue, webhooks: settings }));
  const running = worker.run();
  t.context.cleanups.push(async () => {
    worker.shutdown();
    await running;
    await workerConnection.close();
  });
  const connection = await Connection.connect({ address: temporal.address });
  await ensureWebhookWorkflows(new Client({ connection, namespace: 'default' }), taskQueue, { retentionSchedule: false });
  await connection.close();

  const events = 150;
  const eventIds = await emitOrderEvents(db, events, { prefix: 'T' });
  await receiver.waitFor((requests) => requests.length >= 30, 60_000);
  await temporal.stop({ crash: true });
  const seenAtCrash = receiver.requests.length;
  t.true(seenAtCrash < events, `crashed in the middle (${seenAtCrash} of ${events} received)`);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  temporal = await startTemporalDevServer(serverOptions);

  const redelivered = await assertDeliveredOnceAfterCrash(t, db, eventIds, [receiver]);
  t.log(`received at the crash: ${seenAtCrash}; redelivered after it (de-duplicated by event_id): ${redelivered}`);
});
