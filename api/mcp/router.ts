/**
 * The remote MCP endpoint at /api/mcp and its OAuth 2.0 Protected Resource Metadata (RFC 9728).
 *
 * A request passes, in order: Host check on a loopback bind (403) → Origin check (403) → CORS (preflight answered here) → method check (405, before the
 * credential, as REST) → JSON body
 * (415/400) → credential for interface `mcp` (401 with a `resource_metadata` challenge) → header rules of the
 * protocol revision (400) → the SDK's handler, which serves 2026-07-28 statelessly and the 2025 revisions through
 * a per-request `initialize`-capable instance. No SQL and no business rule lives here.
 */
import cors from 'cors';
import { context as otelContext } from '@opentelemetry/api';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { localhostHostValidation } from '@modelcontextprotocol/express';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { allScopes } from '../../src/auth/scopes.js';
import { capabilitiesByTool } from '../../src/capabilities/registry.js';
import type { RunDeps } from '../../src/capabilities/run.js';
import { AppError, toAppError } from '../../src/errors.js';
import { logger, setLogTraceId } from '../../src/logger.js';
import { traceIdOf } from '../../src/traceContext.js';
import { endWithStatus, startMcpMessageSpan } from '../../src/tracing/spans.js';
import { authenticateRequest } from '../http/auth.js';
import { sendError } from '../http/errors.js';
import type { RequestLogFields } from '../http/requestContext.js';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { checkRequestHeaders, jsonRpcError, JSONRPC, requestIdOf, type TransportRejection } from './protocol.js';
import { buildMcpServer, toolCallResponse, type McpCallContext } from './server.js';
import { askInSession, PERSON_CONFIRMED_TOOLS, sessionConfirmCall } from './confirmations.js';
import { endSession, openSession, postedAnswer, recordAnswer, sessionWorthyInitialize, useSession } from './sessions.js';
import { toolNamed, type ToolDefinition } from './tools.js';
import { answerTaskMessage, taskMessage } from './tasks.js';
import { callerMayUse } from '../../src/capabilities/run.js';
import type { Caller } from '../../src/capabilities/context.js';


export const MCP_PATH = '/api/mcp';
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

export interface McpOptions {
  /** Origins (scheme://host[:port]) allowed besides the server's own; from MCP_ALLOWED_ORIGINS. */
  allowedOrigins: readonly string[];
  /** The public base URL (PUBLIC_BASE_URL); when unset it is taken from the request's Host. */
  publicBaseUrl?: string;
  /** Served on a loopback address with no public URL: only a localhost `Host` is accepted (DNS rebinding). */
  localhostOnly?: boolean;
  /** Every message through the SDK, also the plain `tools/call`s the router answers itself (tests compare the two). */
  sdkOnly?: boolean;
  /** How long a 2025-era session call waits for the person's answer (ms); default SESSION_ANSWER_WAIT_MS. */
  confirmationWaitMs?: number;
}

export interface McpDeps extends RunDeps {
  mcp: McpOptions;
}

export { isLoopbackHost } from '../../src/infra/hosts.js';

/** The MCP resource (RFC 8707) a request to this service names: `{base}/api/mcp`, for REST's connection diagnostics. */
export function mcpResourceOf(req: Request, deps: McpDeps): string {
  return `${baseUrl(req, deps.mcp)}${MCP_PATH}`;
}

/** The base URL clients reach us at: PUBLIC_BASE_URL, or the scheme and Host of the request. */
function baseUrl(req: Request, options: McpOptions): string {
  return (options.publicBaseUrl ?? `${req.protocol}://${req.get('host')}`).replace(/\/$/, '');
}

/**
 * Whether this base URL has an authorization server (D28): the public base URL, or a loopback origin when none is
 * configured (each loopback origin is its own issuer). Other hosts without PUBLIC_BASE_URL accept access keys only.
 */
export function hasAuthorizationServer(base: string, options: Pick<McpOptions, 'publicBaseUrl'>): boolean {
  if (options.publicBaseUrl) return true;
  return ['localhost', '127.0.0.1', '[::1]'].includes(new URL(base).hostname);
}

