/** Sample arguments that make every capability answer with data, resolved from the test database. */
import { z } from 'zod';
import type { Capability } from '../../src/capabilities/types.js';
import type { Db } from '../../src/db/knex.js';
import { ensureSampleWebhook } from './webhooks.js';
import { ownedDataSamples } from './ownedDataSamples.js';
import { ensureSampleAutomation } from './automations.js';
import { ensureSampleProposals } from './proposals.js';

/** Values for path parameters (and required extras), looked up in shop `sk` of the demo account. */
export async function sampleValues(db: Db): Promise<Record<string, string>> {
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id');
  const order = await db('orders').where({ shop_id: shop.id }).orderBy('created_at', 'desc').first('code');
  const product = await db('products').where({ shop_id: shop.id }).orderBy('id').first('code');
  const shipment = await db('shipments').where({ shop_id: shop.id }).orderBy('created_at', 'desc').first('id');
  const endpointId = await ensureSampleWebhook(db);
  const category = await db('categories').where({ shop_id: shop.id }).orderBy('id').first('guid');
  const invoice = await db('documents').where({ shop_id: shop.id, type: 'invoice', pdf_available: true }).orderBy('issued_at', 'desc').first('code');
  const customer = await db('orders').where({ shop_id: shop.id }).orderBy('created_at', 'desc').first('customer_email_hash');
  // Issue 10: a refunded claim (it has a credit note, stock movements and a refund to show).
  const claim = await db('claims').where({ shop_id: shop.id, resolution: 'refund' }).orderBy('opened_at', 'desc').first('code');
  const workflowId = await ensureSampleAutomation(db);
  return {
    endpointId, market: 'sk', orderCode: order.code, code: product.code, shipmentId: String(shipment.id), from: '2026-10-01', to: '2026-10-31',
    // Documents and stock (issue 8)
    invoiceCode: invoice.code, documentType: 'invoice', 'documents.pdf:code': invoice.code,
    codes: `${product.code},NO-SUCH-ITEM`,
    // Customers and reports (issue 9)
    customerKey: customer.customer_email_hash.trim(),
    // Claims (issue 10)
    claimCode: claim.code,
    // Affiliate, chatbot, suppliers (issue 11)
    ...await ownedDataSamples(db, shop.id),
    // Automations (issue 14)
    workflowId,
    // Issue 10: the shop's welcome coupon (it always exists).
    couponCode: (await db('coupons').where({ shop_id: shop.id }).orderBy('created_at').first('code')).code,
    // Catalogue texts (issue 8)
    guid: category.guid,
    // Proposals (issue 13): one draft of each kind.
    ...await ensureSampleProposals(db),
  };
}

/** The required parameters of a capability filled from the samples; fails loudly when a sample is missing. */
export function sampleArgs(capability: Capability, values: Record<string, string>): Record<string, unknown> {
  const schema = z.toJSONSchema(capability.params, { io: 'input', unrepresentable: 'any' }) as { required?: string[] };
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    // `capability:param` overrides a shared name where the same name means another record (a document's `code`).
    const value = values[`${capability.name}:${name}`] ?? values[name];
    if (value === undefined) throw new Error(`No sample value for required parameter \`${name}\` of ${capability.name}: add one in test/helpers/samples.ts`);
    args[name] = value;
  }
  return args;
}
