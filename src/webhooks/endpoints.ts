/**
 * What a person does with webhook endpoints (D11: through the CLI until the application exists): create with the
 * plan's limits, enable, disable, delete, rotate the secret, send a test event, retry a failed delivery. Every change
 * is one guarded transaction in Postgres, the system of record; the worker acts on the new state (dispatch.ts).
 */
import { AppError } from '../errors.js';
import type { Db } from '../db/knex.js';
import { subscribableEventTypes } from '../events/catalogue.js';
import { recordEvent } from '../events/outbox.js';
import { listShops } from '../queries/shops.js';
import { verifyDestination, WebhookAddressError, type AddressPolicy, type Resolver } from './addresses.js';
import { createDeliveries } from './dispatch.js';
import { webhookEntitlement } from './plan.js';
import { decryptSecret, encryptSecret, generateEndpointSecret, needsReencryption, type SecretKeys } from './secrets.js';

export type EndpointState = 'enabled' | 'paused' | 'disabled';

export interface EndpointDeps extends AddressPolicy {
  secretsKey: Buffer;
  resolve: Resolver;
}

export interface CreateEndpointInput {
  accountId: string;
  name: string;
  url: string;
  /** 'all' = every subscribable type, also types added later. */
  events: string[] | 'all';
  /** 'all' = every shop of the account, also future ones. */
  shops: string[] | 'all';
  createdBy: string;
}

/** Turns an address refusal into the API error (the message names the rule). */
export function urlRejected(error: WebhookAddressError): AppError {
  return new AppError('WEBHOOK_URL_REJECTED', error.message, { param: 'url', reason: error.reason });
}

function checkedEvents(events: string[] | 'all'): string[] {
  if (events === 'all') return [];
  const list = [...new Set(events.map((e) => e.trim()).filter(Boolean))];
  const unknown = list.filter((e) => !subscribableEventTypes.includes(e));
  if (list.length === 0 || unknown.length > 0) {
    throw new AppError('INVALID_PARAMETER', `Unknown or unsubscribable event type(s): ${unknown.join(', ') || '(none given)'}. Subscribable: ${subscribableEventTypes.join(', ')}.`, { param: 'events', reason: 'unknown event type' });
  }
  return list;
}

async function checkedShops(db: Db, accountId: string, shops: string[] | 'all'): Promise<string[]> {
  if (shops === 'all') return [];
  const list = [...new Set(shops.map((s) => s.trim()).filter(Boolean))];
  const known = new Set((await listShops(db, accountId, null)).map((s) => s.code));
  const unknown = list.filter((c) => !known.has(c));
  if (list.length === 0 || unknown.length > 0) {
    throw new AppError('INVALID_PARAMETER', `Unknown shop(s): ${unknown.join(', ') || '(none given)'}. Known: ${[...known].join(', ')}.`, { param: 'shops', reason: 'unknown shop' });
  }
  return list;
}

const noWebhooks = () => new AppError('PLAN_FEATURE_UNAVAILABLE', 'The account\'s plan does not include outbound webhooks.', { feature: 'webhooks' });

/** SPEC plan table: no webhooks on trial and beginner; non-deleted endpoints count against the limit. */
function assertCanAdd(entitlement: { enabled: boolean; limit: number | null; usage: number }): void {
  if (!entitlement.enabled) throw noWebhooks();
  if (entitlement.limit !== null && entitlement.usage >= entitlement.limit) {
    throw new AppError('PLAN_LIMIT_REACHED', `The plan allows ${entitlement.limit} webhook endpoint(s) and ${entitlement.usage} exist; delete one or change the plan.`, { feature: 'webhooks', limit: entitlement.limit, usage: entitlement.usage });
  }
}

/**
 * Creates an endpoint and returns its secret (shown once). The URL is checked on its addresses now, and again at
 * every delivery. Non-deleted endpoints count against the plan; the account row is locked so two creations cannot
 * both take the last free place.
 */
export async function createEndpoint(db: Db, deps: EndpointDeps, input: CreateEndpointInput): Promise<{ id: string; secret: string }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) throw new AppError('INVALID_PARAMETER', 'The name must have 1 to 100 characters.', { param: 'name', reason: 'length' });
  const eventTypes = checkedEvents(input.events);
  const shopCodes = await checkedShops(db, input.accountId, input.shops);
  // Checked again under the account lock below; here so a plan without webhooks is named before the URL is resolved.
  assertCanAdd(await webhookEntitlement(db, input.accountId));
  let url: string;
  try {
    url = (await verifyDestination(input.url, deps, deps.resolve)).url.href;
  } catch (error) {
    if (error instanceof WebhookAddressError) throw urlRejected(error);
    throw error;
  }
  return db.transaction(async (trx) => {
    await trx('accounts').where({ id: input.accountId }).forUpdate().first('id');
    assertCanAdd(await webhookEntitlement(trx, input.accountId));
    const { rows } = await trx.raw(`select nextval(pg_get_serial_sequence('webhook_endpoints', 'id'))::text as id`);
    const id = rows[0].id as string;
    const secret = generateEndpointSecret();
    await trx('webhook_endpoints').insert({
      id, account_id: input.accountId, name, url,
      all_events: input.events === 'all', event_types: eventTypes,
      all_shops: input.shops === 'all', shop_codes: shopCodes,
      secret_encrypted: encryptSecret(deps.secretsKey, id, secret), state: 'enabled', created_by: input.createdBy,
    });
    return { id, secret };
  });
}

