/**
 * A worker process of bench (f): the service's worker on BENCH_TASK_QUEUE over BENCH_DATABASE_URL, delivering with at
 * most BENCH_MAX_IN_FLIGHT requests under way (the per-process limit the scenario makes bind). A line `report` on stdin
 * is answered with one JSON line: the deliveries this process made and the dispatcher partitions it serves now.
 */
import readline from 'node:readline';
import { loadConfig } from '../src/config/index.js';
import { createDb } from '../src/db/knex.js';
import { createWorker, serviceParts } from '../src/entry/compose.js';
import { webhookAttempts } from '../src/metrics/registry.js';
import { loadSecrets } from '../src/secrets.js';
import { systemResolver } from '../src/webhooks/addresses.js';
import { servedPartitions } from '../src/webhooks/partitions.js';

const config = loadConfig();
const db = createDb(process.env.BENCH_DATABASE_URL!, { max: 20 });
const taskQueue = process.env.BENCH_TASK_QUEUE!;
const parts = serviceParts(config, loadSecrets(config), db);
const { worker } = await createWorker({
  db, platforms: parts.platforms, temporalAddress: process.env.TEMPORAL_ADDRESS!, namespace: 'default', taskQueue,
  webhooks: {
    secretsKey: Buffer.from(process.env.BENCH_SECRETS_KEY!, 'hex'), allowLoopback: true, retryScheduleMs: [5_000], timeoutMs: 10_000,
    resolve: systemResolver, maxInFlight: Number(process.env.BENCH_MAX_IN_FLIGHT),
  },
});
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'report') return;
  void webhookAttempts.get().then((metric) => {
    const delivered = metric.values.find((v) => v.labels.outcome === 'delivered')?.value ?? 0;
    process.stdout.write(`${JSON.stringify({ report: { delivered, partitions: servedPartitions(taskQueue) } })}\n`);
  });
});
const running = worker.run();
process.stdout.write('ready\n');
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
await running;
await db.destroy();
process.exit(0);
