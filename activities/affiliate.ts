/** Activities of the affiliate payout runs and bulk commission decisions (issue 24 point 5); each is safe to repeat. */
import type { Db } from '../src/db/knex.js';
import { AppError } from '../src/errors.js';
import { heartbeating } from './heartbeating.js';
import { loadPerson } from '../src/people/people.js';
import { decideCommissions, type BulkOutcome, type CommissionDecision } from '../src/affiliate/staff/commissions.js';
import { drawUpShopPayouts, programmeAccounts, programmeShops, type DrawUpResult } from '../src/affiliate/staff/payouts.js';

export function createAffiliateActivities(deps: { db: Db }) {
  return {
    /** The shops of an account whose payouts a run draws up. */
    async affiliateProgrammeShops(accountId: string): Promise<string[]> {
      return programmeShops(deps.db, accountId);
    },
    /** The accounts running the programme (the monthly Schedule's fan-out). */
    async affiliateProgrammeAccounts(): Promise<Array<{ id: string; code: string }>> {
      return programmeAccounts(deps.db);
    },
    /** Draws up one shop's payout drafts for a month (idempotent: a repeat adds nothing). */
    async affiliateDrawUpShopPayouts(input: { shopId: string; period: string; drawnUpBy: string }): Promise<DrawUpResult> {
      return heartbeating(() => drawUpShopPayouts(deps.db, input.shopId, input.period, new Date(), input.drawnUpBy));
    },
    /** Decides a chunk of commissions as the person who asked, with their rights as they are now. */
    async affiliateDecideCommissions(input: { personId: string; conversionIds: string[]; decision: CommissionDecision; reason: string }): Promise<BulkOutcome> {
      const person = await loadPerson(deps.db, input.personId);
      if (!person) throw new AppError('NOT_FOUND', `No person ${input.personId}.`);
      return heartbeating(() => decideCommissions(deps.db, person, input.conversionIds, input.decision, input.reason, new Date()));
    },
  };
}
