/**
 * A worker process for the crash test: the service's worker on TEST_TASK_QUEUE with the test's secrets key. The test
 * kills it with SIGKILL in the middle of a burst and starts another one.
 */
import { createDb } from '../../src/db/knex.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from './service.js';
import { testSettings } from './webhooks.js';

const db = createDb(process.env.TEST_DATABASE_URL!);
const { worker } = await createWorker(testWorkerDeps({
  db, temporalAddress: process.env.TEMPORAL_ADDRESS!, namespace: 'default', taskQueue: process.env.TEST_TASK_QUEUE!,
  webhooks: testSettings({ secretsKey: Buffer.from(process.env.TEST_SECRETS_KEY!, 'hex') }),
}));
const running = worker.run();
process.stdout.write('ready\n');
await running;
