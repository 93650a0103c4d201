/** GET /healthz (the process is up) and GET /readyz (Postgres, Temporal, migrations), against the real parts. */
import anyTest, { type TestFn } from 'ava';
import { createDb, type Db } from '../../src/db/knex.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { findFreePort } from '../../src/infra/ports.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  temporal: TemporalAccess;
  ready: TestServer;
  noTemporal: TemporalAccess;
  temporalDown: TestServer;
  noPostgres: Db;
  postgresDown: TestServer;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const temporal = lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default');
  // Nothing listens on these ports: Temporal and Postgres are unreachable for those two servers.
  const noTemporal = lazyTemporalAccess(`127.0.0.1:${await findFreePort()}`, 'default', 1_000);
  const noPostgres = createDb(`postgres://nobody:nothing@127.0.0.1:${await findFreePort()}/none`);
  t.context = {
    database, temporal, noTemporal, noPostgres,
    ready: await startTestServer(database.db, undefined, undefined, { temporal }),
    temporalDown: await startTestServer(database.db, undefined, undefined, { temporal: noTemporal }),
    postgresDown: await startTestServer(noPostgres, undefined, undefined, { temporal }),
  };
});

test.after.always(async (t) => {
  for (const server of [t.context.ready, t.context.temporalDown, t.context.postgresDown]) await server?.close();
  await t.context.temporal?.close();
  await t.context.noTemporal?.close();
  await t.context.noPostgres?.destroy();
  await t.context.database?.drop();
});

async function get(server: TestServer, path: string) {
  const response = await fetch(`${server.baseUrl}${path}`);
  return { status: response.status, cacheControl: response.headers.get('cache-control'), requestId: response.headers.get('request-id'), body: await response.json() as any };
}

test('When /healthz is asked without a credential, then it answers 200 {"status":"ok"}, never cached', async (t) => {
  const health = await get(t.context.ready, '/healthz');
  t.is(health.status, 200);
  t.deepEqual(health.body, { status: 'ok' });
  t.is(health.cacheControl, 'no-store');
});

test('When Postgres is unreachable, then /healthz still answers 200 (it asks nothing) and /readyz answers 503 naming postgres', async (t) => {
  const health = await get(t.context.postgresDown, '/healthz');
  t.is(health.status, 200);
  t.deepEqual(health.body, { status: 'ok' });
  const ready = await get(t.context.postgresDown, '/readyz');
  t.is(ready.status, 503);
  t.deepEqual(ready.body.checks, { postgres: 'unreachable', temporal: 'ok', migrations: 'unknown (the database did not answer)' });
});

test('When Postgres and Temporal answer and every migration is applied, then /readyz answers 200 with each check ok', async (t) => {
  const ready = await get(t.context.ready, '/readyz');
  t.is(ready.status, 200);
  t.deepEqual(ready.body, { status: 'ready', checks: { postgres: 'ok', temporal: 'ok', migrations: 'ok' }, meta: { requestId: ready.requestId } });
  t.is(ready.cacheControl, 'no-store');
});

test('When Temporal is unreachable, then /readyz answers 503 naming temporal', async (t) => {
  const ready = await get(t.context.temporalDown, '/readyz');
  t.is(ready.status, 503);
  t.is(ready.body.status, 'not_ready');
  t.deepEqual(ready.body.checks, { postgres: 'ok', temporal: 'unreachable', migrations: 'ok' });
  t.is(ready.cacheControl, 'no-store');
});

test.serial('When a migration of the list is not applied, then /readyz answers 503 naming it, and 200 again once it is', async (t) => {
  const { db } = t.context.database;
  const row = await db('knex_migrations').where({ name: '005_webhooks' }).first();
  t.truthy(row);
  await db('knex_migrations').where({ name: '005_webhooks' }).delete();
  try {
    const ready = await get(t.context.ready, '/readyz');
    t.is(ready.status, 503);
    t.deepEqual(ready.body.checks, { postgres: 'ok', temporal: 'ok', migrations: 'missing 005_webhooks' });
  } finally {
    await db('knex_migrations').insert(row);
  }
  t.is((await get(t.context.ready, '/readyz')).status, 200);
});

test('When /api/v1/healthz is asked without a credential, then it is no probe: the API wants a credential (401)', async (t) => {
  t.is((await fetch(`${t.context.ready.baseUrl}/api/v1/healthz`)).status, 401);
});
