/**
 * A worker of the service in a process of its own, so the automation crash test can kill it (SIGKILL) in the middle of
 * a run. Env: TEST_DB_URL, TEMPORAL_ADDRESS, TEST_TASK_QUEUE. Without a workflow cache (no sticky queue): on the
 * time-skipping server a task left on a dead worker's sticky queue would wait for a time-out in frozen time.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import { createDb } from '../../src/db/knex.js';
import { testParts, testWorkflowSource } from './service.js';

Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
const db = createDb(process.env.TEST_DB_URL!);
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const worker = await Worker.create({
  connection, namespace: 'default', taskQueue: process.env.TEST_TASK_QUEUE!, ...testWorkflowSource(), maxCachedWorkflows: 0, activities: createActivities({ db, ...testParts(db) }),
});
const running = worker.run();
process.stdout.write('ready\n');
await running;
