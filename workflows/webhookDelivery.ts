/**
 * One webhook delivery through its states (SPEC "Webhook delivery"), ID `webhook-delivery-<deliveryId>`, for the
 * deliveries that run as a workflow: those whose first attempt failed (W3), manual retries (D15) and held ones. Postgres
 * holds the state; this workflow owns the schedule with durable timers: it asks for an attempt, waits the retry delay
 * (1, 5, 15, 60, 240 minutes by default) after a failure, and waits to be woken while the endpoint is paused or the plan
 * has no webhooks. A wake-up also ends it at once when the delivery was skipped meanwhile. WR1: while a partition
 * dispatcher runs it makes each retry when due (on time, whatever the Temporal server's backlog); when the timer fires
 * this workflow finds the attempt made and records its result, or claims and makes it itself.
 */
import { condition, continueAsNew, defineSignal, proxyActivities, proxyLocalActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { webhookSearchAttributes, type WebhookWorkflowStatus } from '../src/temporal/searchAttributes.js';
import type { Activities } from '../activities/index.js';
import type { DeliveryStatus } from '../src/webhooks/delivery.js';
import { webhookSignals } from '../src/temporal/constants.js';

/**
 * The attempt runs as a local activity: no activity task travels through the server, which about halves the server
 * round trips per delivery. If the worker dies during an attempt, the workflow task times out and another worker
 * runs the attempt again (idempotent per attempt number).
 */
const { attemptWebhookDelivery, webhookDeliveryStatus } = proxyLocalActivities<Activities>({
  // An attempt is at most 10 s of HTTP plus DNS and two short transactions.
  startToCloseTimeout: '30 seconds',
  // Only infrastructure failures (database, crash) come here; they are retried until they pass: nothing is lost.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { requestEndpointCheck } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const wakeSignal = defineSignal(webhookSignals.wake);

/** While held, look again this often even without a wake-up (a safety net; wake-ups normally come at once). */
const HOLD_RECHECK = '1 hour';

export interface WebhookDeliveryInput {
  deliveryId: string;
  endpointId: string;
  /** The first attempt number of this run: 1 for a new delivery, more after a manual retry or a continue-as-new. */
  firstAttempt: number;
  /** Delays between attempts in ms; attempts = delays + 1 (D17 allows shorter ones outside production). */
  retryScheduleMs: number[];
  /**
   * Set when attempt `firstAttempt` was already made and logged outside this workflow (the dispatcher's direct path,
   * T4): when the next attempt is due (epoch ms), so the retry timer counts from that attempt, not from this start.
   */
  firstRetryAt?: number;
  /**
   * WR1 (replaces `firstRetryAt` for new starts): attempt `firstAttempt` was made and logged by the dispatcher; the
   * workflow's timer for the next one fires this long after the start (its due time plus the dispatcher's turn,
   * DISPATCHER_FIRST_MS). Relative, so no clock but the workflow's counts.
   */
  firstRetryDelayMs?: number;
  /** Started with search attributes (W3): the workflow keeps `WebhookDeliveryStatus` up to date. */
  searchAttributes?: boolean;
}

/** Delivers one delivery until it is SENT, FAILED or SKIPPED; returns that status. */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<DeliveryStatus> {
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  // Started after a failed attempt (WR2), the start already showed RETRYING.
  let shown: WebhookWorkflowStatus | null = input.firstRetryDelayMs !== undefined ? 'RETRYING' : null;
  /** Shows the delivery's state in the Temporal UI (only when started with the attributes, W3). */
  const show = (status: WebhookWorkflowStatus) => {
    if (!input.searchAttributes || status === shown) return;
    shown = status;
    upsertSearchAttributes([{ key: webhookSearchAttributes.status, value: status }]);
  };
  const end = (status: DeliveryStatus): DeliveryStatus => {
    show(status === 'PENDING' ? 'RETRYING' : status);
    return status;
  };
  /** Waits until `at` (workflow time); a wake-up meanwhile looks whether the delivery ended: then its status. */
  const waitUntil = async (at: number): Promise<DeliveryStatus | null> => {
    // A wake-up during the wait means the delivery may have ended (endpoint disabled or deleted): end now if it did,
    // else wait out the rest, so the retry schedule holds exactly.
    for (woken = false; Date.now() < at; woken = false) {
      if (!(await condition(() => woken, at - Date.now()))) break;
      const status = await webhookDeliveryStatus({ deliveryId: input.deliveryId });
      if (status !== 'PENDING') return status;
    }
    return null;
  };
  let attempt = input.firstAttempt;
  if (input.firstRetryDelayMs !== undefined) {
    // WR1: started after the dispatcher's failed attempt `firstAttempt`: no look-up first, the timer starts at once
    // (one workflow task and no activity before it: thousands of these start at once when a receiver fails).
    show('RETRYING');
    const ended = await waitUntil(Date.now() + input.firstRetryDelayMs);
    if (ended) return end(ended);
    attempt++;
  }
  for (;;) {
    if (!(attempt === input.firstAttempt && input.firstRetryAt !== undefined)) show('ATTEMPTING');
    const result = await attemptWebhookDelivery({ deliveryId: input.deliveryId, attempt, retryScheduleMs: input.retryScheduleMs });
    if (result.pauseCheck) await requestEndpointCheck({ endpointId: input.endpointId });
    if (result.outcome === 'done') return end(result.status);
    if (result.outcome === 'retry' || result.outcome === 'claimed') {
      // The delay from now (workflow time): the engine's delay after an attempt made here, what is left until the due
      // time for one the dispatcher made (WR1), or when to look again at a claimed one. Results recorded before WR1
      // may lack it: then the start's `firstRetryAt`, else the schedule's delay from now.
      const retryAt = result.retryDelayMs !== undefined ? Date.now() + result.retryDelayMs
        : attempt === input.firstAttempt && input.firstRetryAt !== undefined ? input.firstRetryAt
          : Date.now() + (input.retryScheduleMs[attempt - 1] ?? 0);
      if (result.outcome === 'retry') show('RETRYING');
      const ended = await waitUntil(retryAt);
      if (ended) return end(ended);
      // WR1: when its timer fires, the next attempt is made here unless the dispatcher made it (then it is recorded).
      if (result.outcome === 'retry') attempt = (result.lastAttempt ?? attempt) + 1;
    } else {
      show('HELD');
      await condition(() => woken, HOLD_RECHECK);
      woken = false;
    }
    // A delivery held for weeks loops once an hour: keep the history short.
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2_000) {
      await continueAsNew<typeof webhookDeliveryWorkflow>({ ...input, firstAttempt: attempt, firstRetryAt: undefined, firstRetryDelayMs: undefined });
    }
  }
}