interface EndpointRow {
  id: string;
  account_id: string;
  state: EndpointState;
  deleted_at: Date | null;
}

async function liveEndpoint(db: Db, accountId: string, id: string, opts: { lock?: boolean } = {}): Promise<EndpointRow> {
  if (!/^\d{1,18}$/.test(id)) throw new AppError('NOT_FOUND', `No webhook endpoint ${id}.`, { param: 'endpointId' });
  const q = db('webhook_endpoints').select('id', 'account_id', 'state', 'deleted_at').where({ id, account_id: accountId }).whereNull('deleted_at');
  if (opts.lock) q.forUpdate();
  const row = await q.first();
  if (!row) throw new AppError('NOT_FOUND', `No webhook endpoint ${id} in this account.`, { param: 'endpointId' });
  return row;
}

/** Rotates the secret: the old one stops being valid at once (the next attempt signs with the new one). Works on any plan. */
export async function rotateEndpointSecret(db: Db, deps: Pick<EndpointDeps, 'secretsKey'>, accountId: string, id: string): Promise<{ id: string; secret: string }> {
  await liveEndpoint(db, accountId, id);
  const secret = generateEndpointSecret();
  await db('webhook_endpoints').where({ id }).update({ secret_encrypted: encryptSecret(deps.secretsKey, id, secret), secret_rotated_at: db.fn.now(), updated_at: db.fn.now() });
  return { id, secret };
}

/**
 * The last step of a SECRETS_KEY rotation: every endpoint secret (deleted endpoints' too) not yet under the current
 * key is decrypted with the previous one and encrypted with the current one, in one transaction. The secrets
 * themselves do not change, so receivers notice nothing. Running it again finds nothing to do.
 */
export async function reencryptEndpointSecrets(db: Db, keys: SecretKeys): Promise<{ reencrypted: number; endpoints: number }> {
  return db.transaction(async (trx) => {
    const rows: { id: string; secret_encrypted: Buffer }[] = await trx('webhook_endpoints').select('id', 'secret_encrypted').orderBy('id').forUpdate();
    let reencrypted = 0;
    for (const row of rows) {
      if (!needsReencryption(keys.current, row.secret_encrypted)) continue;
      const secret = decryptSecret(keys, String(row.id), row.secret_encrypted);
      await trx('webhook_endpoints').where({ id: row.id }).update({ secret_encrypted: encryptSecret(keys.current, String(row.id), secret) });
      reencrypted++;
    }
    return { reencrypted, endpoints: rows.length };
  });
}

/**
 * A person (re-)enables an endpoint: paused or disabled → enabled with the failure count reset. Pending deliveries
 * that waited are then delivered (the dispatcher and the endpoint actor wake them).
 */
export async function enableEndpoint(db: Db, accountId: string, id: string): Promise<{ id: string; state: EndpointState; previousState: EndpointState }> {
  return db.transaction(async (trx) => {
    const row = await liveEndpoint(trx, accountId, id, { lock: true });
    await trx('webhook_endpoints').where({ id }).update({ state: 'enabled', consecutive_failures: 0, paused_at: null, pause_reason: null, updated_at: trx.fn.now() });
    return { id, state: 'enabled' as const, previousState: row.state };
  });
}

/**
 * Marks the endpoint's pending deliveries SKIPPED (endpoint disabled or deleted before sending). Those whose workflow
 * runs are marked to be woken (`held_since`), held or waiting for a retry alike, so their workflows end at once.
 */
async function skipPending(trx: Db, endpointId: string): Promise<number> {
  return trx('webhook_deliveries').where({ endpoint_id: endpointId, status: 'PENDING' })
    .update({ status: 'SKIPPED', completed_at: trx.fn.now(), next_attempt_at: null, held_since: trx.raw('case when workflow_started_at is null then held_since else clock_timestamp() end') });
}

/**
 * Runs a person's endpoint change again when Postgres picks it as a deadlock victim: skipping every pending delivery
 * of a busy endpoint takes many row locks while the sender records attempts on the same rows in its own order; the
 * change is one transaction, so a retry is safe and the person never sees the collision.
 */
