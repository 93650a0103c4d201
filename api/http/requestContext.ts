/**
 * Request id on every request, on every log line written while serving it, and one access-log line per request at
 * `debug` (the minute's summary at `info` counts them: src/logSummary.ts); the caller's W3C trace id beside it (`traceId`).
 */
import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { logger, withLogContext } from '../../src/logger.js';
import { traceIdOf } from '../../src/traceContext.js';
import { countMcpRequest, countRequest } from '../../src/logSummary.js';
import { mcpRequests, observeRequest } from '../../src/metrics/registry.js';
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
  // The caller's W3C trace (`traceparent` header), so its tracing finds our lines; an MCP message's `_meta` overrides it.
  const context: { requestId: string; traceId?: string } = { requestId: req.requestId };
  const traceId = traceIdOf(req.get('traceparent'));
  if (traceId) context.traceId = traceId;
  withLogContext(context, () => {
    res.on('finish', () => {
      // The full path, not the mounted router's (/api/mcp, not /), without the query string: it may carry cursors and
      // search text, which need not be in the log.
      const path = req.originalUrl.split('?')[0];
      const fields: RequestLogFields = res.locals.logFields ?? {};
      logger.debug({ requestId: req.requestId, ...(context.traceId ? { traceId: context.traceId } : {}), method: req.method, path, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6, ...fields }, 'request');
      // Probes (every few seconds from an orchestrator) are not traffic.
      if (path === HEALTH_PATH || path === READY_PATH || path === '/metrics') return;
      countRequest(res.statusCode);
      observeRequest(req.method, path ?? '/', res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
      if (fields.rpcMethod !== undefined) {
        countMcpRequest(fields.rpcMethod === 'tools/call');
        mcpRequests.inc({ method: fields.rpcMethod });
      }
    });
    next();
  });
}
