/**
 * The application for people at /app: server-rendered pages (Eta), plain HTML forms, no front-end build.
 * Every request passes helmet's security headers (CSP, frame-ancestors 'none', ...), no-store caching, the session
 * (Postgres) and, for a POST, the CSRF check; pages call the domain services of src/people, never SQL.
 * Later pages mount their own router on `createApplicationRouter`'s result with the same helpers: `requirePerson`,
 * `requirePermission`, `currentPerson`, `renderPage`, `field`/`fields`.
 */
import path from 'node:path';
import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import helmet from 'helmet';
import type { Db } from '../../src/db/knex.js';
import type { TrustProxy } from '../../src/config/index.js';
import { projectRoot } from '../../src/config/projectRoot.js';
import type { Resolver } from '../../src/webhooks/addresses.js';
import { toAppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { csrfProtection } from './csrf.js';
import { renderPage } from './render.js';
import { loadSession } from './session.js';
import { signInRoutes } from './pages/signIn.js';
import { homeRoutes } from './pages/home.js';
import { accountRoutes } from './pages/account.js';
import { keysRoutes } from './pages/keys.js';
import { webhooksRoutes } from './pages/webhooks.js';
import { consentRoutes } from './pages/consent.js';
import { accountInfoRoutes } from './pages/accountInfo.js';
import { emailsRoutes } from './pages/emails.js';
import { automationsRoutes } from './pages/automations.js';
import { approvalsRoutes } from './pages/approvals.js';
import { customersRoutes } from './pages/customers.js';
import { documentsRoutes } from './pages/documents.js';
import { textsRoutes } from './pages/texts.js';
import { multipartForm } from './multipart.js';
import { IMPORT_MAX_BYTES } from '../../src/texts/imports.js';
import { DOCUMENT_UPLOAD_MAX_BYTES } from '../../src/affiliate/staff/documents.js';
import { peopleRoutes } from './pages/people.js';
import { shopsRoutes } from './pages/shops.js';
import { invitationRoutes } from './pages/invitation.js';
import { setupRoutes } from './pages/setup.js';
import { affiliateStaffRoutes } from './pages/affiliate/index.js';
import type { OAuthServers } from '../oauth/provider.js';
import type { PlatformRegistry } from '../../src/platforms/registry.js';
import type { TemporalAccess } from '../../src/temporal/access.js';

export const APP_PATH = '/app';

export interface ApplicationOptions {
  /** SECRETS_KEY: encrypts TOTP and webhook secrets. A function, so an app that never needs it never loads it. */
  secretsKey: () => Buffer;
  /** SECRETS_KEY_PREVIOUS during a rotation (read only): partners' payout details encrypted under it still open. */
  previousSecretsKey?: () => Buffer | null;
  /** Webhook address rules (D17) for endpoints created in the pages. */
  allowLoopback: boolean;
  resolve: Resolver;
  /** PUBLIC_BASE_URL; else the request's scheme and Host. */
  publicBaseUrl?: string;
  /** TRUST_PROXY (S2): whose X-Forwarded-* headers Express and the authorization server believe; off by default. */
  trustProxy?: TrustProxy;
  /** Dynamic OAuth client registrations per client address per minute (S3; default 10). */
  registrationsPerMinute?: number;
  /** Sign-in attempts per client address per 15 minutes (besides the per-person lockout). */
  signInAttemptsPerWindow?: number;
  /** The workers' Temporal task queue, where the Automations page starts manual runs (default `store-ops`; tests use their own). */
  taskQueue?: string;
  /** Customer exports up to this many rows are made at once, larger ones by a workflow (default 5000; tests lower it). */
  customerExportDirectMaxRows?: number;
  /** Tests only: how Client ID Metadata Documents are fetched (stands in for a client's web host). */
  oauthFetch?: typeof fetch;
}

export interface ApplicationDeps {
  db: Db;
  now: () => Date;
  /** Signs the list cursors of the data screens (the same capabilities as REST and MCP). */
  cursorSecret: string;
  application: ApplicationOptions;
  /** The authorization server whose sign-in and consent these pages are (D28). */
  oauth: OAuthServers;
  /** Pages that write to a shop (approvals, text edits) go through its platform adapter. */
  platforms?: PlatformRegistry;
  /** Pages that decide proposals or run automations talk to their workflows. */
  temporal?: TemporalAccess;
}

export function ownOrigin(options: ApplicationOptions, req: Request): string {
  return options.publicBaseUrl ? new URL(options.publicBaseUrl).origin : `${req.protocol}://${req.get('host')}`;
}

/** The pages' security headers (CSP, no framing, same-origin resources), shared with the partner portal's pages. */
export function pageSecurityHeaders(options: ApplicationOptions) {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"], styleSrc: ["'self'"], imgSrc: ["'self'", 'data:'], scriptSrc: ["'self'"],
        formAction: ["'self'"], frameAncestors: ["'none'"], baseUri: ["'none'"],
      },
    },
    // Clickjacking: no page may be framed (CSP frame-ancestors for current browsers, X-Frame-Options for old ones).
    frameguard: { action: 'deny' },
    // The pages are same-origin only; nothing here is meant to be embedded or opened by others.
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: options.publicBaseUrl?.startsWith('https:') ? undefined : false,
  });
}

