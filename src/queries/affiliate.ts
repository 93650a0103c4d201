/**
 * Reads of the affiliate programme the service runs: settings, portal, partners, campaigns, conversions, codes and
 * payouts, and the period figures computed in SQL. Partner bank and tax columns are never selected here (explicit
 * column lists everywhere), so no REST or MCP answer can carry them.
 */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import type { ShopRef } from '../capabilities/context.js';
import { money } from '../money.js';
import { ORDER_STATUSES } from '../records/statuses.js';
import { iso, keysetPage, toPage, wherePeriod } from './keyset.js';

export const PARTNER_STATES = ['waiting', 'approved', 'rejected', 'suspended'] as const;
export const COMMISSION_STATES = ['pending', 'approved', 'rejected', 'paid'] as const;
export const CONVERSION_SOURCES = ['click', 'coupon'] as const;
export const PAYOUT_STATES = ['requested', 'approved', 'paid', 'cancelled'] as const;

// Contacts are selected (and removed by the projection without personal-data:read); bank and tax columns never are.
const partnerColumns = [
  'p.id', 'p.partner_index', 'p.handle', 'p.state', 'p.state_reason', 'p.state_changed_at', 'p.kind', 'p.web', 'p.language', 'p.registered_at',
  'p.referred_by_partner_id', 'p.contact_name', 'p.company', 'p.email', 'p.phone',
];

const dec = (v: string | number | null | undefined) => (v === null || v === undefined ? '0.00' : typeof v === 'number' ? v.toFixed(2) : v);

