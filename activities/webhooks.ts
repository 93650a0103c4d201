/**
 * Webhook activities: thin wrappers over src/webhooks (attempt, pause, dispatch, retention) that add what only a
 * worker has — the Temporal client (Context.current().client) and the task queue the workflows run on. Every activity
 * is idempotent: attempts are keyed by number, dispatch by (event, endpoint), pausing under a row lock.
 */
import { Context } from '@temporalio/activity';
import { createDb, type Db } from '../src/db/knex.js';
import { logger } from '../src/logger.js';
import { webhookWorkflowsClient } from '../src/temporal/webhooks.js';
import { attemptDelivery, currentStatus, type AttemptInput, type AttemptResult } from '../src/webhooks/delivery.js';
import type { DeliveryStatus } from '../src/webhooks/delivery.js';
import { claimedDeliveries, DirectSender } from '../src/webhooks/direct.js';
import { dispatchOutboxBatch, startPendingDeliveries, wakeHeldDeliveries, type DispatchResult } from '../src/webhooks/dispatch.js';
import { endpointState, pauseIfOverLimits } from '../src/webhooks/pause.js';
import { purgeDeliveryLog } from '../src/webhooks/retention.js';
import type { WebhookSettings } from '../src/webhooks/settings.js';
import { connectionOf, listenForWork } from '../src/webhooks/wakeups.js';

export interface WebhookActivityDeps {
  db: Db;
  /** Delivery settings (the composition root's: webhookSettings(config, secrets); tests: their own DNS and time-outs). */
  webhooks: WebhookSettings;
  /** How long the dispatcher waits for a notification when it found nothing to do (default 250 ms: the safety net). */
  dispatcherIdleMs?: number;
}

/** How often the dispatcher looks for workflows to start or wake, and its longest sleep without a notification. */
const UPKEEP_INTERVAL_MS = 250;

/** A dispatched batch at least this large is part of a burst: T7's hold is looked at again before the next one. */
const LARGE_BATCH = 100;

const log = logger.child({ component: 'webhooks' });

