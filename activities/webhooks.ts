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
import { fairShare, liveWorkers, serve, servedPartitions, shouldHandOver, takePartitionLease, type Partition } from '../src/webhooks/partitions.js';
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

/**
 * WR4: while the sender is busy (it took deliveries within the last SENDER_IDLE_MS), workflows for failed attempts are
 * started only for attempts older than START_LAG_MAX_MS or retries due within START_BEFORE_DUE_MS: the starts and their
 * first workflow tasks cost the process and the Temporal server CPU that due retries must not wait behind, and a
 * failing delivery still becomes its workflow before its retry is due (with the 1-minute first delay of the schedule,
 * in the quiet moments after a burst).
 */
const SENDER_IDLE_MS = 500;
const START_LAG_MAX_MS = 30_000;
const START_BEFORE_DUE_MS = 2_000;

/** How often a partition's run looks whether this process serves more than its fair share (WS2). */
const BALANCE_INTERVAL_MS = 1_000;

/** A dispatched batch at least this large is part of a burst: T7's hold is looked at again before the next one. */
const LARGE_BATCH = 100;

const log = logger.child({ component: 'webhooks' });

/** The dispatcher runs' own pools, per database: shared by the partitions this process serves (at most 8 connections). */
const loopPools = new Map<string, { db: Db; users: number }>();

function takeLoopDb(db: Db): Db {
  const url = connectionOf(db) as string;
  const pool = loopPools.get(url) ?? { db: createDb(url, { min: 0, max: 8 }), users: 0 };
  loopPools.set(url, pool);
  pool.users++;
  return pool.db;
}

