/**
 * The service's Temporal worker inside the test process, on a task queue of its own, with a client to the same server:
 * the set-up and tear-down that the files exercising workflows end to end (application pages, automations, proposals,
 * texts) share. `stop()` ends the long-running workflows the file asked for, then the worker, then both connections.
 */
import crypto from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { Db } from '../../src/db/knex.js';
import { createWorker, type WorkerDeps } from '../../src/entry/compose.js';
import { workflowIds } from '../../src/temporal/constants.js';
import { automationConsumerWorkflowId, ensureAutomationWorkflows } from '../../src/temporal/automations.js';
import { ensureWebhookWorkflows } from '../../src/temporal/webhooks.js';
import { testWorkerDeps } from './service.js';

export interface InProcessWorker {
  worker: Worker;
  /** The worker's run; it settles after `stop()`. */
  running: Promise<void>;
  /** A client of the test's Temporal server (a connection of its own, not the worker's). */
  client: Client;
  connection: Connection;
  taskQueue: string;
  stop(): Promise<void>;
}

export interface InProcessWorkerOptions extends Partial<Omit<WorkerDeps, 'db' | 'temporalAddress' | 'taskQueue'>> {
  /** Names the task queue (`<prefix>-<random>`) so a workflow in the Temporal UI tells which file started it. */
  prefix: string;
  /** Start the webhook dispatchers (first attempts of deliveries) on this task queue. */
  webhookWorkflows?: boolean;
  /** Start the automation consumer on this task queue. */
  automationWorkflows?: boolean;
}

/** Starts the worker on `TEMPORAL_ADDRESS` (set by the run's global set-up) and the workflows the options ask for. */
export async function startInProcessWorker(db: Db, options: InProcessWorkerOptions): Promise<InProcessWorker> {
  const { prefix, webhookWorkflows = false, automationWorkflows = false, ...deps } = options;
  const taskQueue = `${prefix}-${crypto.randomBytes(4).toString('hex')}`;
  const address = process.env.TEMPORAL_ADDRESS!;
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ ...deps, db, temporalAddress: address, namespace: 'default', taskQueue }));
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  if (webhookWorkflows) await ensureWebhookWorkflows(client, taskQueue, { retentionSchedule: false });
  if (automationWorkflows) await ensureAutomationWorkflows(client, taskQueue);
  return {
    worker, running, client, connection, taskQueue,
    async stop() {
      // Long-running workflows would otherwise wait on the shared server for a worker that never comes back.
      if (webhookWorkflows) await client.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
      if (automationWorkflows) await client.workflow.getHandle(automationConsumerWorkflowId(taskQueue)).terminate().catch(() => {});
      worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
    },
  };
}
