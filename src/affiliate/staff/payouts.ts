/**
 * Monthly payouts with a person in the loop (issue 24 points 3 and 5): a run (the monthly Temporal Schedule, or a
 * person) draws up drafts (`requested`) per shop, approved partner and currency from the commissions approved before
 * the month after the period, when they reach the payout minimum (A5); a person confirms a draft (`approved`) and
 * marks it paid (`paid`, its commissions with it) or cancels it (its commissions are free again). A run repeated for
 * the same month adds nothing: one payout per shop, partner, currency and period (unique index), and a commission
 * joins a payout only while it is in none (row locks, `payout_id is null`).
 */
import type { Db } from '../../db/knex.js';
import { AppError } from '../../errors.js';
import type { Person } from '../../people/model.js';
import { requireAffiliateManager } from './commissions.js';

/** `YYYY-MM`: the month whose approved commissions a run pays. */
export const PERIOD_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function periodBounds(period: string): { from: string; to: string; approvedBefore: Date } {
  const m = PERIOD_PATTERN.exec(period);
  if (!m) throw new AppError('INVALID_PARAMETER', 'The period is a month as YYYY-MM.', { param: 'period', reason: 'format' });
  const year = Number(m[1]);
  const month = Number(m[2]) - 1;
  const next = new Date(Date.UTC(year, month + 1, 1));
  return { from: new Date(Date.UTC(year, month, 1)).toISOString().slice(0, 10), to: new Date(next.getTime() - 86_400_000).toISOString().slice(0, 10), approvedBefore: next };
}

/** The month before `now` (a run on 5 December pays November). */
export function previousPeriod(now: Date): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export interface DrawUpResult {
  shopId: string;
  created: Array<{ payoutId: string; partnerId: string; currency: string; amount: string; conversions: number }>;
  /** Partner and currency sums below the payout minimum: they wait for a later month. */
  belowMinimum: number;
}

/**
 * Draws up one shop's payout drafts for `period`, in one transaction. Safe to repeat and to race: a second run finds
 * the payouts and the commissions already taken and adds nothing.
 */
export async function drawUpShopPayouts(db: Db, shopId: string, period: string, now: Date, drawnUpBy: string): Promise<DrawUpResult> {
  const bounds = periodBounds(period);
  return db.transaction(async (trx) => {
    const shop = await trx('shops as s').join('affiliate_programmes as p', 'p.account_id', 's.account_id').where('s.id', shopId)
      .first('s.id', 's.account_id', 'p.payout_minimum_eur');
    const result: DrawUpResult = { shopId, created: [], belowMinimum: 0 };
    if (!shop) return result;
    // Lock the candidate commissions: a concurrent run waits here and then finds them taken.
    const due = await trx.raw(`
      select cv.partner_id, cv.currency, sum(cv.commission)::text as amount, sum(cv.commission * o.eur_rate)::text as eur,
        count(*)::int as n, array_agg(cv.id order by cv.id)::text[] as ids
      from affiliate_conversions cv
      join orders o on o.id = cv.order_id
      join affiliate_partners pa on pa.id = cv.partner_id
      where cv.id in (select id from affiliate_conversions where shop_id = ? and payout_id is null and commission_state = 'approved' and approved_at < ? for update)
        and pa.state = 'approved'
      group by cv.partner_id, cv.currency
      order by cv.partner_id, cv.currency`, [shopId, bounds.approvedBefore]);
    for (const p of due.rows as Array<{ partner_id: string; currency: string; amount: string; eur: string; n: number; ids: string[] }>) {
      if (Number(p.eur) < Number(shop.payout_minimum_eur)) {
        result.belowMinimum += 1;
        continue;
      }
      const inserted = await trx.raw(`
        insert into affiliate_payouts (account_id, shop_id, partner_id, currency, amount, conversions, state, period_from, period_to, created_at, drawn_up_by)
        values (?, ?, ?, ?, ?, ?, 'requested', ?, ?, ?, ?)
        on conflict (shop_id, partner_id, currency, period_to) where state <> 'cancelled' do nothing
        returning id`, [shop.account_id, shopId, p.partner_id, p.currency, p.amount, p.n, bounds.from, bounds.to, now, drawnUpBy]);
      const payoutId = inserted.rows[0]?.id;
      if (!payoutId) continue;
      const taken = await trx('affiliate_conversions').whereIn('id', p.ids).whereNull('payout_id').update({ payout_id: payoutId, updated_at: now });
      if (taken !== p.n) throw new Error(`payout ${payoutId}: ${taken} of ${p.n} commissions were free`);
      result.created.push({ payoutId: String(payoutId), partnerId: String(p.partner_id), currency: p.currency, amount: p.amount, conversions: p.n });
    }
    return result;
  });
}

/** The shops of an account that run the programme (a payout run covers them one by one). */
export async function programmeShops(db: Db, accountId: string): Promise<string[]> {
  const rows = await db('shops as s').join('affiliate_programmes as p', 'p.account_id', 's.account_id').where('s.account_id', accountId).orderBy('s.id').select('s.id');
  return rows.map((r) => String(r.id));
}

/** The accounts that run the programme (the monthly Schedule starts one run per account). */
export async function programmeAccounts(db: Db): Promise<Array<{ id: string; code: string }>> {
  const rows = await db('affiliate_programmes as p').join('accounts as a', 'a.id', 'p.account_id').orderBy('a.id').select('a.id', 'a.code');
  return rows.map((r) => ({ id: String(r.id), code: r.code }));
}

