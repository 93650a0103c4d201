/**
 * Durable affiliate work (issue 24 point 5). A payout run (ID `affiliate-payouts-<account>-<YYYY-MM>`) draws up each
 * shop's drafts in turn; a bulk decision (ID `affiliate-decide-<account>-<request>`) decides commissions chunk by
 * chunk. A worker killed mid-run is replaced and the activities repeat harmlessly: a payout run finds the month's
 * payouts and taken commissions, a decision chunk counts the commissions it already decided as decided.
 */
import { ApplicationFailure, executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { BulkOutcome, CommissionDecision } from '../src/affiliate/staff/commissions.js';
import type { DrawUpResult } from '../src/affiliate/staff/payouts.js';
import { opsAttributes, opsSearchAttributes } from '../src/temporal/searchAttributes.js';

const { affiliateProgrammeShops, affiliateProgrammeAccounts, affiliateDrawUpShopPayouts, affiliateDecideCommissions } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // The draw-up and decision activities heartbeat every 2 s (activities/affiliate.ts): a dead worker's attempt is
  // retried on another after 10 s instead of 2 minutes. The two short reads finish well inside it.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: ['AppError'] },
});

export interface PayoutRunInput {
  accountId: string;
  period: string;
  drawnUpBy: string;
}

/** Draws up one account's payout drafts for a month, shop by shop. */
export async function affiliatePayoutRunWorkflow(input: PayoutRunInput): Promise<DrawUpResult[]> {
  const results: DrawUpResult[] = [];
  for (const shopId of await affiliateProgrammeShops(input.accountId)) {
    results.push(await affiliateDrawUpShopPayouts({ shopId, period: input.period, drawnUpBy: input.drawnUpBy }));
  }
  return results;
}

/** The monthly Schedule's run: one payout run per account for the month before the scheduled time. */
export async function affiliateMonthlyPayoutsWorkflow(): Promise<string[]> {
  const at = new Date(workflowInfo().startTime);
  const month = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  const period = `${month.getUTCFullYear()}-${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
  const started: string[] = [];
  // Labelled by its Schedule only where the namespace has the Ops attributes: then its payout runs carry the labels a
  // person's run gets (src/temporal/affiliate.ts runPayoutRun); a child start with unknown attributes would fail.
  const labelled = workflowInfo().typedSearchAttributes.get(opsSearchAttributes.kind) !== undefined;
  for (const account of await affiliateProgrammeAccounts()) {
    const workflowId = `affiliate-payouts-${account.code}-${period}`;
    try {
      await executeChild(affiliatePayoutRunWorkflow, {
        workflowId, args: [{ accountId: account.id, period, drawnUpBy: 'schedule' }], workflowIdReusePolicy: 'REJECT_DUPLICATE',
        ...(labelled ? { typedSearchAttributes: opsAttributes({ account: account.code, kind: 'affiliate-payout', key: period }) } : {}),
      });
      started.push(workflowId);
    } catch (error) {
      // A run of that month already happened (a person started it early): nothing more to do for this account.
      if (!(error instanceof Error && /already started/i.test(error.message))) throw error;
    }
  }
  return started;
}

export interface BulkDecisionInput {
  personId: string;
  conversionIds: string[];
  decision: CommissionDecision;
  reason: string;
}

const CHUNK = 25;

/** Decides many commissions for a person, chunk by chunk. */
export async function affiliateBulkDecisionWorkflow(input: BulkDecisionInput): Promise<BulkOutcome> {
  if (input.conversionIds.length === 0) throw ApplicationFailure.nonRetryable('No commission chosen.');
  const outcome: BulkOutcome = { decided: [], refused: [] };
  for (let i = 0; i < input.conversionIds.length; i += CHUNK) {
    const part = await affiliateDecideCommissions({ ...input, conversionIds: input.conversionIds.slice(i, i + CHUNK) });
    outcome.decided.push(...part.decided);
    outcome.refused.push(...part.refused);
  }
  return outcome;
}
