/** Notifications (D16: e.g. a paused webhook endpoint) and the Plan (entitlements with usage) of the person's account. */
import express, { type Router } from 'express';
import { markNotificationsRead, notificationsOf, planOf } from '../../../src/people/notifications.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePerson } from '../session.js';

export function accountInfoRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  router.get('/notifications', requirePerson, async (_req, res) => {
    renderPage(res, 'notifications', { title: 'Notifications', notifications: await notificationsOf(db, currentPerson(res)) });
  });
  router.post('/notifications/read', requirePerson, async (_req, res) => {
    await markNotificationsRead(db, currentPerson(res));
    res.redirect(303, '/app/notifications');
  });
  router.get('/plan', requirePerson, async (_req, res) => {
    renderPage(res, 'plan', { title: 'Plan', ...(await planOf(db, currentPerson(res))) });
  });
  return router;
}
