/**
 * Conversions: a synced order becomes a partner's conversion when it carries the partner's discount code, or when the
 * visitor who placed it clicked the partner's tracked link within the campaign's attribution window. The commission
 * state follows the order in the shop (cancelled, returned) and the programme's return period; payouts collect
 * approved commissions once a month. Every step is idempotent, so a re-sync or a retried load changes nothing.
 */
import type { Knex } from 'knex';
import { ORDER_STATUSES } from '../records/statuses.js';
import type { SqlRunner } from './sql.js';

const DAY_MS = 86_400_000;
/** Payouts are drawn up on this day of the month for the commissions approved before the month began. */
export const PAYOUT_DAY = 5;
/** A payout is paid this many days after it is drawn up. */
export const PAYOUT_PAID_AFTER_DAYS = 7;

// The shop's status dictionary decides what "cancelled" and "returned" mean; the demo platform is the one we have.
const CANCELLED_STATUS_IDS = [ORDER_STATUSES.cancelled.id];
const RETURNED_STATUS_IDS = [ORDER_STATUSES.returned.id];

/** Commission states and the reasons each carries. */
export const COMMISSION_STATES = ['pending', 'approved', 'rejected', 'paid'] as const;
export const COMMISSION_REASONS = [
  'return_period', 'awaiting_manual_approval', 'approved_automatically', 'approved_manually', 'rejected_manually', 'order_cancelled', 'order_returned', 'paid_out',
] as const;

/**
 * Creates the conversions of a shop's orders (all, or the given order codes) that a partner code or a tracked click
 * within the window attributes; the partner's own code wins over a click (the customer typed it). Existing conversions
 * only take the order's current status. Returns how many were inserted or changed.
 */
export async function attributeOrders(run: SqlRunner, shopId: string, now: Date, orderCodes?: string[]): Promise<number> {
  const k = run.knex;
  const subset = orderCodes ? 'and o.code = any(?::text[])' : '';
  const bindings: Knex.RawBinding[] = [shopId];
  if (orderCodes) bindings.push(orderCodes);
  bindings.push(now);
  const rows = await run.rows(k.raw(`
    with cand as materialized (
      select o.id, a.partner_id, a.campaign_id, a.source, a.click_id, a.coupon_code
      from orders o
      left join affiliate_discount_codes dc on dc.shop_id = o.shop_id and dc.code = o.coupon_code
      left join affiliate_order_visitors v on v.shop_id = o.shop_id and v.order_code = o.code
      left join lateral (
        select ck.id, ck.partner_id, ck.campaign_id from affiliate_clicks ck
        join affiliate_campaigns kc on kc.id = ck.campaign_id
        where ck.shop_id = o.shop_id and ck.visitor_id = v.visitor_id and ck.clicked_at <= o.created_at
          and ck.clicked_at >= o.created_at - make_interval(days => kc.attribution_window_days)
        order by ck.clicked_at desc, ck.id desc limit 1
      ) clk on true
      cross join lateral (
        select case when dc.partner_id is not null then 'coupon' else 'click' end as source,
          coalesce(dc.partner_id, clk.partner_id) as partner_id,
          case when dc.partner_id is not null
            then (select d.id from affiliate_campaigns d where d.shop_id = o.shop_id and d.is_default order by d.id limit 1)
            else clk.campaign_id end as campaign_id,
          case when dc.partner_id is null then clk.id end as click_id,
          case when dc.partner_id is not null then o.coupon_code end as coupon_code
      ) a
      where o.shop_id = ? ${subset} and (dc.partner_id is not null or clk.id is not null)
    )
    insert into affiliate_conversions (shop_id, order_id, order_code, partner_id, campaign_id, source, click_id, coupon_code, ordered_at,
      currency, commission_base, order_total_with_vat, commission, commission_state, state_reason, order_status_id, order_status_name, updated_at)
    select o.shop_id, o.id, o.code, a.partner_id, a.campaign_id, a.source, a.click_id, a.coupon_code, o.created_at, o.currency,
      b.base, o.total_with_vat,
      case when c.reward_type = 'percent' then round(b.base * c.reward_percent / 100, 2) else c.reward_amount end,
      'pending', 'return_period', o.status_id, o.status_name, ?
    from cand a
    join orders o on o.id = a.id
    join affiliate_campaigns c on c.id = a.campaign_id
    -- Commission base: the goods after discounts, without VAT and without shipping.
    cross join lateral (
      select coalesce(round(sum(i.quantity * i.unit_price_without_vat), 2), 0) as base from order_items i where i.order_id = o.id
    ) b
    on conflict (order_id) do update set order_status_id = excluded.order_status_id, order_status_name = excluded.order_status_name,
      updated_at = excluded.updated_at
      where (affiliate_conversions.order_status_id, affiliate_conversions.order_status_name)
        is distinct from (excluded.order_status_id, excluded.order_status_name)
    returning id`, bindings));
  return rows.length;
}

