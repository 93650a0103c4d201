/** The signed request of SPEC "Request headers" and "Signature": HMAC-SHA256 over `<timestamp>.<raw body>`. */
import crypto from 'node:crypto';

export const USER_AGENT = 'Service-Webhooks/1';

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">` keyed with the endpoint secret as its UTF-8 string. */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  const mac = crypto.createHmac('sha256', secret).update(`${timestamp}.`).update(body, 'utf8').digest('hex');
  return `v1=${mac}`;
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

/** The request headers of one attempt, exactly the names of the event catalogue's `deliveryHeaders`. */
export function deliveryRequestHeaders(req: SignedRequest): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Event': req.eventType,
    'X-Service-Event-Id': req.eventId,
    'X-Service-Timestamp': String(req.timestamp),
    'X-Service-Signature': signatureHeader(req.secret, req.timestamp, req.body),
    'X-Service-Delivery': req.deliveryId,
  };
}
