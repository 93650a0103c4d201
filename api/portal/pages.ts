/**
 * The partner portal's pages (issue 24 point 2): registration, e-mail verification, sign-in and password reset,
 * acceptance of the programme's documents, the dashboard with the link generator and code requests, and payout
 * details. Served per shop under the development prefix `/portal/<account>/<shop>` and, in production, at the root of
 * the portal's own address or active custom domain (by Host). Partners' sessions are their own (table and cookie),
 * built from the application's session, CSRF, Argon2id and lockout blocks; rules live in src/affiliate/portal/.
 */
import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Db } from '../../src/db/knex.js';
import { AppError, toAppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { findSession, purgeEndedSessions } from '../../src/people/sessions.js';
import { generateLink, LINK_TARGETS, type LinkTarget } from '../../src/affiliate/links.js';
import { PARTNER_KINDS, linkUsable, loadPortalPartner, registerPartner, requestPasswordReset, resetPassword, signInPartner, verifyEmail } from '../../src/affiliate/portal/accounts.js';
import { acceptDocument, partnerDocuments } from '../../src/affiliate/portal/documents.js';
import { partnerDashboard, requestDiscountCode } from '../../src/affiliate/portal/dashboard.js';
import { maskedPayoutDetails, savePayoutDetails } from '../../src/affiliate/portal/payoutDetails.js';
import { isPortalLanguage, pageHtml, portalArticles, portalByHost, portalByPath, portalValues, type Portal } from '../../src/affiliate/portal/portals.js';
import { payoutStatement } from '../../src/affiliate/staff/payouts.js';
import { renderPayoutStatement } from '../../src/affiliate/staff/statementPdf.js';
import { csrfProtection } from '../app/csrf.js';
import { field } from '../app/forms.js';
import { ownOrigin, pageSecurityHeaders, type ApplicationOptions } from '../app/index.js';
import { endSession, ensureSession, replaceSession, type SessionFlavour } from '../app/session.js';
import { LABELS } from './labels.js';
import { portalState, renderPortal, type PortalState } from './render.js';

export interface PortalPagesDeps {
  db: Db;
  now: () => Date;
  application: ApplicationOptions;
}

const secure = (req: Request) => req.secure || req.protocol === 'https';

/** Partners' sessions: their own table and cookie; under the development prefix the cookie stays on that path. */
function partnerSessions(base: string): SessionFlavour {
  return {
    store: 'affiliate_portal_sessions',
    cookieName: (req) => (secure(req) && base === '' ? '__Host-psid' : 'psid'),
    cookiePath: () => base || '/',
  };
}

/** The origin forms must come from: the portal's own host in production, the service's in development. */
function portalOrigin(options: ApplicationOptions, req: Request, base: string): string {
  return base === '' ? `${req.protocol}://${req.get('host')}` : ownOrigin(options, req);
}

const LANGUAGE_COOKIE = 'plang';

function portalNotFound(res: Response): void {
  res.locals.portal ??= { portal: null, base: '', language: 'en', partner: null } satisfies PortalState;
  renderPortal(res, 'error', { title: LABELS[portalState(res).language].notFound, message: LABELS[portalState(res).language].notFoundText }, 404);
}

/** Sets up a request of a resolved portal: language, partner session, and the partner when signed in. */
function portalContext(deps: PortalPagesDeps, portal: Portal, base: string) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const flavour = partnerSessions(base);
    const token = (req.cookies as Record<string, string> | undefined)?.[flavour.cookieName(req)];
    const found = token ? await findSession(deps.db, token, deps.now(), flavour.store) : null;
    // A session cookie carried to another portal is no session there.
    const session = found && found.shopId === portal.shopId ? found : null;
    const partner = session?.partnerId ? await loadPortalPartner(deps.db, portal, session.partnerId) : null;
    res.locals.app = { session, person: null };
    const asked = req.query.lang;
    if (isPortalLanguage(asked)) res.cookie(LANGUAGE_COOKIE, asked, { httpOnly: true, sameSite: 'lax', secure: secure(req), path: base || '/', maxAge: 365 * 86_400_000 });
    const cookieLanguage = (req.cookies as Record<string, string> | undefined)?.[LANGUAGE_COOKIE];
    const language = isPortalLanguage(asked) ? asked : isPortalLanguage(cookieLanguage) ? cookieLanguage : partner?.language ?? portal.defaultLanguage;
    res.locals.portal = { portal, base, language, partner } satisfies PortalState;
    next();
  };
}

