/**
 * One proposal, ID `proposal-<draftId>`: waits for a person's decision (a Temporal Update from the application) or
 * expires on a durable timer (D30); once approved writes the items one by one through idempotent activities, each
 * storing its result in Postgres, then stores the final state. Autonomous text proposals are approved by policy at once.
 */
import { ApplicationFailure, condition, defineQuery, defineUpdate, proxyActivities, setHandler, allHandlersFinished, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Decision } from '../src/proposals/lifecycle.js';
import { finalStatus, isFinal, type ItemOutcome } from '../src/proposals/model.js';
import { opsSearchAttributes } from '../src/temporal/searchAttributes.js';

/** Sets OpsStatus to the proposal's new status, when it was started with it (a namespace lacking it would fail the task). */
function labelStatus(status: string): void {
  if (workflowInfo().typedSearchAttributes.get(opsSearchAttributes.status) === undefined) return;
  upsertSearchAttributes([{ key: opsSearchAttributes.status, value: status }]);
}

const { loadProposal, recordProposalDecision, finishProposal } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
// A write calls the shop; a worker that dies in the middle is noticed after the heartbeat time-out and another worker retries the
// item, which then finds its stored result or writes it once.
const { writeProposalItem } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // It heartbeats every 2 s (activities/heartbeating.ts): a dead worker's write is taken over after 10 s.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export interface ProposalInput {
  draftId: string;
}

export interface DecideInput {
  approve: boolean;
  /** Who decides, e.g. `person:12`. */
  by: string;
  /** Required for a rejection. */
  reason?: string | null;
}

export interface DecideResult {
  /** The proposal's state once the decision was carried out (after the write for an approval). */
  status: string;
}

/** The decision of a person; refused (validator) when the proposal is decided or expired, or a rejection lacks a reason. */
export const decideUpdate = defineUpdate<DecideResult, [DecideInput]>('decide');
/** The state the workflow is in: `waiting`, `writing` or the final state. */
export const stateQuery = defineQuery<string>('state');

/** Carries one proposal from preparation to its final state; returns that state. */
export async function proposalWorkflow(input: ProposalInput): Promise<string> {
  const { draftId } = input;
  let decision: Decision | null = null;
  let final: string | null = null;
  // Handlers first, before any await: a decision sent right after the start is buffered for them, never refused.
  let phase: 'loading' | 'waiting' | 'writing' | 'expired' = 'loading';

  setHandler(stateQuery, () => final ?? phase);
  setHandler(decideUpdate, async (d) => {
    decision = { approve: d.approve, by: d.by, reason: d.reason ?? null };
    await condition(() => final !== null);
    return { status: final! };
  }, {
    validator: (d) => {
      if (decision !== null || (phase !== 'waiting' && phase !== 'loading')) {
        throw ApplicationFailure.nonRetryable(`The proposal is already ${final ?? (decision ? 'decided' : phase)}.`, 'PROPOSAL_ALREADY_DECIDED');
      }
      if (!d.approve && !(d.reason ?? '').trim()) throw ApplicationFailure.nonRetryable('A rejection needs a reason.', 'REASON_REQUIRED');
      if (typeof d.by !== 'string' || d.by.length === 0) throw ApplicationFailure.nonRetryable('Who decides is required.', 'INVALID_DECISION');
    },
  });

  const proposal = await loadProposal({ draftId });
  if (isFinal(proposal.status)) {
    final = proposal.status;
    return final;
  }
  // A decision recorded before a restart of this workflow stands.
  decision ??= proposal.decision;
  phase = decision ? 'writing' : 'waiting';

  // Texts in autonomous mode are approved by policy; the dictionary and claims settings always wait for a person (D13).
  if (!decision && proposal.writeMode === 'autonomous' && (proposal.kind === 'product_texts' || proposal.kind === 'category_texts')) {
    decision = { approve: true, by: 'autonomous', reason: 'AI write mode autonomous' };
  }
  if (!decision) {
    const decided = await condition(() => decision !== null, Math.max(0, proposal.expiresAtMs - Date.now()));
    if (!decided) {
      phase = 'expired';
      final = 'expired';
      await finishProposal({ draftId, status: 'expired', atMs: Date.now() });
      labelStatus('expired');
      return final;
    }
  }
  const taken = decision as Decision;
  phase = 'writing';
  await recordProposalDecision({ draftId, decision: taken, atMs: Date.now() });
  if (!taken.approve) {
    await finishProposal({ draftId, status: 'rejected', atMs: Date.now() });
    labelStatus('rejected');
    final = 'rejected';
  } else {
    const outcomes: ItemOutcome[] = [];
    for (const itemId of proposal.itemIds) outcomes.push(await writeProposalItem({ itemId }));
    const status = finalStatus(proposal.kind, outcomes);
    await finishProposal({ draftId, status, atMs: Date.now() });
    labelStatus(status);
    final = status;
  }
  await condition(allHandlersFinished);
  return final;
}
