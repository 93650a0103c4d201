/**
 * Sessions of the application's pages (reusable by every page): the cookie, the signed-in person, and the guards
 * `requirePerson` and `requirePermission`. The session lives in Postgres (src/people/sessions.ts); the cookie is
 * HttpOnly, SameSite=Lax, Secure (and `__Host-` prefixed) whenever the service is reached over https.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Db } from '../../src/db/knex.js';
import { loadPerson } from '../../src/people/people.js';
import type { Person } from '../../src/people/model.js';
import { createSession, deleteSession, findSession, SESSION_MAX_MS, type SessionRow, type SessionStore, type SessionSubject } from '../../src/people/sessions.js';
import { renderPage } from './render.js';

export interface AppState {
  session: SessionRow | null;
  /** The signed-in person; null before sign-in and while the second factor is pending. */
  person: Person | null;
}

/** What every page handler reads: the session state set by `loadSession`. */
export function appState(res: Response): AppState {
  return res.locals.app as AppState;
}

/** The signed-in person of a page behind `requirePerson`. */
export function currentPerson(res: Response): Person {
  const person = appState(res).person;
  if (!person) throw new Error('currentPerson used on a page without requirePerson');
  return person;
}

const secure = (req: Request) => req.secure || req.protocol === 'https';

/**
 * Which sessions a router keeps: the application's (default) or a partner portal's (issue 24), with their own table
 * and cookie, so a partner's session is never a staff session and the other way round.
 */
export interface SessionFlavour {
  store: SessionStore;
  cookieName: (req: Request) => string;
  /** The cookie's path: `/` for the application; a portal under its development prefix keeps its cookie there. */
  cookiePath: (req: Request) => string;
}

export const STAFF_SESSIONS: SessionFlavour = { store: 'app_sessions', cookieName: (req) => (secure(req) ? '__Host-sid' : 'sid'), cookiePath: () => '/' };
const cookieName = STAFF_SESSIONS.cookieName;

function setCookie(req: Request, res: Response, token: string, flavour: SessionFlavour): void {
  res.cookie(flavour.cookieName(req), token, { httpOnly: true, sameSite: 'lax', secure: secure(req), path: flavour.cookiePath(req), maxAge: SESSION_MAX_MS });
}

export function loadSession(db: Db, now: () => Date) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = (req.cookies as Record<string, string> | undefined)?.[cookieName(req)];
    const session = token ? await findSession(db, token, now()) : null;
    const person = session?.personId ? await loadPerson(db, session.personId) : null;
    res.locals.app = { session, person } satisfies AppState;
    next();
  };
}

/** The session of this visitor, started (without a person) when there is none: forms need its CSRF token. */
export async function ensureSession(db: Db, now: Date, req: Request, res: Response, flavour = STAFF_SESSIONS, who: SessionSubject = {}): Promise<SessionRow> {
  const state = appState(res);
  if (state.session) return state.session;
  const { token, session } = await createSession(db, now, who, flavour.store);
  setCookie(req, res, token, flavour);
  state.session = session;
  return session;
}

/**
 * Replaces the visitor's session by a new one (new id, new CSRF token) for `who`: called at every step of sign-in, so
 * a session id known before sign-in never becomes a signed-in one.
 */
export async function replaceSession(db: Db, now: Date, req: Request, res: Response, who: SessionSubject, flavour = STAFF_SESSIONS): Promise<SessionRow> {
  const state = appState(res);
  if (state.session) await deleteSession(db, state.session.idHash, flavour.store);
  const { token, session } = await createSession(db, now, who, flavour.store);
  setCookie(req, res, token, flavour);
  state.session = session;
  state.person = who.personId ? await loadPerson(db, who.personId) : null;
  return session;
}

export async function endSession(db: Db, req: Request, res: Response, flavour = STAFF_SESSIONS): Promise<void> {
  const state = appState(res);
  if (state.session) await deleteSession(db, state.session.idHash, flavour.store);
  res.clearCookie(flavour.cookieName(req), { path: flavour.cookiePath(req) });
  state.session = null;
  state.person = null;
}

/** A relative path inside this service to return to after sign-in; anything else (other hosts, `//x`, `\\x`) is refused. */
export function safeReturnPath(value: unknown, fallback = '/app'): string {
  if (typeof value !== 'string' || value.length > 2000) return fallback;
  // Printable ASCII only (no control characters, no backslash that browsers read as `/`), under /app or /oauth.
  if (!/^\/(app|oauth)(\/|\?|$)/.test(value) || !/^[\x21-\x5b\x5d-\x7e]+$/.test(value)) return fallback;
  return value;
}

/** Pages for signed-in people only: a GET goes to the sign-in page and comes back; anything else gets a 403. */
export function requirePerson(req: Request, res: Response, next: NextFunction): void {
  if (appState(res).person) return next();
  if (req.method === 'GET') return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
  renderPage(res, 'error', { title: 'Signed out', message: 'Your session has ended. Sign in again.' }, 403);
}

/** Pages that need a permission (D27); the check is a rule from src/people, never written in a page. */
export function requirePermission(allowed: (person: Person) => boolean, what: string) {
  return (_req: Request, res: Response, next: NextFunction) => {
    const person = appState(res).person;
    if (person && allowed(person)) return next();
    renderPage(res, 'error', { title: 'Not allowed', message: `You need the permission to ${what}. Ask the account owner.` }, 403);
  };
}