async function giveBackLoopDb(db: Db): Promise<void> {
  for (const [url, pool] of loopPools) {
    if (pool.db !== db) continue;
    pool.users--;
    if (pool.users === 0) {
      loopPools.delete(url);
      await db.destroy();
    }
  }
}

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
     * One partition's dispatcher loop for `runForMs` (WS1): dispatches outbox events into deliveries (whichever
     * partition gets there first, WS3), makes the first attempts and the due retries of its endpoints' deliveries
     * (direct.ts, T4, WR1), asks the actors of endpoints over 5,000 pending or 30 failures to check, and beside the
     * loop starts workflows for failed
     * first attempts and manual retries and wakes held deliveries whose endpoint may send again. Sleeps until Postgres
     * notifies new work (LISTEN, T6) or a request finished, polling as a safety net. A failing round (Postgres
     * restarting) is logged and tried again; heartbeats every round; ends early when the worker shuts down, and hands
     * the partition back when this process serves more than its fair share (WS2). Without `partition`: every endpoint.
     */
    async runWebhookDispatcher(input: { runForMs: number; partition?: Partition }): Promise<{ events: number; deliveries: number; started: number; woken: number; sent: number; handedOver: boolean }> {
      const ctx = Context.current();
      const taskQueue = ctx.info.taskQueue;
      const partition = input.partition;
      const totals = { events: 0, deliveries: 0, started: 0, woken: 0, sent: 0, handedOver: false };
      // WS2: a process at its fair share takes no more partitions; the workflow offers this one again (another worker).
      const shareNow = async () => fairShare(partition?.partitions ?? 1, await liveWorkers(deps.db, taskQueue));
      if (partition && servedPartitions(taskQueue).length >= await shareNow()) return { ...totals, handedOver: true };
      // WS7: never two runs of one partition sending at once (a previous run whose heartbeats were late may still be
      // draining, here or in another process): wait for its lease.
      const lease = partition ? await takePartitionLease(deps.db, taskQueue, partition, () => {
        ctx.heartbeat(totals);
        return !ctx.cancellationSignal.aborted;
      }) : null;
      if (partition && !lease) throw ctx.cancellationSignal.reason ?? new Error('dispatcher cancelled');
      const release = partition ? serve(taskQueue, partition.index) : () => {};
      let leaseLost: boolean;
      const workflows = temporal();
      const work = listenForWork(deps.db);
      // The loop and the sender get connections of their own: workflows (manual retries, actors) use the shared pool,
      // and must not make healthy endpoints' attempts wait for a connection (T5). One pool for all partitions served
      // by this process (WS1).
      const loopDb = takeLoopDb(deps.db);
      const sender = new DirectSender(loopDb, deps.webhooks, {
        checkEndpoint: (endpointId) => workflows.checkEndpoint(endpointId),
        onProgress: () => work.poke(),
        ...(partition ? { partition } : {}),
      });
      const until = Date.now() + input.runForMs;
      // WS7: heartbeats on a timer too, not only per round: a round that waits long for Postgres on a loaded machine
      // must not make Temporal start the partition elsewhere while this run still owns it (its successor would wait
      // for the lease meanwhile, and the partition would stand still).
      const heartbeats = setInterval(() => ctx.heartbeat(totals), 1_000);
      let lastUpkeep = 0;
      let lastBusy = 0;
      let lastBalance = Date.now();
      let failures = 0;
      let holdAccounts: string[] = [];
      let bursting: 'large' | 'small' | false = false;
      // Workflow starts and wake-ups (manual retries, held deliveries) talk to Temporal: they run beside the loop, one
      // round at a time, so a slow or unreachable Temporal server never holds up a delivery (T11).
      let upkeep: Promise<void> | null = null;
      const runUpkeep = () => {
        upkeep = (async () => {
          try {
            const deferStarts = Date.now() - lastBusy < SENDER_IDLE_MS
              ? { failedBefore: new Date(Date.now() - START_LAG_MAX_MS), dueBefore: new Date(Date.now() + START_BEFORE_DUE_MS) } : undefined;
            totals.started += await startPendingDeliveries(loopDb, workflows, 500, 32, { workflowOnly: true, exclude: claimedDeliveries(), ...(deferStarts ? { deferStarts } : {}), ...(partition ? { partition } : {}) });
            totals.woken += await wakeHeldDeliveries(loopDb, workflows, partition ? { partition } : {});
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
          if (ctx.cancellationSignal.aborted || lease?.lost) break;
          try {
            if (partition && Date.now() - lastBalance >= BALANCE_INTERVAL_MS) {
              lastBalance = Date.now();
              // A worker joined: the highest partitions of a process above its share go back (after draining below).
              if (shouldHandOver(partition.index, servedPartitions(taskQueue), await shareNow())) {
                totals.handedOver = true;
                break;
              }
            }
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
            // First attempts and due retries (T10, WR1: each retry under its claim).
            const taken = await sender.fill();
            if (taken > 0 || sender.active > 0) lastBusy = Date.now();
            if (upkeepDue) {
              lastUpkeep = Date.now();
              if (!upkeep) runUpkeep();
            }
            totals.events += dispatched.events;
            totals.deliveries += dispatched.deliveries;
            totals.sent = sender.totals.sent;
            failures = 0;
            // WS8: a round that took deliveries but dispatched nothing sleeps too: the lanes it filled are full, and
            // whatever makes room again wakes it (half a lane or all of it free, a batch recorded, NOTIFY of new work;
            // a cool-down, a stuck request and a due retry by the time-outs below). Looking again at once only cost a
            // round trip that found every lane full, while the lanes drained. Unless retries it took were claimed by
            // their workflows: the first attempts behind them may fit now.
            if (dispatched.events === 0 && (taken === 0 || !sender.lostClaims)) {
              // Asleep until NOTIFY, a finished request, the safety net, or the next retry falling due (WR1: made here
              // on time; the delivery's workflow makes it when no dispatcher does).
              const idleMs = deps.dispatcherIdleMs ?? UPKEEP_INTERVAL_MS;
              const dueAt = await sender.nextDueAt();
              // While retries are pending, their deliveries may still wait for their workflows (W3): the upkeep that
              // starts them keeps its cadence, so a retry made here on time does not end a delivery before its start.
              const idle = dueAt === null ? idleMs : Math.min(idleMs, UPKEEP_INTERVAL_MS);
              await work.wait(dueAt === null ? idle : Math.max(0, Math.min(idle, dueAt - Date.now())));
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
        await giveBackLoopDb(loopDb);
        clearInterval(heartbeats);
        release();
        leaseLost = lease?.lost ?? false;
        await lease?.release();
      }
      // The lease's connection broke (Postgres restarting): this run stops; Temporal runs the partition again.
      if (leaseLost) throw new Error('the partition lease was lost; the dispatcher run ends');
      if (totals.events > 0 || totals.handedOver) log.debug({ ...totals, partition }, 'webhook dispatcher round');
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
