/**
 * A person's commission decisions (issue 24 point 3): approve a commission that waits for manual approval, or reject
 * a pending one with a reason. Never over MCP (SPEC "Not available over MCP"). The decision is kept on the conversion
 * (`manual_decision`) so the sync's recomputation keeps it; a cancelled or returned order still rejects it (AP2-3).
 */
import type { Db } from '../../db/knex.js';
import { AppError } from '../../errors.js';
import type { Person } from '../../people/model.js';
import { hasPermission } from '../../people/model.js';

/** Whether the person may decide commissions and payouts (the permission `affiliate:manage`). */
export function mayManageAffiliate(person: Pick<Person, 'permissions'>): boolean {
  return hasPermission(person, 'affiliate:manage');
}

export function requireAffiliateManager(person: Person): void {
  if (!mayManageAffiliate(person)) throw new AppError('INSUFFICIENT_SCOPE', 'You do not have the permission to manage the partner programme.', { permission: 'affiliate:manage' });
}

export type CommissionDecision = 'approve' | 'reject';

export interface DecisionResult {
  conversionId: string;
  outcome: 'approved' | 'rejected';
}

const MAX_REASON = 1000;

/**
 * Decides one commission for a person, in its own transaction (row locked). Approving needs the state `pending` with
 * `awaiting_manual_approval` (the return period is over and the campaign wants a person); rejecting needs `pending`.
 * Anything else — a second approval, a commission already in a payout — is STATE_CONFLICT with the state it found.
 */
export async function decideCommission(db: Db, person: Person, conversionId: string, decision: CommissionDecision, reason: string, now: Date): Promise<DecisionResult> {
  requireAffiliateManager(person);
  if (decision === 'reject' && !reason.trim()) throw new AppError('MISSING_PARAMETER', 'A rejection needs a reason.', { param: 'reason' });
  if (reason.length > MAX_REASON) throw new AppError('INVALID_PARAMETER', `The reason is at most ${MAX_REASON} characters.`, { param: 'reason', reason: 'too_long' });
  if (!/^\d{1,18}$/.test(conversionId)) throw new AppError('NOT_FOUND', `No commission \`${conversionId}\`.`, { param: 'conversionId' });
  return db.transaction(async (trx) => {
    const row = await trx('affiliate_conversions as cv').join('shops as s', 's.id', 'cv.shop_id')
      .where({ 'cv.id': conversionId, 's.account_id': person.accountId }).forUpdate('cv')
      .first('cv.id', 's.code as shop_code', 'cv.commission_state', 'cv.state_reason', 'cv.payout_id');
    if (!row || (person.shopCodes && !person.shopCodes.has(row.shop_code))) throw new AppError('NOT_FOUND', `No commission \`${conversionId}\` in your shops.`, { param: 'conversionId' });
    const state = { state: row.commission_state, reason: row.state_reason };
    if (row.payout_id !== null) throw new AppError('STATE_CONFLICT', `Commission ${conversionId} is already in a payout (${row.commission_state}).`, state);
    if (decision === 'approve') {
      if (row.commission_state !== 'pending' || row.state_reason !== 'awaiting_manual_approval') {
        throw new AppError('STATE_CONFLICT', `Commission ${conversionId} is ${row.commission_state} (${row.state_reason}); only one awaiting manual approval can be approved.`, state);
      }
      await trx('affiliate_conversions').where({ id: row.id }).update({
        commission_state: 'approved', state_reason: 'approved_manually', approved_at: now, manual_decision: 'approved', manual_reason: reason.trim() || null,
        decided_by_person_id: person.id, decided_at: now, updated_at: now,
      });
      return { conversionId: String(row.id), outcome: 'approved' as const };
    }
    if (row.commission_state !== 'pending') {
      throw new AppError('STATE_CONFLICT', `Commission ${conversionId} is ${row.commission_state} (${row.state_reason}); only a pending one can be rejected.`, state);
    }
    await trx('affiliate_conversions').where({ id: row.id }).update({
      commission_state: 'rejected', state_reason: 'rejected_manually', approved_at: null, manual_decision: 'rejected', manual_reason: reason.trim(),
      decided_by_person_id: person.id, decided_at: now, updated_at: now,
    });
    return { conversionId: String(row.id), outcome: 'rejected' as const };
  });
}

export interface BulkOutcome {
  decided: DecisionResult[];
  refused: Array<{ conversionId: string; code: string; message: string }>;
}

/**
 * Decides many commissions, each on its own (a refusal of one leaves the others decided). A commission this same
 * decision already reached (a retried bulk run) counts as decided, not as refused, so repeating a run is harmless.
 */
export async function decideCommissions(db: Db, person: Person, conversionIds: string[], decision: CommissionDecision, reason: string, now: Date): Promise<BulkOutcome> {
  requireAffiliateManager(person);
  const out: BulkOutcome = { decided: [], refused: [] };
  for (const id of conversionIds) {
    try {
      out.decided.push(await decideCommission(db, person, id, decision, reason, now));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const reached = await db('affiliate_conversions').where({ id, manual_decision: decision === 'approve' ? 'approved' : 'rejected', decided_by_person_id: person.id }).first('id');
      if (reached && error.code === 'STATE_CONFLICT') out.decided.push({ conversionId: id, outcome: decision === 'approve' ? 'approved' : 'rejected' });
      else out.refused.push({ conversionId: id, code: error.code, message: error.message });
    }
  }
  return out;
}

/** The commissions a person may decide, in their shops: pending ones, those awaiting approval first, with the order beside them. */
export async function commissionsForReview(db: Db, person: Person, filter: { market?: string; state?: string }, limit = 200) {
  const q = db('affiliate_conversions as cv').join('shops as s', 's.id', 'cv.shop_id').join('affiliate_partners as p', 'p.id', 'cv.partner_id')
    .join('affiliate_campaigns as c', 'c.id', 'cv.campaign_id').join('affiliate_programmes as pr', 'pr.account_id', 's.account_id')
    .where('s.account_id', person.accountId)
    .select('cv.id', 's.code as market', 'cv.order_code', 'p.handle', 'c.name as campaign', 'c.approval', 'cv.currency', 'cv.commission_base', 'cv.commission',
      'cv.commission_state', 'cv.state_reason', 'cv.order_status_name', 'cv.ordered_at', 'cv.manual_reason', 'cv.payout_id',
      db.raw(`cv.ordered_at + make_interval(days => pr.return_period_days) as return_period_ends`))
    .orderByRaw(`(cv.state_reason = 'awaiting_manual_approval') desc, cv.ordered_at desc, cv.id desc`).limit(limit);
  if (person.shopCodes) q.whereIn('s.code', [...person.shopCodes]);
  if (filter.market) q.where('s.code', filter.market);
  q.where('cv.commission_state', filter.state ?? 'pending');
  return q;
}