/** The programme settings of an account, or null when it runs no programme. */
export async function getProgrammeSettings(db: Db, accountId: string) {
  const row = await db('affiliate_programmes').where({ account_id: accountId }).first(
    'name', 'default_commission_percent', 'click_window_days', 'payout_minimum_eur', 'referrals_enabled', 'referral_commission_percent',
    'auto_approve_partners', 'return_period_days', 'contact_name', 'contact_email', 'colours', 'privacy_policy_url', 'updated_at',
  );
  if (!row) return null;
  return {
    name: row.name,
    commissions: { defaultPercent: row.default_commission_percent, returnPeriodDays: row.return_period_days },
    clicks: { attributionWindowDays: row.click_window_days, cookie: 'first_party' as const },
    payouts: { minimum: money(row.payout_minimum_eur, 'EUR') },
    referrals: { enabled: row.referrals_enabled, commissionPercent: row.referral_commission_percent },
    registration: { autoApprovePartners: row.auto_approve_partners },
    contactPerson: { name: row.contact_name, email: row.contact_email },
    colours: row.colours,
    privacyPolicyUrl: row.privacy_policy_url,
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The public portals of the shops the caller may see, by shop code. */
export async function listPortals(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null) {
  const q = db('affiliate_portals as pt').join('shops as s', 's.id', 'pt.shop_id').where('s.account_id', accountId).whereNull('s.removed_at')
    .select('s.code', 'pt.address', 'pt.custom_domain', 'pt.custom_domain_status', 'pt.registration_open', 'pt.registration_closed_reason',
      'pt.contact_name', 'pt.contact_email', 'pt.appearance', 'pt.texts', 'pt.updated_at')
    .orderBy('s.code');
  if (shopCodes) q.whereIn('s.code', [...shopCodes]);
  const rows = await q;
  return rows.map((r) => ({
    market: r.code,
    address: r.address,
    customDomain: r.custom_domain ? { domain: r.custom_domain, status: r.custom_domain_status } : null,
    registration: { open: r.registration_open, closedReason: r.registration_closed_reason },
    contactPerson: { name: r.contact_name, email: r.contact_email },
    appearance: r.appearance,
    texts: (r.texts as Array<{ language: string; page: string; status: string }>).map((t) => ({ language: t.language, page: t.page, status: t.status })),
    updatedAt: r.updated_at.toISOString(),
  }));
}

interface PartnerRow {
  id: string; partner_index: number | null; handle: string; state: string; state_reason: string | null; state_changed_at: Date; kind: string;
  web: string | null; language: string; registered_at: Date; referred_by_partner_id: string | null; contact_name: string | null;
  company: string | null; email: string | null; phone: string | null;
}

interface PerformanceRow {
  partner_id: string; clicks: number; conversions: number; revenue: string | null;
  pending: string | null; approved: string | null; paid: string | null; rejected: string | null;
}

/** Clicks, conversions, revenue and commissions per state of some partners in one shop (all time). */
async function partnerPerformance(db: Db, shopId: string, partnerIds: string[]): Promise<Map<string, PerformanceRow>> {
  if (!partnerIds.length) return new Map();
  const rows: PerformanceRow[] = await db.raw(`
    select p.id as partner_id,
      (select count(*)::int from affiliate_clicks c where c.shop_id = ? and c.partner_id = p.id) as clicks,
      count(cv.id)::int as conversions,
      sum(cv.order_total_with_vat) filter (where cv.commission_state <> 'rejected') as revenue,
      sum(cv.commission) filter (where cv.commission_state = 'pending') as pending,
      sum(cv.commission) filter (where cv.commission_state = 'approved') as approved,
      sum(cv.commission) filter (where cv.commission_state = 'paid') as paid,
      sum(cv.commission) filter (where cv.commission_state = 'rejected') as rejected
    from affiliate_partners p
    left join affiliate_conversions cv on cv.partner_id = p.id and cv.shop_id = ?
    where p.id = any(?::bigint[])
    group by p.id`, [shopId, shopId, partnerIds]).then((r: { rows: PerformanceRow[] }) => r.rows);
  return new Map(rows.map((r) => [String(r.partner_id), r]));
}

async function partnerCodes(db: Db, shopId: string, partnerIds: string[]): Promise<Map<string, string[]>> {
  const rows: Array<{ partner_id: string; code: string }> = await db('affiliate_discount_codes').where({ shop_id: shopId })
    .whereIn('partner_id', partnerIds).orderBy('code').select('partner_id', 'code');
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(String(r.partner_id), [...(out.get(String(r.partner_id)) ?? []), r.code]);
  return out;
}

function toPartner(row: PartnerRow, shop: ShopRef, perf: PerformanceRow | undefined, codes: string[]) {
  const m = (v: string | null | undefined) => money(dec(v), shop.currency);
  return {
    partnerId: String(row.id),
    handle: row.handle,
    state: row.state as (typeof PARTNER_STATES)[number],
    stateReason: row.state_reason,
    stateChangedAt: row.state_changed_at.toISOString(),
    kind: row.kind,
    web: row.web,
    language: row.language,
    registeredAt: row.registered_at.toISOString(),
    referredByPartnerId: row.referred_by_partner_id === null ? null : String(row.referred_by_partner_id),
    contact: { name: row.contact_name, company: row.company, email: row.email, phone: row.phone },
    discountCodes: codes,
    performance: {
      clicks: perf?.clicks ?? 0,
      conversions: perf?.conversions ?? 0,
      revenueWithVat: m(perf?.revenue),
      commissions: { pending: m(perf?.pending), approved: m(perf?.approved), paid: m(perf?.paid), rejected: m(perf?.rejected) },
    },
  };
}

/** A page of the account's partners, newest registration first, with their performance in one shop. */
export async function listPartners(db: Db, accountId: string, shop: ShopRef, state: string | undefined, page: PageRequest) {
  const q = db('affiliate_partners as p').select(partnerColumns).where('p.account_id', accountId);
  if (state) q.where('p.state', state);
  const rows: PartnerRow[] = await keysetPage(q, 'p.registered_at', 'p.id', page);
  const result = toPage(rows, page, (r) => r.registered_at, (r) => r);
  const ids = result.rows.map((r) => String(r.id));
  const [perf, codes] = await Promise.all([partnerPerformance(db, shop.id, ids), partnerCodes(db, shop.id, ids)]);
  return { items: result.rows.map((r) => toPartner(r, shop, perf.get(String(r.id)), codes.get(String(r.id)) ?? [])), hasMore: result.hasMore, last: result.last };
}

/** One partner with its performance in the shop and the shop's campaigns available to it; null when not the account's. */
export async function getPartner(db: Db, accountId: string, shop: ShopRef, partnerId: string) {
  const row: PartnerRow | undefined = await db('affiliate_partners as p').select(partnerColumns).where({ 'p.account_id': accountId, 'p.id': partnerId }).first();
  if (!row) return null;
  const [perf, codes, campaigns] = await Promise.all([
    partnerPerformance(db, shop.id, [partnerId]), partnerCodes(db, shop.id, [partnerId]),
    listCampaignRows(db, shop.id).where((w) => w.where('c.availability', 'all')
      .orWhereExists(db('affiliate_campaign_partners as cp').whereRaw('cp.campaign_id = c.id').where('cp.partner_id', partnerId))),
  ]);
  return {
    ...toPartner(row, shop, perf.get(partnerId), codes.get(partnerId) ?? []),
    availableCampaigns: (await withCampaignCounts(db, shop, campaigns)).filter((c) => c.enabled),
  };
}

interface CampaignRow {
  id: string; name: string; reward_type: 'percent' | 'fixed'; reward_percent: string | null; reward_amount: string | null; currency: string;
  attribution_window_days: number; availability: 'all' | 'chosen'; approval: 'manual' | 'automatic'; enabled: boolean; is_default: boolean;
  descriptions: Record<string, string>; created_at: Date;
}

function listCampaignRows(db: Db, shopId: string) {
  return db('affiliate_campaigns as c').where('c.shop_id', shopId).orderBy('c.id').select(
    'c.id', 'c.name', 'c.reward_type', 'c.reward_percent', 'c.reward_amount', 'c.currency', 'c.attribution_window_days', 'c.availability',
    'c.approval', 'c.enabled', 'c.is_default', 'c.descriptions', 'c.created_at',
  );
}

async function withCampaignCounts(db: Db, shop: ShopRef, rows: CampaignRow[]) {
  const ids = rows.map((r) => String(r.id));
  const counts: Array<{ id: string; chosen: string[] | null; clicks: number; conversions: number; commission: string | null }> = ids.length
    ? (await db.raw(`
      select c.id,
        (select array_agg(cp.partner_id::text order by cp.partner_id) from affiliate_campaign_partners cp where cp.campaign_id = c.id) as chosen,
        (select count(*)::int from affiliate_clicks k where k.campaign_id = c.id) as clicks,
        (select count(*)::int from affiliate_conversions v where v.campaign_id = c.id) as conversions,
        (select sum(v.commission) from affiliate_conversions v where v.campaign_id = c.id and v.commission_state <> 'rejected') as commission
      from affiliate_campaigns c where c.id = any(?::bigint[])`, [ids])).rows
    : [];
  const byId = new Map(counts.map((c) => [String(c.id), c]));
  const [{ approved }] = await db('affiliate_partners as p').join('shops as s', 's.account_id', 'p.account_id')
    .where({ 's.id': shop.id, 'p.state': 'approved' }).count<{ approved: string }[]>({ approved: '*' });
  return rows.map((r) => {
    const c = byId.get(String(r.id));
    const chosen = c?.chosen ?? [];
    return {
      campaignId: String(r.id),
      name: r.name,
      reward: r.reward_type === 'percent'
        ? { type: 'percent' as const, percent: r.reward_percent, amount: null }
        : { type: 'fixed' as const, percent: null, amount: money(r.reward_amount!, r.currency) },
      attributionWindowDays: r.attribution_window_days,
      availability: { to: r.availability, partnerIds: r.availability === 'chosen' ? chosen : [] },
      conversionApproval: r.approval,
      enabled: r.enabled,
      isDefault: r.is_default,
      descriptions: r.descriptions,
      createdAt: r.created_at.toISOString(),
      counts: {
        partners: r.availability === 'all' ? Number(approved) : chosen.length,
        clicks: c?.clicks ?? 0,
        conversions: c?.conversions ?? 0,
        commission: money(dec(c?.commission), r.currency),
      },
    };
  });
}

/** Every campaign of a shop with reward, availability and counts. */
export async function listCampaigns(db: Db, shop: ShopRef) {
  return withCampaignCounts(db, shop, await listCampaignRows(db, shop.id));
}

/** One campaign of a shop, or null. */
export async function getCampaign(db: Db, shop: ShopRef, campaignId: string) {
  const rows: CampaignRow[] = await listCampaignRows(db, shop.id).where('c.id', campaignId);
  if (!rows.length) return null;
  return (await withCampaignCounts(db, shop, rows))[0];
}

const conversionColumns = [
  'cv.id', 'cv.order_code', 'cv.ordered_at', 'cv.partner_id', 'p.handle as partner_handle', 'cv.campaign_id', 'cv.source', 'cv.click_id', 'cv.coupon_code',
  'cv.currency', 'cv.commission_base', 'cv.order_total_with_vat', 'cv.commission', 'cv.commission_state', 'cv.state_reason', 'o.status_id', 'o.status_name',
  'cv.approved_at', 'cv.credit_note_code', 'cv.payout_id', 'pay.state as payout_state',
];

function conversionQuery(db: Db, shopId: string) {
  return db('affiliate_conversions as cv')
    .join('affiliate_partners as p', 'p.id', 'cv.partner_id')
    .join('orders as o', 'o.id', 'cv.order_id')
    .leftJoin('affiliate_payouts as pay', 'pay.id', 'cv.payout_id')
    .select(conversionColumns).where('cv.shop_id', shopId);
}

function toConversion(r: Record<string, any>) {
  const currency = r.currency.trim();
  return {
    conversionId: String(r.id),
    orderCode: r.order_code,
    orderedAt: r.ordered_at.toISOString(),
    partnerId: String(r.partner_id),
    partnerHandle: r.partner_handle,
    campaignId: String(r.campaign_id),
    source: r.source as (typeof CONVERSION_SOURCES)[number],
    clickId: r.click_id === null ? null : String(r.click_id),
    couponCode: r.coupon_code,
    commissionBase: money(r.commission_base, currency),
    orderTotalWithVat: money(r.order_total_with_vat, currency),
    commission: money(r.commission, currency),
    commissionState: r.commission_state as (typeof COMMISSION_STATES)[number],
    stateReason: r.state_reason,
    orderStatus: { id: r.status_id, name: r.status_name },
    approvedAt: iso(r.approved_at),
    creditNoteCode: r.credit_note_code,
    payout: r.payout_id === null ? null : { payoutId: String(r.payout_id), state: r.payout_state },
  };
}

export interface ConversionFilters { state?: string; partnerId?: string; source?: string }

/** A page of a shop's conversions of the period (by order time), newest first. */
export async function listConversions(db: Db, shopId: string, period: Period | null, filters: ConversionFilters, page: PageRequest) {
  const q = conversionQuery(db, shopId);
  if (filters.state) q.where('cv.commission_state', filters.state);
  if (filters.partnerId) q.where('cv.partner_id', filters.partnerId);
  if (filters.source) q.where('cv.source', filters.source);
  wherePeriod(q, 'cv.ordered_at', period);
  const rows = await keysetPage(q, 'cv.ordered_at', 'cv.id', page);
  const result = toPage(rows as Array<Record<string, any> & { id: string }>, page, (r) => r.ordered_at, toConversion);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/** One conversion of a shop, or null. */
export async function getConversion(db: Db, shopId: string, conversionId: string) {
  const row = await conversionQuery(db, shopId).where('cv.id', conversionId).first();
  return row ? toConversion(row) : null;
}

/** The shop's partner discount codes with how many orders used each and their revenue (cancelled and returned orders excluded from revenue). */
export async function listDiscountCodes(db: Db, shop: ShopRef) {
  const rows: Array<Record<string, any>> = (await db.raw(`
    select dc.code, dc.partner_id, p.handle, p.state, dc.created_at,
      count(o.id)::int as orders,
      sum(o.total_with_vat) filter (where o.status_id not in (${ORDER_STATUSES.cancelled.id}, ${ORDER_STATUSES.returned.id})) as revenue,
      count(cv.id)::int as conversions
    from affiliate_discount_codes dc
    join affiliate_partners p on p.id = dc.partner_id
    left join orders o on o.shop_id = dc.shop_id and o.coupon_code = dc.code
    left join affiliate_conversions cv on cv.order_id = o.id
    where dc.shop_id = ?
    group by dc.id, p.id
    order by dc.code`, [shop.id])).rows;
  return rows.map((r) => ({
    code: r.code,
    partnerId: String(r.partner_id),
    partnerHandle: r.handle,
    partnerState: r.state,
    createdAt: r.created_at.toISOString(),
    usage: { orders: r.orders, conversions: r.conversions, revenueWithVat: money(dec(r.revenue), shop.currency) },
  }));
}

/** Partners' requests for a custom code in a shop: pending first, then newest. */
export async function listCodeRequests(db: Db, shopId: string) {
  const rows = await db('affiliate_code_requests as r').join('affiliate_partners as p', 'p.id', 'r.partner_id').where('r.shop_id', shopId)
    .select('r.id', 'r.partner_id', 'p.handle', 'r.requested_code', 'r.state', 'r.reason', 'r.requested_at', 'r.decided_at')
    .orderByRaw(`(r.state = 'pending') desc, r.requested_at desc, r.id desc`);
  return rows.map((r) => ({
    requestId: String(r.id), partnerId: String(r.partner_id), partnerHandle: r.handle, requestedCode: r.requested_code,
    state: r.state, reason: r.reason, requestedAt: r.requested_at.toISOString(), decidedAt: iso(r.decided_at),
  }));
}

/** A page of a shop's commission payouts, newest first; no bank or billing data. */
export async function listPayouts(db: Db, shopId: string, period: Period | null, state: string | undefined, page: PageRequest) {
  const q = db('affiliate_payouts as y').join('affiliate_partners as p', 'p.id', 'y.partner_id').where('y.shop_id', shopId)
    .select('y.id', 'y.partner_id', 'p.handle', 'y.currency', 'y.amount', 'y.conversions', 'y.state',
      db.raw('y.period_from::text as period_from'), db.raw('y.period_to::text as period_to'), 'y.created_at', 'y.paid_at');
  if (state) q.where('y.state', state);
  wherePeriod(q, 'y.created_at', period);
  const rows = await keysetPage(q, 'y.created_at', 'y.id', page);
  const result = toPage(rows as Array<Record<string, any> & { id: string }>, page, (r) => r.created_at, (r) => ({
    payoutId: String(r.id), partnerId: String(r.partner_id), partnerHandle: r.handle, amount: money(r.amount, r.currency),
    conversions: r.conversions, state: r.state, approvedBefore: r.period_to, createdAt: r.created_at.toISOString(), paidAt: iso(r.paid_at),
  }));
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/** Overview of a shop for a period, in SQL: clicks, conversions by source and state, revenue, commissions, partners. */
export async function affiliateSummary(db: Db, shop: ShopRef, accountId: string, period: Period) {
  const inPeriod = (column: string) => `${column} >= (?::date)::timestamp at time zone ? and ${column} < ((?::date) + 1)::timestamp at time zone ?`;
  const pb = [period.from, period.timeZone, period.to, period.timeZone];
  const row = (await db.raw(`
    with cv as (select * from affiliate_conversions where shop_id = ? and ${inPeriod('ordered_at')}),
         ck as (select partner_id from affiliate_clicks where shop_id = ? and ${inPeriod('clicked_at')})
    select
      (select count(*)::int from ck) as clicks,
      (select count(*)::int from cv) as conversions,
      (select count(*)::int from cv where source = 'click') as by_click,
      (select count(*)::int from cv where source = 'coupon') as by_coupon,
      (select sum(order_total_with_vat) from cv where commission_state <> 'rejected') as revenue,
      (select sum(commission) from cv where commission_state = 'pending') as pending,
      (select sum(commission) from cv where commission_state = 'approved') as approved,
      (select sum(commission) from cv where commission_state = 'paid') as paid,
      (select sum(commission) from cv where commission_state = 'rejected') as rejected,
      (select count(*)::int from cv where commission_state = 'pending') as n_pending,
      (select count(*)::int from cv where commission_state = 'approved') as n_approved,
      (select count(*)::int from cv where commission_state = 'paid') as n_paid,
      (select count(*)::int from cv where commission_state = 'rejected') as n_rejected,
      (select count(distinct partner_id)::int from (select partner_id from ck union select partner_id from cv) a) as active_partners`,
  [shop.id, ...pb, shop.id, ...pb])).rows[0];
  const states: Array<{ state: string; n: number }> = (await db.raw(
    'select state, count(*)::int as n from affiliate_partners where account_id = ? group by state', [accountId])).rows;
  const m = (v: string | null) => money(dec(v), shop.currency);
  const partnerCount = (s: string) => states.find((x) => x.state === s)?.n ?? 0;
  return {
    clicks: row.clicks,
    conversions: {
      total: row.conversions, bySource: { click: row.by_click, coupon: row.by_coupon },
      byState: { pending: row.n_pending, approved: row.n_approved, paid: row.n_paid, rejected: row.n_rejected },
      conversionRate: row.clicks > 0 ? Number((row.by_click / row.clicks).toFixed(4)) : null,
    },
    revenueWithVat: m(row.revenue),
    commissions: { pending: m(row.pending), approved: m(row.approved), paid: m(row.paid), rejected: m(row.rejected) },
    partners: {
      total: states.reduce((a, s) => a + s.n, 0), approved: partnerCount('approved'), waiting: partnerCount('waiting'),
      suspended: partnerCount('suspended'), rejected: partnerCount('rejected'), activeInPeriod: row.active_partners,
    },
  };
}

/** Daily timeline, attribution sources and the partner ranking of a shop for a period, in SQL. */
export async function affiliateStatistics(db: Db, shop: ShopRef, period: Period) {
  const tz = period.timeZone;
  const bounds = [period.from, tz, period.to, tz];
  const inPeriod = (column: string) => `${column} >= (?::date)::timestamp at time zone ? and ${column} < ((?::date) + 1)::timestamp at time zone ?`;
  const timeline: Array<Record<string, any>> = (await db.raw(`
    with days as (select generate_series(?::date, ?::date, interval '1 day')::date as day),
    ck as (select (clicked_at at time zone ?)::date as day, count(*)::int as n from affiliate_clicks where shop_id = ? and ${inPeriod('clicked_at')} group by 1),
    cv as (select (ordered_at at time zone ?)::date as day, count(*)::int as n, sum(commission) filter (where commission_state <> 'rejected') as commission
           from affiliate_conversions where shop_id = ? and ${inPeriod('ordered_at')} group by 1)
    select days.day::text as day, coalesce(ck.n, 0) as clicks, coalesce(cv.n, 0) as conversions, cv.commission
    from days left join ck on ck.day = days.day left join cv on cv.day = days.day order by days.day`,
  [period.from, period.to, tz, shop.id, ...bounds, tz, shop.id, ...bounds])).rows;
  const sources: Array<Record<string, any>> = (await db.raw(`
    select source, count(*)::int as conversions, sum(commission) filter (where commission_state <> 'rejected') as commission,
      sum(order_total_with_vat) filter (where commission_state <> 'rejected') as revenue
    from affiliate_conversions where shop_id = ? and ${inPeriod('ordered_at')} group by source order by source`, [shop.id, ...bounds])).rows;
  const ranking: Array<Record<string, any>> = (await db.raw(`
    with ck as (select partner_id, count(*)::int as clicks from affiliate_clicks where shop_id = ? and ${inPeriod('clicked_at')} group by 1),
    cv as (select partner_id, count(*)::int as conversions, sum(commission) filter (where commission_state <> 'rejected') as commission,
             sum(order_total_with_vat) filter (where commission_state <> 'rejected') as revenue
           from affiliate_conversions where shop_id = ? and ${inPeriod('ordered_at')} group by 1)
    select p.id, p.handle, coalesce(ck.clicks, 0) as clicks, coalesce(cv.conversions, 0) as conversions, cv.commission, cv.revenue
    from affiliate_partners p
    left join ck on ck.partner_id = p.id left join cv on cv.partner_id = p.id
    where ck.partner_id is not null or cv.partner_id is not null
    order by coalesce(cv.commission, 0) desc, coalesce(cv.conversions, 0) desc, coalesce(ck.clicks, 0) desc, p.id`,
  [shop.id, ...bounds, shop.id, ...bounds])).rows;
  const m = (v: string | null) => money(dec(v), shop.currency);
  return {
    timeline: timeline.map((d) => ({ date: d.day, clicks: d.clicks, conversions: d.conversions, commission: m(d.commission) })),
    sources: CONVERSION_SOURCES.map((s) => {
      const r = sources.find((x) => x.source === s);
      return { source: s, conversions: r?.conversions ?? 0, commission: m(r?.commission ?? null), revenueWithVat: m(r?.revenue ?? null) };
    }),
    partnerRanking: ranking.map((r, i) => ({
      rank: i + 1, partnerId: String(r.id), handle: r.handle, clicks: r.clicks, conversions: r.conversions,
      commission: m(r.commission), revenueWithVat: m(r.revenue),
    })),
  };
}
