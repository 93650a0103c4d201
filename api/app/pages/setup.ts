/**
 * The first-run set-up page (issue 28.2; src/setup/firstRun.ts): opened with the one-time link a start prints while
 * the service has no account, it creates the account and its first owner, signs the owner in and sends them to Shops
 * to connect the first shop. A wrong, expired or used link gets a page saying so and creates nothing; once any
 * account exists the page answers 404 for everyone, with or without a link.
 */
import express, { type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../../src/people/passwords.js';
import { completeSetup, setupLinkState, type SetupInput, type SetupLinkState } from '../../../src/setup/firstRun.js';
import { field } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { ensureSession, replaceSession } from '../session.js';

const REFUSED: Record<Exclude<SetupLinkState, 'open' | 'closed'>, { status: number; message: string }> = {
  unknown: { status: 404, message: 'This set-up link is not known. Open the whole link the server printed when it started, or restart the server for a new one.' },
  expired: { status: 410, message: 'This set-up link has expired (a link works for 24 hours). Restart the server: it prints a new one while the service has no account.' },
  used: { status: 410, message: 'This set-up link was used already. Sign in with the owner\'s e-mail and password.' },
};

// Intl's canonical IANA zones (UTC is not among them in every Node, so it is added), offered as suggestions only: the
// rule that decides is isTimeZone's, the CLI's.
const TIME_ZONES = [...new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])].sort();

/** The 404 every other unknown page gets: once the service is set up the page does not exist. */
const gone = (res: Response) => renderPage(res, 'error', { title: 'Not found', message: 'There is no such page.' }, 404);

/** The form's fields that can show a problem beside them. */
const FIELDS = ['name', 'code', 'plan', 'timeZone', 'email', 'password'];

const tokenOf = (value: unknown) => (typeof value === 'string' ? value : '');

export function setupRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();

  /** Answers the page when the link is not open (and returns null); else the link's expiry. */
  const openLink = async (res: Response, token: string): Promise<Date | null> => {
    const { state, expiresAt } = await setupLinkState(db, token, now());
    if (state === 'open') return expiresAt;
    if (state === 'closed') gone(res);
    else renderPage(res, 'error', { title: 'Set-up link not usable', message: REFUSED[state].message, code: `setup_link_${state}` }, REFUSED[state].status);
    return null;
  };

  const form = async (res: Response, link: { token: string; expiresAt: Date }, values: Record<string, string>, problems: Record<string, string>, error: string | null, status = 200) => {
    const plans = await db('plans').orderBy('sort_order').select('code', 'name');
    renderPage(res, 'setup', {
      title: 'Set up the service', token: link.token, form: values, problems, error, plans, timeZones: TIME_ZONES, passwordMin: PASSWORD_MIN, passwordMax: PASSWORD_MAX,
      expiresAt: `${link.expiresAt.toISOString().replace('T', ' ').slice(0, 16)} UTC`,
    }, status);
  };

  router.get('/setup', async (req, res) => {
    const token = tokenOf(req.query.token);
    const expiresAt = await openLink(res, token);
    if (!expiresAt) return;
    await ensureSession(db, now(), req, res);
    await form(res, { token, expiresAt }, { name: '', code: '', plan: 'start', timeZone: '', ownerName: '', email: '' }, {}, null);
  });

  router.post('/setup', async (req, res) => {
    const token = field(req.body, 'token');
    const expiresAt = await openLink(res, token);
    if (!expiresAt) return;
    // The password is never written back into the page.
    const values = {
      name: field(req.body, 'name'), code: field(req.body, 'code'), plan: field(req.body, 'plan'), timeZone: field(req.body, 'timeZone'),
      ownerName: field(req.body, 'ownerName'), email: field(req.body, 'email'),
    };
    const input: SetupInput = {
      account: { name: values.name, code: values.code, planCode: values.plan, timeZone: values.timeZone },
      owner: { name: values.ownerName, email: values.email, password: field(req.body, 'password') },
    };
    try {
      const { personId } = await completeSetup(db, token, input, now());
      await replaceSession(db, now(), req, res, { personId });
      res.redirect(303, '/app/shops?done=setup');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Another link or the CLI made the first account meanwhile, or this link was used in another tab.
      if ((error.code === 'NOT_FOUND' || error.code === 'STATE_CONFLICT') && !(await openLink(res, token))) return;
      const problems = (error.details?.fields as Record<string, string> | undefined) ?? { [String(error.details?.param ?? '')]: error.message };
      // A refusal that names no field of the form is said at the top, so it is never lost.
      const placed = Object.keys(problems).every((name) => FIELDS.includes(name));
      const summary = placed ? `${Object.keys(problems).length === 1 ? 'one field needs' : 'some fields need'} a change (see below).` : error.message;
      await form(res, { token, expiresAt }, values, placed ? problems : {}, `${error.code}: ${summary}`, error.status);
    }
  });
  return router;
}
