/** Access keys (D10): issue (the key shown once), list with last use, revoke — within the person's own rights (D27). */
import express, { type Response, type Router } from 'express';
import type { Scope } from '../../../src/auth/scopes.js';
import { scopesByArea } from '../../../src/auth/scopeWords.js';
import { AppError } from '../../../src/errors.js';
import { hasPermission } from '../../../src/people/model.js';
import { issueKeyAsPerson, KEY_EXPIRY_DAYS, keysOfPerson, revokeKeyAsPerson } from '../../../src/people/keys.js';
import { grantableScopes, grantableWriteModes } from '../../../src/people/rights.js';
import { listShops } from '../../../src/queries/shops.js';
import { field, fields } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePermission, requirePerson } from '../session.js';

export function keysRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const guard = [requirePerson, requirePermission((p) => hasPermission(p, 'keys:manage'), 'manage access keys')];

  const page = async (res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    const shops = await listShops(db, person.accountId, person.shopCodes);
    renderPage(res, 'keys', {
      title: 'Access keys', keys: await keysOfPerson(db, person), groups: scopesByArea(grantableScopes(person) as Scope[]),
      shops: shops.map((s) => ({ code: s.code, name: s.name })), allShopsAllowed: person.shopCodes === null,
      expiries: KEY_EXPIRY_DAYS, writeModes: grantableWriteModes(person), error: null, form: null, ...extra,
    }, status);
  };

  router.get('/keys', ...guard, async (_req, res) => page(res));

  router.post('/keys', ...guard, async (req, res) => {
    const expiry = field(req.body, 'expiresInDays');
    const shopChoice = field(req.body, 'shopChoice');
    const form = {
      name: field(req.body, 'name'), interfaces: fields(req.body, 'interfaces'), scopes: fields(req.body, 'scopes'),
      shops: shopChoice === 'all' ? null : fields(req.body, 'shops'), expiresInDays: expiry === '' || expiry === 'never' ? null : Number(expiry),
      writeMode: field(req.body, 'writeMode') || 'proposals',
    };
    try {
      const created = await issueKeyAsPerson(db, currentPerson(res), form, now());
      renderPage(res, 'keyCreated', { title: 'Access key issued', key: created.key, id: created.id, name: form.name.trim(), expiresAt: created.expiresAt?.toISOString() ?? null });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await page(res, { error: error.message, form }, error.status);
    }
  });

  router.post('/keys/:id/revoke', ...guard, async (req, res) => {
    await revokeKeyAsPerson(db, currentPerson(res), String(req.params.id));
    res.redirect(303, '/app/keys');
  });
  return router;
}
