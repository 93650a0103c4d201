/**
 * Dispatch: outbox events become deliveries (one per event and subscribed endpoint, unique, so a dispatch that crashes
 * and runs again adds nothing); the dispatcher's sender attempts them (direct.ts), and manual retries and held
 * deliveries get their workflow here. Postgres says what must happen; the
 * dispatcher loop (activities/webhooks.ts) makes it happen, so nothing depends on a single signal or start succeeding.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { toEnvelope, type OutboxRow } from '../events/outbox.js';
import { partitionClause, type Partition } from './partitions.js';
import { webhooksEnabled } from './plan.js';
import { PAUSE_ABOVE_PENDING } from './settings.js';
import { DISPATCHER_FIRST_MS } from './delivery.js';

type EventRow = OutboxRow & { tenant: string };

interface EndpointMatchRow {
  id: string;
  account_id: string;
  all_events: boolean;
  event_types: string[];
  all_shops: boolean;
  shop_codes: string[];
  state: string;
}

/** The envelope serialised once; these exact bytes are signed and sent on every attempt (D19). */
export function envelopeBody(row: OutboxRow, tenant: string): string {
  return JSON.stringify(toEnvelope(row, tenant));
}

/** Whether an endpoint subscribes to an event: type (a ping only by the test-delivery path) and shop scope. */
export function endpointMatches(endpoint: EndpointMatchRow, event: Pick<OutboxRow, 'event_type' | 'store' | 'account_id'>): boolean {
  if (String(endpoint.account_id) !== String(event.account_id) || event.event_type === 'ping') return false;
  const typeOk = endpoint.all_events || endpoint.event_types.includes(event.event_type);
  // An account-level event (no shop) belongs to no shop scope and goes to every subscriber of its type.
  const shopOk = endpoint.all_shops || event.store === null || endpoint.shop_codes.includes(event.store);
  return typeOk && shopOk;
}

const eventColumns = ['o.id', 'o.event_id', 'o.account_id', 'o.shop_id', 'o.store', 'o.event_type', 'o.resource_type', 'o.resource_id', 'o.data', 'o.occurred_at', 'a.code as tenant'];

async function insertDeliveries(trx: Db, pairs: { event: EventRow; endpointId: string }[]): Promise<{ id: string; endpointId: string }[]> {
  const bodies = new Map<string, string>();
  const rows = pairs.map(({ event, endpointId }) => {
    let body = bodies.get(event.id);
    if (body === undefined) {
      body = envelopeBody(event, event.tenant);
      bodies.set(event.id, body);
    }
    return {
      endpoint_id: endpointId, account_id: event.account_id, event_id: event.event_id, outbox_event_id: event.id,
      event_type: event.event_type, store: event.store, body, status: 'PENDING',
    };
  });
  const created: { id: string; endpointId: string }[] = [];
  for (let i = 0; i < rows.length; i += 1000) {
    const inserted = await trx('webhook_deliveries').insert(rows.slice(i, i + 1000))
      .onConflict(['event_id', 'endpoint_id']).ignore().returning(['id', 'endpoint_id']);
    for (const r of inserted) created.push({ id: String(r.id), endpointId: String(r.endpoint_id) });
  }
  return created;
}

/** Deliveries of the given outbox events to the given endpoints, without matching (the test delivery). */
export async function createDeliveries(trx: Db, outboxIds: string[], endpointIds: string[]): Promise<{ id: string; endpointId: string }[]> {
  const events: EventRow[] = await trx('outbox_events as o').join('accounts as a', 'a.id', 'o.account_id').select(eventColumns).whereIn('o.id', outboxIds).orderBy('o.id');
  return insertDeliveries(trx, events.flatMap((event) => endpointIds.map((endpointId) => ({ event, endpointId }))));
}

export interface DispatchResult {
  events: number;
  deliveries: number;
  /** Enabled endpoints that now have more than 5,000 pending deliveries (D14: checked whenever a delivery is added). */
  overPendingLimit: string[];
}

/**
 * Dispatches the oldest undispatched outbox events: each becomes one delivery per enabled or paused endpoint that
 * subscribes to it (a paused endpoint keeps collecting; a disabled one gets nothing), and is marked dispatched in the
 * same transaction, so each event is dispatched exactly once. Every dispatcher partition may call it (WS3): one at a
 * time dispatches (a transaction-level advisory lock; the others find it taken and go on sending), so batches commit
 * in outbox order and an endpoint's deliveries are numbered in the order of its events.
 */
