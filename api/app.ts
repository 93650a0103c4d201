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
import { loadConfig } from '../src/config/index.js';
import { loadSecrets } from '../src/secrets.js';
import { systemResolver } from '../src/webhooks/addresses.js';

export interface AppDeps extends RunDeps {
  /** MCP endpoint options; read from the configuration (MCP_ALLOWED_ORIGINS, PUBLIC_BASE_URL) when absent. */
  mcp?: McpOptions;
  /** The application's options (secrets key, webhook address rules); read from the configuration when absent. */
  application?: ApplicationOptions;
}

/** The application's options from the environment; the secrets key is loaded on first use only. */
function applicationOptionsFromConfig(): ApplicationOptions {
  const config = loadConfig();
  let key: Buffer | undefined;
  return {
    secretsKey: () => (key ??= loadSecrets(config).secretsKey),
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    resolve: systemResolver,
    publicBaseUrl: config.PUBLIC_BASE_URL,
  };
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext);
  app.use('/api/v1', createRestRouter(deps));
  app.use(MCP_PATH, createMcpRouter(deps));
  app.use(createProtectedResourceMetadataRouter(deps));
  const application = deps.application ?? applicationOptionsFromConfig();
  const oauth = createOAuthServers({ db: deps.db, secretsKey: application.secretsKey, resolve: application.resolve, publicBaseUrl: application.publicBaseUrl, fetch: application.oauthFetch });
  app.use(createOAuthRouter(oauth, (req) => ownOrigin(application, req)));
  app.use(APP_PATH, createApplicationRouter({ db: deps.db, now: deps.now, application, oauth, platforms: deps.platforms, temporal: deps.temporal }));
  app.use(errorHandler);
  return app;
}
