/**
 * The one event catalogue (SPEC "Events"): every event type with when it fires, its resource type and its `data`
 * fields. The outbox validates against it; GET /webhooks/events and the MCP tool webhooks_events return it.
 * Event `data` is snake_case (D2) and never holds personal data.
 */
import { z } from 'zod';

const id = z.string().min(1);
const nullableText = z.string().nullable();

const orderRef = { order_code: id };
const shipmentFields = {
  shipment_id: id,
  order_code: id,
  carrier_code: id,
  status: z.string(),
  previous_status: nullableText,
  tracking_number: z.string(),
};
const contentFields = {
  store_id: id,
  market: id,
  entity: z.enum(['product', 'category']),
  entity_id: id,
  canonical_url: nullableText,
  source: z.enum(['ui', 'assistant', 'mcp', 'autonomous', 'rest']),
  source_run_id: nullableText,
  changed_fields: z.array(z.string()).min(1),
  before_hash: z.record(z.string(), z.string()),
  after_hash: z.record(z.string(), z.string()),
  changed_at: z.string(),
};

export interface EventTypeDefinition {
  type: string;
  when: string;
  resourceType: string;
  data: z.ZodObject;
  /** False for `automation.action`, which only an automation step sends. */
  subscribable: boolean;
}

function event(type: string, when: string, resourceType: string, data: z.ZodRawShape, subscribable = true): EventTypeDefinition {
  return { type, when, resourceType, data: z.object(data).strict(), subscribable };
}

export const eventTypes: readonly EventTypeDefinition[] = [
  event('order.created', 'new order from a shop', 'order', orderRef),
  event('order.paid', 'order marked paid', 'order', orderRef),
  event('order.status_changed', 'order status changed', 'order', { ...orderRef, status_id: z.number().int(), previous_status_id: z.number().int().nullable() }),
  event('shipment.created', 'shipment created at a carrier', 'shipment', { shipment_id: id, order_code: id, carrier_code: id, tracking_number: z.string() }),
  event('shipment.status_changed', 'shipment status changed (carrier or staff)', 'shipment', shipmentFields),
  event('shipment.delivered', 'shipment delivered; additionally to shipment.status_changed', 'shipment', { ...shipmentFields, status: z.literal('DELIVERED') }),
  event('inventory.stock_changed', 'stock movement of an item', 'inventory_item', { item_id: id, sku: z.string(), kind: z.string() }),
  event('invoice.created', 'invoice issued', 'invoice', { invoice_code: id, order_code: nullableText }),
  event('claim.created', 'claim created (customer or staff)', 'claim', { claim_code: id, order_code: nullableText }),
  event('claim.status_changed', 'claim status changed', 'claim', { claim_code: id, order_code: nullableText, status_id: z.number().int() }),
  event('claim.closed', 'claim closed', 'claim', { claim_code: id, order_code: nullableText }),
  event('search_console.connection.changed', 'search-console connection state changed (connected, property changed, access lost, disconnected)', 'search_console_property', {
    market: id, status: z.string(), previous_status: nullableText, property: nullableText, previous_property: nullableText, changed_at: z.string(),
  }),
  event('search_console.sync.completed', 'archive sync added or changed days', 'search_console_property', {
    market: id, property: z.string(), search_types: z.array(z.string()), data_state: z.string(), final_data_through: nullableText, fresh_data_through: nullableText,
    days_upserted: z.number().int(), revised_dates: z.array(z.string()), sync_version: z.number().int(), synced_at: z.string(),
  }),
  event('search_console.sync.failed', 'archive sync failed', 'search_console_property', {
    market: id, property: nullableText, error: z.string(), error_code: z.string(), last_successful_sync_at: nullableText, retry_at: nullableText,
  }),
  event('product_content.changed', 'the service wrote a changed description, short description or SEO text of a product to the shop', 'product', contentFields),
  event('category_content.changed', 'the service wrote a changed upper/lower description or SEO text of a category', 'category', contentFields),
  event('ping', 'test delivery from the button', 'webhook_endpoint', { message: z.string(), endpoint: id }),
  event('automation.action', "automation step 'send webhook' fires after the rule's conditions are met; cannot be subscribed directly", 'entity of the run', {
    automation: z.object({ workflow_id: id, run_id: id, node_id: id, source_event: z.string() }),
    order_code: id.optional(), shipment_id: id.optional(), claim_code: id.optional(),
  }, false),
];

export const eventTypeNames = eventTypes.map((e) => e.type);
export const eventTypesByName = new Map(eventTypes.map((e) => [e.type, e]));

/** Event types a webhook endpoint may subscribe to (everything but automation.action). */
export const subscribableEventTypes = eventTypes.filter((e) => e.subscribable).map((e) => e.type);

export const ENVELOPE_VERSION = 1;

/** The envelope of SPEC "Events" — the exact JSON a receiver gets. */
export const envelopeSchema = z.object({
  event_id: z.uuid().describe('Unique per event; two endpoints subscribed to the same event get the same ID; a retry carries the same ID and content.'),
  event_type: z.string().describe('One of the event types.'),
  version: z.literal(ENVELOPE_VERSION).describe('Envelope version, currently 1; adding a field does not change it, changing the meaning of one does.'),
  occurred_at: z.string().describe('ISO 8601 UTC with milliseconds: when the event occurred.'),
  tenant: z.string().describe('Account identifier.'),
  store: z.string().nullable().describe('Shop code (`market`, as used by REST); null for account-level events.'),
  resource: z.object({ type: z.string(), id: z.string() }).describe('The entity concerned.'),
  data: z.record(z.string(), z.unknown()).describe('Fields of the event type.'),
});

export type Envelope = z.infer<typeof envelopeSchema>;

/** Request headers of a delivery (SPEC "Request headers"). */
export const deliveryHeaders = [
  { name: 'Content-Type', value: 'application/json' },
  { name: 'User-Agent', value: 'Service-Webhooks/1' },
  { name: 'X-Service-Event', value: 'the event type' },
  { name: 'X-Service-Event-Id', value: 'the `event_id`' },
  { name: 'X-Service-Timestamp', value: 'Unix time in seconds' },
  { name: 'X-Service-Signature', value: '`v1=<hex>` (may hold comma-separated values; take the one starting with `v1=`)' },
  { name: 'X-Service-Delivery', value: 'numeric delivery identifier' },
  // Standard Webhooks (standardwebhooks.com), the same secret: verifiable with the official `standardwebhooks` libraries.
  { name: 'webhook-id', value: 'the `event_id` (Standard Webhooks message id; the same on every attempt)' },
  { name: 'webhook-timestamp', value: 'Unix time in seconds (the same as X-Service-Timestamp)' },
  { name: 'webhook-signature', value: '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the base64 after `whsec_` (Standard Webhooks)' },
] as const;

/** Signature rules (SPEC "Signature"). */
export const signatureRules = {
  algorithm: 'HMAC-SHA256',
  key: "the endpoint's secret (`whsec_…`, used as the UTF-8 string)",
  signedPayload: '`<X-Service-Timestamp>` + `.` + the exact raw request body',
  format: 'hexadecimal, prefixed `v1=`',
  verification: [
    'Verify on the raw bytes as received, not on re-serialised JSON.',
    'Compare in constant time.',
    'Reject a timestamp more than 300 seconds from the current time.',
    'A missing or non-numeric timestamp or a missing `v1=` value fails verification.',
    'Store recent `event_id` values and ignore duplicates: redelivery is a property of the system.',
  ],
  toleranceSeconds: 300,
} as const;
