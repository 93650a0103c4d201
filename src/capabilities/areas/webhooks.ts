/**
 * Webhooks: the catalogue of outbound events, and read-only views of the account's endpoints and their delivery log.
 * Endpoints are created and changed only by a person (D11), never over REST or MCP; secrets and bodies are never returned.
 */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { deliveryHeaders, envelopeSchema, eventTypes, signatureRules } from '../../events/catalogue.js';
import { getWebhookEndpoint, listWebhookDeliveries, listWebhookEndpoints } from '../../queries/webhooks.js';
import { cursor, limit } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const fieldList = z.array(z.object({ name: z.string(), type: z.string(), required: z.boolean(), description: z.string().nullable() }));

/** Lists a zod object's fields with their JSON type, for a human- and assistant-readable catalogue. */
function fieldsOf(schema: z.ZodObject): z.infer<typeof fieldList> {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as { properties?: Record<string, { type?: string | string[]; description?: string; anyOf?: { type?: string }[] }>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, prop]) => {
    const types = prop.type ?? prop.anyOf?.map((a) => a.type).filter(Boolean) ?? 'any';
    return { name, type: Array.isArray(types) ? types.join(' | ') : String(types), required: (json.required ?? []).includes(name), description: prop.description ?? null };
  });
}

/** Returns the catalogue of outbound events, the envelope, the request headers and the signature rules. */
export const webhooksEvents = defineCapability({
  name: 'webhooks.events',
  summary: 'Catalogue of outbound events, envelope, signature.',
  description: 'Returns every outbound webhook event type (when it fires, its resource type, its `data` fields, whether an endpoint can subscribe to it), the envelope every delivery carries, the request headers and how to verify the signature. Use it to explain or build a webhook receiver; it does not depend on the shop.',
  path: '/webhooks/events',
  scope: 'webhooks:read',
  mcpTool: 'webhooks_events',
  kind: 'summary',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    eventTypes: z.array(z.object({ type: z.string(), when: z.string(), resourceType: z.string(), subscribable: z.boolean(), dataFields: fieldList })),
    envelope: z.object({ version: z.number().int(), fields: fieldList }),
    headers: z.array(z.object({ name: z.string(), value: z.string() })),
    signature: z.object({
      algorithm: z.string(), key: z.string(), signedPayload: z.string(), format: z.string(),
      verification: z.array(z.string()), toleranceSeconds: z.number().int(),
    }),
  }),
  annotations: readOnly,
  handler: async () => ({
    eventTypes: eventTypes.map((e) => ({ type: e.type, when: e.when, resourceType: e.resourceType, subscribable: e.subscribable, dataFields: fieldsOf(e.data) })),
    envelope: { version: 1, fields: fieldsOf(envelopeSchema) },
    headers: deliveryHeaders.map((h) => ({ ...h })),
    signature: { ...signatureRules, verification: [...signatureRules.verification] },
  }),
});

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const endpointId = z.string().regex(/^\d{1,18}$/, 'digits').describe('Webhook endpoint id, from webhooks_endpoints (GET /webhooks/endpoints).');

const endpointSchema = z.object({
  endpointId: z.string().describe('Endpoint id (digits).'),
  name: z.string(),
  url: z.string().describe('The https address deliveries are POSTed to.'),
  events: z.object({
    all: z.boolean().describe('True: every subscribable event type, also types added later.'),
    types: z.array(z.string()).describe('The subscribed event types (with `all`: every type subscribable today).'),
  }),
  shops: z.object({
    all: z.boolean().describe('True: every shop of the account, also future ones.'),
    codes: z.array(z.string()).describe('The shops covered when `all` is false (only those the caller may see).'),
  }),
  state: z.enum(['enabled', 'paused', 'disabled', 'deleted']).describe('`paused`: the service stopped sending after 30 consecutive failed attempts or more than 5,000 pending deliveries; pending deliveries are kept and delivered when a person enables it again. `disabled`: switched off by a person (pending deliveries were skipped). `deleted`: removed; its delivery log remains.'),
  pausedAt: timestamp.nullable(),
  pauseReason: z.enum(['consecutive_failures', 'pending_deliveries']).nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  secretRotatedAt: timestamp.nullable().describe('When the signing secret was last rotated; the secret itself is never returned.'),
  deletedAt: timestamp.nullable(),
  queue: z.object({
    pendingDeliveries: z.number().int().describe('Deliveries waiting for an attempt or a retry (what the 5,000 pause limit counts).'),
    waitingDeliveries: z.number().int().describe('Of those, deliveries held while the endpoint is paused or the plan has no webhooks.'),
    oldestPendingAt: timestamp.nullable().describe('Creation time of the oldest pending delivery.'),
    consecutiveFailedAttempts: z.number().int().describe('Failed attempts in a row (any 2xx resets it); 30 pause the endpoint.'),
  }),
});

