/**
 * Webhook endpoints as a person manages them in the application (SPEC "Webhook resources"): `webhooks:read` shows
 * endpoints and logs, `webhooks:manage` changes them. A person who sees only some shops sees the endpoints covering
 * one of them and changes only endpoints wholly inside their shops. The actions are those of src/webhooks/endpoints.ts.
 */
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { getWebhookEndpoint, listWebhookDeliveries, listWebhookEndpoints, type WebhookEndpointView } from '../queries/webhooks.js';
import type { KeysetPosition } from '../capabilities/cursor.js';
import {
  createEndpoint, deleteEndpoint, disableEndpoint, enableEndpoint, pingEndpoint, retryDelivery, rotateEndpointSecret, updateEndpoint, type EndpointDeps,
} from '../webhooks/endpoints.js';
import { hasPermission, type Person } from './model.js';

export function mayReadWebhooks(person: Person): boolean {
  return hasPermission(person, 'webhooks:read') || hasPermission(person, 'webhooks:manage');
}

export function mayManageWebhooks(person: Person): boolean {
  return hasPermission(person, 'webhooks:manage');
}

function assertRead(person: Person): void {
  if (!mayReadWebhooks(person)) throw new AppError('INSUFFICIENT_SCOPE', 'You need the webhooks:read or webhooks:manage permission.', { requiredPermission: 'webhooks:read' });
}

function assertManage(person: Person): void {
  if (!mayManageWebhooks(person)) throw new AppError('INSUFFICIENT_SCOPE', 'You need the webhooks:manage permission.', { requiredPermission: 'webhooks:manage' });
}

/** The endpoint if the person may change it: visible to them and, for a person with some shops, wholly inside them. */
async function manageable(db: Db, person: Person, id: string): Promise<void> {
  assertManage(person);
  if (!/^\d{1,18}$/.test(id)) throw new AppError('NOT_FOUND', 'No such endpoint.');
  const row = await db('webhook_endpoints').where({ account_id: person.accountId, id }).first('all_shops', 'shop_codes');
  if (!row || !(await getWebhookEndpoint(db, person.accountId, id, person.shopCodes))) throw new AppError('NOT_FOUND', 'No such endpoint.');
  const shops = person.shopCodes;
  if (shops && (row.all_shops || (row.shop_codes as string[]).some((c) => !shops.has(c)))) {
    throw new AppError('SHOP_FORBIDDEN', 'This endpoint also covers shops you may not see; a person who sees them changes it.');
  }
}

export async function endpointsOf(db: Db, person: Person): Promise<WebhookEndpointView[]> {
  assertRead(person);
  return listWebhookEndpoints(db, person.accountId, person.shopCodes);
}

export async function endpointOf(db: Db, person: Person, id: string): Promise<WebhookEndpointView> {
  assertRead(person);
  const found = /^\d{1,18}$/.test(id) ? await getWebhookEndpoint(db, person.accountId, id, person.shopCodes) : null;
  if (!found) throw new AppError('NOT_FOUND', 'No such endpoint.');
  return found;
}

export async function deliveriesOf(db: Db, person: Person, id: string, limit: number, after: KeysetPosition | null) {
  const endpoint = await endpointOf(db, person, id);
  return listWebhookDeliveries(db, endpoint.endpointId, person.shopCodes, undefined, { limit, after });
}

export async function createEndpointAsPerson(db: Db, deps: EndpointDeps, person: Person, input: { name: string; url: string; events: string[] | 'all'; shops: string[] | 'all' }) {
  assertManage(person);
  const shops = person.shopCodes;
  if (shops && (input.shops === 'all' || input.shops.some((c) => !shops.has(c)))) {
    throw new AppError('INVALID_PARAMETER', 'Pick only shops you may see.', { param: 'shops', reason: 'beyond_rights' });
  }
  return createEndpoint(db, deps, { accountId: person.accountId, ...input, createdBy: person.email });
}

export type EndpointAction = 'enable' | 'disable' | 'delete' | 'ping';

export async function endpointActionAsPerson(db: Db, person: Person, id: string, action: EndpointAction, now: Date) {
  await manageable(db, person, id);
  if (action === 'enable') return enableEndpoint(db, person.accountId, id);
  if (action === 'disable') return disableEndpoint(db, person.accountId, id);
  if (action === 'delete') return deleteEndpoint(db, person.accountId, id);
  return pingEndpoint(db, person.accountId, id, now);
}

export async function rotateSecretAsPerson(db: Db, deps: Pick<EndpointDeps, 'secretsKey'>, person: Person, id: string) {
  await manageable(db, person, id);
  return rotateEndpointSecret(db, deps, person.accountId, id);
}

export async function retryDeliveryAsPerson(db: Db, person: Person, endpointId: string, deliveryId: string) {
  await manageable(db, person, endpointId);
  if (!/^\d{1,18}$/.test(deliveryId)) throw new AppError('NOT_FOUND', 'No such delivery.');
  const belongs = await db('webhook_deliveries').where({ id: deliveryId, endpoint_id: endpointId }).first('id');
  if (!belongs) throw new AppError('NOT_FOUND', 'No such delivery.');
  return retryDelivery(db, person.accountId, deliveryId);
}

export async function updateEndpointAsPerson(db: Db, deps: Omit<EndpointDeps, 'secretsKey'>, person: Person, id: string, input: { name: string; url: string; events: string[] | 'all'; shops: string[] | 'all' }) {
  await manageable(db, person, id);
  const shops = person.shopCodes;
  if (shops && (input.shops === 'all' || input.shops.some((c) => !shops.has(c)))) {
    throw new AppError('INVALID_PARAMETER', 'Pick only shops you may see.', { param: 'shops', reason: 'beyond_rights' });
  }
  return updateEndpoint(db, deps, person.accountId, id, input);
}
