/**
 * Reads of webhook endpoints and their delivery log, always within one account. Secrets and message bodies are never
 * selected. A shop-restricted caller sees the endpoints that cover one of its shops, only its shops' codes in their
 * scope, and only deliveries of its shops' events (and account-level ones such as `ping`).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { PageRequest } from '../capabilities/types.js';
import { subscribableEventTypes } from '../events/catalogue.js';
import type { AttemptOutcome } from '../webhooks/http.js';
import { iso, keysetPage, toPage } from './keyset.js';

const endpointColumns = [
  'e.id', 'e.name', 'e.url', 'e.all_events', 'e.event_types', 'e.all_shops', 'e.shop_codes', 'e.state', 'e.paused_at', 'e.pause_reason',
  'e.consecutive_failures', 'e.created_at', 'e.updated_at', 'e.secret_rotated_at', 'e.deleted_at',
];

interface EndpointRow {
  id: string;
  name: string;
  url: string;
  all_events: boolean;
  event_types: string[];
  all_shops: boolean;
  shop_codes: string[];
  state: 'enabled' | 'paused' | 'disabled';
  paused_at: Date | null;
  pause_reason: 'consecutive_failures' | 'pending_deliveries' | null;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
  secret_rotated_at: Date | null;
  deleted_at: Date | null;
}

function visibleTo(q: Knex.QueryBuilder, shopCodes: ReadonlySet<string> | null): Knex.QueryBuilder {
  if (shopCodes) q.where((w) => w.where('e.all_shops', true).orWhereRaw('e.shop_codes && ?::text[]', [[...shopCodes]]));
  return q;
}

async function queueStates(db: Db, endpointIds: string[]): Promise<Map<string, { pending: number; held: number; oldest: Date | null }>> {
  const map = new Map<string, { pending: number; held: number; oldest: Date | null }>();
  if (endpointIds.length === 0) return map;
  const rows: { endpoint_id: string; pending: number; held: number; oldest: Date | null }[] = await db('webhook_deliveries')
    .select('endpoint_id', db.raw('count(*)::int as pending'), db.raw('count(held_since)::int as held'), db.raw('min(created_at) as oldest'))
    .where({ status: 'PENDING' }).whereIn('endpoint_id', endpointIds).groupBy('endpoint_id');
  for (const r of rows) map.set(String(r.endpoint_id), { pending: r.pending, held: r.held, oldest: r.oldest });
  return map;
}

function toEndpoint(row: EndpointRow, queue: { pending: number; held: number; oldest: Date | null } | undefined, shopCodes: ReadonlySet<string> | null) {
  return {
    endpointId: String(row.id),
    name: row.name,
    url: row.url,
    events: { all: row.all_events, types: row.all_events ? [...subscribableEventTypes] : row.event_types },
    shops: { all: row.all_shops, codes: row.all_shops ? [] : row.shop_codes.filter((c) => !shopCodes || shopCodes.has(c)) },
    state: row.deleted_at ? 'deleted' as const : row.state,
    pausedAt: iso(row.paused_at),
    pauseReason: row.pause_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    secretRotatedAt: iso(row.secret_rotated_at),
    deletedAt: iso(row.deleted_at),
    queue: {
      pendingDeliveries: queue?.pending ?? 0,
      waitingDeliveries: queue?.held ?? 0,
      oldestPendingAt: iso(queue?.oldest),
      consecutiveFailedAttempts: row.consecutive_failures,
    },
  };
}

export type WebhookEndpointView = ReturnType<typeof toEndpoint>;

/** The account's non-deleted endpoints the caller may see, oldest first, with their queue state. */
export async function listWebhookEndpoints(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null): Promise<WebhookEndpointView[]> {
  const rows: EndpointRow[] = await visibleTo(db('webhook_endpoints as e').select(endpointColumns).where('e.account_id', accountId).whereNull('e.deleted_at'), shopCodes).orderBy('e.id');
  const queues = await queueStates(db, rows.map((r) => String(r.id)));
  return rows.map((r) => toEndpoint(r, queues.get(String(r.id)), shopCodes));
}

/** One endpoint of the account (also a deleted one, whose log remains), or null. */
export async function getWebhookEndpoint(db: Db, accountId: string, endpointId: string, shopCodes: ReadonlySet<string> | null): Promise<WebhookEndpointView | null> {
  const row: EndpointRow | undefined = await visibleTo(db('webhook_endpoints as e').select(endpointColumns).where({ 'e.account_id': accountId, 'e.id': endpointId }), shopCodes).first();
  if (!row) return null;
  return toEndpoint(row, (await queueStates(db, [String(row.id)])).get(String(row.id)), shopCodes);
}

interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  store: string | null;
  status: 'PENDING' | 'SENT' | 'FAILED' | 'SKIPPED';
  attempts: number;
  created_at: Date;
  last_attempt_at: Date | null;
  last_http_status: number | null;
  next_attempt_at: Date | null;
  completed_at: Date | null;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  outcome: AttemptOutcome;
  http_status: number | null;
  duration_ms: number;
  error: string | null;
}

function toDelivery(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    deliveryId: String(row.id),
    eventId: row.event_id,
    eventType: row.event_type,
    store: row.store,
    status: row.status,
    attempts: row.attempts,
    createdAt: row.created_at.toISOString(),
    lastAttemptAt: iso(row.last_attempt_at),
    lastHttpStatus: row.last_http_status,
    nextAttemptAt: row.status === 'PENDING' ? iso(row.next_attempt_at) : null,
    completedAt: iso(row.completed_at),
    attemptLog: attempts.map((a) => ({
      attempt: a.attempt,
      attemptedAt: a.attempted_at.toISOString(),
      outcome: a.outcome,
      httpStatus: a.http_status,
      durationMs: a.duration_ms,
      error: a.error,
    })),
  };
}

/** A page of one endpoint's delivery log, newest first, each delivery with its attempts; never a body. */
export async function listWebhookDeliveries(db: Db, endpointId: string, shopCodes: ReadonlySet<string> | null, status: string | undefined, page: PageRequest) {
  const q = db('webhook_deliveries').select('id', 'event_id', 'event_type', 'store', 'status', 'attempts', 'created_at', 'last_attempt_at', 'last_http_status', 'next_attempt_at', 'completed_at')
    .where({ endpoint_id: endpointId });
  if (status) q.where({ status });
  if (shopCodes) q.where((w) => w.whereNull('store').orWhereIn('store', [...shopCodes]));
  const rows: DeliveryRow[] = await keysetPage(q, 'created_at', 'id', page);
  const result = toPage(rows, page, (r) => r.created_at, (r) => r);
  const attempts: AttemptRow[] = result.rows.length === 0 ? [] : await db('webhook_delivery_attempts')
    .select('delivery_id', 'attempt', 'attempted_at', 'outcome', 'http_status', 'duration_ms', 'error')
    .whereIn('delivery_id', result.rows.map((r) => r.id)).orderBy(['delivery_id', 'attempt']);
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of attempts) byDelivery.set(String(a.delivery_id), [...(byDelivery.get(String(a.delivery_id)) ?? []), a]);
  return { items: result.rows.map((r) => toDelivery(r, byDelivery.get(String(r.id)) ?? [])), hasMore: result.hasMore, last: result.last };
}
