/**
 * One automation run, ID `automation-run-<workflowId>-<eventId>`: evaluates the rule's conditions against the entity as
 * it stands in Postgres, then executes the steps in order — waits as durable timers, every other step as an idempotent
 * activity that records it exactly once. Cancelled (its automation disabled), it records the cancellation and ends.
 */
import { CancellationScope, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { durationMs } from '../src/automations/durations.js';

const { beginAutomationRun, executeAutomationStep, recordAutomationWait, finishAutomationWait, finishAutomationRun, nextAutomationTimeOfDay } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  // Only infrastructure failures come here (database, crash); the steps are idempotent, so they are retried until they pass.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export interface AutomationRunInput {
  runId: string;
}

/** Runs the steps of one automation for one event; returns the run's final status. */
export async function automationRunWorkflow(input: AutomationRunInput): Promise<string> {
  const { runId } = input;
  try {
    const begin = await beginAutomationRun({ runId });
    if (!begin.proceed) return begin.status;
    for (const [position, step] of begin.steps.entries()) {
      if (step.action === 'wait' || step.action === 'wait_until') {
        const untilMs = step.action === 'wait'
          ? Date.now() + durationMs(step.duration)
          : await nextAutomationTimeOfDay({ timeOfDay: step.timeOfDay, timeZone: begin.timeZone, nowMs: Date.now() });
        await recordAutomationWait({ runId, position, step, untilMs });
        await sleep(Math.max(0, untilMs - Date.now()));
        await finishAutomationWait({ runId, step });
        continue;
      }
      const result = await executeAutomationStep({ runId, position, step });
      if (result.status === 'cancelled') return 'cancelled';
    }
    await finishAutomationRun({ runId, status: 'completed', outcome: `${begin.steps.length} step${begin.steps.length === 1 ? '' : 's'} done.` });
    return 'completed';
  } catch (error) {
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(() => finishAutomationRun({ runId, status: 'cancelled', outcome: 'The automation was disabled during the run.' }));
    }
    throw error;
  }
}
