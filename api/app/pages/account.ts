/** Your account: change the password; turn the second factor on (QR code, then recovery codes shown once) or off. */
import express, { type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import { changeOwnPassword } from '../../../src/people/people.js';
import { confirmTotpEnrolment, disableTotp, startTotpEnrolment } from '../../../src/people/totp.js';
import { field } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, endSession, requirePerson } from '../session.js';

export function accountRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const page = (res: Response, extra: Record<string, unknown> = {}, status = 200) =>
    renderPage(res, 'account', { title: 'Your account', error: null, notice: null, enrolment: null, recoveryCodes: null, ...extra }, status);
  /** A refusal of the service re-renders the page with its message. */
  const refusal = (res: Response, error: unknown, extra: Record<string, unknown> = {}) => {
    if (!(error instanceof AppError)) throw error;
    page(res, { error: error.message, ...extra }, error.status);
  };

  router.get('/account', requirePerson, (_req, res) => page(res));

  router.post('/account/password', requirePerson, async (req, res) => {
    const next = field(req.body, 'newPassword');
    if (next !== field(req.body, 'repeatPassword')) return page(res, { error: 'The new passwords differ.' }, 400);
    try {
      await changeOwnPassword(db, currentPerson(res).id, field(req.body, 'currentPassword'), next);
    } catch (error) {
      return refusal(res, error);
    }
    // Every session of the person ended with the change, this one too: sign in with the new password.
    await endSession(db, req, res);
    res.redirect(303, '/app/sign-in');
  });

  router.post('/account/second-factor/start', requirePerson, async (_req, res) => {
    try {
      const { secret, uri } = await startTotpEnrolment(db, deps.application.secretsKey(), currentPerson(res).id);
      const qr = `data:image/svg+xml;base64,${Buffer.from(await (await import('qrcode')).default.toString(uri, { type: 'svg', margin: 1 })).toString('base64')}`;
      page(res, { enrolment: { secret, qr } });
    } catch (error) {
      refusal(res, error);
    }
  });

  router.post('/account/second-factor/confirm', requirePerson, async (req, res) => {
    try {
      const { recoveryCodes } = await confirmTotpEnrolment(db, deps.application.secretsKey(), currentPerson(res).id, field(req.body, 'code'), now());
      res.locals.app.person = { ...currentPerson(res), totpEnabled: true };
      page(res, { recoveryCodes, notice: 'The second factor is on. Keep these recovery codes somewhere safe: each works once, and they are shown only now.' });
    } catch (error) {
      refusal(res, error);
    }
  });

  router.post('/account/second-factor/disable', requirePerson, async (req, res) => {
    try {
      await disableTotp(db, deps.application.secretsKey(), currentPerson(res).id, field(req.body, 'code'), now());
      res.locals.app.person = { ...currentPerson(res), totpEnabled: false };
      page(res, { notice: 'The second factor is off.' });
    } catch (error) {
      refusal(res, error);
    }
  });
  return router;
}
