/** Bearer credential → caller, for one interface (D10). */
import type { Request } from 'express';
import type { Interface } from '../../src/auth/scopes.js';
import { authenticateKey } from '../../src/auth/keys.js';
import type { Caller } from '../../src/capabilities/context.js';
import type { Db } from '../../src/db/knex.js';
import { AppError } from '../../src/errors.js';

/** Reads `Authorization: Bearer <key>` and resolves the caller, or throws a 401. */
export async function authenticateRequest(req: Request, db: Db, iface: Interface, now: Date, challenge?: string): Promise<Caller> {
  const headers = challenge ? { 'WWW-Authenticate': challenge } : { 'WWW-Authenticate': 'Bearer realm="api"' };
  const header = req.headers.authorization;
  if (!header) throw new AppError('MISSING_CREDENTIALS', 'Send the access key as `Authorization: Bearer <key>`.', undefined, headers);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError('INVALID_CREDENTIALS', 'The Authorization header must be `Bearer <key>`.', undefined, headers);
  try {
    return await authenticateKey(db, match[1], iface, now);
  } catch (error) {
    if (error instanceof AppError) throw new AppError(error.code, error.message, error.details, headers);
    throw error;
  }
}
