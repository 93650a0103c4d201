/** Bearer credential → caller, for one interface (D10): an access key, or an OAuth access token for MCP (D28). */
import type { Request } from 'express';
import type { Interface } from '../../src/auth/scopes.js';
import { authenticateKey } from '../../src/auth/keys.js';
import { authenticateOAuthToken, looksLikeOAuthToken } from '../../src/auth/oauthTokens.js';
import type { Caller } from '../../src/capabilities/context.js';
import type { Db } from '../../src/db/knex.js';
import { AppError } from '../../src/errors.js';

/**
 * Reads `Authorization: Bearer <credential>` and resolves the caller, or throws a 401. `resource` is the address the
 * request reached (`{base}/api/mcp`): an OAuth token must have been issued for exactly it (RFC 8707). `market`, the
 * shop the request names, is resolved together with an access key (one round trip; see authenticateKey).
 */
export async function authenticateRequest(req: Request, db: Db, iface: Interface, now: Date, challenge?: string, resource?: string, market?: unknown): Promise<Caller> {
  const headers = challenge ? { 'WWW-Authenticate': challenge } : { 'WWW-Authenticate': 'Bearer realm="api"' };
  const header = req.headers.authorization;
  if (!header) throw new AppError('MISSING_CREDENTIALS', 'Send the access key as `Authorization: Bearer <key>`.', undefined, headers);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError('INVALID_CREDENTIALS', 'The Authorization header must be `Bearer <key>`.', undefined, headers);
  try {
    return await resolveCredential(db, match[1], iface, now, resource, typeof market === 'string' ? market : undefined);
  } catch (error) {
    if (error instanceof AppError) throw new AppError(error.code, error.message, error.details, headers);
    throw error;
  }
}

/**
 * Dispatches on the credential's form: `sk_…` is an access key; a token of the authorization server's form is an
 * OAuth access token where a resource accepts them (MCP). Anything else is judged as a key (401 INVALID_CREDENTIALS).
 */
async function resolveCredential(db: Db, token: string, iface: Interface, now: Date, resource: string | undefined, market: string | undefined): Promise<Caller> {
  if (!resource || token.startsWith('sk_') || !looksLikeOAuthToken(token)) return authenticateKey(db, token, iface, now, market);
  // REST passes a resource for `/account/connection` only: there a token may ask what it is (AP2).
  return authenticateOAuthToken(db, token, iface, now, resource, { diagnostics: iface === 'rest' });
}