export function createApplicationRouter(deps: ApplicationDeps): Router {
  const router = express.Router();
  router.use(pageSecurityHeaders(deps.application));
  // Pico CSS, the application's CSS foundation, served from its npm package (no CDN).
  router.get('/static/pico.min.css', (_req, res) => res.sendFile(path.join(projectRoot, 'node_modules', '@picocss', 'pico', 'css', 'pico.min.css'), { maxAge: '1h' }));
  router.use('/static', express.static(path.join(projectRoot, 'api', 'app', 'static'), { maxAge: '1h', index: false }));
  router.use((_req, res, next) => {
    // Pages show secrets once and personal data: never cached, never kept in the back/forward cache.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.use(cookieParser());
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }));
  // File uploads (text import) are read before the CSRF check, which then finds `_csrf` among the form's fields.
  router.use('/products/import', multipartForm(IMPORT_MAX_BYTES + 64 * 1024));
  router.use('/affiliate/documents/:documentId/upload', multipartForm(DOCUMENT_UPLOAD_MAX_BYTES + 64 * 1024, 'DOCUMENT_FILE_INVALID'));
  router.use(loadSession(deps.db, deps.now));
  router.use(csrfProtection((req) => ownOrigin(deps.application, req)));
  router.use(signInRoutes(deps));
  router.use(invitationRoutes(deps));
  router.use(setupRoutes(deps));
  router.use(homeRoutes(deps));
  router.use(accountRoutes(deps));
  router.use(keysRoutes(deps));
  router.use(webhooksRoutes(deps));
  router.use(consentRoutes(deps));
  router.use(accountInfoRoutes(deps));
  router.use(emailsRoutes(deps));
  router.use(automationsRoutes(deps));
  router.use(approvalsRoutes(deps));
  router.use(customersRoutes(deps));
  router.use(documentsRoutes(deps));
  router.use(textsRoutes(deps));
  router.use(peopleRoutes(deps));
  router.use(shopsRoutes(deps));
  router.use(affiliateStaffRoutes(deps));
  router.use((_req, res) => renderPage(res, 'error', { title: 'Not found', message: 'There is no such page.' }, 404));
  // Refusals of the domain services become a page with their message; anything else is logged and stays vague.
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const error = toAppError(err);
    if (error.code === 'INTERNAL_ERROR') logger.error({ err }, 'application page failed');
    if (res.headersSent) return;
    renderPage(res, 'error', { title: error.code === 'INTERNAL_ERROR' ? 'Something went wrong' : 'Not possible', message: error.message, code: error.code }, error.status);
  });
  return router;
}
