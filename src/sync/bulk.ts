/**
 * Multi-row inserts as one JSON parameter (`jsonb_populate_recordset`): a batch of a thousand rows is one short
 * statement instead of one with tens of thousands of bind parameters, which Postgres and the driver handle far faster.
 */
import type { Knex } from 'knex';
import type { Row } from './rows.js';

export interface BulkInsertOptions {
  /** `on conflict (...) do nothing` on these columns. */
  ignoreConflictOn?: string[];
  returning?: string[];
}

/** Inserts rows (all with the same columns); returns the `returning` columns of the rows actually inserted. */
export async function bulkInsert<T = Record<string, unknown>>(trx: Knex.Transaction, table: string, rows: Row[], options: BulkInsertOptions = {}): Promise<T[]> {
  if (!rows.length) return [];
  const columns = Object.keys(rows[0]).map((c) => `"${c}"`).join(', ');
  const conflict = options.ignoreConflictOn ? ` on conflict (${options.ignoreConflictOn.map((c) => `"${c}"`).join(', ')}) do nothing` : '';
  const returning = options.returning ? ` returning ${options.returning.map((c) => `"${c}"`).join(', ')}` : '';
  const json = JSON.stringify(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && isJsonColumn(table, k) ? JSON.parse(v) : v]))));
  const result = await trx.raw(`insert into ${table} (${columns}) select ${columns} from jsonb_populate_recordset(null::${table}, ?::jsonb)${conflict}${returning}`, [json]);
  return result.rows as T[];
}

/** jsonb columns arrive in rows as JSON text (knex inserts them so); inside the JSON batch they must be values. */
function isJsonColumn(table: string, column: string): boolean {
  if (table === 'claims') return column === 'items' || column === 'status_history' || column === 'emails';
  return table === 'documents' && (column === 'lines' || column === 'vat_breakdown');
}
