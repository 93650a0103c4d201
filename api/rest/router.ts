/** The REST interface under /api/v1, generated from the capability registry. GET only; no SQL or rules here. */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { restCapabilities } from '../../src/capabilities/registry.js';
import { callerMayUse, runCapability } from '../../src/capabilities/run.js';
import type { RestCapability } from '../../src/capabilities/types.js';
import type { Caller } from '../../src/capabilities/context.js';
import { AppError } from '../../src/errors.js';
import { authenticateRequest } from '../http/auth.js';
import { mcpResourceOf, type McpDeps } from '../mcp/router.js';
import { sendError } from '../http/errors.js';
import { buildOpenApiDocument } from '../openapi.js';
import { restParams } from './queryParams.js';

declare module 'express-serve-static-core' {
  interface Request {
    caller?: Caller;
  }
}

/** `/orders/{orderCode}` → `/orders/:orderCode`. */
export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** Static segments before parameters, so `/automations/catalog` is matched before `/automations/{id}`. */
function routeOrder(a: RestCapability, b: RestCapability): number {
  const params = (c: RestCapability) => (c.path.match(/\{/g) ?? []).length;
  return params(a) - params(b) || a.path.localeCompare(b.path);
}

/** Summary of a capability as /capabilities shows it. */
function describeCapability(c: RestCapability) {
  return { name: c.name, method: 'GET', path: `/api/v1${c.path}`, scope: c.scope, mcpTool: c.mcpTool, kind: c.kind, marketRequired: c.market === 'required', summary: c.summary };
}

/** `/account/connection`: the one REST path an OAuth access token (issued for /api/mcp) may call. */
const CONNECTION_PATH = '/account/connection';

export function createRestRouter(deps: McpDeps): Router {
  const router = express.Router();
  let openApiDocument: unknown;

  // D8: every method but GET and HEAD is refused before the credential is looked at.
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    sendError(res, req.requestId, new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed; the REST interface is read-only (GET, HEAD).`, { method: req.method }, { Allow: 'GET, HEAD' }));
  });

  router.get('/openapi.json', (_req, res) => {
    openApiDocument ??= buildOpenApiDocument();
    res.json(openApiDocument);
  });

  router.use(async (req: Request, _res: Response, next: NextFunction) => {
    // OAuth access tokens are for MCP (O17), except that one may read its own diagnostics here (AP2).
    const resource = req.path === CONNECTION_PATH ? mcpResourceOf(req, deps) : undefined;
    req.caller = await authenticateRequest(req, deps.db, 'rest', deps.now(), undefined, resource, (req.query as Record<string, unknown>).market);
    next();
  });

  router.get('/capabilities', (req, res) => {
    const allowed = restCapabilities.filter((c) => callerMayUse(c, req.caller!)).sort((a, b) => a.path.localeCompare(b.path)).map(describeCapability);
    res.json({ data: allowed, meta: { requestId: req.requestId, count: allowed.length, hasMore: false, nextCursor: null } });
  });

  // MCP-only tools (writes, draft validation) have no path: REST stays GET-only.
  for (const capability of [...restCapabilities].sort(routeOrder)) {
    router.get(expressPath(capability.path), async (req: Request, res: Response) => {
      const params = restParams(capability, req.query as Record<string, unknown>, req.params as Record<string, string>);
      const output = await runCapability(capability, params, req.caller!, req.requestId, deps);
      const meta: Record<string, unknown> = { requestId: req.requestId };
      if (output.list) Object.assign(meta, output.list);
      if (output.market) meta.market = output.market;
      if (output.period) meta.period = output.period;
      if (output.meta) Object.assign(meta, output.meta);
      res.json({ data: output.data, meta });
    });
  }

  router.use((req: Request, res: Response) => {
    sendError(res, req.requestId, new AppError('ROUTE_NOT_FOUND', `No endpoint GET /api/v1${req.path}. See /api/v1/openapi.json.`));
  });
  return router;
}
