/** Sign-in (password, then the second factor when enabled) and sign-out. Each step starts a new session. */
import express, { type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import { checkPassword, checkSecondFactor, purgeUnknownAddressFailures } from '../../../src/people/signIn.js';
import { purgeEndedSessions } from '../../../src/people/sessions.js';
import { hasAnyAccount } from '../../../src/setup/firstRun.js';
import { purgeExpiredArtifacts } from '../../../src/oauth/adapter.js';
import { field } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { appState, endSession, ensureSession, replaceSession, safeReturnPath } from '../session.js';

export function signInRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  // Per client address, on top of the per-person lockout: slows guessing across many e-mails.
  const limiter = rateLimit({
    windowMs: 15 * 60_000, limit: deps.application.signInAttemptsPerWindow ?? 30, standardHeaders: 'draft-8', legacyHeaders: false,
    handler: (_req, res) => renderPage(res, 'signIn', { title: 'Sign in', next: '/app', email: '', error: 'Too many sign-in attempts from your address. Wait a few minutes.' }, 429),
  });

  router.get('/sign-in', async (req, res) => {
    if (appState(res).person) return res.redirect(303, safeReturnPath(req.query.next));
    await ensureSession(db, now(), req, res);
    // A service nobody has set up yet: nobody can sign in, so the page says where to begin.
    const firstRun = !(await hasAnyAccount(db));
    renderPage(res, 'signIn', { title: 'Sign in', next: safeReturnPath(req.query.next), email: '', error: null, firstRun });
  });

  router.post('/sign-in', limiter, async (req, res) => {
    const next = safeReturnPath(field(req.body, 'next'));
    const email = field(req.body, 'email');
    const result = await checkPassword(db, email, field(req.body, 'password'), now());
    if (!result.ok) {
      const error = result.reason === 'locked'
        ? 'Too many wrong passwords: this account is locked for 15 minutes. Try again later or ask the account owner.'
        : 'The e-mail or the password is not right.';
      return renderPage(res, 'signIn', { title: 'Sign in', next, email, error }, result.reason === 'locked' ? 429 : 401);
    }
    // Housekeeping on a rare, cheap occasion: ended sessions and expired authorization artefacts.
    void purgeEndedSessions(db, now()).then(() => purgeExpiredArtifacts(db, now())).then(() => purgeUnknownAddressFailures(db, now())).catch(() => undefined);
    if (result.totpEnabled) {
      await replaceSession(db, now(), req, res, { pendingPersonId: result.personId });
      return res.redirect(303, `/app/sign-in/second-factor?next=${encodeURIComponent(next)}`);
    }
    await replaceSession(db, now(), req, res, { personId: result.personId });
    res.redirect(303, next);
  });

  router.get('/sign-in/second-factor', (req, res) => {
    if (!appState(res).session?.pendingPersonId) return res.redirect(303, '/app/sign-in');
    renderPage(res, 'secondFactor', { title: 'Second factor', next: safeReturnPath(req.query.next), error: null });
  });

  router.post('/sign-in/second-factor', limiter, async (req, res) => {
    const pending = appState(res).session?.pendingPersonId;
    if (!pending) return res.redirect(303, '/app/sign-in');
    const next = safeReturnPath(field(req.body, 'next'));
    const checked = await checkSecondFactor(db, deps.application.secretsKey(), pending, field(req.body, 'code'), now());
    if (!checked.ok) {
      const locked = checked.reason === 'locked';
      const error = locked ? 'Too many wrong codes: the second step is locked for 15 minutes. Try again later or ask the account owner.' : 'That code is not right (or was used already).';
      return renderPage(res, 'secondFactor', { title: 'Second factor', next, error }, locked ? 429 : 401);
    }
    await replaceSession(db, now(), req, res, { personId: pending });
    res.redirect(303, next);
  });

  router.post('/sign-out', async (req, res) => {
    await endSession(db, req, res);
    res.redirect(303, '/app/sign-in');
  });
  return router;
}
