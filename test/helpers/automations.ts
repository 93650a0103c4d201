/** Automation helpers of the tests: rules written against the current catalogue, actors, and the contract tests' sample. */
import type { Db } from '../../src/db/knex.js';
import { CATALOG_VERSION } from '../../src/automations/catalog.js';
import { createDraft, publishAutomation, setAutomationEnabled, type Actor } from '../../src/automations/drafts.js';
import { matchOutboxBatch } from '../../src/automations/runs.js';
import type { Rule } from '../../src/automations/rule.js';
import { recordEvent } from '../../src/events/outbox.js';
import { findAccountByCode, findShopByCode } from '../../src/queries/shops.js';

/** A person of the account (the operator CLI / application), seeing every shop. */
export async function personActor(db: Db, account = 'demo'): Promise<Actor> {
  const found = await findAccountByCode(db, account);
  if (!found) throw new Error(`no account ${account}`);
  return { accountId: found.id, shopCodes: null, by: 'person:test' };
}

/** A valid rule: order.created in `sk`, total above 0, tag the order. */
export function sampleRule(overrides: Partial<Rule> = {}): Rule {
  return {
    catalogVersion: CATALOG_VERSION,
    name: 'Tag every order in sk',
    trigger: { id: 'created', event: 'order.created', markets: ['sk'] },
    conditions: { id: 'when', all: [{ id: 'positive', field: 'order.totalWithVat', op: 'gt', value: 0 }] },
    steps: [{ id: 'tag', action: 'add_tag', target: 'order', tag: 'seen' }],
    ...overrides,
  };
}

/** Records an outbox event about a real order of `shop` (as the sync would), returning its event id. */
export async function orderEvent(db: Db, type: 'order.created' | 'order.paid', options: { account?: string; shop?: string; orderCode?: string } = {}): Promise<{ eventId: string; orderCode: string }> {
  const account = (await findAccountByCode(db, options.account ?? 'demo'))!;
  const shop = (await findShopByCode(db, account.id, options.shop ?? 'sk'))!;
  const orderCode = options.orderCode ?? (await db('orders').where({ shop_id: shop.id }).orderBy('created_at', 'desc').first('code')).code;
  const { eventId } = await recordEvent(db, { accountId: account.id, shop: { id: shop.id, code: shop.code }, type, resource: { id: orderCode }, data: { order_code: orderCode }, occurredAt: new Date() });
  return { eventId, orderCode };
}

/**
 * The sample automation of the registry and REST/MCP contract tests (in their own database copy): published, with one
 * run made by the real matcher from an order event, then disabled so nothing acts on it. Returns its workflowId.
 */
export async function ensureSampleAutomation(db: Db): Promise<string> {
  const existing = await db('automations').where({ client_request_id: 'sample-automation' }).first('workflow_id');
  if (existing) return existing.workflow_id;
  const actor = await personActor(db);
  const draft = await createDraft(db, actor, { clientRequestId: 'sample-automation', rule: sampleRule() });
  await publishAutomation(db, actor, draft.workflow_id);
  await setAutomationEnabled(db, actor, draft.workflow_id, true);
  await orderEvent(db, 'order.created');
  await matchOutboxBatch(db);
  await setAutomationEnabled(db, actor, draft.workflow_id, false);
  return draft.workflow_id;
}
