/** Writing domain events to the outbox (in the caller's transaction) and turning outbox rows into envelopes. */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ENVELOPE_VERSION, eventTypesByName, type Envelope } from './catalogue.js';

export interface NewEvent {
  accountId: string;
  /** Null for account-level events (e.g. `ping`). */
  shop: { id: string; code: string } | null;
  type: string;
  resource: { type?: string; id: string };
  data: Record<string, unknown>;
  occurredAt: Date;
}

/**
 * Records one event in the outbox. Call it inside the transaction that makes the change, so the event exists exactly
 * when the change does. Throws when the type is unknown or the data does not match the catalogue.
 */
export async function recordEvent(trx: Knex | Knex.Transaction, event: NewEvent): Promise<{ id: string; eventId: string }> {
  const definition = eventTypesByName.get(event.type);
  if (!definition) throw new Error(`Unknown event type ${event.type}`);
  const data = definition.data.parse(event.data);
  const eventId = crypto.randomUUID();
  const [row] = await trx('outbox_events').insert({
    event_id: eventId,
    account_id: event.accountId,
    shop_id: event.shop?.id ?? null,
    store: event.shop?.code ?? null,
    event_type: event.type,
    resource_type: event.resource.type ?? definition.resourceType,
    resource_id: event.resource.id,
    data,
    occurred_at: event.occurredAt,
  }).returning('id');
  return { id: String(row.id), eventId };
}

export interface OutboxRow {
  id: string;
  event_id: string;
  account_id: string;
  shop_id: string | null;
  store: string | null;
  event_type: string;
  resource_type: string;
  resource_id: string;
  data: Record<string, unknown>;
  occurred_at: Date;
}

/** The envelope of SPEC "Events" for an outbox row; `tenant` is the account code. */
export function toEnvelope(row: OutboxRow, tenant: string): Envelope {
  return {
    event_id: row.event_id,
    event_type: row.event_type,
    version: ENVELOPE_VERSION,
    occurred_at: row.occurred_at.toISOString(),
    tenant,
    store: row.store,
    resource: { type: row.resource_type, id: row.resource_id },
    data: row.data,
  };
}
