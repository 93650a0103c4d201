/** Sample values of the service-owned areas (affiliate programme, suppliers, chatbot) of shop `sk` of the demo account. */
import type { Db } from '../../src/db/knex.js';

export async function ownedDataSamples(db: Db, shopId: string): Promise<Record<string, string>> {
  const partner = await db('affiliate_partners as p').join('shops as s', 's.account_id', 'p.account_id')
    .where({ 's.id': shopId, 'p.state': 'approved' }).orderBy('p.partner_index').first('p.id');
  const campaign = await db('affiliate_campaigns').where({ shop_id: shopId, is_default: true }).first('id');
  const conversion = await db('affiliate_conversions').where({ shop_id: shopId }).orderBy('id').first('id');
  const supplier = await db('suppliers as s').join('shops as sh', 'sh.account_id', 's.account_id').where('sh.id', shopId).orderBy('s.code').first('s.id');
  return {
    partnerId: String(partner.id), campaignId: String(campaign.id), conversionId: String(conversion.id), target: 'home', supplierId: String(supplier.id),
  };
}