/** The portal pages' router (mounted by `createPortalRouters` under a resolved portal). */
function pages(deps: PortalPagesDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const ctx = (res: Response) => {
    const state = portalState(res);
    return { ...state, portal: state.portal!, l: LABELS[state.language] };
  };
  const flavourOf = (res: Response) => partnerSessions(portalState(res).base);
  const linkBase = (req: Request, res: Response) => `${portalOrigin(deps.application, req, portalState(res).base)}${portalState(res).base}`;
  const go = (res: Response, path: string) => res.redirect(303, `${portalState(res).base}${path}`);
  const limiter = rateLimit({
    windowMs: 15 * 60_000, limit: deps.application.signInAttemptsPerWindow ?? 30, standardHeaders: 'draft-8', legacyHeaders: false,
    handler: (_req, res) => renderPortal(res, 'signIn', { title: ctx(res).l.signIn, email: '', error: ctx(res).l.tooMany }, 429),
  });

  /** Pages for a signed-in partner: a GET goes to sign-in, a form post is refused. */
  const requirePartner = (req: Request, res: Response, next: NextFunction) => {
    if (portalState(res).partner) return next();
    if (req.method === 'GET') return go(res, '/sign-in');
    renderPortal(res, 'error', { title: ctx(res).l.signedOut, message: ctx(res).l.signedOutText }, 403);
  };
  /** Documents the policy wants at registration come first: nothing else is shown until they are accepted. */
  const requireDocuments = async (_req: Request, res: Response, next: NextFunction) => {
    const { portal, partner } = ctx(res);
    const documents = await partnerDocuments(db, portal, partner!, now());
    if (documents.some((d) => d.requiredNow)) return go(res, '/documents');
    next();
  };

  router.get('/', async (_req, res) => {
    const { portal, partner, language, l } = ctx(res);
    const values = await portalValues(db, portal, null, now());
    renderPortal(res, 'home', {
      title: l.home, signedIn: Boolean(partner), description: pageHtml(portal, 'programme_description', language, values),
      articles: await portalArticles(db, portal.accountId, language, values),
    });
  });

  router.get('/articles/:key', async (req, res) => {
    const { portal, language } = ctx(res);
    const article = (await portalArticles(db, portal.accountId, language, await portalValues(db, portal, null, now()))).find((a) => a.key === req.params.key);
    if (!article) return portalNotFound(res);
    renderPortal(res, 'article', { title: article.title, article });
  });

  const registerPage = async (res: Response, form: Record<string, string>, error: string | null, status = 200) => {
    const { portal, language, l } = ctx(res);
    await ensureSession(db, now(), res.req, res, flavourOf(res), { shopId: portal.shopId });
    renderPortal(res, 'register', {
      title: l.register, form, error, kinds: PARTNER_KINDS, text: pageHtml(portal, 'register', language, await portalValues(db, portal, null, now())),
      privacy: pageHtml(portal, 'privacy_notice', language, await portalValues(db, portal, null, now())),
    }, status);
  };
  router.get('/register', async (_req, res) => registerPage(res, {}, null));
  router.post('/register', async (req, res) => {
    const { portal, language, l } = ctx(res);
    const form = { email: field(req.body, 'email'), handle: field(req.body, 'handle'), name: field(req.body, 'name'), web: field(req.body, 'web'), kind: field(req.body, 'kind') };
    try {
      await registerPartner(db, portal, { ...form, password: field(req.body, 'password'), language }, linkBase(req, res), now());
    } catch (err) {
      const error = toAppError(err);
      if (error.code === 'INTERNAL_ERROR') throw err;
      return registerPage(res, form, error.message, error.status);
    }
    renderPortal(res, 'notice', { title: l.checkEmail, message: l.checkEmailText }, 201);
  });

  const expiredLink = (res: Response) => {
    const error = new AppError('LINK_EXPIRED', 'This link has expired or was used already.');
    renderPortal(res, 'error', { title: ctx(res).l.notPossible, message: error.message, code: error.code }, error.status);
  };
  router.get('/verify-email/:token', async (req, res) => {
    const { portal, l } = ctx(res);
    if (!(await linkUsable(db, portal, String(req.params.token), 'verify_email', now()))) return expiredLink(res);
    await ensureSession(db, now(), req, res, flavourOf(res), { shopId: portal.shopId });
    renderPortal(res, 'verify', { title: l.verifyTitle, token: req.params.token });
  });
  router.post('/verify-email/:token', async (req, res) => {
    const { portal, l } = ctx(res);
    const result = await verifyEmail(db, portal, String(req.params.token), now());
    renderPortal(res, 'notice', { title: l.verified, message: result.approved ? l.verifiedApproved : l.verifiedText, signInLink: true });
  });

  router.get('/sign-in', async (req, res) => {
    const { portal, partner, language, l } = ctx(res);
    if (partner) return go(res, '/dashboard');
    await ensureSession(db, now(), req, res, flavourOf(res), { shopId: portal.shopId });
    renderPortal(res, 'signIn', { title: l.signIn, email: '', error: null, text: pageHtml(portal, 'login', language, await portalValues(db, portal, null, now())) });
  });
  router.post('/sign-in', limiter, async (req, res) => {
    const { portal, l } = ctx(res);
    const email = field(req.body, 'email');
    const result = await signInPartner(db, portal, email, field(req.body, 'password'), linkBase(req, res), now());
    if (!result.ok) {
      const error = result.reason === 'locked' ? l.locked : result.reason === 'unverified' ? l.unverified : l.wrongPassword;
      return renderPortal(res, 'signIn', { title: l.signIn, email, error, text: '' }, result.reason === 'locked' ? 429 : result.reason === 'unverified' ? 403 : 401);
    }
    void purgeEndedSessions(db, now(), 'affiliate_portal_sessions').catch(() => undefined);
    await replaceSession(db, now(), req, res, { partnerId: result.personId, shopId: portal.shopId }, flavourOf(res));
    go(res, '/dashboard');
  });
  router.post('/sign-out', async (req, res) => {
    await endSession(db, req, res, flavourOf(res));
    go(res, '/sign-in');
  });

  router.get('/forgot-password', async (req, res) => {
    await ensureSession(db, now(), req, res, flavourOf(res), { shopId: ctx(res).portal.shopId });
    renderPortal(res, 'forgot', { title: ctx(res).l.forgotTitle });
  });
  router.post('/forgot-password', limiter, async (req, res) => {
    await requestPasswordReset(db, ctx(res).portal, field(req.body, 'email'), linkBase(req, res), now());
    renderPortal(res, 'notice', { title: ctx(res).l.checkEmail, message: ctx(res).l.resetSent });
  });
  router.get('/reset-password/:token', async (req, res) => {
    const { portal, l } = ctx(res);
    if (!(await linkUsable(db, portal, String(req.params.token), 'reset_password', now()))) return expiredLink(res);
    await ensureSession(db, now(), req, res, flavourOf(res), { shopId: portal.shopId });
    renderPortal(res, 'reset', { title: l.resetTitle, token: req.params.token, error: null });
  });
  router.post('/reset-password/:token', async (req, res) => {
    const { portal, l } = ctx(res);
    try {
      await resetPassword(db, portal, String(req.params.token), field(req.body, 'password'), now());
    } catch (err) {
      const error = toAppError(err);
      if (error.code !== 'INVALID_PARAMETER') throw err;
      return renderPortal(res, 'reset', { title: l.resetTitle, token: req.params.token, error: error.message }, error.status);
    }
    renderPortal(res, 'notice', { title: l.resetDone, message: l.resetDoneText, signInLink: true });
  });

  router.get('/documents', requirePartner, async (_req, res) => {
    const { portal, partner, l } = ctx(res);
    renderPortal(res, 'documents', { title: l.documents, documents: await partnerDocuments(db, portal, partner!, now()) });
  });
  router.post('/documents/:key/accept', requirePartner, async (req, res) => {
    const { portal, partner } = ctx(res);
    await acceptDocument(db, portal, partner!, { key: String(req.params.key), versionId: field(req.body, 'versionId') }, now());
    const documents = await partnerDocuments(db, portal, partner!, now());
    go(res, documents.some((d) => d.requiredNow) ? '/documents' : '/dashboard');
  });

  const dashboardPage = async (res: Response, extra: { link?: unknown; linkForm?: Record<string, string>; error?: string | null; notice?: string | null }, status = 200) => {
    const { portal, partner, language, l } = ctx(res);
    const values = await portalValues(db, portal, { id: partner!.id, handle: partner!.handle, kind: partner!.kind, language: partner!.language, contact_name: partner!.contactName, email: null, web: partner!.web }, now());
    renderPortal(res, 'dashboard', {
      title: l.dashboard, data: await partnerDashboard(db, portal, partner!), text: pageHtml(portal, 'dashboard', language, values),
      targets: LINK_TARGETS, link: null, linkForm: {}, error: null, notice: null, ...extra,
    }, status);
  };
  router.get('/dashboard', requirePartner, requireDocuments, async (req, res) => dashboardPage(res, { notice: req.query.requested === '1' ? ctx(res).l.codeRequested : null }));
  router.post('/links', requirePartner, requireDocuments, async (req, res) => {
    const { portal, partner, base } = ctx(res);
    const linkForm = { target: field(req.body, 'target'), productCode: field(req.body, 'productCode'), categoryGuid: field(req.body, 'categoryGuid'), campaignId: field(req.body, 'campaignId') };
    try {
      if (!(LINK_TARGETS as readonly string[]).includes(linkForm.target)) throw new AppError('INVALID_PARAMETER', `The target is one of ${LINK_TARGETS.join(', ')}.`, { param: 'target' });
      if (linkForm.campaignId !== '' && !/^\d{1,18}$/.test(linkForm.campaignId)) throw new AppError('INVALID_PARAMETER', 'Choose a campaign from the list.', { param: 'campaignId' });
      const target = linkForm.target as LinkTarget;
      const link = await generateLink(db, portal.accountId, portal.shopId, {
        partnerId: partner!.id, target, campaignId: linkForm.campaignId || undefined,
        productCode: target === 'product' ? linkForm.productCode.trim() : undefined, categoryGuid: target === 'category' ? linkForm.categoryGuid.trim() : undefined,
      });
      // In development the portal is served under a prefix of this service: the same link, answered here.
      const here = base === '' ? null : `${portalOrigin(deps.application, req, base)}${base}${link.url.slice(link.url.indexOf('/r/'))}`;
      return dashboardPage(res, { link: { url: link.url, here, campaignName: link.campaignName, windowDays: link.attribution.windowDays }, linkForm });
    } catch (err) {
      const error = toAppError(err);
      if (error.code === 'INTERNAL_ERROR') throw err;
      return dashboardPage(res, { error: error.message, linkForm }, error.status);
    }
  });
  router.post('/code-requests', requirePartner, requireDocuments, async (req, res) => {
    const { portal, partner } = ctx(res);
    try {
      await requestDiscountCode(db, portal, partner!, field(req.body, 'code'), now());
    } catch (err) {
      const error = toAppError(err);
      if (error.code === 'INTERNAL_ERROR') throw err;
      return dashboardPage(res, { error: error.message }, error.status);
    }
    go(res, '/dashboard?requested=1');
  });
  router.get('/payouts/:id/statement.pdf', requirePartner, async (req, res) => {
    const { portal, partner } = ctx(res);
    const statement = await payoutStatement(db, { accountId: portal.accountId, shopCodes: new Set([portal.shopCode]), partnerId: partner!.id }, String(req.params.id));
    const pdf = await renderPayoutStatement(statement);
    res.type('application/pdf').setHeader('Content-Disposition', `attachment; filename="payout-${statement.payout.id}.pdf"`);
    res.send(pdf);
  });

  const keys = () => ({ current: deps.application.secretsKey(), previous: deps.application.previousSecretsKey?.() ?? null });
  const detailsPage = async (res: Response, error: string | null, saved: boolean, status = 200) => {
    const { portal, partner, l } = ctx(res);
    renderPortal(res, 'payoutDetails', { title: l.payoutDetails, details: await maskedPayoutDetails(db, keys(), portal.accountId, partner!.id), error, saved }, status);
  };
  router.get('/payout-details', requirePartner, requireDocuments, async (_req, res) => detailsPage(res, null, false));
  router.post('/payout-details', requirePartner, requireDocuments, async (req, res) => {
    const { portal, partner } = ctx(res);
    try {
      await savePayoutDetails(db, keys(), portal.accountId, partner!.id, { iban: field(req.body, 'iban'), accountHolder: field(req.body, 'accountHolder'), taxId: field(req.body, 'taxId') }, now());
    } catch (err) {
      const error = toAppError(err);
      if (error.code === 'INTERNAL_ERROR') throw err;
      // The entered values are never echoed back into the form.
      return detailsPage(res, error.message, false, error.status);
    }
    detailsPage(res, null, true);
  });

  router.use((_req, res) => portalNotFound(res));
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const error = toAppError(err);
    if (error.code === 'INTERNAL_ERROR') logger.error({ err }, 'partner portal page failed');
    if (res.headersSent) return;
    const l = LABELS[portalState(res)?.language ?? 'en'];
    renderPortal(res, 'error', { title: l.notPossible, message: error.message, code: error.code === 'INTERNAL_ERROR' ? null : error.code }, error.status);
  });
  return router;
}

