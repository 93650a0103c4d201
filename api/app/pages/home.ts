/** The overview: who is signed in, their role, rights and shops, and where to go. */
import express, { type Router } from 'express';
import { grantableScopes } from '../../../src/people/rights.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePerson } from '../session.js';

export function homeRoutes(_deps: ApplicationDeps): Router {
  const router = express.Router();
  router.get('/', requirePerson, (_req, res) => {
    const person = currentPerson(res);
    renderPage(res, 'home', {
      title: 'Overview', permissions: [...person.permissions], shops: person.shopCodes ? [...person.shopCodes] : null,
      grantable: grantableScopes(person),
    });
  });
  return router;
}