/** RFC 9728 document for the MCP endpoint: the service itself is the authorization server (its issuer is the base URL). */
export function protectedResourceMetadata(base: string, withAuthorizationServer = true) {
  return {
    resource: `${base}${MCP_PATH}`,
    authorization_servers: withAuthorizationServer ? [base] : [] as string[],
    scopes_supported: [...allScopes],
    bearer_methods_supported: ['header'],
    resource_name: 'Store-operations data service (MCP)',
    resource_documentation: `${base}/api/v1/openapi.json`,
  };
}

/** The `WWW-Authenticate` challenge of a 401 from /api/mcp (RFC 6750 + RFC 9728 `resource_metadata`). */
export function bearerChallenge(base: string, error?: AppError): string {
  const parts = [`resource_metadata="${base}${RESOURCE_METADATA_PATH}"`, `scope="${allScopes.join(' ')}"`];
  if (error && error.code !== 'MISSING_CREDENTIALS') parts.unshift('error="invalid_token"', `error_description="${error.message.replace(/["\\]/g, "'")}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** Serves the metadata document at the RFC 9728 path for /api/mcp and, for clients that ask at the root, at the root. */
export function createProtectedResourceMetadataRouter(deps: McpDeps): Router {
  const options = deps.mcp;
  const router = express.Router();
  const serve = (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'public, max-age=3600');
    const base = baseUrl(req, options);
    res.json(protectedResourceMetadata(base, hasAuthorizationServer(base, options)));
  };
  // Public and credential-free, so any origin may read it: browser-based clients discover authorization here.
  const anyOrigin = cors({ methods: ['GET'], maxAge: 3600 });
  router.options([RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource'], anyOrigin);
  router.get(RESOURCE_METADATA_PATH, anyOrigin, serve);
  router.get('/.well-known/oauth-protected-resource', anyOrigin, serve);
  return router;
}

function reject(res: Response, rejection: TransportRejection, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(rejection.status).json(rejection.body);
}

/** Request headers a browser client may send (CORS preflight): the credential and the protocol's own headers. */
export const MCP_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name', 'Mcp-Session-Id', 'Last-Event-ID'];
/** Response headers a browser client may read: the 401 challenge and the request id it should quote to support. */
export const MCP_RESPONSE_HEADERS = ['WWW-Authenticate', 'MCP-Protocol-Version', 'Mcp-Session-Id', 'Request-Id'];

const LOCALHOST_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS-rebinding protection: a request carrying `Origin` must come from an allowed origin — the server's own public
 * origin (PUBLIC_BASE_URL), a configured one (MCP_ALLOWED_ORIGINS) or, when no public URL is configured, a localhost
 * origin. The Host header is not trusted for this: under DNS rebinding it names the attacker's domain.
 * Requests without `Origin` (every non-browser client) pass.
 */
export function originAllowed(origin: string, options: McpOptions): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  if (url.origin === 'null') return false;
  if (options.allowedOrigins.includes(url.origin)) return true;
  if (options.publicBaseUrl) return new URL(options.publicBaseUrl).origin === url.origin;
  return LOCALHOST_NAMES.has(url.hostname) && (url.protocol === 'http:' || url.protocol === 'https:');
}

/** For a `tools/call` of a known tool whose scope the caller lacks: the tool and the scope it needs. */
export function missingScopeOfCall(body: unknown, scopes: ReadonlySet<string>): { tool: string; scope: string } | null {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  if (!message || Array.isArray(message) || message.method !== 'tools/call' || typeof message.params?.name !== 'string') return null;
  const capability = capabilitiesByTool.get(message.params.name);
  if (!capability || scopes.has(capability.scope)) return null;
  return { tool: message.params.name, scope: capability.scope };
}

/** The `market` argument of a `tools/call`, so the credential's lookup can read that shop in the same round trip. */
function marketOfCall(body: unknown): unknown {
  const message = body as { method?: unknown; params?: { arguments?: { market?: unknown } } } | null;
  if (!message || Array.isArray(message) || message.method !== 'tools/call') return undefined;
  return message.params?.arguments?.market;
}

const CLIENT_META = ['io.modelcontextprotocol/protocolVersion', 'io.modelcontextprotocol/clientInfo', 'io.modelcontextprotocol/clientCapabilities'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A `tools/call` with nothing but a tool name and arguments (plus, in the 2026-07-28 era, exactly the three envelope
 * fields of `_meta`, well formed), sent by a client that accepts JSON and SSE: the one message the router answers
 * without the SDK (T16 and T20 in docs/decisions.md). Anything else — a progress token or any other `_meta` in the 2025
 * era, a task, an unknown field, a tool this caller lacks — is null and goes to the SDK.
 */
export function plainToolCall(body: unknown, accept: string | undefined, caller: Caller, era: 'modern' | 'legacy' = 'modern'): { id: string | number; tool: ToolDefinition; args: Record<string, unknown> | undefined } | null {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  if (typeof body.id !== 'string' && typeof body.id !== 'number') return null;
  if (Object.keys(body).some((k) => k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params')) return null;
  if (!accept || !accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  const params = body.params;
  if (!isPlainObject(params) || typeof params.name !== 'string') return null;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return null;
  if (era === 'legacy') {
    if (Object.keys(params).some((k) => k !== 'name' && k !== 'arguments')) return null;
  } else {
    if (Object.keys(params).some((k) => k !== 'name' && k !== 'arguments' && k !== '_meta')) return null;
    const meta = params._meta;
    if (!isPlainObject(meta) || Object.keys(meta).some((k) => !CLIENT_META.includes(k))) return null;
    const info = meta['io.modelcontextprotocol/clientInfo'];
    if (!isPlainObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return null;
    const capabilities = meta['io.modelcontextprotocol/clientCapabilities'];
    if (!isPlainObject(capabilities)) return null;
    // A client that can ask its user gets the question (input_required) from the SDK's multi-round-trip seam.
    if (capabilities.elicitation !== undefined && PERSON_CONFIRMED_TOOLS.has(params.name)) return null;
  }
  const tool = toolNamed(params.name);
  return tool && callerMayUse(tool.capability, caller) ? { id: body.id, tool, args: params.arguments as Record<string, unknown> | undefined } : null;
}

/** The JSON-RPC method (and for `tools/call` the tool) of a message, for its request's log line; cut to 100 characters. */
export function rpcLogFields(body: unknown): RequestLogFields {
  if (Array.isArray(body)) return { rpcMethod: 'batch' };
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  if (!isPlainObject(message) || typeof message.method !== 'string') return {};
  const rpcMethod = message.method.slice(0, 100);
  return rpcMethod === 'tools/call' && typeof message.params?.name === 'string' ? { rpcMethod, tool: message.params.name.slice(0, 100) } : { rpcMethod };
}

/** One JSON-RPC response as the SDK would send it: JSON in the 2026-07-28 era, the one SSE event of the stateless 2025 leg. */
function sendRpc(res: Response, era: 'modern' | 'legacy', body: string): void {
  if (era === 'modern') {
    res.status(200).type('application/json').send(body);
    return;
  }
  const event = Buffer.from(`event: message\ndata: ${body}\n\n`);
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no', 'Content-Length': event.length }).end(event);
}

export function createMcpRouter(deps: McpDeps): Router {
  const options = deps.mcp;
  const router = express.Router();
  const contexts = new WeakMap<AuthInfo, McpCallContext>();
  const handler = createMcpHandler(
    ({ authInfo }) => {
      const context = authInfo && contexts.get(authInfo);
      // The router authenticates every request before the SDK; a request without a caller never gets here.
      if (!context) throw new Error('MCP request reached the SDK without an authenticated caller');
      return buildMcpServer(context, deps);
    },
    { legacy: 'stateless', onerror: (error) => logger.debug({ err: error }, 'mcp transport rejected or failed a request') },
  );
  // The SDK's own Node adapter: streams the response (JSON or SSE) back and cancels on client disconnect.
  const nodeHandler = toNodeHandler(handler, { onerror: (error) => logger.error({ err: error }, 'mcp handler failed') });

  // The SDK's own DNS-rebinding guard: a rebound name reaches a loopback server with that name in `Host`.
  if (options.localhostOnly) router.use(localhostHostValidation());
  router.use((req: Request, res: Response, next: NextFunction) => {
    const origin = req.get('origin');
    if (origin !== undefined && !originAllowed(origin, options)) {
      return reject(res, { status: 403, body: jsonRpcError(JSONRPC.SERVER_ERROR, `Forbidden: Origin ${origin} is not allowed to use this MCP server.`) });
    }
    next();
  });

  // Browser-based clients (the MCP Inspector in direct mode, web assistants) call from another origin: answer their
  // preflight and let them read our headers. Only origins that passed the check above get here; no cookies are used.
  const browserAccess = cors({ origin: true, methods: ['POST', 'DELETE'], allowedHeaders: MCP_REQUEST_HEADERS, exposedHeaders: MCP_RESPONSE_HEADERS, maxAge: 600 });
  // Without Origin it is no browser: an OPTIONS then gets the 405 below like any other method.
  router.use((req: Request, res: Response, next: NextFunction) => (req.get('origin') === undefined ? next() : browserAccess(req, res, next)));

  router.use((req: Request, res: Response, next: NextFunction) => {
    // 2026-07-28 has POST only. A 2025-era session (ME1) is ended with DELETE; no session has a standalone GET stream
    // (its questions travel on the stream of the call that asks them).
    if (req.method === 'DELETE' && req.get('mcp-session-id') !== undefined) return next();
    if (req.method !== 'POST') {
      return reject(res, { status: 405, body: jsonRpcError(JSONRPC.SERVER_ERROR, `Method not allowed: ${req.method}. This MCP endpoint accepts POST, and DELETE of a session it issued (no standalone SSE stream).`) }, { Allow: 'POST, DELETE' });
    }
    if (!req.is('application/json')) {
      return reject(res, { status: 415, body: jsonRpcError(JSONRPC.SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json.') });
    }
    next();
  });

  router.use(express.json({ limit: '1mb', strict: false }));
  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string })?.type;
    if (type === 'entity.parse.failed') return reject(res, { status: 400, body: jsonRpcError(JSONRPC.PARSE_ERROR, 'Parse error: the body is not valid JSON.') });
    if (type === 'entity.too.large') return reject(res, { status: 413, body: jsonRpcError(JSONRPC.SERVER_ERROR, 'Payload too large: at most 1 MB.') });
    next(err);
  });

  router.use((req: Request, res: Response, next: NextFunction) => {
    const fields: RequestLogFields = rpcLogFields(req.body);
    res.locals.logFields = fields;
    // SEP-414 (2026-07-28): a request's `params._meta.traceparent` is its W3C trace; it names the message, so it wins
    // over the HTTP header. Malformed or absent: ignored. With tracing, the message's span is started in that trace.
    const meta = (req.body as { params?: { _meta?: { traceparent?: unknown; tracestate?: unknown } } } | null)?.params?._meta;
    const message = startMcpMessageSpan(fields.rpcMethod, fields.tool, meta);
    if (message) {
      setLogTraceId(message.traceId);
      res.once('close', () => endWithStatus(message.span, res.statusCode, res.writableFinished));
      return otelContext.with(message.context, next);
    }
    const traceId = traceIdOf(meta?.traceparent);
    if (traceId) setLogTraceId(traceId);
    next();
  });

  /** The caller of the request, or null after answering the 401 with its challenge. */
  async function callerOf(req: Request, res: Response): Promise<Caller | null> {
    const base = baseUrl(req, options);
    try {
      return await authenticateRequest(req, deps.db, 'mcp', deps.now(), bearerChallenge(base), `${base}${MCP_PATH}`, marketOfCall(req.body));
    } catch (error) {
      const appError = toAppError(error);
      if (appError.status !== 401) throw error;
      sendError(res, req.requestId, new AppError(appError.code, appError.message, appError.details, { 'WWW-Authenticate': bearerChallenge(base, appError) }));
      return null;
    }
  }

  const sessionNotFound = (res: Response, id: string | number | null = null) =>
    reject(res, { status: 404, body: jsonRpcError(JSONRPC.SESSION_NOT_FOUND, 'Session not found: it ended, expired or was never issued to this credential. Initialize again.', undefined, id) });

  // DELETE ends a session this server issued to the same credential (2025 transports: the client is done with it).
  router.delete('/', async (req: Request, res: Response) => {
    const caller = await callerOf(req, res);
    if (!caller) return;
    if (!(await endSession(deps.db, req.get('mcp-session-id')!, caller, deps.now()))) return sessionNotFound(res);
    res.status(204).end();
  });

  router.post('/', async (req: Request, res: Response) => {
    const base = baseUrl(req, options);
    const caller = await callerOf(req, res);
    if (!caller) return;

    const checked = checkRequestHeaders({ protocolVersion: req.get('mcp-protocol-version'), method: req.get('mcp-method'), name: req.get('mcp-name') }, req.body);
    if ('rejection' in checked) return reject(res, checked.rejection);

    const stepUp = caller.credentialType === 'oauth' ? missingScopeOfCall(req.body, caller.scopes) : null;
    if (stepUp) {
      // RFC 6750 step-up for OAuth clients: name the scope, so the client can ask the person for it (a new consent).
      return reject(res, { status: 403, body: jsonRpcError(JSONRPC.SERVER_ERROR, `Forbidden: tool ${stepUp.tool} needs the scope ${stepUp.scope}, which this connection was not granted.`) }, {
        'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${stepUp.scope}", resource_metadata="${base}${RESOURCE_METADATA_PATH}", error_description="The connection lacks ${stepUp.scope}."`,
      });
    }

    // 2025-era sessions (ME1–ME4): only for clients that can be asked; the session lives in Postgres.
    const sessionId = checked.era.kind === 'legacy' ? req.get('mcp-session-id') : undefined;
    if (sessionId !== undefined) {
      const session = await useSession(deps.db, sessionId, caller, deps.now());
      if (!session) return sessionNotFound(res, requestIdOf(req.body));
      const posted = postedAnswer(req.body);
      if (posted && await recordAnswer(deps.db, session, posted.rpcId, posted.answer, deps.now())) return res.status(202).end();
      const confirm = sessionConfirmCall(req.body, session);
      const tool = confirm ? toolNamed(confirm.tool) : undefined;
      if (confirm && tool && callerMayUse(tool.capability, caller)) {
        return askInSession(res, { id: confirm.id, tool, args: confirm.args }, session, { caller, requestId: req.requestId }, deps, options.confirmationWaitMs);
      }
    } else if (checked.era.kind === 'legacy') {
      const initialize = sessionWorthyInitialize(req.body);
      // The SDK answers the handshake; the session id goes out as a header on its answer.
      if (initialize) res.setHeader('Mcp-Session-Id', await openSession(deps.db, caller, initialize.protocolVersion, initialize.capabilities, deps.now()));
    }

    // Tasks (issue 26.2: 2025-11-25 tasks, 2026-07-28 Tasks extension) have no runtime in the SDK we serve with:
    // answered here, from Postgres and Temporal, so any API process can answer any task.
    const taskEra = checked.era.kind === 'modern' ? 'modern' : checked.era.version === '2025-11-25' ? 'legacy' : null;
    const task = taskEra ? taskMessage(req.body, taskEra) : null;
    if (task && taskEra) return sendRpc(res, checked.era.kind, JSON.stringify(await answerTaskMessage(task, taskEra, caller, req.requestId, deps)));

    // A 2025-era request naming a session got here only if the session is live (checked above), and a session changes
    // nothing about a plain tool call, so it takes the direct path too.
    const direct = !options.sdkOnly;
    const call = direct ? plainToolCall(req.body, req.get('accept'), caller, checked.era.kind) : null;
    if (call) {
      // The hot message answered directly: the same runner, the same result the SDK would send (a test compares them),
      // without a per-request server, a Web Request/Response and a second serialisation of the data. The 2025-era
      // answer is the one SSE event the SDK's stateless legacy leg streams for it.
      return sendRpc(res, checked.era.kind, await toolCallResponse(call.tool, call.args, { caller, requestId: req.requestId }, deps, call.id, checked.era.kind));
    }

    const authInfo: AuthInfo = { token: caller.credentialType === 'oauth' ? 'oauth' : 'access-key', clientId: caller.credentialId, scopes: [...caller.scopes] };
    contexts.set(authInfo, { caller, requestId: req.requestId });
    await nodeHandler(Object.assign(req, { auth: authInfo }), res, req.body);
  });

  return router;
}
