/**
 * The webhook dispatcher, ID `webhook-dispatcher-<taskQueue>`: starts one child workflow per partition of the
 * endpoints, `webhook-dispatcher-<taskQueue>-p<k>` (WS1), and keeps them running. Each partition's long-running
 * activity turns outbox events into deliveries and sends its endpoints' first attempts (heartbeating, so another
 * worker takes over after a crash); Temporal places the partitions' activities on every worker of the task queue.
 * Terminating this workflow terminates the partitions (their parent-close policy). Also the retention clean-up that
 * the `webhook-log-retention` Schedule runs.
 */
import { ApplicationFailure, continueAsNew, executeChild, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { workflowIds } from '../src/temporal/constants.js';

const { runWebhookDispatcher } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  // A killed worker's partition is taken over by another worker after this long without a heartbeat.
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' },
  // WS2: through the task queue, never eagerly to the worker that ran this workflow task: a run handed back must be
  // offered to every worker, else the same (full) worker gets it again and again.
  allowEagerDispatch: false,
});

const { purgeWebhookLog } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 10 },
});

export interface WebhookDispatcherInput {
  /** How many partitions the endpoints are split into (WEBHOOK_PARTITIONS, fixed for the life of this workflow). */
  partitions: number;
}

/** Starts the partitions' dispatcher workflows and starts any that ended again (they run forever). */
export async function webhookDispatcherWorkflow(input: WebhookDispatcherInput = { partitions: 1 }): Promise<void> {
  const partitions = input.partitions;
  if (!Number.isInteger(partitions) || partitions < 1) throw ApplicationFailure.nonRetryable(`partitions must be a positive integer, got ${partitions}`);
  const { taskQueue } = workflowInfo();
  await Promise.all(Array.from({ length: partitions }, async (_, index) => {
    for (;;) {
      try {
        await executeChild(webhookDispatcherPartitionWorkflow, { workflowId: workflowIds.webhookDispatcherPartition(taskQueue, index), args: [{ index, partitions }] });
      } catch {
        // Terminated or failed by hand: the partition must run, so it starts again after a breath.
        await sleep('5 seconds');
      }
    }
  }));
}

/** One partition's dispatcher: runs its activity again and again (about ten minutes each, or until handed over). */
export async function webhookDispatcherPartitionWorkflow(input: { index: number; partitions: number }): Promise<void> {
  for (;;) {
    const result = await runWebhookDispatcher({ runForMs: 10 * 60_000, partition: input });
    // Handed back at once (that worker had its fair share, WS2): offered again after a moment, to any worker.
    if (result.handedOver) await sleep('1 second');
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 1_000) await continueAsNew<typeof webhookDispatcherPartitionWorkflow>(input);
  }
}

/** Removes delivery log entries older than 30 days (run by the `webhook-log-retention` Schedule). */
export async function webhookLogRetentionWorkflow(): Promise<{ attempts: number; deliveries: number }> {
  return purgeWebhookLog();
}
