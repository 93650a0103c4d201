/**
 * Mounts the authorization server's own endpoints (`/oauth/*`) and its metadata: RFC 8414
 * `/.well-known/oauth-authorization-server` and OpenID discovery `/.well-known/openid-configuration` (one document).
 * The library serves them; this only hands it the request with the full path, throttles dynamic registration and
 * names the scopes of an authorization request that names none (S3).
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import { allScopes } from '../../src/auth/scopes.js';
import type { OAuthServers } from './provider.js';

export interface OAuthRouterOptions {
  /** Dynamic registrations (RFC 7591) per client address per minute (S3); default 10. */
  registrationsPerMinute?: number;
}

export function createOAuthRouter(oauth: OAuthServers, originOf: (req: Request) => string, options: OAuthRouterOptions = {}): Router {
  const router = express.Router();
  const forward = (req: Request, res: Response, next: NextFunction) => {
    req.url = req.originalUrl.replace(/^\/\.well-known\/oauth-authorization-server(?=$|\?)/, '/.well-known/openid-configuration');
    // The library builds its URLs from the mount path (Express's baseUrl); its routes already carry /oauth.
    req.baseUrl = '';
    if (!oauth.handle(originOf(req), req, res, req.ip)) next();
  };
  // S3: registration is open to anyone, so it is throttled per address (TRUST_PROXY decides what the address is).
  router.post('/oauth/register', rateLimit({
    windowMs: 60_000, limit: options.registrationsPerMinute ?? 10, standardHeaders: 'draft-8', legacyHeaders: false,
    handler: (_req, res) => {
      res.status(429).set('Cache-Control', 'no-store').json({ error: 'rate_limited', error_description: 'Too many client registrations from your address; wait a minute.' });
    },
  }));
  // S3: an authorization request without `scope` asks for the client's registered scopes, or for every scope (the
  // consent screen then offers those the person may grant). The library alone would skip consent and deny it.
  router.get('/oauth/authorize', async (req, res, next) => {
    try {
      const url = new URL(req.originalUrl, 'http://internal');
      if (url.searchParams.has('scope') || !url.searchParams.get('client_id')) return next();
      const provider = oauth.providerFor(originOf(req));
      const client = provider ? await provider.Client.find(url.searchParams.get('client_id')!).catch(() => undefined) : undefined;
      const registered = typeof client?.scope === 'string' && client.scope.trim() !== '' ? client.scope : allScopes.join(' ');
      url.searchParams.set('scope', registered);
      req.originalUrl = `${url.pathname}${url.search}`;
      next();
    } catch (error) {
      next(error);
    }
  });
  router.use('/oauth', forward);
  router.all(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'], forward);
  return router;
}
