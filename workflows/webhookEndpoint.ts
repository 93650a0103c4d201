/**
 * The actor of one webhook endpoint (SPEC "Webhook endpoint"), ID `webhook-endpoint-<endpointId>`: it serialises the
 * endpoint's automatic transition — pausing after 30 consecutive failed attempts or above 5,000 pending deliveries,
 * with the notification (D14, D16) — and the follow-up of a person's change: after a re-enable it wakes the held
 * deliveries at once, after a delete it ends. The counts live in Postgres, read under the endpoint's row lock.
 */
import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { webhookSignals } from '../src/temporal/constants.js';

const { pauseEndpointIfOverLimits, followEndpointChange } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const checkSignal = defineSignal(webhookSignals.check);
export const changedSignal = defineSignal(webhookSignals.changed);

export interface WebhookEndpointInput {
  endpointId: string;
}

/** Runs while the endpoint exists; started (or signalled) with signal-with-start by whoever has news for it. */
export async function webhookEndpointWorkflow(input: WebhookEndpointInput): Promise<void> {
  // Flags, not queues: a burst of signals about the same news needs one look at Postgres.
  let check = false;
  let changed = false;
  setHandler(checkSignal, () => {
    check = true;
  });
  setHandler(changedSignal, () => {
    changed = true;
  });
  for (;;) {
    await condition(() => check || changed);
    if (check) {
      check = false;
      await pauseEndpointIfOverLimits({ endpointId: input.endpointId });
    }
    if (changed) {
      changed = false;
      const state = await followEndpointChange({ endpointId: input.endpointId });
      if (state === 'deleted') return;
    }
    if ((workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2_000) && !check && !changed) {
      await continueAsNew<typeof webhookEndpointWorkflow>(input);
    }
  }
}
