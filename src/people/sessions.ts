/**
 * Sessions of the application, kept in Postgres. The cookie carries 32 random bytes; only their SHA-256 is stored, so
 * a database reader cannot take over a session. Signing in (and passing the second factor) always starts a new
 * session and deletes the old one: an id planted before sign-in is worthless afterwards (session fixation).
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';

/** A session lives 12 hours at most and ends after 2 hours without a request. */
export const SESSION_MAX_MS = 12 * 3600_000;
export const SESSION_IDLE_MS = 2 * 3600_000;

export interface SessionRow {
  idHash: Buffer;
  csrfToken: string;
  personId: string | null;
  pendingPersonId: string | null;
  /** Partner-portal sessions only: the signed-in partner and the portal's shop (null in the application's sessions). */
  partnerId?: string | null;
  shopId?: string | null;
}

/** Where a kind of session is kept: the application's people, or the partner portals' partners (issue 24, separate rows). */
export type SessionStore = 'app_sessions' | 'affiliate_portal_sessions';

const hashOf = (token: string) => crypto.createHash('sha256').update(token).digest();

export interface SessionSubject { personId?: string; pendingPersonId?: string; partnerId?: string; shopId?: string }

export async function createSession(db: Db, now: Date, who: SessionSubject = {}, store: SessionStore = 'app_sessions'): Promise<{ token: string; session: SessionRow }> {
  const token = crypto.randomBytes(32).toString('base64url');
  const session: SessionRow = { idHash: hashOf(token), csrfToken: crypto.randomBytes(32).toString('base64url'), personId: who.personId ?? null, pendingPersonId: who.pendingPersonId ?? null };
  const subject = store === 'app_sessions'
    ? { person_id: session.personId, pending_person_id: session.pendingPersonId }
    : { partner_id: (session.partnerId = who.partnerId ?? null), shop_id: (session.shopId = who.shopId ?? null) };
  await db(store).insert({ id_hash: session.idHash, csrf_token: session.csrfToken, ...subject, created_at: now, last_seen_at: now, expires_at: new Date(now.getTime() + SESSION_MAX_MS) });
  return { token, session };
}

/** The live session of a cookie value, or null; refreshes its idle timer at most once a minute. */
export async function findSession(db: Db, token: string, now: Date, store: SessionStore = 'app_sessions'): Promise<SessionRow | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const idHash = hashOf(token);
  const row = await db(store).where({ id_hash: idHash }).where('expires_at', '>', now).where('last_seen_at', '>', new Date(now.getTime() - SESSION_IDLE_MS)).first();
  if (!row) return null;
  if (row.last_seen_at < new Date(now.getTime() - 60_000)) await db(store).where({ id_hash: idHash }).update({ last_seen_at: now });
  if (store === 'affiliate_portal_sessions') {
    return { idHash, csrfToken: row.csrf_token, personId: null, pendingPersonId: null, partnerId: row.partner_id === null ? null : String(row.partner_id), shopId: String(row.shop_id) };
  }
  return { idHash, csrfToken: row.csrf_token, personId: row.person_id, pendingPersonId: row.pending_person_id };
}

export async function deleteSession(db: Db, idHash: Buffer, store: SessionStore = 'app_sessions'): Promise<void> {
  await db(store).where({ id_hash: idHash }).delete();
}

/** Removes ended sessions; called now and then from sign-in, so the table does not grow without bound. */
export async function purgeEndedSessions(db: Db, now: Date, store: SessionStore = 'app_sessions'): Promise<number> {
  return db(store).where('expires_at', '<=', now).orWhere('last_seen_at', '<=', new Date(now.getTime() - SESSION_IDLE_MS)).delete();
}