/** Lists the account's webhook endpoints with their queue state; never a secret. */
export const webhooksEndpoints = defineCapability({
  name: 'webhooks.endpoints',
  summary: 'Webhook endpoints without secrets, with queue state.',
  description: 'Returns the account\'s webhook endpoints (not deleted ones): URL, subscribed events, shop scope, state (enabled, paused, disabled) and queue state (pending deliveries, consecutive failed attempts), oldest first, in one response (an account has few; `hasMore` is always false). Secrets are never returned. Endpoints are created and changed by a person in the application, not over this API. A key restricted to some shops sees the endpoints covering one of its shops. Use webhooks_deliveries for an endpoint\'s delivery log.',
  path: '/webhooks/endpoints',
  scope: 'webhooks:read',
  mcpTool: 'webhooks_endpoints',
  kind: 'list',
  market: 'none',
  params: z.object({}).strict(),
  result: endpointSchema,
  annotations: readOnly,
  handler: ({ ctx }) => listWebhookEndpoints(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes),
});

async function visibleEndpoint(ctx: { db: Parameters<typeof getWebhookEndpoint>[0]; caller: { account: { id: string }; shopCodes: ReadonlySet<string> | null } }, id: string) {
  const endpoint = await getWebhookEndpoint(ctx.db, ctx.caller.account.id, id, ctx.caller.shopCodes);
  if (!endpoint) throw new AppError('NOT_FOUND', `No webhook endpoint ${id}.`, { param: 'endpointId' });
  return endpoint;
}

/** Reads one webhook endpoint with its number of pending deliveries. */
export const webhooksEndpoint = defineCapability({
  name: 'webhooks.endpoint',
  summary: 'One webhook endpoint with its number of pending deliveries.',
  description: 'Returns one webhook endpoint by `endpointId` (from webhooks_endpoints): URL, events, shop scope, state, why and when it was paused, and its queue (pending and waiting deliveries, oldest pending, consecutive failed attempts). A deleted endpoint is still returned (state `deleted`) because its delivery log remains. Never returns the secret.',
  path: '/webhooks/endpoints/{endpointId}',
  scope: 'webhooks:read',
  mcpTool: 'webhooks_endpoint',
  kind: 'get',
  market: 'none',
  params: z.object({ endpointId }).strict(),
  result: endpointSchema,
  annotations: readOnly,
  handler: ({ params, ctx }) => visibleEndpoint(ctx, params.endpointId),
});

const attemptSchema = z.object({
  attempt: z.number().int().describe('Attempt number, from 1; a manual retry continues the count.'),
  attemptedAt: timestamp,
  outcome: z.enum(['success', 'http_error', 'redirect', 'timeout', 'connection_error', 'address_rejected'])
    .describe('`success`: 2xx within 10 s. `redirect` (3xx, not followed) and `address_rejected` (the name no longer resolves to a public address) end the delivery without retry.'),
  httpStatus: z.number().int().nullable().describe('The receiver\'s HTTP status; null when there was no answer.'),
  durationMs: z.number().int(),
  error: z.string().nullable().describe('A short reason for a failure (never a message body).'),
});

const deliverySchema = z.object({
  deliveryId: z.string().describe('The numeric delivery id sent as `X-Service-Delivery`.'),
  eventId: z.string().describe('The event\'s `event_id` (the same for every endpoint and every attempt).'),
  eventType: z.string(),
  store: z.string().nullable().describe('Shop code of the event; null for account-level events such as `ping`.'),
  status: z.enum(['PENDING', 'SENT', 'FAILED', 'SKIPPED']).describe('PENDING: waits for an attempt or a retry. SENT: a 2xx arrived. FAILED: six attempts failed, or a persistent error (3xx, non-public address); can be retried manually. SKIPPED: the endpoint was disabled or deleted before sending.'),
  attempts: z.number().int().describe('Attempts made.'),
  createdAt: timestamp,
  lastAttemptAt: timestamp.nullable(),
  lastHttpStatus: z.number().int().nullable(),
  nextAttemptAt: timestamp.nullable().describe('When a pending delivery is retried; null otherwise.'),
  completedAt: timestamp.nullable(),
  attemptLog: z.array(attemptSchema).describe('Every attempt, oldest first (kept 30 days).'),
});

/** Lists an endpoint's delivery log, newest first, by cursor; never a message body. */
export const webhooksDeliveries = defineCapability({
  name: 'webhooks.deliveries',
  summary: 'Delivery log of one endpoint, newest first, without bodies.',
  description: 'Returns the delivery log of one webhook endpoint (`endpointId`), newest first: per delivery the event, its status (PENDING, SENT, FAILED, SKIPPED) and every attempt with outcome, HTTP status, time and duration; message bodies are never shown. Kept 30 days. Paginated: send `nextCursor` back as `cursor` with the other parameters unchanged until `hasMore` is false. `status` filters, e.g. FAILED deliveries that wait for a manual retry. A key restricted to some shops sees only its shops\' events (and account-level ones such as `ping`).',
  path: '/webhooks/endpoints/{endpointId}/deliveries',
  scope: 'webhooks:read',
  mcpTool: 'webhooks_deliveries',
  kind: 'list',
  market: 'none',
  params: z.object({
    endpointId,
    status: z.enum(['PENDING', 'SENT', 'FAILED', 'SKIPPED']).optional().describe('Only deliveries in this status.'),
    limit: limit.optional(),
    cursor: cursor.optional(),
  }).strict(),
  result: deliverySchema,
  annotations: readOnly,
  handler: async ({ params, ctx, page }) => {
    await visibleEndpoint(ctx, params.endpointId);
    return listWebhookDeliveries(ctx.db, params.endpointId, ctx.caller.shopCodes, params.status, page);
  },
});
