/**
 * The OAuth 2.0 authorization server (D28), configured on oidc-provider (a certified library), not written by us:
 * RFC 8414 metadata, authorization code with PKCE S256 only, RFC 8707 resource indicators bound to
 * `{base_url}/api/mcp`, RFC 9207 `iss` in the authorization response, Client ID Metadata Documents and dynamic
 * registration (RFC 7591), refresh tokens that rotate on every use, revocation. Sign-in and consent are the
 * application's pages (`/app/consent/:uid`, api/app/pages/consent.ts); what a token may do is the connection a person
 * ticked there (src/oauth/connections.ts).
 */
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { allScopes } from '../../src/auth/scopes.js';
import type { Db } from '../../src/db/knex.js';
import { postgresAdapter } from '../../src/oauth/adapter.js';
import { loadPerson } from '../../src/people/people.js';
import { verifyDestination, type Resolver } from '../../src/webhooks/addresses.js';
import { renderAnonymous } from '../app/render.js';
import { logger } from '../../src/logger.js';

export const MCP_RESOURCE_PATH = '/api/mcp';
export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 86_400;

export interface OAuthServerOptions {
  db: Db;
  /** Derives the cookie-signing and token-signing keys (SECRETS_KEY). */
  secretsKey: () => Buffer;
  /** Checks a metadata document's address like a webhook URL (public https only). */
  resolve: Resolver;
  /** PUBLIC_BASE_URL: the one issuer. Without it, each loopback origin (localhost, 127.0.0.1, [::1]) is its own issuer. */
  publicBaseUrl?: string;
  /** TRUST_PROXY is set (S2): the request's scheme and host as Express decided them may come from a proxy. */
  trustProxy?: boolean;
  /** Tests only: how the library fetches Client ID Metadata Documents (stands in for the client's web host). */
  fetch?: typeof fetch;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** S3: a redirect URI is https, or plain http on a loopback host (any port); no other scheme, no fragment. */
export function allowedRedirectUri(uri: string): boolean {
  if (!URL.canParse(uri)) return false;
  const url = new URL(uri);
  if (url.hash) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
}

/** A key of 32 bytes derived from SECRETS_KEY for one purpose. */
function derived(secretsKey: Buffer, purpose: string): Buffer {
  return crypto.createHmac('sha256', secretsKey).update(`oauth:${purpose}`).digest();
}

/** The Ed25519 signing key (for ID tokens, when a client asks for `openid`), derived from SECRETS_KEY: no key file to keep. */
function signingJwk(seed: Buffer) {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const jwk = crypto.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  return { ...jwk, kid: crypto.createHash('sha256').update(jwk.x!).digest('base64url').slice(0, 16), alg: 'EdDSA', use: 'sig' };
}

function configuration(options: OAuthServerOptions, issuer: string): Configuration {
  const resource = `${issuer}${MCP_RESOURCE_PATH}`;
  const key = options.secretsKey();
  const prefix = (path: string) => `/oauth${path}`;
  return {
    adapter: postgresAdapter(options.db),
    clients: [],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'EdDSA',
    },
    responseTypes: ['code'],
    // Listed here too so clients may register with them (RFC 7591 `scope`); the consent records them on the grant.
    scopes: ['openid', 'offline_access', ...allScopes],
    claims: { openid: ['sub'] },
    cookies: { keys: [derived(key, 'cookies').toString('base64url')] },
    jwks: { keys: [signingJwk(derived(key, 'signing'))] },
    findAccount: async (_ctx, sub) => {
      const person = await loadPerson(options.db, sub);
      return person ? { accountId: sub, claims: async () => ({ sub }) } : undefined;
    },
    interactions: { url: (_ctx, interaction) => `/app/consent/${interaction.uid}` },
    // A refused authorization request the library cannot send back to the client (unknown client, bad redirect_uri)
    // is shown to the person as the application's own error page, escaped, instead of the library's default.
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = renderAnonymous('error', { title: 'Sign-in not possible', message: `The application's request was refused: ${out.error_description ?? out.error}`, code: out.error });
    },
    // Every authorization asks the person again: what was ticked before is never silently reused or widened.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grantId = ctx.oidc.result?.consent?.grantId as string | undefined;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S, AuthorizationCode: 60, RefreshToken: REFRESH_TOKEN_TTL_S, Grant: 365 * 86_400,
      Interaction: 3600, Session: 12 * 3600, IdToken: 3600,
    },
    // Public clients (no secrets, no cookies on these endpoints): a browser-based MCP client may call them.
    clientBasedCORS: () => true,
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        // The same address rules as webhooks (public https, standard port, public addresses only); the library also
        // refuses redirects, special-use addresses at connect time, big bodies and slow answers, and caches documents.
        allowFetch: async (_ctx, clientId) => {
          try {
            await verifyDestination(clientId, { allowLoopback: false }, options.resolve);
            return true;
          } catch (error) {
            logger.info({ clientId, err: error }, 'client id metadata document address refused');
            return false;
          }
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`the only resource is ${resource}`);
          return { scope: allScopes.join(' '), audience: resource, accessTokenTTL: ACCESS_TOKEN_TTL_S, accessTokenFormat: 'opaque' };
        },
      },
    },
    routes: {
      authorization: prefix('/authorize'), backchannel_authentication: prefix('/backchannel'), code_verification: prefix('/device'),
      challenge: prefix('/challenge'), device_authorization: prefix('/device/auth'), end_session: prefix('/session/end'),
      introspection: prefix('/token/introspection'), jwks: prefix('/jwks'), pushed_authorization_request: prefix('/par'),
      registration: prefix('/register'), revocation: prefix('/revoke'), token: prefix('/token'), userinfo: prefix('/me'), credential: prefix('/credential'),
    },
    // S3: every URL the library fetches (client metadata documents, jwks_uri, sector_identifier_uri) passes the
    // webhook address rules first (public https, standard port, public addresses only); a refused one is never opened.
    fetch: async (url: string | URL, init?: RequestInit) => {
      await verifyDestination(String(url), { allowLoopback: false }, options.resolve);
      return (options.fetch ?? globalThis.fetch)(url, init);
    },
    // S3: redirect URIs are https, or http on a loopback address (RFC 8252 native apps; MCP authorization rules).
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator: (_ctx: unknown, key: string, value: unknown) => {
        if (key !== 'redirect_uris' || !Array.isArray(value)) return;
        const bad = value.filter((uri) => !allowedRedirectUri(String(uri)));
        if (bad.length > 0) throw new errors.InvalidRedirectUri(`redirect_uris must be https, or http on localhost, 127.0.0.1 or [::1]: ${bad.join(', ')}`);
      },
    },
  } as Configuration;
}

