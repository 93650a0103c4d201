/** Database access: one knex instance per process, migrations from an explicit, ordered list. */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrations } from './migrations/index.js';

// NUMERIC and BIGINT arrive as strings (exact money, D4); timestamps as Date.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export type Db = Knex;

/** Creates a knex instance for the given Postgres URL. */
export function createDb(url: string, pool: { min?: number; max?: number } = {}): Db {
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    migrations: { migrationSource: migrationSource, tableName: 'knex_migrations' },
  });
}

const migrationSource: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: async () => migrations,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

/** Brings the schema up to date; safe to call from several processes (knex takes a lock). */
export async function migrateLatest(db: Db): Promise<void> {
  await db.migrate.latest();
}
