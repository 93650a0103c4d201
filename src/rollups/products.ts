/**
 * Sales per product and business day, from documents: an invoice adds the product lines of its order; a credit note
 * takes back all of them when it reverses the whole order, else the lines of the claim it refunds. Recomputed per
 * business day from the raw rows in the transaction that stores the documents (or the claims they refund), like the
 * order rollups (decisions N1, N9).
 */
import type { Knex } from 'knex';
import { knexRunner, type SqlRunner } from './orders.js';

/**
 * Signed product lines of the shop's invoices and credit notes whose business date is in `days` ($2; null = all).
 * The business date is the tax date, or the local issue date without one (SPEC); documents are narrowed by issue
 * instant first (a day either side), so the keyset index serves a refresh of a few days.
 */
export const DOCUMENT_LINES = `
  tz as (select time_zone from shops where id = $1),
  docs as (
    select d.*, coalesce(d.tax_date, (d.issued_at at time zone tz.time_zone)::date) as business_day
    from documents d, tz
    where d.shop_id = $1 and d.type in ('invoice', 'credit_note')
      and ($2::date[] is null or (
        d.issued_at >= ((select min(x) from unnest($2::date[]) x) - 1)::timestamp at time zone tz.time_zone
        and d.issued_at < ((select max(x) from unnest($2::date[]) x) + 2)::timestamp at time zone tz.time_zone))
  ),
  doc_lines as (
    select docs.business_day, case when docs.type = 'invoice' then 1 else -1 end as sign, i.product_code, i.name, i.quantity,
           i.unit_price_without_vat, i.unit_price_with_vat, i.purchase_price_without_vat, o.eur_rate
    from docs
    join orders o on o.shop_id = docs.shop_id and o.code = docs.order_code
    join order_items i on i.order_id = o.id and i.kind = 'product'
    where docs.type = 'invoice' or docs.total_with_vat = -o.total_with_vat
    union all
    select docs.business_day, -1, i.product_code, i.name, ci.quantity,
           i.unit_price_without_vat, i.unit_price_with_vat, i.purchase_price_without_vat, o.eur_rate
    from docs
    join orders o on o.shop_id = docs.shop_id and o.code = docs.order_code
    join claims c on c.shop_id = docs.shop_id and c.order_code = docs.order_code and c.resolution = 'refund'
    cross join lateral jsonb_to_recordset(c.items) as ci("lineNo" int, quantity numeric)
    join order_items i on i.order_id = o.id and i.line_no = ci."lineNo" and i.kind = 'product'
    where docs.type = 'credit_note' and docs.total_with_vat <> -o.total_with_vat
  ),
  lines as (select * from doc_lines where $2::date[] is null or business_day = any($2::date[]))`;

async function refresh(run: SqlRunner, shopId: string, days: string[] | null): Promise<void> {
  await run(`delete from product_daily_rollups where shop_id = $1 and ($2::date[] is null or day = any($2::date[]))`, [shopId, days]);
  await run(`
    with ${DOCUMENT_LINES}
    insert into product_daily_rollups (shop_id, day, product_code, mapped, name, quantity, revenue_without_vat_eur, revenue_with_vat_eur, cost_eur, lines, costed_lines, credited_lines)
    select $1, l.business_day, l.product_code, exists (select 1 from products p where p.shop_id = $1 and p.code = l.product_code), max(l.name),
           sum(l.sign * l.quantity), sum(l.sign * l.quantity * l.unit_price_without_vat * l.eur_rate), sum(l.sign * l.quantity * l.unit_price_with_vat * l.eur_rate),
           coalesce(sum(l.sign * l.quantity * l.purchase_price_without_vat * l.eur_rate), 0), count(*), count(l.purchase_price_without_vat), count(*) filter (where l.sign < 0)
    from lines l
    group by l.business_day, l.product_code`, [shopId, days]);
}

/** Recomputes the business days of the given documents (by id) in this transaction. */
export async function refreshDocumentDays(trx: Knex.Transaction, shopId: string, documentIds: string[]): Promise<void> {
  if (!documentIds.length) return;
  const run = knexRunner(trx);
  const rows = await run(`
    select array_agg(distinct coalesce(d.tax_date, (d.issued_at at time zone s.time_zone)::date)::text) as days
    from documents d join shops s on s.id = d.shop_id where d.shop_id = $1 and d.id = any($2::bigint[]) and d.type in ('invoice', 'credit_note')`, [shopId, documentIds]);
  const days = (rows[0] as { days: string[] | null }).days;
  if (days) await refresh(run, shopId, days);
}

/** Recomputes the days of the credit notes of the given orders (a claim arrived or changed after its credit note). */
export async function refreshCreditNotesOfOrders(trx: Knex.Transaction, shopId: string, orderCodes: string[]): Promise<void> {
  if (!orderCodes.length) return;
  const ids = await trx('documents').where({ shop_id: shopId, type: 'credit_note' }).whereIn('order_code', orderCodes).pluck('id');
  await refreshDocumentDays(trx, shopId, ids.map(String));
}

/** Rebuilds every product rollup of a shop (loader, migration). */
export async function rebuildProductRollups(db: Knex | Knex.Transaction | SqlRunner, shopId: string): Promise<void> {
  const run = typeof db === 'function' && !('raw' in db) ? (db as SqlRunner) : knexRunner(db as Knex);
  await refresh(run, shopId, null);
}