async function lockPayout(trx: Db, person: Person, payoutId: string) {
  if (!/^\d{1,18}$/.test(payoutId)) throw new AppError('NOT_FOUND', `No payout \`${payoutId}\`.`, { param: 'payoutId' });
  const row = await trx('affiliate_payouts as y').join('shops as s', 's.id', 'y.shop_id').where({ 'y.id': payoutId, 'y.account_id': person.accountId })
    .forUpdate('y').first('y.id', 'y.state', 's.code as shop_code');
  if (!row || (person.shopCodes && !person.shopCodes.has(row.shop_code))) throw new AppError('NOT_FOUND', `No payout \`${payoutId}\` in your shops.`, { param: 'payoutId' });
  return row;
}

/** A person confirms a drawn-up payout (requested → approved). */
export async function confirmPayout(db: Db, person: Person, payoutId: string, now: Date): Promise<void> {
  requireAffiliateManager(person);
  await db.transaction(async (trx) => {
    const row = await lockPayout(trx, person, payoutId);
    if (row.state !== 'requested') throw new AppError('STATE_CONFLICT', `Payout ${payoutId} is ${row.state}; only a drawn-up one can be confirmed.`, { state: row.state });
    await trx('affiliate_payouts').where({ id: row.id }).update({ state: 'approved', confirmed_by_person_id: person.id, confirmed_at: now });
  });
}

/** A person marks a confirmed payout paid; its commissions become `paid` (`paid_out`). A second time is refused. */
export async function markPayoutPaid(db: Db, person: Person, payoutId: string, reference: string, now: Date): Promise<void> {
  requireAffiliateManager(person);
  if (reference.length > 200) throw new AppError('INVALID_PARAMETER', 'The payment reference is at most 200 characters.', { param: 'reference', reason: 'too_long' });
  await db.transaction(async (trx) => {
    const row = await lockPayout(trx, person, payoutId);
    if (row.state !== 'approved') throw new AppError('STATE_CONFLICT', `Payout ${payoutId} is ${row.state}; only a confirmed one can be marked paid.`, { state: row.state });
    await trx('affiliate_payouts').where({ id: row.id }).update({ state: 'paid', paid_at: now, paid_by_person_id: person.id, payment_reference: reference.trim() || null });
    await trx('affiliate_conversions').where({ payout_id: row.id }).update({ commission_state: 'paid', state_reason: 'paid_out', updated_at: now });
  });
}

/** A person cancels a draft: its commissions are free for a later run. */
export async function cancelPayout(db: Db, person: Person, payoutId: string, now: Date): Promise<void> {
  requireAffiliateManager(person);
  await db.transaction(async (trx) => {
    const row = await lockPayout(trx, person, payoutId);
    if (row.state !== 'requested') throw new AppError('STATE_CONFLICT', `Payout ${payoutId} is ${row.state}; only a drawn-up one can be cancelled.`, { state: row.state });
    await trx('affiliate_payouts').where({ id: row.id }).update({ state: 'cancelled' });
    await trx('affiliate_conversions').where({ payout_id: row.id }).update({ payout_id: null, updated_at: now });
  });
}

/** Payouts of a person's shops, newest first, optionally one state. */
export async function payoutsForReview(db: Db, person: Person, filter: { state?: string }, limit = 200) {
  const q = db('affiliate_payouts as y').join('shops as s', 's.id', 'y.shop_id').join('affiliate_partners as p', 'p.id', 'y.partner_id')
    .where('y.account_id', person.accountId)
    .select('y.id', 's.code as market', 'p.handle', 'y.currency', 'y.amount', 'y.conversions', 'y.state', db.raw('y.period_from::text as period_from'),
      db.raw('y.period_to::text as period_to'), 'y.created_at', 'y.confirmed_at', 'y.paid_at', 'y.payment_reference', 'y.drawn_up_by')
    .orderBy([{ column: 'y.created_at', order: 'desc' }, { column: 'y.id', order: 'desc' }]).limit(limit);
  if (person.shopCodes) q.whereIn('s.code', [...person.shopCodes]);
  if (filter.state) q.where('y.state', filter.state);
  return q;
}

/** One payout with its commissions, for its statement (no bank or tax data). */
export async function payoutStatement(db: Db, person: Pick<Person, 'accountId' | 'shopCodes'> & { partnerId?: string }, payoutId: string) {
  if (!/^\d{1,18}$/.test(payoutId)) throw new AppError('NOT_FOUND', `No payout \`${payoutId}\`.`, { param: 'payoutId' });
  const payout = await db('affiliate_payouts as y').join('shops as s', 's.id', 'y.shop_id').join('affiliate_partners as p', 'p.id', 'y.partner_id')
    .join('affiliate_programmes as pr', 'pr.account_id', 'y.account_id')
    .where({ 'y.id': payoutId, 'y.account_id': person.accountId })
    .first('y.id', 'y.partner_id', 's.code as market', 's.name as shop_name', 'pr.name as programme', 'p.handle', 'y.currency', 'y.amount', 'y.conversions', 'y.state',
      db.raw('y.period_from::text as period_from'), db.raw('y.period_to::text as period_to'), 'y.created_at', 'y.paid_at');
  // A partner on the portal (partnerId) reads only their own payouts.
  if (!payout || (person.shopCodes && !person.shopCodes.has(payout.market)) || (person.partnerId !== undefined && String(payout.partner_id) !== person.partnerId)) throw new AppError('NOT_FOUND', `No payout \`${payoutId}\` in your shops.`, { param: 'payoutId' });
  const lines = await db('affiliate_conversions').where({ payout_id: payoutId }).orderBy([{ column: 'ordered_at' }, { column: 'id' }])
    .select('order_code', 'ordered_at', 'commission_base', 'commission');
  return { payout, lines };
}
