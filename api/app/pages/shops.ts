/**
 * Shops (issue 28.2), for the account's owner: the account's shops with their platform and sync state, connecting a
 * shop (platform, code, currency, zone, country and the platform's credentials, checked by a test connection, stored
 * encrypted, never shown again) and disconnecting one (its sync stops, its data stays, its credentials go). The same
 * domain services as the CLI's `shops connect` / `shops disconnect` (src/setup/setup.ts).
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import type { PlatformCredentials } from '../../../src/platforms/types.js';
import { listShops } from '../../../src/queries/shops.js';
import { connectShop, disconnectShop } from '../../../src/setup/setup.js';
import { field } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePermission, requirePerson } from '../session.js';

const DONE: Record<string, string> = {
  setup: 'The account is ready and you are its owner. Connect its first shop below; then invite people under People, and turn on a second factor under Your account.',
  connect: 'Connected: the test connection passed, the credentials are stored encrypted; the first sync starts within a minute.',
  disconnect: 'Disconnected: its sync stops within a minute, its data and events stay, its credentials were deleted.',
};

export function shopsRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  const owner = [requirePerson, requirePermission((p) => p.role === 'owner', 'manage shops (owners only)')];
  const platforms = () => {
    if (!deps.platforms) throw new AppError('INVALID_PARAMETER', 'This instance cannot connect shops (it runs without the platform adapters).');
    return deps.platforms;
  };
  const accountCode = async (res: Response) => (await db('accounts').where({ id: currentPerson(res).accountId }).first('code')).code as string;

  const page = async (req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const shops = await listShops(db, currentPerson(res).accountId, null);
    const limited = currentPerson(res).shopCodes;
    const mine = (code: string) => limited === null || limited.has(code);
    const registry = deps.platforms;
    const choices = registry ? registry.names().map((name) => ({ name, credentialFields: registry.get(name)!.credentialFields })) : [];
    const done = typeof req.query.done === 'string' ? DONE[req.query.done] ?? null : null;
    renderPage(res, 'shops', {
      title: 'Shops', notice: done, error: null, form: {},
      shops: shops.map((s) => ({ code: s.code, name: s.name, platform: s.platform, currency: s.currency, timeZone: s.time_zone, syncError: s.sync_error ?? null, mayDisconnect: mine(s.code) })),
      platforms: choices, ...extra,
    }, status);
  };

  router.get('/shops', ...owner, async (req, res) => page(req, res));
  router.post('/shops/connect', ...owner, async (req, res) => {
    const form = {
      platform: field(req.body, 'platform'), code: field(req.body, 'code'), name: field(req.body, 'name'), currency: field(req.body, 'currency'),
      timeZone: field(req.body, 'timeZone'), country: field(req.body, 'country'), url: field(req.body, 'url'),
    };
    try {
      const adapter = platforms().get(form.platform);
      // Only the fields the chosen platform takes; the form shows every platform's, the others stay empty.
      const credentials: PlatformCredentials = {};
      for (const f of adapter?.credentialFields ?? []) {
        const value = field(req.body, `credential.${form.platform}.${f.name}`);
        if (value) credentials[f.name] = value;
      }
      await connectShop(db, platforms(), deps.application.secretsKey(), {
        accountCode: await accountCode(res), platform: form.platform, code: form.code, name: form.name || undefined, currency: form.currency,
        timeZone: form.timeZone, country: form.country, baseUrl: form.url || undefined, credentials,
      });
      res.redirect(303, '/app/shops?done=connect');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // The form comes back without the credentials: a secret is never written into a page.
      await page(req, res, { error: `${error.code}: ${error.message}`, form }, error.status);
    }
  });
  router.post('/shops/:code/disconnect', ...owner, async (req, res) => {
    await disconnectShop(db, await accountCode(res), String(req.params.code), currentPerson(res).shopCodes);
    res.redirect(303, '/app/shops?done=disconnect');
  });
  return router;
}