/**
 * Sets the commission state of the shop's conversions not yet paid out, as it stands at `now`: rejected when the
 * order was cancelled or returned (a status, or a withdrawal refunded by a claim), pending until the programme's
 * return period after the order ends, then approved automatically or waiting for a person's approval (campaign rule).
 */
export async function refreshCommissionStates(run: SqlRunner, shopId: string, now: Date, orderCodes?: string[]): Promise<number> {
  const k = run.knex;
  const rows = await run.rows(k.raw(`
    update affiliate_conversions cv set commission_state = s.state, state_reason = s.reason, approved_at = s.approved_at,
      credit_note_code = s.credit_note_code, updated_at = ?
    from (
      select cv2.id,
        case when o.status_id = any(?::int[]) or o.status_id = any(?::int[]) or ret.refunded then 'rejected'
             -- A person's decision stands until the order is cancelled or returned (AP2-3).
             when cv2.manual_decision is not null then cv2.manual_decision
             when ? < cv2.ordered_at + make_interval(days => p.return_period_days) then 'pending'
             when c.approval = 'manual' then 'pending'
             else 'approved' end as state,
        case when o.status_id = any(?::int[]) then 'order_cancelled'
             when o.status_id = any(?::int[]) or ret.refunded then 'order_returned'
             when cv2.manual_decision is not null then cv2.manual_decision || '_manually'
             when ? < cv2.ordered_at + make_interval(days => p.return_period_days) then 'return_period'
             when c.approval = 'manual' then 'awaiting_manual_approval'
             else 'approved_automatically' end as reason,
        case when o.status_id = any(?::int[]) or o.status_id = any(?::int[]) or ret.refunded then null
             when cv2.manual_decision = 'approved' then cv2.decided_at
             when cv2.manual_decision is null and c.approval = 'automatic'
               and ? >= cv2.ordered_at + make_interval(days => p.return_period_days)
             then cv2.ordered_at + make_interval(days => p.return_period_days) end as approved_at,
        cn.code as credit_note_code
      from affiliate_conversions cv2
      join orders o on o.id = cv2.order_id
      join affiliate_campaigns c on c.id = cv2.campaign_id
      join shops sh on sh.id = cv2.shop_id
      join affiliate_programmes p on p.account_id = sh.account_id
      cross join lateral (
        select exists (select 1 from claims cl where cl.shop_id = o.shop_id and cl.order_code = o.code
          and cl.type = 'withdrawal' and cl.resolution = 'refund') as refunded
      ) ret
      left join lateral (
        select d.code from documents d where d.shop_id = o.shop_id and d.order_code = o.code and d.type = 'credit_note'
        order by d.issued_at desc, d.id desc limit 1
      ) cn on true
      -- Rejected ones change only with their order's status, which the same batch refreshes.
      where cv2.shop_id = ? and cv2.payout_id is null and (cv2.commission_state <> 'rejected' or cv2.order_code = any(?::text[]))
    ) s
    where cv.id = s.id and (cv.commission_state, cv.state_reason, cv.approved_at, cv.credit_note_code)
      is distinct from (s.state, s.reason, s.approved_at, s.credit_note_code)
    returning cv.id`,
  [now, CANCELLED_STATUS_IDS, RETURNED_STATUS_IDS, now, CANCELLED_STATUS_IDS, RETURNED_STATUS_IDS, now,
    CANCELLED_STATUS_IDS, RETURNED_STATUS_IDS, now, shopId, orderCodes ?? []]));
  return rows.length;
}

function monthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

function nextMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * Draws up the shop's monthly payouts up to `now`: on day PAYOUT_DAY of each month, one payout per approved
 * partner and currency of the approved commissions approved before that month, when they reach the programme's payout
 * minimum (in EUR at the orders' rates; below it they wait for a later month). A payout is paid PAYOUT_PAID_AFTER_DAYS
 * later; its conversions then are `paid`.
 */
export async function settlePayouts(run: SqlRunner, shop: { id: string; accountId: string }, now: Date): Promise<void> {
  const accountId = shop.accountId;
  const k = run.knex;
  const [programme] = await run.rows<{ payout_minimum_eur: string }>(k('affiliate_programmes').where({ account_id: accountId }).select('payout_minimum_eur'));
  if (!programme) return;
  const [first] = await run.rows<{ first: Date | null }>(k('affiliate_conversions as cv').join('shops as s', 's.id', 'cv.shop_id')
    .where('cv.shop_id', shop.id).whereNotNull('cv.approved_at').whereNull('cv.payout_id').min({ first: 'cv.approved_at' }));
  if (first?.first) {
    for (let month = nextMonth(first.first.getTime()); month + (PAYOUT_DAY - 1) * DAY_MS <= now.getTime(); month = nextMonth(month)) {
      const drawnUp = new Date(month + (PAYOUT_DAY - 1) * DAY_MS);
      const due = await run.rows<{ partner_id: string; currency: string; amount: string; eur: string; n: number; ids: string[] }>(k.raw(`
        select cv.partner_id, cv.currency, sum(cv.commission)::text as amount, sum(cv.commission * o.eur_rate)::text as eur,
          count(*)::int as n, array_agg(cv.id order by cv.id)::text[] as ids
        from affiliate_conversions cv
        join orders o on o.id = cv.order_id
        join affiliate_partners pa on pa.id = cv.partner_id
        where cv.shop_id = ? and cv.payout_id is null and cv.commission_state = 'approved' and cv.approved_at < ? and pa.state = 'approved'
        group by cv.partner_id, cv.currency
        order by cv.partner_id, cv.currency`, [shop.id, new Date(month)]));
      for (const p of due) {
        if (Number(p.eur) < Number(programme.payout_minimum_eur)) continue;
        const [payout] = await run.rows<{ id: string }>(k('affiliate_payouts').insert({
          account_id: accountId, shop_id: shop.id, partner_id: p.partner_id, currency: p.currency, amount: p.amount, conversions: p.n, state: 'approved',
          period_from: new Date(monthStart(month - DAY_MS)).toISOString().slice(0, 10),
          period_to: new Date(month - DAY_MS).toISOString().slice(0, 10), created_at: drawnUp,
        }).returning('id'));
        await run.rows(k('affiliate_conversions').whereIn('id', p.ids).update({ payout_id: payout.id, updated_at: drawnUp }));
      }
    }
  }
  // Payouts due for payment: paid, and their conversions with them.
  const paid = await run.rows<{ id: string; paid_at: Date }>(k('affiliate_payouts').where({ shop_id: shop.id, state: 'approved' })
    .where('created_at', '<=', new Date(now.getTime() - PAYOUT_PAID_AFTER_DAYS * DAY_MS))
    .update({ state: 'paid', paid_at: k.raw(`created_at + interval '${PAYOUT_PAID_AFTER_DAYS} days'`) }).returning(['id', 'paid_at']));
  for (const p of paid) {
    await run.rows(k('affiliate_conversions').where({ payout_id: p.id })
      .update({ commission_state: 'paid', state_reason: 'paid_out', updated_at: p.paid_at }));
  }
}

/**
 * The whole step after orders of a shop were stored: attribution and commission states. Payouts are not drawn up
 * here: a person does that in the application (a monthly Temporal Schedule drafts them, AP2-4); only the demo load
 * settles its loaded history's payouts with `settlePayouts`.
 */
export async function settleShopAffiliate(run: SqlRunner, shop: { id: string; accountId: string }, now: Date, orderCodes?: string[]): Promise<void> {
  const [programme] = await run.rows(run.knex('affiliate_programmes').where({ account_id: shop.accountId }).select('account_id'));
  if (!programme) return;
  await attributeOrders(run, shop.id, now, orderCodes);
  await refreshCommissionStates(run, shop.id, now, orderCodes);
}
