/** Assembles the HTTP application: request context, REST under /api/v1, MCP at /api/mcp, error mapping. */
import express, { type Express } from 'express';
import type { RunDeps } from '../src/capabilities/run.js';
import { errorHandler } from './http/errors.js';
import { requestContext } from './http/requestContext.js';
import { createMcpRouter, createProtectedResourceMetadataRouter, MCP_PATH, type McpOptions } from './mcp/router.js';
import { createRestRouter } from './rest/router.js';
import { APP_PATH, createApplicationRouter, ownOrigin, type ApplicationOptions } from './app/index.js';
import { createOAuthRouter } from './oauth/router.js';
import { createOAuthServers } from './oauth/provider.js';
import { createHealthRouter } from './http/health.js';
import { createMedusaEventsRouter, MEDUSA_EVENTS_PATH } from './http/medusaEvents.js';
import { createMetricsRouter, type MetricsOptions } from './http/metrics.js';
import { createTrackingRouter } from './portal/tracking.js';
import { createPortalRouters } from './portal/pages.js';
import crypto from 'node:crypto';

/**
 * Everything the HTTP application needs; the composition root (src/entry/compose.ts) builds it. Without `platforms`
 * and `temporal` (RunDeps) it is a read-only instance: writes answer WRITES_UNAVAILABLE and /readyz is never ready.
 */
export interface AppDeps extends RunDeps {
  /** MCP endpoint options (MCP_ALLOWED_ORIGINS, PUBLIC_BASE_URL, the loopback bind). */
  mcp: McpOptions;
  /** The application's options (secrets key, webhook address rules, PUBLIC_BASE_URL). */
  application: ApplicationOptions;
  /** Who may read /metrics (open when absent: development and tests). */
  metrics?: MetricsOptions;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // S2: X-Forwarded-* are believed only from the proxies TRUST_PROXY names (req.ip, req.protocol, req.secure follow).
  app.set('trust proxy', deps.application.trustProxy ?? false);
  app.use(requestContext);
  app.use(createHealthRouter(deps));
  // Before the REST router, which answers only GET: Medusa forwarders POST here with their own signature, no key.
  app.use(MEDUSA_EVENTS_PATH, createMedusaEventsRouter({ db: deps.db, now: deps.now, secretsKey: deps.application.secretsKey, temporal: deps.temporal }));
  app.use(createMetricsRouter(deps));
  // Partner portals' tracked links and conversion beacon: public, for shoppers' browsers (issue 24).
  let trackingKey: Buffer | null = null;
  const hashKey = () => (trackingKey ??= crypto.createHmac('sha256', deps.application.secretsKey()).update('affiliate-tracking').digest());
  app.use(createTrackingRouter({ db: deps.db, now: deps.now, hashKey }));
  // The partner portals' pages (issue 24): under /portal/<account>/<shop> here; by a portal's Host at the end.
  const portalPages = createPortalRouters({ db: deps.db, now: deps.now, application: deps.application });
  app.use(portalPages.byPath);
  app.use('/api/v1', createRestRouter(deps));
  app.use(MCP_PATH, createMcpRouter(deps));
  app.use(createProtectedResourceMetadataRouter(deps));
  const application = deps.application;
  const oauth = createOAuthServers({ db: deps.db, secretsKey: application.secretsKey, resolve: application.resolve, publicBaseUrl: application.publicBaseUrl, trustProxy: Boolean(application.trustProxy), fetch: application.oauthFetch });
  app.use(createOAuthRouter(oauth, (req) => ownOrigin(application, req), { registrationsPerMinute: application.registrationsPerMinute }));
  app.use(APP_PATH, createApplicationRouter({ db: deps.db, now: deps.now, cursorSecret: deps.cursorSecret, application, oauth, platforms: deps.platforms, temporal: deps.temporal }));
  app.use(portalPages.byHost);
  app.use(errorHandler);
  return app;
}
