/** Renders every error as the D3 body with its HTTP status; the only place REST errors are written. */
import type { NextFunction, Request, Response } from 'express';
import { AppError, toAppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';

export function sendError(res: Response, requestId: string, error: AppError): void {
  if (error.headers) for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json({ error: error.toJSON(), meta: { requestId } });
}

/** Express error handler: known errors keep their code; anything else is logged and becomes INTERNAL_ERROR. */
export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  let error = toAppError(err);
  // Body-parser and similar middleware errors carry a 4xx status of their own.
  const status = (err as { status?: number })?.status;
  if (!(err instanceof AppError) && typeof status === 'number' && status >= 400 && status < 500) {
    error = new AppError('INVALID_PARAMETER', (err as Error).message);
  }
  if (error.code === 'INTERNAL_ERROR') logger.error({ err }, 'unhandled error');
  if (res.headersSent) return;
  sendError(res, req.requestId ?? 'unknown', error);
}
