/** Database access: one knex instance per process, migrations from an explicit, ordered list. */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { logger } from '../logger.js';
import { migrations } from './migrations/index.js';

// NUMERIC and BIGINT arrive as strings (exact money, D4); timestamps as Date.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export type Db = Knex;

const knexLog = logger.child({ component: 'knex' });

/** Creates a knex instance for the given Postgres URL. */
export function createDb(url: string, pool: { min?: number; max?: number } = {}): Db {
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    migrations: { migrationSource: migrationSource, tableName: 'knex_migrations' },
    // Knex's own warnings (e.g. a failed connection attempt) as JSON lines of our log, not plain text on stderr.
    log: {
      warn: (message: unknown) => knexLog.warn(String(message).split('\n')[0]),
      error: (message: unknown) => knexLog.error(String(message).split('\n')[0]),
      deprecate: (method: string, alternative: string) => knexLog.warn(`${method} is deprecated, use ${alternative}`),
      debug: (message: unknown) => knexLog.debug({ message }, 'knex'),
    },
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
