/** Starting the affiliate workflows (issue 24 point 5) and the monthly payout Schedule, by their business ids. */
import crypto from 'node:crypto';
import { ScheduleAlreadyRunning, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { BulkOutcome, CommissionDecision } from '../affiliate/staff/commissions.js';
import type { DrawUpResult } from '../affiliate/staff/payouts.js';
import { TASK_QUEUE } from './constants.js';
import { startLabelled } from './labelledStart.js';

/** The Schedule that drafts each month's payouts on the 5th (A5's day), for the month before. */
export const AFFILIATE_PAYOUT_SCHEDULE_ID = 'affiliate-monthly-payouts';

export const affiliateWorkflowIds = {
  /** One account's payout run for a month, e.g. `affiliate-payouts-demo-2026-11`. */
  payoutRun: (accountCode: string, period: string) => `affiliate-payouts-${accountCode}-${period}`,
  /** One bulk commission decision, e.g. `affiliate-decide-demo-<random>`. */
  bulkDecision: (accountCode: string, requestId: string) => `affiliate-decide-${accountCode}-${requestId}`,
};

/**
 * Creates the monthly payout Schedule unless it exists (05:00 UTC on the 5th). Its runs are labelled
 * `OpsKind=affiliate-payouts-monthly`, and a labelled run labels each account's payout run it starts like a person's
 * (OT5); on a namespace lacking the attributes both stay unlabelled.
 */
export async function ensureAffiliatePayoutSchedule(client: Client, taskQueue: string = TASK_QUEUE, scheduleId: string = AFFILIATE_PAYOUT_SCHEDULE_ID): Promise<void> {
  try {
    await startLabelled({ kind: 'affiliate-payouts-monthly' }, (typedSearchAttributes) => client.schedule.create({
      scheduleId,
      spec: { calendars: [{ dayOfMonth: 5, hour: 5, minute: 0 }] },
      action: { type: 'startWorkflow', workflowType: 'affiliateMonthlyPayoutsWorkflow', taskQueue, args: [], ...(typedSearchAttributes ? { typedSearchAttributes } : {}) },
      policies: { overlap: 'SKIP', catchupWindow: '7 days' },
    }));
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}

/**
 * Runs an account's payout run for a month now (a person's "draw up" button) and waits for it. A run of that month
 * that already exists (the Schedule's, or an earlier click) is not repeated: its result is returned.
 */
export async function runPayoutRun(client: Client, taskQueue: string, input: { accountId: string; accountCode: string; period: string; drawnUpBy: string }): Promise<{ workflowId: string; results: DrawUpResult[] }> {
  const workflowId = affiliateWorkflowIds.payoutRun(input.accountCode, input.period);
  try {
    await startLabelled({ account: input.accountCode, kind: 'affiliate-payout', key: input.period }, (typedSearchAttributes) => client.workflow.start('affiliatePayoutRunWorkflow', {
      taskQueue, workflowId, args: [{ accountId: input.accountId, period: input.period, drawnUpBy: input.drawnUpBy }], workflowIdReusePolicy: 'REJECT_DUPLICATE',
      ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
    }));
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return { workflowId, results: await client.workflow.getHandle(workflowId).result() as DrawUpResult[] };
}

/** Decides many commissions in a workflow and waits for its outcome. */
export async function runBulkDecision(client: Client, taskQueue: string, input: { accountCode: string; personId: string; conversionIds: string[]; decision: CommissionDecision; reason: string }): Promise<{ workflowId: string; outcome: BulkOutcome }> {
  const workflowId = affiliateWorkflowIds.bulkDecision(input.accountCode, crypto.randomBytes(8).toString('hex'));
  const handle = await client.workflow.start('affiliateBulkDecisionWorkflow', {
    taskQueue, workflowId, args: [{ personId: input.personId, conversionIds: input.conversionIds, decision: input.decision, reason: input.reason }],
  });
  return { workflowId, outcome: await handle.result() as BulkOutcome };
}
