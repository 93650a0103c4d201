/**
 * Webhook endpoints (SPEC "Webhook resources"): list, create (the secret shown once), enable, disable, delete after a
 * confirmation, rotate the secret, send a test `ping`, the delivery log (newest first, paged) with a manual retry of a
 * FAILED delivery. Reading needs `webhooks:read`, changes `webhooks:manage` (the rules live in src/people/webhooks.ts).
 */
import express, { type Request, type Response, type Router } from 'express';
import { subscribableEventTypes } from '../../../src/events/catalogue.js';
import { AppError } from '../../../src/errors.js';
import {
  createEndpointAsPerson, deliveriesOf, endpointActionAsPerson, endpointOf, endpointsOf, mayManageWebhooks, mayReadWebhooks, retryDeliveryAsPerson,
  rotateSecretAsPerson, updateEndpointAsPerson, type EndpointAction,
} from '../../../src/people/webhooks.js';
import { listShops } from '../../../src/queries/shops.js';
import { field, fields } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePermission, requirePerson } from '../session.js';

const LOG_PAGE = 20;
const DONE_MESSAGES: Record<string, string> = {
  enable: 'The endpoint is enabled; waiting deliveries are delivered now.',
  disable: 'The endpoint is disabled; its pending deliveries were skipped.',
  ping: 'A test event (ping) is on its way; refresh to see the attempt below.',
  retry: 'The delivery is queued for one more attempt; refresh to see it below.',
  edit: 'The endpoint is saved; events from now on follow the new settings.',
};

export function webhooksRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const read = [requirePerson, requirePermission(mayReadWebhooks, 'see webhook endpoints')];
  const manage = [requirePerson, requirePermission(mayManageWebhooks, 'manage webhook endpoints')];
  const endpointDeps = () => ({ secretsKey: deps.application.secretsKey(), allowLoopback: deps.application.allowLoopback, resolve: deps.application.resolve });

  const listPage = async (res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    const shops = await listShops(db, person.accountId, person.shopCodes);
    renderPage(res, 'webhooks', {
      title: 'Webhook endpoints', endpoints: await endpointsOf(db, person), canManage: mayManageWebhooks(person), eventTypes: subscribableEventTypes,
      shops: shops.map((s) => ({ code: s.code, name: s.name })), allShopsAllowed: person.shopCodes === null, error: null, form: null, ...extra,
    }, status);
  };

  router.get('/webhooks', ...read, async (_req, res) => listPage(res));

  router.post('/webhooks', ...manage, async (req, res) => {
    const form = {
      name: field(req.body, 'name'), url: field(req.body, 'url').trim(),
      events: field(req.body, 'eventChoice') === 'all' ? 'all' as const : fields(req.body, 'events'),
      shops: field(req.body, 'shopChoice') === 'all' ? 'all' as const : fields(req.body, 'shops'),
    };
    try {
      const created = await createEndpointAsPerson(db, endpointDeps(), currentPerson(res), form);
      renderPage(res, 'webhookSecret', { title: 'Endpoint created', endpointId: created.id, secret: created.secret, created: true });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await listPage(res, { error: error.message, form }, error.status);
    }
  });

  router.get('/webhooks/:id', ...read, async (req: Request, res: Response) => {
    const person = currentPerson(res);
    const id = String(req.params.id);
    const endpoint = await endpointOf(db, person, id);
    const afterTime = typeof req.query.afterTime === 'string' ? req.query.afterTime : '';
    const afterId = typeof req.query.afterId === 'string' ? req.query.afterId : '';
    const after = afterTime && afterId && /^\d{1,18}$/.test(afterId) && !Number.isNaN(Date.parse(afterTime)) ? { key: new Date(afterTime).toISOString(), id: afterId } : null;
    const log = await deliveriesOf(db, person, id, LOG_PAGE, after);
    const done = typeof req.query.done === 'string' ? DONE_MESSAGES[req.query.done] ?? null : null;
    const nextPage = log.hasMore && log.last ? `/app/webhooks/${endpoint.endpointId}?afterTime=${encodeURIComponent(log.last.key)}&afterId=${log.last.id}` : null;
    renderPage(res, 'webhook', { title: endpoint.name, endpoint, deliveries: log.items, nextPage, canManage: mayManageWebhooks(person), notice: done });
  });

  for (const action of ['enable', 'disable', 'ping'] as const satisfies readonly EndpointAction[]) {
    router.post(`/webhooks/:id/${action}`, ...manage, async (req, res) => {
      await endpointActionAsPerson(db, currentPerson(res), String(req.params.id), action, now());
      res.redirect(303, `/app/webhooks/${req.params.id}?done=${action}`);
    });
  }

  router.post('/webhooks/:id/rotate-secret', ...manage, async (req, res) => {
    const rotated = await rotateSecretAsPerson(db, { secretsKey: deps.application.secretsKey() }, currentPerson(res), String(req.params.id));
    renderPage(res, 'webhookSecret', { title: 'New signing secret', endpointId: rotated.id, secret: rotated.secret, created: false });
  });

  const editPage = async (res: Response, endpoint: Awaited<ReturnType<typeof endpointOf>>, error: string | null = null, status = 200) => {
    const person = currentPerson(res);
    const shops = await listShops(db, person.accountId, person.shopCodes);
    renderPage(res, 'webhookEdit', {
      title: `Edit ${endpoint.name}`, endpoint, eventTypes: subscribableEventTypes, shops: shops.map((s) => ({ code: s.code, name: s.name })),
      allShopsAllowed: person.shopCodes === null, error,
    }, status);
  };

  router.get('/webhooks/:id/edit', ...manage, async (req, res) => editPage(res, await endpointOf(db, currentPerson(res), String(req.params.id))));

  router.post('/webhooks/:id/edit', ...manage, async (req, res) => {
    const id = String(req.params.id);
    const form = {
      name: field(req.body, 'name'), url: field(req.body, 'url').trim(),
      events: field(req.body, 'eventChoice') === 'all' ? 'all' as const : fields(req.body, 'events'),
      shops: field(req.body, 'shopChoice') === 'all' ? 'all' as const : fields(req.body, 'shops'),
    };
    try {
      await updateEndpointAsPerson(db, { allowLoopback: deps.application.allowLoopback, resolve: deps.application.resolve }, currentPerson(res), id, form);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return editPage(res, await endpointOf(db, currentPerson(res), id), error.message, error.status);
    }
    res.redirect(303, `/app/webhooks/${id}?done=edit`);
  });

  router.get('/webhooks/:id/delete', ...manage, async (req, res) => {
    const endpoint = await endpointOf(db, currentPerson(res), String(req.params.id));
    renderPage(res, 'webhookDelete', { title: `Delete ${endpoint.name}?`, endpoint });
  });

  router.post('/webhooks/:id/delete', ...manage, async (req, res) => {
    await endpointActionAsPerson(db, currentPerson(res), String(req.params.id), 'delete', now());
    res.redirect(303, '/app/webhooks');
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/retry', ...manage, async (req, res) => {
    await retryDeliveryAsPerson(db, currentPerson(res), String(req.params.id), String(req.params.deliveryId));
    res.redirect(303, `/app/webhooks/${req.params.id}?done=retry`);
  });
  return router;
}
