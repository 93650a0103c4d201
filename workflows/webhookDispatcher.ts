/**
 * The webhook dispatcher, ID `webhook-dispatcher-<taskQueue>`: a long-running activity turns outbox events into
 * deliveries and starts or wakes their workflows (heartbeating, so another worker takes over after a crash), and this
 * workflow restarts it forever. Also the retention clean-up that the `webhook-log-retention` Schedule runs.
 */
import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { runWebhookDispatcher } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  // A killed worker's dispatcher is taken over by another worker after this long without a heartbeat.
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

const { purgeWebhookLog } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 10 },
});

/** Keeps the dispatcher loop running; each activity run lasts about ten minutes. */
export async function webhookDispatcherWorkflow(): Promise<void> {
  for (;;) {
    await runWebhookDispatcher({ runForMs: 10 * 60_000 });
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 1_000) await continueAsNew<typeof webhookDispatcherWorkflow>();
  }
}

/** Removes delivery log entries older than 30 days (run by the `webhook-log-retention` Schedule). */
export async function webhookLogRetentionWorkflow(): Promise<{ attempts: number; deliveries: number }> {
  return purgeWebhookLog();
}
