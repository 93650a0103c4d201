/**
 * OAuth access tokens (D28) → caller, the counterpart of access keys. Tokens are opaque; the authorization server
 * keeps them in `oauth_artifacts`. A token is worth its connection's scopes and shops, narrowed by what the person
 * may see now, and nothing once the connection is revoked or the person disabled. Tokens are for MCP only, and for
 * REST's `/account/connection`, which describes the connection itself.
 */
import type { Caller } from '../capabilities/context.js';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { artifactKey } from '../oauth/adapter.js';
import { loadPerson } from '../people/people.js';
import { narrowToPerson } from '../people/rights.js';
import { isScope, type Interface, type Scope, type WriteMode } from './scopes.js';

/** The library's opaque tokens: 43 base64url characters. Access keys start with `sk_`. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function looksLikeOAuthToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/** Resolves an access token issued for `resource` to a caller, or throws the 401 of D10. */
export async function authenticateOAuthToken(db: Db, token: string, iface: Interface, now: Date, resource: string, options: { diagnostics?: boolean } = {}): Promise<Caller> {
  const row = await db('oauth_artifacts').where({ kind: 'AccessToken', id: artifactKey(token) }).first('payload', 'expires_at', 'consumed_at');
  if (!row || row.consumed_at) throw new AppError('INVALID_CREDENTIALS', 'The access token is not valid.');
  if (row.expires_at && row.expires_at <= now) throw new AppError('CREDENTIALS_EXPIRED', `The access token expired at ${row.expires_at.toISOString()}.`);
  const payload = row.payload as { grantId?: string; clientId?: string; scope?: string; aud?: string | string[]; accountId?: string; expiresWithSession?: boolean; sessionUid?: string };
  // S3: a token bound to the sign-in session it was issued under (no offline_access) lives only while that session
  // holds its grant — the library's own rule for the refresh token (checkSessionBinding), so a second authorization
  // in the same browser never leaves a refresh token dead and its access token alive.
  if (payload.expiresWithSession) {
    const session = payload.sessionUid ? await db('oauth_artifacts').where({ kind: 'Session', uid: payload.sessionUid })
      .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now)).first('payload') : undefined;
    const held = session?.payload as { accountId?: string; authorizations?: Record<string, { grantId?: string }> } | undefined;
    if (!held || held.accountId !== payload.accountId || held.authorizations?.[payload.clientId ?? '']?.grantId !== payload.grantId) {
      throw new AppError('INVALID_CREDENTIALS', 'The authorization this access token belongs to was replaced or its sign-in ended; authorize again.');
    }
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(resource)) throw new AppError('INVALID_CREDENTIALS', `The access token was not issued for ${resource}.`);
  // MCP, plus REST's /account/connection (the edge passes a resource there only): a token can read its own diagnostics.
  if (iface !== 'mcp' && !options.diagnostics) throw new AppError('INTERFACE_NOT_ALLOWED', 'OAuth access tokens are for MCP only; issue an access key for REST.', { interface: iface });
  const connection = await db('oauth_connections as c').join('accounts as a', 'a.id', 'c.account_id')
    .select('c.*', 'a.code as account_code', 'a.time_zone as account_time_zone').where('c.id', payload.grantId ?? '').first();
  if (!connection) throw new AppError('INVALID_CREDENTIALS', 'The access token is not valid.');
  if (connection.revoked_at) throw new AppError('CREDENTIALS_REVOKED', 'The connection was revoked in the application.');
  const person = await loadPerson(db, connection.person_id);
  if (!person || person.id !== payload.accountId) throw new AppError('CREDENTIALS_REVOKED', 'The person who granted access can no longer sign in.');
  const tokenScopes = new Set((payload.scope ?? '').split(' '));
  const granted = (connection.scopes as string[]).filter((s): s is Scope => isScope(s) && tokenScopes.has(s));
  const { scopes, shopCodes, writeMode } = narrowToPerson(person, granted, connection.all_shops ? null : new Set(connection.shop_codes as string[]), connection.write_mode as WriteMode);
  void db('oauth_connections').where({ id: connection.id }).andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(now.getTime() - 60_000)))
    .update({ last_used_at: now }).catch(() => undefined);
  return {
    account: { id: String(connection.account_id), code: connection.account_code, timeZone: connection.account_time_zone },
    scopes,
    shopCodes,
    credentialId: connection.id,
    interface: iface,
    writeMode,
    credentialType: 'oauth',
  };
}
