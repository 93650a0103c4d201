/**
 * The public tracking endpoints of the partner portals (issue 24 point 1): the redirect `/r/<handle>` and the
 * conversion beacon `/b`. A portal answers by its Host (its address, or its active custom domain) and, in
 * development, under the path prefix `/portal/<account>/<shop>`. Shoppers' browsers call these: plain pages, no JSON
 * errors, nothing cached, and never an open redirect.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { Db } from '../../src/db/knex.js';
import { logger } from '../../src/logger.js';
import { portalShopByHost, portalShopByPath, recordBeacon, recordClick, VISITOR_COOKIE, type PortalShop } from '../../src/affiliate/tracking/clicks.js';

export interface TrackingDeps {
  db: Db;
  now: () => Date;
  /** Keys the hashes of addresses and user agents (derived from SECRETS_KEY). */
  hashKey: () => Buffer;
}

// The beacon answered to an <img>: a transparent 1×1 GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

function plainPage(res: Response, status: number, title: string, message: string): void {
  res.status(status).type('html').setHeader('Cache-Control', 'no-store');
  res.send(`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${message}</p></body></html>`);
}

function cookieOf(req: Request, name: string): string | undefined {
  const header = req.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

const single = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function createTrackingRouter(deps: TrackingDeps): Router {
  const router = express.Router();

  const click = async (req: Request, res: Response, shop: PortalShop | null) => {
    const handle = String(req.params.handle ?? '');
    if (!shop || !/^[A-Za-z0-9_.-]{1,64}$/.test(handle)) return plainPage(res, 404, 'Not found', 'There is no such partner link.');
    const outcome = await recordClick(deps.db, shop, deps.hashKey(), {
      handle, campaignId: single(req.query.c), to: single(req.query.to), ip: req.socket.remoteAddress ?? '', userAgent: req.get('user-agent') ?? '',
      visitorId: cookieOf(req, VISITOR_COOKIE), now: deps.now(),
    });
    if (outcome.kind === 'unknown_partner') return plainPage(res, 404, 'Not found', 'There is no such partner link.');
    if (outcome.kind === 'refused') return plainPage(res, 400, 'Link not followed', outcome.message);
    if (outcome.kind === 'flooded') {
      res.setHeader('Retry-After', '600');
      return plainPage(res, 429, 'Too many requests', 'This link was opened too often from your address; try again later.');
    }
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (outcome.visitorId && outcome.windowDays) {
      res.cookie(VISITOR_COOKIE, outcome.visitorId, { maxAge: outcome.windowDays * 86_400_000, httpOnly: true, sameSite: 'lax', secure: req.secure, path: '/' });
    }
    res.redirect(302, outcome.location);
  };

  const beacon = async (req: Request, res: Response, shop: PortalShop | null) => {
    const params = { ...(req.query as Record<string, unknown>), ...(req.body && typeof req.body === 'object' ? req.body as Record<string, unknown> : {}) };
    // The shop's page never has to handle an error: whatever happens, it gets the pixel (GET) or 204 (POST).
    if (shop) {
      try {
        await recordBeacon(deps.db, shop, { orderCode: single(params.order), clickToken: single(params.click), visitorId: cookieOf(req, VISITOR_COOKIE), now: deps.now() });
      } catch (err) {
        logger.error({ err, shopId: shop.shopId }, 'affiliate beacon not recorded');
      }
    }
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'GET') res.status(200).type('gif').send(PIXEL);
    else res.status(204).end();
  };

  const byHost = (req: Request) => portalShopByHost(deps.db, req.get('host') ?? '');
  const byPath = (req: Request) => portalShopByPath(deps.db, String(req.params.account), String(req.params.shop));
  // Beacon bodies are parsed leniently (a form, JSON or nothing): a malformed one is a beacon without an order.
  const body = [express.text({ type: () => true, limit: '4kb' }), (req: Request, _res: Response, next: () => void) => {
    const text = typeof req.body === 'string' ? req.body : '';
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text.trim().startsWith('{') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
    } catch { /* not JSON: no fields */ }
    req.body = parsed && typeof parsed === 'object' ? parsed : {};
    next();
  }];

  router.get('/portal/:account/:shop/r/:handle', async (req, res) => click(req, res, await byPath(req)));
  router.get('/portal/:account/:shop/b', async (req, res) => beacon(req, res, await byPath(req)));
  router.post('/portal/:account/:shop/b', ...body, async (req, res) => beacon(req, res, await byPath(req)));
  router.get('/r/:handle', async (req, res) => click(req, res, await byHost(req)));
  router.get('/b', async (req, res) => beacon(req, res, await byHost(req)));
  router.post('/b', ...body, async (req, res) => beacon(req, res, await byHost(req)));
  // A beacon body the parser refuses (too large) is still no error to the shop.
  router.use((err: unknown, req: Request, res: Response, next: (err?: unknown) => void) => {
    if (!/\/b$/.test(req.path)) return next(err);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.status(204).end();
  });
  return router;
}
