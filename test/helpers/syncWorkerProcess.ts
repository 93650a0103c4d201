/**
 * A Temporal worker in a process of its own, so a test can kill it (SIGKILL) in the middle of a sync batch.
 * Env: TEST_DB_URL, TEMPORAL_ADDRESS, TEST_TASK_QUEUE, TEST_COMMIT_DELAY_MS (held open inside every batch transaction).
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import { createDb } from '../../src/db/knex.js';
import { testParts, testWorkflowSource } from './service.js';

Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
const db = createDb(process.env.TEST_DB_URL!);
const delayMs = Number(process.env.TEST_COMMIT_DELAY_MS ?? 0);
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const worker = await Worker.create({
  connection,
  namespace: 'default',
  taskQueue: process.env.TEST_TASK_QUEUE!,
  ...testWorkflowSource(),
  activities: createActivities({ db, ...testParts(db), beforeSyncCommit: () => new Promise((resolve) => setTimeout(resolve, delayMs)) }),
});
process.stdout.write('ready\n');
await worker.run();