/**
 * The portal pages twice: under the development prefix (`/portal/<account>/<shop>`, an unknown one is a 404 page) and,
 * for a request whose Host is a portal's address or active custom domain, at the root. Mount `byHost` last: it passes
 * every request of another Host on.
 */
export function createPortalRouters(deps: PortalPagesDeps): { byPath: Router; byHost: Router } {
  const common = () => {
    const router = express.Router();
    router.use(pageSecurityHeaders(deps.application));
    router.use((_req, res, next) => {
      res.setHeader('Cache-Control', 'no-store');
      next();
    });
    router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));
    router.use((req, res, next) => csrfProtection((r) => portalOrigin(deps.application, r, portalState(res).base), (response, why) => {
      const l = LABELS[portalState(response)?.language ?? 'en'];
      renderPortal(response, 'error', { title: l.formRefused, message: `The form was refused (${why}). Reload the page and try again.` }, 403);
    })(req, res, next));
    router.use(pages(deps));
    return router;
  };

  const byPath = express.Router();
  const pathPages = common();
  byPath.use('/portal/:account/:shop', cookieParser(), async (req, res, next) => {
    const portal = await portalByPath(deps.db, String(req.params.account), String(req.params.shop));
    if (!portal) return portalNotFound(res);
    await portalContext(deps, portal, req.baseUrl)(req, res, next);
  }, pathPages);

  const byHost = express.Router();
  byHost.use(cookieParser(), async (req, res, next) => {
    const portal = await portalByHost(deps.db, req.get('host') ?? '');
    if (!portal) return next('router');
    await portalContext(deps, portal, '')(req, res, next);
  });
  byHost.use(common());
  return { byPath, byHost };
}
