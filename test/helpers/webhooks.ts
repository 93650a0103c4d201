/** Webhook test helpers: settings with a controllable DNS, endpoints and events made through the service's own code. */
import crypto from 'node:crypto';
import type { ExecutionContext } from 'ava';
import type { Db } from '../../src/db/knex.js';
import { recordEvent } from '../../src/events/outbox.js';
import { findAccountByCode, findShopByCode } from '../../src/queries/shops.js';
import type { ResolvedAddress, Resolver } from '../../src/webhooks/addresses.js';
import { envelopeBody } from '../../src/webhooks/dispatch.js';
import { createEndpoint, disableEndpoint } from '../../src/webhooks/endpoints.js';
import { DEFAULT_RETRY_SCHEDULE_MS, type WebhookSettings } from '../../src/webhooks/settings.js';
import type { Receiver } from './receiver.js';
import { waitUntil } from './wait.js';

/** A DNS whose answers the test sets per name; unknown names do not resolve. Counts look-ups per name. */
export function fakeDns(initial: Record<string, string[]> = {}) {
  const answers = new Map(Object.entries(initial));
  const lookups = new Map<string, number>();
  const resolve: Resolver = async (hostname) => {
    lookups.set(hostname, (lookups.get(hostname) ?? 0) + 1);
    const list = answers.get(hostname);
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return list.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, set: (name: string, addresses: string[]) => answers.set(name, addresses), lookups };
}

/** Settings for a test worker: loopback allowed (D17), the real retry schedule unless given, a short receiver time-out. */
export function testSettings(overrides: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    secretsKey: crypto.randomBytes(32),
    allowLoopback: true,
    retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
    timeoutMs: 2_000,
    resolve: fakeDns().resolve,
    ...overrides,
  };
}

/**
 * Makes this database's webhook ids unique on the shared Temporal dev server (workflow IDs carry them) and marks the
 * template's outbox events dispatched, so a test sees only its own events.
 */
export async function isolateWebhooks(db: Db): Promise<void> {
  const base = 1_000_000 + crypto.randomInt(0, 1_000_000_000) * 10;
  await db.raw(`select setval(pg_get_serial_sequence('webhook_endpoints', 'id'), ?), setval(pg_get_serial_sequence('webhook_deliveries', 'id'), ?)`, [base, base]);
  await db('outbox_events').whereNull('dispatched_at').update({ dispatched_at: db.fn.now() });
}

export async function accountId(db: Db, code = 'demo'): Promise<string> {
  return (await findAccountByCode(db, code))!.id;
}

/** Creates an endpoint through the service (plan limits and address rules apply). */
export async function makeEndpoint(db: Db, settings: WebhookSettings, options: { url: string; events?: string[] | 'all'; shops?: string[] | 'all'; account?: string; name?: string }) {
  return createEndpoint(db, settings, {
    accountId: await accountId(db, options.account), name: options.name ?? 'test endpoint', url: options.url,
    events: options.events ?? 'all', shops: options.shops ?? 'all', createdBy: 'test',
  });
}

/** Records `count` order.created events of a shop through the outbox (the way the sync does). */
export async function emitOrderEvents(db: Db, count: number, options: { account?: string; shop?: string; prefix?: string } = {}): Promise<string[]> {
  const account = await accountId(db, options.account);
  const shop = (await findShopByCode(db, account, options.shop ?? 'sk'))!;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { eventId } = await recordEvent(db, {
      accountId: account, shop: { id: shop.id, code: shop.code }, type: 'order.created',
      resource: { id: `${options.prefix ?? 'T'}${i}` }, data: { order_code: `${options.prefix ?? 'T'}${i}` }, occurredAt: new Date(),
    });
    ids.push(eventId);
  }
  return ids;
}

