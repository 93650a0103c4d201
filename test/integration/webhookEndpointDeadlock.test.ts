/**
 * A person's endpoint change picked by Postgres as a deadlock victim is run again (src/webhooks/endpoints.ts,
 * `retryingDeadlocks`): the deadlock is made for real — a second transaction holds the endpoint's pending deliveries
 * (as the sender does while recording attempts) and then asks for the endpoint row the change holds — and the person
 * still gets the change done, once.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { accountId, fakeDns, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';
import { deleteEndpoint, disableEndpoint } from '../../src/webhooks/endpoints.js';

interface Context { database: TestDatabase }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  t.context = { database };
});

test.after.always(async (t) => {
  await t.context.database?.drop();
});

/** An endpoint of demo with `count` deliveries waiting (not yet handed to a workflow). */
async function endpointWithPending(t: { context: Context }, count: number): Promise<{ id: string; account: string }> {
  const db = t.context.database.db;
  const dns = fakeDns({ 'hooks.example.com': ['93.184.215.14'] });
  const { id } = await makeEndpoint(db, testSettings({ resolve: dns.resolve, allowLoopback: false }), { url: 'https://hooks.example.com/deadlock', name: `deadlock ${crypto.randomUUID()}` });
  const account = await accountId(db);
  await db('webhook_deliveries').insert(Array.from({ length: count }, () => ({
    endpoint_id: id, account_id: account, event_id: crypto.randomUUID(), event_type: 'order.created', store: 'sk', body: '{}', status: 'PENDING',
  })));
  return { id: String(id), account };
}

async function deadlocks(t: { context: Context }): Promise<number> {
  return Number((await t.context.database.db.raw('select deadlocks from pg_stat_database where datname = current_database()')).rows[0].deadlocks);
}

/** Waits until a session of this database waits for a lock while changing webhook_deliveries (the change, blocked). */
async function changeBlocked(t: { context: Context }): Promise<void> {
  const db = t.context.database.db;
  for (let i = 0; i < 600; i++) {
    const { rows } = await db.raw(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%webhook_deliveries%'`);
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the endpoint change never waited for the delivery rows');
}

for (const [action, change] of [['disable', disableEndpoint], ['delete', deleteEndpoint]] as const) {
  test.serial(`When a person's ${action} of an endpoint is picked as a deadlock victim, then it is run again and takes effect once`, async (t) => {
    t.timeout(120_000);
    const db = t.context.database.db;
    const { id, account } = await endpointWithPending(t, 3);
    const before = await deadlocks(t);
    const sender = await db.transaction();
    try {
      // The "sender": holds the pending rows, and never detects the deadlock itself (so the change is the victim).
      await sender.raw(`set local deadlock_timeout = '60s'`);
      await sender('webhook_deliveries').where({ endpoint_id: id, status: 'PENDING' }).forUpdate().select('id');
      const changed = change(db, account, id);
      changed.catch(() => undefined);
      await changeBlocked(t);
      // Now the endpoint row the change holds: a deadlock, which the change's session detects and loses.
      await sender('webhook_endpoints').where({ id }).forUpdate().first('id');
      await sender.commit();
      const result = await changed;
      t.is(result.skipped, 3);
    } finally {
      if (!sender.isCompleted()) await sender.rollback();
    }
    const endpoint = await db('webhook_endpoints').where({ id }).first('state', 'deleted_at');
    if (action === 'disable') t.is(endpoint.state, 'disabled');
    else t.truthy(endpoint.deleted_at);
    t.deepEqual((await db('webhook_deliveries').where({ endpoint_id: id }).select('status')).map((r) => r.status), ['SKIPPED', 'SKIPPED', 'SKIPPED']);
    // The deadlock was real: Postgres counted it (statistics are flushed within a second or so).
    for (let i = 0; i < 100 && (await deadlocks(t)) <= before; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    t.true((await deadlocks(t)) > before, 'Postgres reported the deadlock');
  });
}
