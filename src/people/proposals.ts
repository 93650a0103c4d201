/**
 * Proposals in the application (issue 13): who may decide (permission `proposals:approve`, D27), on which shops, and
 * the decision sent to the proposal's workflow as an Update (its answer is what the page shows). A person's own text
 * edits are src/texts (permission `texts:edit`).
 */
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { getDraft, listDrafts } from '../proposals/queries.js';
import type { TemporalAccess } from '../temporal/access.js';
import { decideProposal, startProposalWorkflow } from '../temporal/proposals.js';
import { hasPermission, type Person } from './model.js';

export function mayApproveProposals(person: Person): boolean {
  return hasPermission(person, 'proposals:approve');
}

export function pendingProposalsOf(db: Db, person: Person, page: { limit: number; offset: number } = { limit: 50, offset: 0 }) {
  return listDrafts(db, person.accountId, person.shopCodes, true, page.limit, page.offset);
}

export function decidedProposalsOf(db: Db, person: Person, page: { limit: number; offset: number } = { limit: 30, offset: 0 }) {
  return listDrafts(db, person.accountId, person.shopCodes, false, page.limit, page.offset);
}

function requireApprover(person: Person): void {
  if (!mayApproveProposals(person)) throw new AppError('INSUFFICIENT_SCOPE', 'You do not have the permission to approve proposals.', { permission: 'proposals:approve' });
}

/** Sends the person's decision to the proposal's workflow (starting it first if the reconcile path has not yet); returns the state it reached. */
export async function decideAsPerson(db: Db, temporal: TemporalAccess | undefined, person: Person, draftId: string, approve: boolean, reason: string): Promise<{ draftId: string; status: string }> {
  requireApprover(person);
  const draft = await getDraft(db, person.accountId, person.shopCodes, draftId);
  if (!temporal) throw new AppError('WRITES_UNAVAILABLE', 'This service instance cannot reach its workflows.');
  if (draft.decision || draft.finishedAt) throw new AppError('PROPOSAL_ALREADY_DECIDED', `The proposal is already ${draft.status}.`, { status: draft.status });
  const client = await temporal.client();
  const row = await db('proposals').where({ draft_id: draftId }).first('workflow_started_at');
  if (!row.workflow_started_at) await startProposalWorkflow(db, client, draftId, temporal.taskQueue);
  const result = await decideProposal(client, draftId, { approve, by: `person:${person.id}`, reason: reason.trim() || null });
  return { draftId, status: result.status };
}