/** Builds the webhook activities bound to their dependencies. */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  const temporal = () => webhookWorkflowsClient(Context.current().client, Context.current().info.taskQueue, deps.webhooks.retryScheduleMs, { searchAttributes: deps.webhooks.searchAttributes });

  return {
    /** Makes one attempt of a delivery (or reports why not: done, held); idempotent per attempt number. */
    async attemptWebhookDelivery(input: AttemptInput): Promise<AttemptResult> {
      return attemptDelivery(deps.db, deps.webhooks, input);
    },

    /** The delivery's status in Postgres, for a workflow woken during a retry wait (ended meanwhile, or not). */
    async webhookDeliveryStatus(input: { deliveryId: string }): Promise<DeliveryStatus> {
      return currentStatus(deps.db, input.deliveryId);
    },

    /** Tells the endpoint's actor to look at its pause limits (starting the actor if it does not run). */
    async requestEndpointCheck(input: { endpointId: string }): Promise<void> {
      await temporal().checkEndpoint(input.endpointId);
    },

    /** Pauses the endpoint with a notification if it is over a limit (D14, D16). */
    async pauseEndpointIfOverLimits(input: { endpointId: string }): Promise<{ paused: boolean; reason: string | null }> {
      const result = await pauseIfOverLimits(deps.db, input.endpointId);
      return { paused: result.paused, reason: result.reason };
    },

    /**
     * After a person's change: wakes the endpoint's held deliveries (re-enabled: they are delivered now; disabled or
     * deleted: their workflows see SKIPPED and end). Returns the endpoint's state.
     */
    async followEndpointChange(input: { endpointId: string }): Promise<'enabled' | 'paused' | 'disabled' | 'deleted'> {
      const workflows = temporal();
      for (;;) {
        Context.current().heartbeat();
        if ((await wakeHeldDeliveries(deps.db, workflows, { endpointId: input.endpointId })) === 0) break;
      }
      return endpointState(deps.db, input.endpointId);
    },

    /**
     * The dispatcher loop for `runForMs`: dispatches outbox events into deliveries, makes every automatic attempt
     * itself — first attempts and retries when due (direct.ts, T4, T10) — asks the actors of endpoints over 5,000
     * pending or 30 failures to check, and beside the loop starts workflows for manual retries and wakes held
     * deliveries whose endpoint may send again. Sleeps until Postgres notifies new work (LISTEN, T6), a request
     * finished, or the next retry falls due, polling as a safety net. A failing round (Postgres restarting) is logged
     * and tried again; heartbeats every round; ends early when the worker shuts down.
     */
    async runWebhookDispatcher(input: { runForMs: number }): Promise<{ events: number; deliveries: number; started: number; woken: number; sent: number }> {
      const ctx = Context.current();
      const workflows = temporal();
      const totals = { events: 0, deliveries: 0, started: 0, woken: 0, sent: 0 };
      const work = listenForWork(deps.db);
      // The loop and the sender get connections of their own: workflows (manual retries, actors) use the shared pool,
      // and must not make healthy endpoints' attempts wait for a connection (T5).
      const loopDb = createDb(connectionOf(deps.db) as string, { min: 0, max: 4 });
      const sender = new DirectSender(loopDb, deps.webhooks, {
        checkEndpoint: (endpointId) => workflows.checkEndpoint(endpointId),
        onProgress: () => work.poke(),
      });
      const until = Date.now() + input.runForMs;
      let lastUpkeep = 0;
      let failures = 0;
      let holdAccounts: string[] = [];
      let bursting: 'large' | 'small' | false = false;
      // Workflow starts and wake-ups (manual retries, held deliveries) talk to Temporal: they run beside the loop, one
      // round at a time, so a slow or unreachable Temporal server never holds up a delivery (T11).
      let upkeep: Promise<void> | null = null;
      const runUpkeep = () => {
        upkeep = (async () => {
          try {
            totals.started += await startPendingDeliveries(loopDb, workflows, 500, 32, { workflowOnly: true, exclude: claimedDeliveries() });
            totals.woken += await wakeHeldDeliveries(loopDb, workflows);
          } catch (error) {
            log.warn({ err: error }, 'starting or waking webhook delivery workflows failed; trying again');
          } finally {
            upkeep = null;
          }
        })();
      };
      try {
        while (Date.now() < until) {
          ctx.heartbeat(totals);
          if (ctx.cancellationSignal.aborted) break;
          try {
            // A burst waits in the outbox while a fast endpoint works through what it already has (T7); looked at
            // before every batch while a large burst is being dispatched, else a few times a second (a steady stream
            // of small batches cannot build a backlog between two looks).
            if (bursting === 'large') holdAccounts = await sender.accountsToHold();
            // The outbox is read when NOTIFY told of new events, while a burst lasts, and at every upkeep (safety net).
            const upkeepDue = Date.now() - lastUpkeep >= UPKEEP_INTERVAL_MS;
            if (upkeepDue && bursting !== 'large') holdAccounts = await sender.accountsToHold();
            const readOutbox: boolean = work.takeOutboxNews() || bursting !== false || upkeepDue;
            const dispatched: DispatchResult = readOutbox ? await dispatchOutboxBatch(loopDb, 500, { holdAccounts }) : { events: 0, deliveries: 0, overPendingLimit: [] };
            bursting = dispatched.events >= LARGE_BATCH ? 'large' : dispatched.events > 0 ? 'small' : false;
            for (const endpointId of dispatched.overPendingLimit) sender.checkEndpoint(endpointId);
            // First attempts and due retries (T10).
            const taken = await sender.fill();
            if (upkeepDue) {
              lastUpkeep = Date.now();
              if (!upkeep) runUpkeep();
            }
            totals.events += dispatched.events;
            totals.deliveries += dispatched.deliveries;
            totals.sent = sender.totals.sent;
            failures = 0;
            if (dispatched.events === 0 && taken === 0) {
              // Asleep until NOTIFY, a finished request or the safety net (retries are their workflows' timers, W3).
              await work.wait(deps.dispatcherIdleMs ?? UPKEEP_INTERVAL_MS);
            }
          } catch (error) {
            // Postgres unreachable for a moment: deliveries stay in Postgres; try again with back-off.
            failures++;
            log.warn({ err: error, failures }, 'webhook dispatcher round failed; trying again');
            await work.wait(Math.min(250 * 2 ** failures, 5_000));
          }
        }
      } finally {
        await sender.drain();
        await upkeep;
        await work.close();
        await loopDb.destroy();
      }
      if (totals.events > 0) log.debug(totals, 'webhook dispatcher round');
      // On cancellation (worker shutdown) fail this run, so the workflow runs the dispatcher again on a live worker.
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('dispatcher cancelled');
      return totals;
    },

    /** Removes delivery log entries older than 30 days. */
    async purgeWebhookLog(): Promise<{ attempts: number; deliveries: number }> {
      return purgeDeliveryLog(deps.db);
    },
  };
}
