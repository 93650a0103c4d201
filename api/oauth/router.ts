/**
 * Mounts the authorization server's own endpoints (`/oauth/*`) and its metadata: RFC 8414
 * `/.well-known/oauth-authorization-server` and OpenID discovery `/.well-known/openid-configuration` (one document).
 * The library serves them; this only hands it the request with the full path.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { OAuthServers } from './provider.js';

export function createOAuthRouter(oauth: OAuthServers, originOf: (req: Request) => string): Router {
  const router = express.Router();
  const forward = (req: Request, res: Response, next: NextFunction) => {
    req.url = req.originalUrl.replace(/^\/\.well-known\/oauth-authorization-server(?=$|\?)/, '/.well-known/openid-configuration');
    // The library builds its URLs from the mount path (Express's baseUrl); its routes already carry /oauth.
    req.baseUrl = '';
    if (!oauth.handle(originOf(req), req, res, req.ip)) next();
  };
  router.use('/oauth', forward);
  router.all(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'], forward);
  return router;
}
