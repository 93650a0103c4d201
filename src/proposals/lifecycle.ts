/** The proposal's states in Postgres, moved only by its workflow's activities (the workflow is the one writer). */
import type { Db } from '../db/knex.js';
import { isFinal, type ProposalKind } from './model.js';

export interface ProposalForWorkflow {
  draftId: string;
  kind: ProposalKind;
  writeMode: string;
  status: string;
  expiresAtMs: number;
  itemIds: string[];
  decision: Decision | null;
}

export interface Decision {
  approve: boolean;
  by: string;
  reason: string | null;
}

export async function loadProposalForWorkflow(db: Db, draftId: string): Promise<ProposalForWorkflow> {
  const row = await db('proposals').where({ draft_id: draftId }).first();
  if (!row) throw new Error(`No proposal ${draftId}`);
  const items = await db('proposal_items').where({ proposal_id: row.id }).orderBy('position').select('id');
  return {
    draftId, kind: row.kind, writeMode: row.write_mode, status: row.status, expiresAtMs: (row.expires_at as Date).getTime(), itemIds: items.map((i) => String(i.id)),
    decision: row.decision ? { approve: row.decision === 'approve', by: row.decided_by, reason: row.decision_reason } : null,
  };
}

/** Records the decision once (a repeated call after a crash changes nothing); an approved dictionary proposal moves to `writing`. */
export async function recordDecision(db: Db, draftId: string, decision: Decision, at: Date): Promise<void> {
  await db('proposals').where({ draft_id: draftId }).whereNull('decision').update({
    decision: decision.approve ? 'approve' : 'reject', decided_by: decision.by, decision_reason: decision.reason, decided_at: at,
    status: db.raw(`case when ? and kind = 'availabilities' then 'writing' else status end`, [decision.approve]),
  });
}

/** The final state; never moves a proposal out of a final state. */
export async function finishProposal(db: Db, draftId: string, status: string, at: Date): Promise<void> {
  if (!isFinal(status)) throw new Error(`${status} is not a final state`);
  await db('proposals').where({ draft_id: draftId }).whereNull('finished_at').update({ status, finished_at: at });
}

/** Marks proposals whose workflow is started (by the tool, or by the reconcile path). */
export async function markWorkflowStarted(db: Db, draftIds: string[]): Promise<void> {
  if (draftIds.length) await db('proposals').whereIn('draft_id', draftIds).whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
}

/** Proposals stored without a started workflow (e.g. the process stopped between the insert and the start). */
export async function unstartedProposals(db: Db, olderThan: Date, limit = 200): Promise<string[]> {
  const rows = await db('proposals').whereNull('workflow_started_at').where('created_at', '<=', olderThan).orderBy('id').limit(limit).select('draft_id');
  return rows.map((r) => r.draft_id as string);
}
