/** A private copy of the migrated, demo-loaded template database for one test file (real Postgres, never mocked). */
import crypto from 'node:crypto';
import pg from 'pg';
import { createDb, migrateLatest, type Db } from '../../src/db/knex.js';

/** The URL of `database` on the server of `adminUrl`. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export interface TestDatabase {
  db: Db;
  url: string;
  drop: () => Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env.TEST_TEMPLATE_DB;
  if (!template || !process.env.TEST_PG_ADMIN_URL) throw new Error('Run tests with npm test (TEST_TEMPLATE_DB/TEST_PG_ADMIN_URL missing).');
  const name = `svc_test_${crypto.randomBytes(6).toString('hex')}`;
  // Two files may copy the template at once; Postgres refuses a template in use, so retry briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      // On the run's own cluster (fsync off) copying the files is 3–6 times faster than the WAL_LOG default, which
      // writes every page of the template through the WAL; scripts/test.mjs sets it only there (Q13).
      const strategy = process.env.TEST_PG_COPY_STRATEGY === 'FILE_COPY' ? ' strategy file_copy' : '';
      await admin((c) => c.query(`create database ${name} template ${template}${strategy}`));
      break;
    } catch (error) {
      if (attempt > 50 || !/being accessed by other users/.test(String(error))) throw error;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  return openTestDatabase(name);
}

/** The created database `name` with its connection; `drop` closes the connection and drops the database. */
function openTestDatabase(name: string): TestDatabase {
  const url = databaseUrl(process.env.TEST_PG_ADMIN_URL!, name);
  const db = createDb(url);
  return {
    db,
    url,
    drop: async () => {
      await db.destroy();
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** A private migrated database with no account at all: the service as a production start without demo data finds it. */
export async function createEmptyTestDatabase(): Promise<TestDatabase> {
  if (!process.env.TEST_PG_ADMIN_URL) throw new Error('Run tests with npm test (TEST_PG_ADMIN_URL missing).');
  const name = `svc_empty_${crypto.randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const database = openTestDatabase(name);
  await migrateLatest(database.db);
  return database;
}

/**
 * A row read with `select *` made ready to insert again as a test's own copy: without `omit` (the id, generated
 * columns) and with json/jsonb values serialised, which pg would otherwise send as a Postgres array literal.
 */
export function rowForInsert(row: Record<string, unknown>, omit: string[] = ['id']): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([k]) => !omit.includes(k))
    .map(([k, v]) => [k, v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v) ? JSON.stringify(v) : v]));
}
