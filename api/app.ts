/** Assembles the HTTP application: request context, REST under /api/v1, MCP at /api/mcp, error mapping. */
import express, { type Express } from 'express';
import type { RunDeps } from '../src/capabilities/run.js';
import { errorHandler } from './http/errors.js';
import { requestContext } from './http/requestContext.js';
import { createMcpRouter, createProtectedResourceMetadataRouter, MCP_PATH, type McpOptions } from './mcp/router.js';
import { createRestRouter } from './rest/router.js';

export interface AppDeps extends RunDeps {
  /** MCP endpoint options; read from the configuration (MCP_ALLOWED_ORIGINS, PUBLIC_BASE_URL) when absent. */
  mcp?: McpOptions;
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
  app.use(errorHandler);
  return app;
}