export async function dispatchOutboxBatch(db: Db, limit = 500, opts: { holdAccounts?: readonly string[] } = {}): Promise<DispatchResult> {
  return db.transaction(async (trx) => {
    const { rows: [lock] } = await trx.raw<{ rows: { taken: boolean }[] }>(`select pg_try_advisory_xact_lock(hashtext('webhook-outbox-dispatch')) as taken`);
    if (!lock.taken) return { events: 0, deliveries: 0, overPendingLimit: [] };
    const q = trx('outbox_events as o').join('accounts as a', 'a.id', 'o.account_id')
      .select(eventColumns).whereNull('o.dispatched_at').orderBy('o.id').limit(limit).forUpdate('o').skipLocked();
    // Accounts whose burst waits in the outbox (T7); their events keep their order, other accounts' go on.
    if (opts.holdAccounts && opts.holdAccounts.length > 0) q.whereNotIn('o.account_id', opts.holdAccounts);
    const events: EventRow[] = await q;
    if (events.length === 0) return { events: 0, deliveries: 0, overPendingLimit: [] };
    const accountIds = [...new Set(events.map((e) => String(e.account_id)))];
    const endpoints: EndpointMatchRow[] = await trx('webhook_endpoints')
      .select('id', 'account_id', 'all_events', 'event_types', 'all_shops', 'shop_codes', 'state')
      .whereIn('account_id', accountIds).whereNull('deleted_at').whereNot('state', 'disabled');
    const pairs = events.flatMap((event) => endpoints.filter((e) => endpointMatches(e, event)).map((e) => ({ event, endpointId: String(e.id) })));
    const created = await insertDeliveries(trx, pairs);
    await trx('outbox_events').whereIn('id', events.map((e) => e.id)).update({ dispatched_at: trx.fn.now() });

    const enabledWithNew = [...new Set(created.map((c) => c.endpointId))].filter((id) => endpoints.find((e) => String(e.id) === id)?.state === 'enabled');
    const overPendingLimit = enabledWithNew.length === 0 ? [] : (await trx('webhook_deliveries').select('endpoint_id')
      .where({ status: 'PENDING' }).whereIn('endpoint_id', enabledWithNew).groupBy('endpoint_id')
      .havingRaw('count(*) > ?', [PAUSE_ABOVE_PENDING])).map((r) => String(r.endpoint_id));
    return { events: events.length, deliveries: created.length, overPendingLimit };
  });
}

/** Accounts among `accountIds` whose plan includes webhooks now (D12; a plan without them holds deliveries). */
async function entitledAccounts(db: Db, accountIds: string[]): Promise<string[]> {
  const entitled: string[] = [];
  for (const id of accountIds) if (await webhooksEnabled(db, id)) entitled.push(id);
  return entitled;
}

export interface StartableDelivery {
  deliveryId: string;
  endpointId: string;
  /** The attempt its workflow starts with: attempts continue (D15). */
  firstAttempt: number;
  /** When `firstAttempt` was made already (direct path, T4): when the next one is due (epoch ms; before WR1). */
  firstRetryAt?: number;
  /** WR1: `firstAttempt` was made already: the workflow's first timer, from its start (due time + the dispatcher's turn). */
  firstRetryDelayMs?: number;
  /** What the workflow's search attributes show (W3): the account's code, the event's shop code and type. */
  labels?: DeliveryLabels;
}

export interface DeliveryLabels {
  account: string;
  shop: string | null;
  eventType: string;
}

/** How the dispatcher reaches Temporal; activities implement it with the worker's client. */
export interface DeliveryWorkflows {
  /** Starts the delivery's workflow; resolves when it runs (also when it already ran). */
  start(delivery: StartableDelivery): Promise<void>;
  /** Wakes a delivery workflow that waits (starting it if none runs and the delivery is pending). */
  wake(delivery: StartableDelivery & { pending: boolean }): Promise<void>;
}

const liveEnabledEndpoint = (q: Knex.QueryBuilder) => q.where('e.state', 'enabled').whereNull('e.deleted_at');

/**
 * Starts workflows for pending deliveries that have none yet (new, manually retried, or left by a crash between
 * commit and start), for enabled endpoints of accounts whose plan includes webhooks. A delivery is marked started
 * after its workflow runs, so a crash in between only means one more (idempotent) start.
 */
export async function startPendingDeliveries(db: Db, workflows: DeliveryWorkflows, limit = 500, concurrency = 32, opts: StartPendingOptions = {}): Promise<number> {
  const base = () => {
    const q = liveEnabledEndpoint(db('webhook_deliveries as d').join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .where('d.status', 'PENDING').whereNull('d.workflow_started_at'));
    // The complement of what the dispatcher's sender attempts itself (direct.ts, T10): manual retries and held ones.
    // W3: a delivery whose first attempt failed (attempts > 0, still pending) is handed to its workflow here, which
    // keeps its schedule while the sender makes its retries when due (WR1).
    if (opts.workflowOnly) {
      q.where((w) => w.whereNotNull('d.held_since').orWhereNotNull('d.manual_retry_at')
        .orWhere((f) => f.where('d.attempts', '>', 0).modify((m) => (opts.deferStarts
          ? m.where((g) => g.where('d.last_attempt_at', '<', opts.deferStarts!.failedBefore).orWhere('d.next_attempt_at', '<=', opts.deferStarts!.dueBefore))
          : m))));
    }
    const inPartition = partitionClause('d.endpoint_id', opts.partition);
    return q.whereRaw(inPartition.sql, inPartition.bindings);
  };
  const accounts = (await base().distinct('e.account_id')).map((r) => String(r.account_id));
  if (accounts.length === 0) return 0;
  const entitled = await entitledAccounts(db, accounts);
  if (entitled.length === 0) return 0;
  const found: { id: string; endpoint_id: string; attempts: number; manual_retry_at: Date | null; next_attempt_at: Date | null; account_code: string; store: string | null; event_type: string }[] = await base().whereIn('e.account_id', entitled)
    .join('accounts as a', 'a.id', 'd.account_id')
    .select('d.id', 'd.endpoint_id', 'd.attempts', 'd.manual_retry_at', 'd.next_attempt_at', 'a.code as account_code', 'd.store', 'd.event_type').orderBy('d.id').limit(limit);
  const rows = opts.exclude ? found.filter((row) => !opts.exclude!.has(String(row.id))) : found;
  const started: string[] = [];
  await inParallel(rows, concurrency, async (row) => {
    await workflows.start({ ...workflowStartOf(row), labels: { account: row.account_code, shop: row.store, eventType: row.event_type } });
    started.push(String(row.id));
  });
  if (started.length > 0) await db('webhook_deliveries').whereIn('id', started).whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
  return started.length;
}