export interface OAuthServers {
  /** The issuer for a request's origin, or null when it is not one we serve (set PUBLIC_BASE_URL). */
  issuerFor(origin: string): string | null;
  providerFor(origin: string): Provider | null;
  /**
   * Serves a request of the library's own paths (req.url is the full path). `origin` is the request's own as Express
   * decided it (TRUST_PROXY) or PUBLIC_BASE_URL's: the forwarded headers the library reads are replaced by it, so
   * every URL it publishes derives from that alone.
   */
  handle(origin: string, req: IncomingMessage, res: ServerResponse, clientIp?: string): boolean;
  /** Replaces the forwarded headers the library reads by `origin` (see `handle`); for the consent pages' calls into it. */
  prepare(origin: string, req: IncomingMessage, clientIp?: string): void;
}

/** One provider per issuer, made on first use (so a process that never serves OAuth never derives its keys). */
export function createOAuthServers(options: OAuthServerOptions): OAuthServers {
  const providers = new Map<string, Provider>();
  const issuerFor = (origin: string) => {
    if (options.publicBaseUrl) return new URL(options.publicBaseUrl).origin;
    const url = URL.canParse(origin) ? new URL(origin) : null;
    return url && LOOPBACK_HOSTS.has(url.hostname) ? url.origin : null;
  };
  const providerFor = (origin: string) => {
    const issuer = issuerFor(origin);
    if (!issuer) return null;
    let provider = providers.get(issuer);
    if (!provider) {
      provider = new Provider(issuer, configuration(options, issuer));
      // S2: the library reads X-Forwarded-Proto/-Host only when we wrote them ourselves (see `handle`): with
      // PUBLIC_BASE_URL (its scheme and host) or behind a trusted proxy (what Express decided). Never a client's own.
      provider.proxy = Boolean(options.publicBaseUrl) || Boolean(options.trustProxy);
      provider.on('server_error', (_ctx, error) => logger.error({ err: error }, 'authorization server error'));
      providers.set(issuer, provider);
    }
    return provider;
  };
  const prepare = (origin: string, req: IncomingMessage, clientIp?: string) => {
    const published = new URL(options.publicBaseUrl ?? origin);
    for (const name of Object.keys(req.headers)) if (name.startsWith('x-forwarded-') || name === 'forwarded') delete req.headers[name];
    if (options.publicBaseUrl || options.trustProxy) {
      req.headers['x-forwarded-proto'] = published.protocol.slice(0, -1);
      req.headers['x-forwarded-host'] = published.host;
      if (clientIp) req.headers['x-forwarded-for'] = clientIp;
    }
  };
  return {
    issuerFor,
    providerFor,
    prepare,
    handle(origin, req, res, clientIp) {
      const provider = providerFor(origin);
      if (!provider) return false;
      prepare(origin, req, clientIp);
      void provider.callback()(req, res);
      return true;
    },
  };
}
