/**
 * A worker process for the crash and scale-out tests: the service's worker on TEST_TASK_QUEUE with the test's secrets
 * key. The test kills it with SIGKILL in the middle of a burst and starts another one. A line `report` on stdin is
 * answered with one JSON line: the deliveries this process made (its receivers' 2xx) and the dispatcher partitions it
 * serves now.
 */
import readline from 'node:readline';
import { createDb } from '../../src/db/knex.js';
import { createWorker } from '../../src/entry/compose.js';
import { webhookAttempts } from '../../src/metrics/registry.js';
import { servedPartitions } from '../../src/webhooks/partitions.js';
import { testWorkerDeps } from './service.js';
import { testSettings } from './webhooks.js';

const db = createDb(process.env.TEST_DATABASE_URL!);
const taskQueue = process.env.TEST_TASK_QUEUE!;
const { worker } = await createWorker(testWorkerDeps({
  db, temporalAddress: process.env.TEMPORAL_ADDRESS!, namespace: 'default', taskQueue,
  webhooks: testSettings({ secretsKey: Buffer.from(process.env.TEST_SECRETS_KEY!, 'hex') }),
}));
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'report') return;
  void webhookAttempts.get().then((metric) => {
    const delivered = metric.values.find((v) => v.labels.outcome === 'delivered')?.value ?? 0;
    process.stdout.write(`${JSON.stringify({ report: { delivered, partitions: servedPartitions(taskQueue) } })}\n`);
  });
});
const running = worker.run();
process.stdout.write('ready\n');
await running;
