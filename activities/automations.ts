/**
 * Automation activities: thin wrappers over src/automations/runs that add what only a worker has (the Temporal client
 * and task queue). Every activity is idempotent: runs are unique per (automation, event), steps per (run, node).
 */
import { Context } from '@temporalio/activity';
import type { Db } from '../src/db/knex.js';
import { logger } from '../src/logger.js';
import type { Step } from '../src/automations/rule.js';
import {
  beginRun, cancelRunsOfDisabledAutomations, executeStep, finishRun, finishWait, matchOutboxBatch, nextTimeOfDay, recordWait, startPendingRuns, type RunBegin,
} from '../src/automations/runs.js';
import { automationRunWorkflowsClient } from '../src/temporal/automations.js';

export interface AutomationActivityDeps {
  db: Db;
  /** How long the consumer waits when it found nothing to do (default 100 ms). */
  automationIdleMs?: number;
}

const log = logger.child({ component: 'automations' });

/** Builds the automation activities bound to their dependencies. */
export function createAutomationActivities(deps: AutomationActivityDeps) {
  return {
    /** Starts a run: cancelled if its automation was disabled, `not_matched` if the conditions fail, else its steps. */
    async beginAutomationRun(input: { runId: string }): Promise<RunBegin> {
      return beginRun(deps.db, input.runId);
    },

    /** The next `HH:MM` in the shop's zone after the workflow's now (ms since the epoch). */
    async nextAutomationTimeOfDay(input: { timeOfDay: string; timeZone: string; nowMs: number }): Promise<number> {
      return nextTimeOfDay(input.timeOfDay, input.timeZone, new Date(input.nowMs)).getTime();
    },

    /** Records that a wait step waits until `untilMs`. */
    async recordAutomationWait(input: { runId: string; position: number; step: Step; untilMs: number }): Promise<void> {
      await recordWait(deps.db, input.runId, input.position, input.step, new Date(input.untilMs));
    },

    /** Records that a wait step is over. */
    async finishAutomationWait(input: { runId: string; step: Step }): Promise<void> {
      await finishWait(deps.db, input.runId, input.step);
    },

    /** Executes one step exactly once (tag, e-mail, webhook), or cancels the run if its automation was disabled. */
    async executeAutomationStep(input: { runId: string; position: number; step: Step }): Promise<{ status: 'done' | 'cancelled' }> {
      const result = await executeStep(deps.db, input.runId, input.position, input.step);
      return { status: result.status };
    },

    /** Ends a run with its outcome (a finished run stays as it is). */
    async finishAutomationRun(input: { runId: string; status: 'completed' | 'cancelled' | 'failed'; outcome: string }): Promise<void> {
      await finishRun(deps.db, input.runId, input.status, input.outcome);
    },

    /**
     * The consumer loop for `runForMs`: matches outbox events to enabled automations (runs), starts run workflows, and
     * cancels the runs of disabled automations. Heartbeats every round; ends early when the worker shuts down.
     */
    async runAutomationConsumer(input: { runForMs: number }): Promise<{ events: number; runs: number; started: number; cancelled: number }> {
      const ctx = Context.current();
      const workflows = automationRunWorkflowsClient(ctx.client, ctx.info.taskQueue);
      const totals = { events: 0, runs: 0, started: 0, cancelled: 0 };
      const until = Date.now() + input.runForMs;
      while (Date.now() < until) {
        ctx.heartbeat(totals);
        if (ctx.cancellationSignal.aborted) break;
        const matched = await matchOutboxBatch(deps.db);
        const started = await startPendingRuns(deps.db, workflows);
        const cancelled = await cancelRunsOfDisabledAutomations(deps.db, workflows);
        totals.events += matched.events;
        totals.runs += matched.runs;
        totals.started += started;
        totals.cancelled += cancelled;
        if (matched.events === 0 && started === 0 && cancelled === 0) {
          try {
            await ctx.sleep(deps.automationIdleMs ?? 100);
          } catch {
            break;
          }
        }
      }
      if (totals.runs > 0) log.debug(totals, 'automation consumer round');
      // On cancellation (worker shutdown) fail this run, so the workflow runs the consumer again on a live worker.
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('automation consumer cancelled');
      return totals;
    },
  };
}