async function retryingDeadlocks<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if ((error as { code?: string })?.code !== '40P01' || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

/** A person disables an endpoint: its pending deliveries become SKIPPED in the same transaction. */
export async function disableEndpoint(db: Db, accountId: string, id: string): Promise<{ id: string; state: EndpointState; skipped: number }> {
  return retryingDeadlocks(() => db.transaction(async (trx) => {
    await liveEndpoint(trx, accountId, id, { lock: true });
    await trx('webhook_endpoints').where({ id }).update({ state: 'disabled', paused_at: null, pause_reason: null, updated_at: trx.fn.now() });
    return { id, state: 'disabled' as const, skipped: await skipPending(trx, id) };
  }));
}

/** A person deletes an endpoint: it stops counting against the plan, pending deliveries become SKIPPED, the log remains. */
export async function deleteEndpoint(db: Db, accountId: string, id: string): Promise<{ id: string; deleted: true; skipped: number }> {
  return retryingDeadlocks(() => db.transaction(async (trx) => {
    await liveEndpoint(trx, accountId, id, { lock: true });
    await trx('webhook_endpoints').where({ id }).update({ deleted_at: trx.fn.now(), updated_at: trx.fn.now() });
    return { id, deleted: true as const, skipped: await skipPending(trx, id) };
  }));
}

/**
 * A test delivery (`ping`): a real event in the outbox and one delivery to this endpoint only, signed and logged like
 * every other; the dispatcher starts its workflow.
 */
export async function pingEndpoint(db: Db, accountId: string, id: string, now: Date = new Date()): Promise<{ deliveryId: string; eventId: string }> {
  return db.transaction(async (trx) => {
    const endpoint = await liveEndpoint(trx, accountId, id, { lock: true });
    if (endpoint.state !== 'enabled') {
      throw new AppError('STATE_CONFLICT', `Endpoint ${id} is ${endpoint.state}: a test delivery would wait or be skipped; enable it first.`, { state: endpoint.state });
    }
    if (!(await webhookEntitlement(trx, accountId)).enabled) throw noWebhooks();
    const event = await recordEvent(trx, {
      accountId, shop: null, type: 'ping', resource: { id },
      data: { message: 'Test delivery from the service.', endpoint: id }, occurredAt: now,
    });
    // The ping is for this endpoint only: it is dispatched here, never matched to other subscribers.
    await trx('outbox_events').where({ id: event.id }).update({ dispatched_at: trx.fn.now() });
    const [delivery] = await createDeliveries(trx, [event.id], [id]);
    return { deliveryId: delivery.id, eventId: event.eventId };
  });
}

/** D15: a FAILED delivery becomes PENDING again for one more attempt at once (attempt numbers continue, same body and id). */
export async function retryDelivery(db: Db, accountId: string, deliveryId: string): Promise<{ deliveryId: string; status: 'PENDING'; attempts: number }> {
  if (!/^\d{1,18}$/.test(deliveryId)) throw new AppError('NOT_FOUND', `No delivery ${deliveryId}.`, { param: 'deliveryId' });
  return db.transaction(async (trx) => {
    const row = await trx('webhook_deliveries as d').join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select('d.id', 'd.status', 'd.attempts', 'e.state', 'e.deleted_at')
      .where({ 'd.id': deliveryId, 'd.account_id': accountId }).forUpdate('d').first();
    if (!row) throw new AppError('NOT_FOUND', `No delivery ${deliveryId} in this account.`, { param: 'deliveryId' });
    if (row.status !== 'FAILED') throw new AppError('STATE_CONFLICT', `Delivery ${deliveryId} is ${row.status}; only a FAILED delivery can be retried.`, { state: row.status });
    if (row.deleted_at || row.state === 'disabled') {
      throw new AppError('STATE_CONFLICT', `The endpoint of delivery ${deliveryId} is ${row.deleted_at ? 'deleted' : 'disabled'}; the retry would be skipped.`, { state: row.deleted_at ? 'deleted' : row.state });
    }
    await trx('webhook_deliveries').where({ id: deliveryId }).update({
      status: 'PENDING', manual_retry_at: trx.fn.now(), completed_at: null, next_attempt_at: trx.fn.now(), workflow_started_at: null, held_since: null,
    });
    return { deliveryId, status: 'PENDING' as const, attempts: row.attempts as number };
  });
}

export interface UpdateEndpointInput {
  name: string;
  url: string;
  events: string[] | 'all';
  shops: string[] | 'all';
}

/**
 * A person edits an endpoint (name, URL, events, shop scope) under the same rules as at creation; the new URL is
 * checked on its addresses now and again at every delivery. Events dispatched from now on follow the new
 * subscription; deliveries already pending go to the new URL. The secret and the state do not change.
 */
export async function updateEndpoint(db: Db, deps: Omit<EndpointDeps, 'secretsKey'>, accountId: string, id: string, input: UpdateEndpointInput): Promise<{ id: string }> {
  await liveEndpoint(db, accountId, id);
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) throw new AppError('INVALID_PARAMETER', 'The name must have 1 to 100 characters.', { param: 'name', reason: 'length' });
  const eventTypes = checkedEvents(input.events);
  const shopCodes = await checkedShops(db, accountId, input.shops);
  let url: string;
  try {
    url = (await verifyDestination(input.url, deps, deps.resolve)).url.href;
  } catch (error) {
    if (error instanceof WebhookAddressError) throw urlRejected(error);
    throw error;
  }
  await db.transaction(async (trx) => {
    await liveEndpoint(trx, accountId, id, { lock: true });
    await trx('webhook_endpoints').where({ id }).update({
      name, url, all_events: input.events === 'all', event_types: eventTypes, all_shops: input.shops === 'all', shop_codes: shopCodes, updated_at: trx.fn.now(),
    });
  });
  return { id };
}
