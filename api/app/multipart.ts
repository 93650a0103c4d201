/**
 * File uploads of the application's forms (`multipart/form-data`), parsed with the runtime's own `FormData` reader
 * (no parser package): text fields become strings, files `{ name, bytes }`. Mounted only on the paths that take a
 * file and before the CSRF check, which then reads `_csrf` as from any form. A body over the limit is a coded error.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, type ErrorCode } from '../../src/errors.js';

export interface UploadedFile {
  name: string;
  bytes: Buffer;
}

/** `code` is the error a form's file problems have (the text import's by default). */
export function multipartForm(maxBytes: number, code: ErrorCode = 'IMPORT_FILE_INVALID') {
  const raw = express.raw({ type: 'multipart/form-data', limit: maxBytes });
  return (req: Request, res: Response, next: NextFunction) => {
    raw(req, res, (error?: unknown) => {
      if ((error as { type?: string } | undefined)?.type === 'entity.too.large') {
        return next(new AppError(code, `The file is larger than ${maxBytes} bytes.`, { reason: 'too_large' }));
      }
      if (error) return next(error);
      if (!Buffer.isBuffer(req.body)) return next();
      new Response(req.body, { headers: { 'content-type': req.get('content-type') ?? '' } }).formData().then(async (form) => {
        const body: Record<string, string | UploadedFile> = {};
        for (const [name, value] of form.entries()) {
          body[name] = typeof value === 'string' ? value : { name: value.name, bytes: Buffer.from(await value.arrayBuffer()) };
        }
        req.body = body;
        next();
      }, () => next(new AppError(code, 'The upload could not be read.', { reason: 'unreadable' })));
    });
  };
}
