/**
 * The invitation link (src/people/invitations.ts), open to anyone holding it: shows who invites to which account and
 * asks for a password (the rules of `people create`); accepting creates the person and signs them in (a new session).
 * An unknown, expired, used or revoked link gets a page saying so, and nothing is created.
 */
import express, { type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import { acceptInvitation, openInvitation } from '../../../src/people/invitations.js';
import { PASSWORD_MIN } from '../../../src/people/passwords.js';
import { field } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { ensureSession, replaceSession } from '../session.js';

const REFUSED: Record<string, string> = {
  unknown: 'This invitation link is not known. Check that you opened the whole link, or ask for a new invitation.',
  expired: 'This invitation has expired. Ask the account owner to invite you again.',
  accepted: 'This invitation was used already. Sign in with your e-mail and password.',
  revoked: 'This invitation was withdrawn. Ask the account owner if you still need access.',
};

export function invitationRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();

  const refused = (res: Response, reason: string) => renderPage(res, 'error', { title: 'Invitation not usable', message: REFUSED[reason] ?? REFUSED.unknown, code: `invitation_${reason}` }, reason === 'unknown' ? 404 : 410);

  router.get('/invitation/:token', async (req, res) => {
    const opened = await openInvitation(db, String(req.params.token), now());
    if (!opened.ok) return refused(res, opened.reason);
    await ensureSession(db, now(), req, res);
    renderPage(res, 'invitation', { title: 'Accept the invitation', invitation: opened.invitation, accountName: opened.accountName, passwordMin: PASSWORD_MIN, error: null });
  });

  router.post('/invitation/:token', async (req, res) => {
    const token = String(req.params.token);
    const opened = await openInvitation(db, token, now());
    if (!opened.ok) return refused(res, opened.reason);
    try {
      const { personId } = await acceptInvitation(db, token, { password: field(req.body, 'password'), name: field(req.body, 'name') }, now());
      await replaceSession(db, now(), req, res, { personId });
      res.redirect(303, '/app');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      renderPage(res, 'invitation', { title: 'Accept the invitation', invitation: opened.invitation, accountName: opened.accountName, passwordMin: PASSWORD_MIN, error: error.message }, error.status);
    }
  });
  return router;
}
