/**
 * CSRF protection for every form of the application: a POST must carry the session's token in `_csrf` (synchroniser
 * token, compared in constant time) and, when the browser names an Origin, come from this service's own origin.
 * SameSite=Lax on the cookie is a third line.
 */
import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { appState } from './session.js';
import { renderPage } from './render.js';

/** `refusal` renders the 403 page (the partner portal passes its own layout; the application's by default). */
export function csrfProtection(ownOrigin: (req: Request) => string, refusal?: (res: Response, why: string) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    const origin = req.get('origin');
    const refuse = (why: string) => (refusal ? refusal(res, why)
      : renderPage(res, 'error', { title: 'Form refused', message: `The form was refused (${why}). Reload the page and try again.` }, 403));
    if (origin !== undefined && origin !== ownOrigin(req)) return refuse('it came from another site');
    const session = appState(res).session;
    const sent = typeof req.body?._csrf === 'string' ? Buffer.from(req.body._csrf) : Buffer.alloc(0);
    const expected = session ? Buffer.from(session.csrfToken) : null;
    if (!expected || sent.length !== expected.length || !crypto.timingSafeEqual(sent, expected)) return refuse('its security token is missing or out of date');
    next();
  };
}
