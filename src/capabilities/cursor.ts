/**
 * Keyset pagination cursors (D7): opaque, URL-safe, HMAC-signed, carrying the last seen sort key and id,
 * the period they were issued for, and a fingerprint of (capability, shop, period, filters).
 */
import crypto from 'node:crypto';
import { AppError } from '../errors.js';
import type { Period } from './period.js';

/** The position after which the next page starts (newest first: strictly older than this). */
export interface KeysetPosition {
  /** Sort key of the last record, e.g. an ISO timestamp. */
  key: string;
  id: string;
}

interface CursorPayload {
  v: 1;
  k: string;
  i: string;
  /** The resolved period, reused on later pages so a default period cannot shift under a walk. */
  p: Period | null;
  f: string;
}

/** A fingerprint of everything a cursor is bound to; `limit` is deliberately left out. */
export function cursorFingerprint(parts: Record<string, unknown>): string {
  const canonical = JSON.stringify(Object.keys(parts).sort().map((k) => [k, parts[k] ?? null]));
  return crypto.createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

function sign(body: string, secret: string): string {
  return crypto.createHmac('sha256', secret).update(body).digest('base64url');
}

export function encodeCursor(position: KeysetPosition, period: Period | null, fingerprint: string, secret: string): string {
  const payload: CursorPayload = { v: 1, k: position.key, i: position.id, p: period, f: fingerprint };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${sign(body, secret)}`;
}

/** Verifies a cursor; INVALID_CURSOR if it does not verify or decode, CURSOR_MISMATCH if issued for other parameters. */
export function decodeCursor(cursor: string, fingerprint: string, secret: string): { position: KeysetPosition; period: Period | null } {
  const invalid = () => new AppError('INVALID_CURSOR', 'The cursor is not valid; use the `nextCursor` of a previous response unchanged.', { param: 'cursor' });
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined) throw invalid();
  const expected = Buffer.from(sign(body, secret));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) throw invalid();
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw invalid();
  }
  if (payload.v !== 1 || typeof payload.k !== 'string' || typeof payload.i !== 'string') throw invalid();
  if (payload.f !== fingerprint) {
    throw new AppError('CURSOR_MISMATCH', 'This cursor was issued for another shop, period or filter; send it back with all other parameters unchanged.', { param: 'cursor' });
  }
  return { position: { key: payload.k, id: payload.i }, period: payload.p };
}
