/**
 * An OAuth access token of a person's connection, stored exactly as the authorization server stores one (same
 * adapter, same payload fields the resource server reads), without driving the consent pages: for tests about what a
 * token may see (isolation), not about how it is obtained (test/integration/oauth.test.ts drives the real flow).
 */
import crypto from 'node:crypto';
import { allScopes, type Scope, type WriteMode } from '../../src/auth/scopes.js';
import type { Db } from '../../src/db/knex.js';
import { postgresAdapter } from '../../src/oauth/adapter.js';
import { recordConsent } from '../../src/oauth/connections.js';
import { loadPerson } from '../../src/people/people.js';
import { makePerson } from './application.js';
import type { TestServer } from './server.js';

export interface TokenOptions {
  account?: string;
  /** null = all shops of the account. */
  shops?: string[] | null;
  scopes?: readonly Scope[];
  writeMode?: WriteMode;
  /** The resource the token is for; default the server's MCP endpoint. */
  audience?: string;
}

/** A token for `server`'s MCP resource, of a new owner of `account`, through the service's own consent recording. */
export async function mintOAuthToken(db: Db, server: TestServer, options: TokenOptions = {}): Promise<string> {
  const made = await makePerson(db, { account: options.account ?? 'demo', role: 'owner' });
  const person = await loadPerson(db, made.id);
  if (!person) throw new Error('person not loaded');
  const scopes = [...(options.scopes ?? allScopes)];
  const grantId = crypto.randomBytes(16).toString('base64url');
  await recordConsent(db, person, {
    grantId, clientId: 'https://client.example.com/oauth/client-metadata.json', clientName: 'Test Assistant',
    requested: scopes, scopes, shops: options.shops ?? null, writeMode: options.writeMode ?? 'proposals',
  });
  // The library's opaque tokens are 43 base64url characters (32 random bytes).
  const token = crypto.randomBytes(32).toString('base64url');
  const Adapter = postgresAdapter(db);
  await new Adapter('AccessToken').upsert(token, { kind: 'AccessToken', grantId, accountId: made.id, scope: scopes.join(' '), aud: options.audience ?? `${server.baseUrl}/api/mcp` }, 3600);
  return token;
}
