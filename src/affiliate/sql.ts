/**
 * Runs knex-built SQL either on a knex transaction (the sync) or on the raw connection of the demo load's COPY
 * transaction, so the affiliate programme is seeded and attributed atomically with the orders it points at.
 */
import type { Knex } from 'knex';

export interface SqlRunner {
  /** Builds queries (never awaited directly: always pass them to `rows`). */
  knex: Knex;
  rows<T = Record<string, any>>(query: Knex.QueryBuilder | Knex.Raw): Promise<T[]>;
}

/** A runner over knex (a transaction or the pool). */
export function knexRunner(knex: Knex): SqlRunner {
  return {
    knex,
    rows: async <T>(query: Knex.QueryBuilder | Knex.Raw) => {
      const result: any = await query;
      return (Array.isArray(result) ? result : result.rows) as T[];
    },
  };
}

interface PgQueryable {
  query<R = any>(sql: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** A runner over a raw pg connection; queries are built by `knex` and sent as native SQL. */
export function pgRunner(knex: Knex, conn: PgQueryable): SqlRunner {
  return {
    knex,
    rows: async <T>(query: Knex.QueryBuilder | Knex.Raw) => {
      const { sql, bindings } = query.toSQL().toNative();
      return (await conn.query<T>(sql, bindings as unknown[])).rows;
    },
  };
}
