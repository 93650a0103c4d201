/** Request id on every request, on every log line written while serving it, and one access-log line per request. */
import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { logger, withLogContext } from '../../src/logger.js';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

export function newRequestId(): string {
  return `req_${crypto.randomBytes(12).toString('base64url')}`;
}

export function requestContext(req: Request, res: Response, next: NextFunction): void {
  req.requestId = newRequestId();
  res.setHeader('Request-Id', req.requestId);
  const started = process.hrtime.bigint();
  withLogContext({ requestId: req.requestId }, () => {
    // The path only: query strings may carry cursors and search text, which need not be in the log.
    res.on('finish', () => logger.info({ method: req.method, path: req.path, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'request'));
    next();
  });
}
