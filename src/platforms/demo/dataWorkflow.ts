/** Loads the demo data through its Temporal workflow (visible in the Temporal UI as `demo-data-load-demo`). */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from '../../db/knex.js';
import { TASK_QUEUE, workflowIds } from '../../temporal/constants.js';

/** True when the database has no account yet: only then is demo data loaded. */
export async function databaseIsEmpty(db: Db): Promise<boolean> {
  const row = await db('accounts').count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0) === 0;
}

/** Starts (or joins) the demo data workflow and waits for it. */
export async function runDemoDataWorkflow(client: Client, opts: { seed: number; endDate: Date; taskQueue?: string }): Promise<unknown> {
  const workflowId = workflowIds.demoDataLoad('demo');
  try {
    const handle = await client.workflow.start('loadDemoDataWorkflow', {
      taskQueue: opts.taskQueue ?? TASK_QUEUE,
      workflowId,
      args: [{ seed: opts.seed, endDateIso: opts.endDate.toISOString() }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    return await handle.result();
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return client.workflow.getHandle(workflowId).result();
    throw error;
  }
}