export interface StartPendingOptions {
  /** Only deliveries that need a workflow (manual retries, held ones); the sender makes every other attempt (T10). */
  workflowOnly?: boolean;
  /** Deliveries this process is handing over itself right now. */
  exclude?: ReadonlySet<string>;
  /** WS1: only deliveries of this partition's endpoints. */
  partition?: Partition;
  /**
   * WR4: deliveries whose attempt failed get their workflow only if that attempt was made before `failedBefore` or
   * their next attempt is due before `dueBefore` (the dispatcher defers their starts while it is busy sending, so the
   * Temporal work does not hold up due retries, but each still starts before its retry is due).
   */
  deferStarts?: { failedBefore: Date; dueBefore: Date };
}

/**
 * How a pending delivery's workflow starts: a manual retry with the next attempt at once (D15); a delivery whose last
 * scheduled attempt failed (the direct path's first attempt, T4) by waiting for that attempt's retry time and the
 * dispatcher's turn (WR1: the dispatcher makes it then, the workflow records it or makes it itself); a new one with
 * attempt 1.
 */
export function workflowStartOf(row: { id: string; endpoint_id: string; attempts: number; manual_retry_at: Date | null; next_attempt_at: Date | null }, now = Date.now()): StartableDelivery {
  const base = { deliveryId: String(row.id), endpointId: String(row.endpoint_id) };
  if (row.manual_retry_at || row.attempts === 0) return { ...base, firstAttempt: row.attempts + 1 };
  return { ...base, firstAttempt: row.attempts, ...(row.next_attempt_at ? { firstRetryDelayMs: Math.max(0, row.next_attempt_at.getTime() - now) + DISPATCHER_FIRST_MS } : {}) };
}

/**
 * Wakes delivery workflows that wait because their endpoint was paused or the plan had no webhooks, once that is
 * over: pending deliveries of enabled, entitled endpoints, and deliveries no longer pending (skipped meanwhile) so
 * their workflows end. `endpointId` limits it to one endpoint (the endpoint actor after a person re-enabled it).
 */
export async function wakeHeldDeliveries(db: Db, workflows: DeliveryWorkflows, opts: { endpointId?: string; limit?: number; concurrency?: number; partition?: Partition } = {}): Promise<number> {
  const inPartition = partitionClause('d.endpoint_id', opts.partition);
  const q = db('webhook_deliveries as d').join('webhook_endpoints as e', 'e.id', 'd.endpoint_id').whereNotNull('d.held_since').whereRaw(inPartition.sql, inPartition.bindings);
  if (opts.endpointId) q.where('d.endpoint_id', opts.endpointId);
  const candidates = await q.clone().where('d.status', 'PENDING').modify(liveEnabledEndpoint).distinct('e.account_id');
  const entitled = await entitledAccounts(db, candidates.map((r) => String(r.account_id)));
  const rows: { id: string; endpoint_id: string; attempts: number; status: string; held_since: Date }[] = await q.where((w) => w.whereNot('d.status', 'PENDING').orWhere((p) => p.where('d.status', 'PENDING').modify(liveEnabledEndpoint).whereIn('e.account_id', entitled)))
    .select('d.id', 'd.endpoint_id', 'd.attempts', 'd.status', 'd.held_since').orderBy('d.id').limit(opts.limit ?? 500);
  let woken = 0;
  await inParallel(rows, opts.concurrency ?? 32, async (row) => {
    await workflows.wake({ deliveryId: String(row.id), endpointId: String(row.endpoint_id), firstAttempt: row.attempts + 1, pending: row.status === 'PENDING' });
    // Cleared only if not held again meanwhile (a newer hold has a newer time).
    await db('webhook_deliveries').where({ id: row.id, held_since: row.held_since }).update({ held_since: null });
    woken++;
  });
  return woken;
}

/** Runs `fn` over `items` with at most `concurrency` at a time. */
export async function inParallel<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}
