/** Proposal workflows on Temporal: starting one per proposal, a person's decision as an Update, and the reconcile path. */
import { Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { markWorkflowStarted, unstartedProposals } from '../proposals/lifecycle.js';
import { proposalWorkflowId } from '../proposals/model.js';
import type { DecideInput, DecideResult, ProposalInput } from '../../workflows/proposal.js';
import { logger } from '../logger.js';
import type { TemporalAccess } from './access.js';
import { TASK_QUEUE } from './constants.js';
import { startLabelled, type OpsLabels } from './labelledStart.js';

/** A proposal's search attributes: account, shop, `proposal.<kind>`, its draft id and status (docs/operations.md). */
async function proposalLabels(db: Db, draftId: string): Promise<OpsLabels | null> {
  const row = await db('proposals as p').join('accounts as a', 'a.id', 'p.account_id').join('shops as s', 's.id', 'p.shop_id')
    .where('p.draft_id', draftId).first('a.code as account', 's.code as shop', 'p.kind', 'p.status');
  return row ? { account: row.account, shop: row.shop, kind: `proposal.${row.kind}`, key: draftId, status: row.status } : null;
}

/** Starts the workflow of a stored proposal (idempotent: an existing or finished one is never started again) and marks it started. */
export async function startProposalWorkflow(db: Db, client: Client, draftId: string, taskQueue: string = TASK_QUEUE): Promise<void> {
  try {
    const args: [ProposalInput] = [{ draftId }];
    await startLabelled(await proposalLabels(db, draftId), (typedSearchAttributes) => client.workflow.start('proposalWorkflow', {
      taskQueue, workflowId: proposalWorkflowId(draftId), args, workflowIdReusePolicy: 'REJECT_DUPLICATE', ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
    }));
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  await markWorkflowStarted(db, [draftId]);
}

/**
 * Starts the workflows of proposals stored without one (the process stopped between the insert and the start, or
 * Temporal was unreachable then). Only proposals older than `graceMs` are taken, so a start in progress is left alone.
 */
export async function reconcileProposalWorkflows(db: Db, client: Client, taskQueue: string = TASK_QUEUE, now: Date = new Date(), graceMs = 30_000): Promise<number> {
  const drafts = await unstartedProposals(db, new Date(now.getTime() - graceMs));
  for (const draftId of drafts) await startProposalWorkflow(db, client, draftId, taskQueue);
  return drafts.length;
}

/**
 * A person's decision: sent as the workflow's `decide` Update, whose answer is the proposal's state once carried out.
 * A decided or expired proposal is refused by the workflow's validator (or is no longer running): PROPOSAL_ALREADY_DECIDED.
 */
export async function decideProposal(client: Client, draftId: string, decision: DecideInput, waitMs = 25_000): Promise<DecideResult> {
  const handle = client.workflow.getHandle(proposalWorkflowId(draftId));
  try {
    // The write's outcome, or — should the shop be slow — the phase the workflow is in when a person's page cannot
    // wait longer (the drafts path and the history show the end). A refusal by the validator comes at once.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), waitMs); });
    const update = handle.executeUpdate<DecideResult, [DecideInput]>('decide', { args: [decision] });
    update.catch(() => undefined);
    const outcome = await Promise.race([update, late]).finally(() => clearTimeout(timer));
    // No worker to answer the query (one died mid-write): the write is under way, another worker will finish it.
    return outcome ?? { status: await handle.query<string>('state').catch(() => 'writing') };
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) {
      const cause = error.cause as { type?: string; message?: string } | undefined;
      if (cause?.type === 'REASON_REQUIRED') throw new AppError('INVALID_PARAMETER', 'A rejection needs a reason.', { param: 'reason', reason: 'required' });
      throw new AppError('PROPOSAL_ALREADY_DECIDED', cause?.message ?? 'The proposal was already decided.', {});
    }
    if (error instanceof WorkflowNotFoundError || /workflow execution already completed/i.test(String((error as Error).message))) {
      throw new AppError('PROPOSAL_ALREADY_DECIDED', 'The proposal is no longer waiting for a decision.', {});
    }
    throw error;
  }
}

/**
 * Runs the reconcile path every `intervalMs` in an API process (where a tool's start can fail while Temporal is
 * unreachable), so such a proposal gets its workflow — and its expiry timer — without waiting for a restart.
 */
export function startProposalReconciler(db: Db, access: TemporalAccess, intervalMs = 60_000): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void access.client()
      .then((client) => reconcileProposalWorkflows(db, client, access.taskQueue ?? TASK_QUEUE))
      .then((started) => { if (started > 0) logger.info({ started }, 'proposal workflows started by the reconcile path'); })
      .catch((err: unknown) => logger.warn({ err }, 'proposal reconcile failed; retried on the next round'))
      .finally(() => { running = false; });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
