/** The automation pieces on Temporal: the consumer that every worker ensures, and how it starts and cancels run workflows. */
import { Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { RunWorkflows } from '../automations/runs.js';
import type { AutomationRunInput } from '../../workflows/automationRun.js';
import { TASK_QUEUE } from './constants.js';
import { startLabelled } from './labelledStart.js';

/** The automation consumer of one task queue, e.g. `automation-consumer-store-ops` (one runs per queue). */
export const automationConsumerWorkflowId = (taskQueue: string) => `automation-consumer-${taskQueue}`;

/** Starts the automation consumer of `taskQueue` unless it runs; safe to call from every process at every start. */
export async function ensureAutomationWorkflows(client: Client, taskQueue: string = TASK_QUEUE): Promise<void> {
  await client.workflow.start('automationConsumerWorkflow', {
    taskQueue, workflowId: automationConsumerWorkflowId(taskQueue), args: [], workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/** Starts and cancels run workflows on `taskQueue` (the consumer's reach into Temporal). */
export function automationRunWorkflowsClient(client: Client, taskQueue: string): RunWorkflows {
  return {
    async start(run) {
      try {
        const args: [AutomationRunInput] = [{ runId: run.runId }];
        // REJECT_DUPLICATE: a run whose workflow already ran (and closed) is never run again.
        const labels = run.labels ? { account: run.labels.account, shop: run.labels.shop, kind: 'automation-run', key: run.labels.automation } : null;
        await startLabelled(labels, (typedSearchAttributes) => client.workflow.start('automationRunWorkflow', {
          taskQueue, workflowId: run.runWorkflowId, args, workflowIdReusePolicy: 'REJECT_DUPLICATE', ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
        }));
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
    async cancel(run) {
      try {
        const handle = client.workflow.getHandle(run.runWorkflowId);
        const { status } = await handle.describe();
        if (status.name !== 'RUNNING') return 'not_found';
        await handle.cancel();
        return 'requested';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'not_found';
        throw error;
      }
    },
  };
}
