/** The signed request of SPEC "Request headers" and "Signature": HMAC-SHA256 over `<timestamp>.<raw body>`. */
import crypto from 'node:crypto';

export const USER_AGENT = 'Service-Webhooks/1';

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">` keyed with the endpoint secret as its UTF-8 string. */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  const mac = crypto.createHmac('sha256', secret).update(`${timestamp}.`).update(body, 'utf8').digest('hex');
  return `v1=${mac}`;
}

/**
 * Standard Webhooks (standardwebhooks.com): `v1,<base64 HMAC-SHA256 of "<webhook-id>.<timestamp>.<body>">` keyed with
 * the secret's bytes, i.e. the base64 after `whsec_` decoded — the same secret as ours, read as that specification
 * reads it, so the official `standardwebhooks` libraries verify our deliveries with the `whsec_…` string as given.
 */
export function standardSignatureHeader(secret: string, webhookId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const mac = crypto.createHmac('sha256', key).update(`${webhookId}.${timestamp}.`).update(body, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export interface SignedRequest {
  eventType: string;
  eventId: string;
  deliveryId: string;
  secret: string;
  body: string;
  /** Unix seconds; a retry signs again with a fresh one (D19). */
  timestamp: number;
}

/**
 * The request headers of one attempt, exactly the names of the event catalogue's `deliveryHeaders`: SPEC's seven and
 * the three of Standard Webhooks, whose `webhook-id` is the `event_id` (the same on every attempt: receivers
 * de-duplicate by it) and whose timestamp is the attempt's, like `X-Service-Timestamp` (D19: a fresh one each time).
 */
export function deliveryRequestHeaders(req: SignedRequest): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Event': req.eventType,
    'X-Service-Event-Id': req.eventId,
    'X-Service-Timestamp': String(req.timestamp),
    'X-Service-Signature': signatureHeader(req.secret, req.timestamp, req.body),
    'X-Service-Delivery': req.deliveryId,
    'webhook-id': req.eventId,
    'webhook-timestamp': String(req.timestamp),
    'webhook-signature': standardSignatureHeader(req.secret, req.eventId, req.timestamp, req.body),
  };
}
