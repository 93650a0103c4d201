/**
 * Request id on every request, on every log line written while serving it, and one access-log line per request at
 * `debug` (the minute's summary at `info` counts them: src/logSummary.ts); the caller's W3C trace id beside it (`traceId`).
 */
import crypto from 'node:crypto';
import { context as otelContext } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { logger, withLogContext } from '../../src/logger.js';
import { traceIdOf } from '../../src/traceContext.js';
import { countMcpRequest, countRequest } from '../../src/logSummary.js';
import { mcpRequests, observeRequest } from '../../src/metrics/registry.js';
import { routeLabel } from '../../src/metrics/registry.js';
import { endWithStatus, startRequestSpan } from '../../src/tracing/spans.js';
import { HEALTH_PATH, READY_PATH } from './health.js';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

/** What a router adds to its request's log line (`res.locals.logFields`): the MCP router names the JSON-RPC method and tool. */
export interface RequestLogFields {
  rpcMethod?: string;
  tool?: string;
}

export function newRequestId(): string {
  return `req_${crypto.randomBytes(12).toString('base64url')}`;
}

export function requestContext(req: Request, res: Response, next: NextFunction): void {
  req.requestId = newRequestId();
  res.setHeader('Request-Id', req.requestId);
  const started = process.hrtime.bigint();
  // The full path, not the mounted router's (/api/mcp, not /), without the query string: it may carry cursors and
  // search text, which need not be in the log or a trace.
  const path = req.originalUrl.split('?')[0] ?? '/';
  // With tracing, the request's span continues the caller's W3C trace and the log lines carry its trace id; without,
  // the caller's `traceparent` header alone gives it. An MCP message's `_meta` overrides either (api/mcp/router.ts).
  // Probes and scrapes (every few seconds) are not traced.
  const probe = path === HEALTH_PATH || path === READY_PATH || path === '/metrics';
  const span = probe ? null : startRequestSpan(req.method, path, req.headers, req.requestId);
  const context: { requestId: string; traceId?: string } = { requestId: req.requestId };
  const traceId = span?.traceId ?? traceIdOf(req.get('traceparent'));
  if (traceId) context.traceId = traceId;
  if (span) {
    res.once('close', () => {
      const route = routeLabel(path, res.statusCode);
      span.span.updateName(`${req.method} ${route}`);
      span.span.setAttribute('http.route', route);
      endWithStatus(span.span, res.statusCode, res.writableFinished);
    });
  }
  withLogContext(context, () => {
    res.on('finish', () => {
      const fields: RequestLogFields = res.locals.logFields ?? {};
      logger.debug({ requestId: req.requestId, ...(context.traceId ? { traceId: context.traceId } : {}), method: req.method, path, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6, ...fields }, 'request');
      // Probes (every few seconds from an orchestrator) are not traffic.
      if (probe) return;
      countRequest(res.statusCode);
      observeRequest(req.method, path, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
      if (fields.rpcMethod !== undefined) {
        countMcpRequest(fields.rpcMethod === 'tools/call');
        mcpRequests.inc({ method: fields.rpcMethod });
      }
    });
    if (span) otelContext.with(span.context, next);
    else next();
  });
}
