/**
 * The automation consumer, ID `automation-consumer-<taskQueue>`: a long-running heartbeating activity reads the outbox
 * with its own position (independent of webhook dispatch), creates runs for matching enabled automations, starts their
 * workflows and cancels the runs of disabled automations; this workflow restarts it forever.
 */
import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { runAutomationConsumer } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  // A killed worker's consumer is taken over by another worker after this long without a heartbeat.
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** Keeps the consumer loop running; each activity run lasts about ten minutes. */
export async function automationConsumerWorkflow(): Promise<void> {
  for (;;) {
    await runAutomationConsumer({ runForMs: 10 * 60_000 });
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 1_000) await continueAsNew<typeof automationConsumerWorkflow>();
  }
}
