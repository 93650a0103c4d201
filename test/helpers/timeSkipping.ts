/** Temporal's time-skipping test server with a real worker of ours on a private task queue (for timer-heavy workflows). */
import crypto from 'node:crypto';
import type { ConnectionPlugin } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Db } from '../../src/db/knex.js';
import { disableOpsLabels } from '../../src/temporal/labelledStart.js';
import { createWorker, type WorkerDeps } from '../../src/entry/compose.js';
import { installRuntimeLogger } from '../../src/temporal/worker.js';
import { testWorkerDeps } from './service.js';

export interface TimeSkippingWorker {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  stop: () => Promise<void>;
}

/**
 * The client's keep-alive pings every 5 minutes instead of 30 s: the Java test server (grpc-java) permits one ping per
 * 5 minutes and answers more with GOAWAY "too_many_pings", which cut a person's decision (an Update awaited for
 * minutes while a killed worker's activity times out) in the crash tests.
 */
const rarePings: ConnectionPlugin = {
  name: 'test-rare-keepalive-pings',
  configureConnection: (options) => ({ ...options, channelArgs: { ...options.channelArgs, 'grpc.keepalive_time_ms': 300_000 } }),
};

/** The run's time-skipping test server binary, started for one test file (its workers may live in other processes). */
export async function startTimeSkippingServer(): Promise<TestWorkflowEnvironment> {
  installRuntimeLogger(); // before the test environment creates the SDK runtime
  // The time-skipping server accepts the Ops search attributes but loses a workflow started with them (O13): every
  // file on this server starts its workflows unlabelled, also those whose workers run in other processes.
  disableOpsLabels();
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: process.env.TEMPORAL_TEST_SERVER! } },
    plugins: [rarePings],
  });
}

export async function startTimeSkippingWorker(db: Db, options: { queuePrefix: string; webhooks?: WorkerDeps['webhooks'] }): Promise<TimeSkippingWorker> {
  const env = await startTimeSkippingServer();
  const taskQueue = `${options.queuePrefix}-${crypto.randomBytes(4).toString('hex')}`;
  const deps = testWorkerDeps({ db, temporalAddress: env.address, namespace: env.namespace ?? 'default', taskQueue, ...(options.webhooks ? { webhooks: options.webhooks } : {}) });
  // The time-skipping server knows no custom search attributes: delivery workflows start without them here.
  const { worker, connection } = await createWorker({ ...deps, webhooks: { ...deps.webhooks, searchAttributes: false } });
  const running = worker.run();
  return {
    env,
    taskQueue,
    stop: async () => {
      worker.shutdown();
      await running;
      await connection.close();
      await env.teardown();
    },
  };
}
