/**
 * Events a Medusa shop's forwarder posts (platform-plugins/medusa/src/subscribers/store-ops-forwarder.ts, MH6): checked
 * against the shop's forwarding secret — HMAC-SHA256 over `<timestamp>.<raw body>`, `v1=<hex>`, a timestamp within
 * 300 s — then stored once per event id. A bad signature or an unknown shop is refused and nothing is written. The
 * event only says *that* something changed; the sync it starts reads what changed through the Admin API.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../../db/knex.js';
import type { SecretKeys } from '../../webhooks/secrets.js';
import { loadShopCredentials } from '../../setup/credentials.js';

export const SIGNATURE_TOLERANCE_S = 300;

/** The forwarder's body, version 1 (docs/medusa.md "What it sends"). */
const forwardedEventSchema = z.object({
  version: z.literal(1),
  id: z.uuid(),
  event: z.string().min(1).max(200),
  occurred_at: z.iso.datetime({ offset: true }),
  data: z.record(z.string(), z.unknown()),
});

export type InboundOutcome =
  | { accepted: true; shopId: string; accountCode: string; shopCode: string; event: string; duplicate: boolean }
  | { accepted: false; status: 400 | 401 | 404; reason: 'unknown_shop' | 'bad_signature' | 'stale_timestamp' | 'malformed_body' };

/** True when `signature` (`v1=<hex>`, possibly among others, comma-separated) signs `timestamp.body` with `secret`. */
export function verifyForwarderSignature(secret: string, timestamp: string | undefined, signature: string | undefined, body: Buffer, nowS: number): 'ok' | 'bad_signature' | 'stale_timestamp' {
  if (!/^\d{1,12}$/.test(timestamp ?? '')) return 'bad_signature';
  if (Math.abs(nowS - Number(timestamp)) > SIGNATURE_TOLERANCE_S) return 'stale_timestamp';
  const expected = crypto.createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
  const candidates = (signature ?? '').split(',').map((s) => s.trim()).filter((s) => s.startsWith('v1='));
  return candidates.some((c) => {
    const given = Buffer.from(c.slice(3), 'hex');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  }) ? 'ok' : 'bad_signature';
}

/** Checks and stores one forwarded event of the shop `accountCode`/`shopCode`. */
export async function receiveForwardedEvent(
  db: Db,
  keys: SecretKeys,
  request: { accountCode: string; shopCode: string; timestamp: string | undefined; signature: string | undefined; body: Buffer; now: Date },
): Promise<InboundOutcome> {
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id')
    .where({ 'a.code': request.accountCode, 's.code': request.shopCode, 's.platform': 'medusa' }).whereNull('s.removed_at')
    .first('s.id');
  const credentials = shop ? await loadShopCredentials(db, keys, String(shop.id)) : null;
  // A shop connected without a forwarder secret takes no forwarded events (its sync still polls on its schedule).
  if (!shop || !credentials?.forwardSecret) return { accepted: false, status: 404, reason: 'unknown_shop' };
  const verdict = verifyForwarderSignature(credentials.forwardSecret, request.timestamp, request.signature, request.body, request.now.getTime() / 1000);
  if (verdict !== 'ok') return { accepted: false, status: 401, reason: verdict };
  let parsed: z.infer<typeof forwardedEventSchema>;
  try {
    parsed = forwardedEventSchema.parse(JSON.parse(request.body.toString('utf8')));
  } catch {
    return { accepted: false, status: 400, reason: 'malformed_body' };
  }
  const inserted = await db('medusa_forwarded_events')
    .insert({ shop_id: shop.id, event_id: parsed.id, event: parsed.event, occurred_at: new Date(parsed.occurred_at), received_at: request.now })
    .onConflict(['shop_id', 'event_id']).ignore().returning('id');
  return { accepted: true, shopId: String(shop.id), accountCode: request.accountCode, shopCode: request.shopCode, event: parsed.event, duplicate: inserted.length === 0 };
}
