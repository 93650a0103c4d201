/** Reference arithmetic the tests compute expected figures with, independently of the code under test (one copy). */
import type { Knex } from 'knex';

/** percentile_cont: linear interpolation between the two nearest ranks, as Postgres computes it. */
export function percentileCont(sorted: number[], fraction: number): number {
  const position = fraction * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  if (lower === upper) return sorted[lower];
  return sorted[lower] + (position - lower) * (sorted[upper] - sorted[lower]);
}

/** Rounds a decimal string half away from zero to `places` digits (NUMERIC round). */
export function roundDecimal(decimal: string, places: number): number {
  const negative = decimal.startsWith('-');
  const [whole, fraction = ''] = decimal.replace('-', '').split('.');
  const digits = (fraction + '0'.repeat(places + 1)).slice(0, places + 1);
  let scaled = BigInt(whole + digits.slice(0, places));
  if (Number(digits[places]) >= 5) scaled += 1n;
  const value = Number(scaled) / 10 ** places;
  return negative ? -value : value;
}

/** Hours, 2 decimals, from a millisecond figure (float8 → NUMERIC keeps 15 significant digits). */
export const hoursOf = (ms: number): number => roundDecimal((ms / 3_600_000).toPrecision(15), 2);

/** The calendar date (YYYY-MM-DD) at `now` in `timeZone`. */
export function todayIn(timeZone: string, now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/** The date `days` calendar days before `date` (YYYY-MM-DD). */
export function daysBefore(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * What a November 2026 payout run owes per `shop/partner/currency` (the commission ids), computed from the rows: approved
 * before December, of an approved partner, not in a payout, and at least the programme's minimum in EUR.
 */
export async function dueGroups(db: Knex, accountId: string): Promise<Map<string, string[]>> {
  const rows = await db.raw(`
    select cv.shop_id, cv.partner_id, cv.currency, array_agg(cv.id order by cv.id)::text[] as ids, sum(cv.commission * o.eur_rate) as eur, p.payout_minimum_eur as minimum
    from affiliate_conversions cv join orders o on o.id = cv.order_id join affiliate_partners pa on pa.id = cv.partner_id
    join shops s on s.id = cv.shop_id join affiliate_programmes p on p.account_id = s.account_id
    where s.account_id = ? and cv.payout_id is null and cv.commission_state = 'approved' and cv.approved_at < '2026-12-01' and pa.state = 'approved'
    group by cv.shop_id, cv.partner_id, cv.currency, p.payout_minimum_eur`, [accountId]);
  const groups = new Map<string, string[]>();
  for (const r of rows.rows) if (Number(r.eur) >= Number(r.minimum)) groups.set(`${r.shop_id}/${r.partner_id}/${r.currency}`, r.ids);
  return groups;
}