/** Inserts `count` order.created outbox events in one statement (for the 5,001-pending test). */
export async function bulkOrderEvents(db: Db, count: number, options: { account?: string; shop?: string } = {}): Promise<void> {
  const account = await accountId(db, options.account);
  const shop = (await findShopByCode(db, account, options.shop ?? 'sk'))!;
  await db.raw(`
    insert into outbox_events (event_id, account_id, shop_id, store, event_type, resource_type, resource_id, data, occurred_at)
    select gen_random_uuid(), ?, ?, ?, 'order.created', 'order', 'B' || n, jsonb_build_object('order_code', 'B' || n), now()
    from generate_series(1, ?) as n`, [account, shop.id, shop.code, count]);
}

/**
 * The sample endpoint of the registry and REST/MCP contract tests (made in their own database copy, so the template
 * stays without endpoints): a disabled endpoint of `demo` with one delivered test event in its log. Returns its id.
 */
export async function ensureSampleWebhook(db: Db): Promise<string> {
  const existing = await db('webhook_endpoints').where({ name: 'Sample receiver' }).first('id');
  if (existing) return String(existing.id);
  const dns = fakeDns({ 'hooks.example.com': ['93.184.215.14'] });
  const { id } = await makeEndpoint(db, testSettings({ resolve: dns.resolve, allowLoopback: false }), { url: 'https://hooks.example.com/store-ops', name: 'Sample receiver' });
  const account = await findAccountByCode(db, 'demo');
  const occurredAt = new Date('2026-11-20T10:00:00.000Z');
  const eventId = crypto.randomUUID();
  const body = envelopeBody({
    id: '0', event_id: eventId, account_id: account!.id, shop_id: null, store: null, event_type: 'ping', resource_type: 'webhook_endpoint',
    resource_id: id, data: { message: 'Test delivery from the service.', endpoint: id }, occurred_at: occurredAt,
  }, 'demo');
  const [delivery] = await db('webhook_deliveries').insert({
    endpoint_id: id, account_id: account!.id, event_id: eventId, event_type: 'ping', store: null, body, status: 'SENT', attempts: 1,
    last_attempt_at: occurredAt, last_http_status: 200, workflow_started_at: occurredAt, created_at: occurredAt, completed_at: occurredAt,
  }).returning('id');
  await db('webhook_delivery_attempts').insert({ delivery_id: delivery.id, attempt: 1, outcome: 'success', http_status: 200, attempted_at: occurredAt, duration_ms: 42 });
  await disableEndpoint(db, account!.id, id);
  return id;
}

/**
 * "Nothing lost, nothing logged twice" after a crash: waits until every delivery of `eventIds` (one per receiver)
 * is SENT, then asserts exactly one successful attempt per delivery in the log and every event_id, correctly
 * signed, at every receiver. Returns how many requests were redeliveries (receivers de-duplicate by event_id).
 */
export async function assertDeliveredOnceAfterCrash(t: ExecutionContext, db: Db, eventIds: string[], receivers: Receiver[], timeoutMs = 150_000): Promise<number> {
  const expected = eventIds.length * receivers.length;
  await waitUntil(async () => {
    const rows = await db('webhook_deliveries').whereIn('event_id', eventIds).select('status');
    return rows.length === expected && rows.every((row) => row.status === 'SENT');
  }, timeoutMs);
  const successes = await db('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').whereIn('d.event_id', eventIds)
    .where('a.outcome', 'success').select('a.delivery_id').count<{ delivery_id: string; count: string }[]>('* as count').groupBy('a.delivery_id');
  t.is(successes.length, expected, 'every delivery has a successful attempt in the log');
  t.true(successes.every((s) => Number(s.count) === 1), 'exactly one');
  for (const r of receivers) {
    t.deepEqual([...new Set(r.requests.map((q) => q.body.event_id))].sort(), [...eventIds].sort(), 'the receiver saw every event_id');
    t.true(r.requests.every((q) => q.verifyError === null), 'every request verified');
  }
  return receivers.reduce((n, r) => n + r.requests.length, 0) - expected;
}
