/**
 * The partner's dashboard on a shop's portal (issue 24 point 2): clicks, conversions, commissions by state, payouts,
 * discount codes and code requests — always of the signed-in partner in the portal's shop only. Link generation and
 * code requests use the same rules as the MCP tools (`generateLink`; a request is what `decideCodeRequest` decides).
 */
import type { Db } from '../../db/knex.js';
import { AppError } from '../../errors.js';
import { codeHolder } from '../writes/partners.js';
import type { PortalPartner } from './accounts.js';
import type { Portal } from './portals.js';

/** A requested discount code: letters, digits, `-` and `_`, 3 to 20 characters (kept upper-case, as codes are compared). */
export const CODE_PATTERN = /^[A-Za-z0-9_-]{3,20}$/;

export async function partnerDashboard(db: Db, portal: Portal, partner: PortalPartner) {
  const scope = { shop_id: portal.shopId, partner_id: partner.id };
  const [clicks, conversions, commissions, payouts, codes, requests, campaigns] = await Promise.all([
    db('affiliate_clicks').where(scope).count<{ n: string }[]>({ n: '*' }).first(),
    db('affiliate_conversions').where(scope).count<{ n: string }[]>({ n: '*' }).first(),
    db('affiliate_conversions').where(scope).groupBy('commission_state', 'currency').orderBy(['commission_state', 'currency'])
      .select('commission_state as state', 'currency').sum({ amount: 'commission' }).count({ n: '*' }),
    db('affiliate_payouts').where(scope).whereNot('state', 'cancelled').orderBy([{ column: 'period_to', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(24)
      .select('id', 'currency', 'amount', 'conversions', 'state', db.raw('period_from::text as period_from'), db.raw('period_to::text as period_to'), 'paid_at'),
    db('affiliate_discount_codes').where(scope).orderBy('code').select('code'),
    db('affiliate_code_requests').where(scope).orderBy([{ column: 'requested_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(20)
      .select('id', 'requested_code', 'state', 'reason', 'requested_at', 'decided_at'),
    availableCampaigns(db, portal, partner),
  ]);
  return {
    clicks: Number(clicks?.n ?? 0),
    conversions: Number(conversions?.n ?? 0),
    commissions: (commissions as Array<Record<string, unknown>>).map((c) => ({ state: String(c.state), currency: String(c.currency).trim(), amount: Number(c.amount).toFixed(2), count: Number(c.n) })),
    payouts: payouts.map((p) => ({ id: String(p.id), currency: String(p.currency).trim(), amount: Number(p.amount).toFixed(2), conversions: p.conversions, state: p.state, periodFrom: p.period_from, periodTo: p.period_to, paidAt: p.paid_at })),
    codes: codes.map((c) => c.code as string),
    codeRequests: requests.map((r) => ({ id: String(r.id), code: r.requested_code as string, state: r.state as string, reason: r.reason as string | null, requestedAt: r.requested_at, decidedAt: r.decided_at })),
    campaigns,
  };
}

/** The shop's enabled campaigns open to the partner (for the link generator's choice). */
export async function availableCampaigns(db: Db, portal: Portal, partner: PortalPartner) {
  const rows = await db('affiliate_campaigns as c').where({ 'c.shop_id': portal.shopId, 'c.enabled': true })
    .where((w) => w.where('c.availability', 'all').orWhereExists(db('affiliate_campaign_partners as cp').whereRaw('cp.campaign_id = c.id').where('cp.partner_id', partner.id)))
    .orderBy([{ column: 'c.is_default', order: 'desc' }, { column: 'c.id' }]).select('c.id', 'c.name');
  return rows.map((r) => ({ id: String(r.id), name: r.name as string }));
}

/**
 * Files a request for a custom discount code in the portal's shop, under the rules its decision will apply
 * (`decideCodeRequest`): only an approved partner gets a code, and a code someone else holds would be refused.
 * One pending request at a time per partner and shop.
 */
export async function requestDiscountCode(db: Db, portal: Portal, partner: PortalPartner, requested: string, now: Date): Promise<{ requestId: string; code: string }> {
  const code = requested.trim().toUpperCase();
  if (!CODE_PATTERN.test(code)) throw new AppError('INVALID_PARAMETER', 'A code has 3 to 20 letters, digits, `-` or `_`.', { param: 'code' });
  if (partner.state !== 'approved') {
    throw new AppError('STATE_CONFLICT', `Your account is ${partner.state}; codes are for approved partners.`, { state: partner.state });
  }
  return db.transaction(async (trx) => {
    // The partner's row is the lock: two requests sent at once cannot both find no pending one.
    await trx('affiliate_partners').where({ id: partner.id }).forUpdate().first('id');
    const pending = await trx('affiliate_code_requests').where({ shop_id: portal.shopId, partner_id: partner.id, state: 'pending' }).first('requested_code');
    if (pending) throw new AppError('STATE_CONFLICT', `Your request for \`${pending.requested_code}\` is still waiting for a decision.`, { state: 'pending' });
    const holder = await codeHolder(trx, portal.shopId, code, partner.id);
    if (holder) throw new AppError('CODE_ALREADY_RESERVED', `The code \`${code}\` is already taken in this shop; choose another.`, { code });
    const [row] = await trx('affiliate_code_requests').insert({ shop_id: portal.shopId, partner_id: partner.id, requested_code: code, state: 'pending', requested_at: now }).returning('id');
    return { requestId: String(row.id), code };
  });
}
