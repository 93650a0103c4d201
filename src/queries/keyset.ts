/** Keyset pagination and period filters, written once for every listing (D5, D7). No OFFSET anywhere. */
import type { Knex } from 'knex';
import type { PageRequest, PageResult } from '../capabilities/types.js';
import type { Period } from '../capabilities/period.js';

/** Newest first by (time column, id); fetches one extra row to know whether a next page exists. */
export function keysetPage(q: Knex.QueryBuilder, timeColumn: string, idColumn: string, page: PageRequest): Knex.QueryBuilder {
  if (page.after) q.whereRaw(`(${timeColumn}, ${idColumn}) < (?::timestamptz, ?::bigint)`, [page.after.key, page.after.id]);
  return q.orderBy([{ column: timeColumn, order: 'desc' }, { column: idColumn, order: 'desc' }]).limit(page.limit + 1);
}

/** Cuts the extra row and records where the page ended. */
export function toPage<Row extends { id: string | number }, Item>(rows: Row[], page: PageRequest, timeOf: (row: Row) => Date, map: (row: Row) => Item): PageResult<Item> & { rows: Row[] } {
  const hasMore = rows.length > page.limit;
  const kept = hasMore ? rows.slice(0, page.limit) : rows;
  const lastRow = kept[kept.length - 1];
  return {
    rows: kept,
    items: kept.map(map),
    hasMore,
    last: lastRow ? { key: timeOf(lastRow).toISOString(), id: String(lastRow.id) } : null,
  };
}

/** Restricts a timestamp column to a period of inclusive calendar dates in the period's time zone. */
export function wherePeriod(q: Knex.QueryBuilder, column: string, period: Period | null): Knex.QueryBuilder {
  if (!period) return q;
  return q
    .whereRaw(`${column} >= (?::date)::timestamp at time zone ?`, [period.from, period.timeZone])
    .whereRaw(`${column} < ((?::date) + 1)::timestamp at time zone ?`, [period.to, period.timeZone]);
}

export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
