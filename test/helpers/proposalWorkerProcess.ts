/**
 * A worker of the service in a process of its own, so the proposal crash test can kill it (SIGKILL) in the middle of a
 * write. Env: TEST_DB_URL, TEMPORAL_ADDRESS, TEST_TASK_QUEUE, and TEST_HANG_AFTER_WRITE_POSITION: after the shop took the
 * write of the item at that position (and before its result is stored) it prints `midwrite` and hangs there.
 * Without a workflow cache, as the automation crash test's worker (a dead worker's sticky queue would stall frozen time).
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import { createDb } from '../../src/db/knex.js';
import { testParts, testWorkflowSource } from './service.js';

Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
const db = createDb(process.env.TEST_DB_URL!);
const hangAt = process.env.TEST_HANG_AFTER_WRITE_POSITION;
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const worker = await Worker.create({
  connection, namespace: 'default', taskQueue: process.env.TEST_TASK_QUEUE!, ...testWorkflowSource(), maxCachedWorkflows: 0,
  activities: createActivities({
    db,
    ...testParts(db),
    afterProposalShopWrite: async (itemId) => {
      if (hangAt === undefined) return;
      const item = await db('proposal_items').where({ id: itemId }).first('position');
      if (String(item.position) !== hangAt) return;
      process.stdout.write('midwrite\n');
      await new Promise(() => undefined);
    },
  }),
});
const running = worker.run();
process.stdout.write('ready\n');
await running;
