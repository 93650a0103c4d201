/** Dictionary values for automation fields (/automations/options): `value` for the rule language and a display name. */
import type { Db } from '../db/knex.js';
import { claimTypes, emailTemplates, shipmentStatuses, type DictionaryName } from './catalog.js';

export interface OptionValue {
  value: string | number;
  name: string;
}

/** Shops of the account the caller may see (null = all). */
function shopsQuery(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null) {
  const q = db('shops').where({ account_id: accountId });
  if (shopCodes) q.whereIn('code', [...shopCodes]);
  return q;
}

/** The values one dictionary accepts for this account, ordered by value; dictionaries from shop data come from Postgres. */
export async function dictionaryValues(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null, dictionary: DictionaryName): Promise<OptionValue[]> {
  const shopIds = () => shopsQuery(db, accountId, shopCodes).select('id');
  switch (dictionary) {
    case 'shops':
      return (await shopsQuery(db, accountId, shopCodes).select('code', 'name').orderBy('code')).map((r) => ({ value: r.code, name: r.name }));
    case 'currencies':
      return (await shopsQuery(db, accountId, shopCodes).distinct('currency').orderBy('currency')).map((r) => ({ value: String(r.currency).trim(), name: String(r.currency).trim() }));
    case 'order_statuses':
      return (await db('orders').whereIn('shop_id', shopIds()).distinct('status_id', 'status_name').orderBy('status_id')).map((r) => ({ value: r.status_id, name: r.status_name }));
    case 'payment_methods':
      return (await db('orders').whereIn('shop_id', shopIds()).distinct('payment_method').orderBy('payment_method')).map((r) => ({ value: r.payment_method, name: r.payment_method }));
    case 'shipping_methods':
      return (await db('orders').whereIn('shop_id', shopIds()).distinct('shipping_method').orderBy('shipping_method')).map((r) => ({ value: r.shipping_method, name: r.shipping_method }));
    case 'carriers': {
      const rows = await db('carriers').whereIn('shop_id', shopIds()).select('code', 'name').orderBy('code');
      return [...new Map(rows.map((r) => [r.code, { value: r.code as string, name: r.name as string }])).values()];
    }
    case 'shipment_statuses':
      return shipmentStatuses.map((s) => ({ ...s }));
    case 'claim_types':
      return claimTypes.map((c) => ({ ...c }));
    case 'claim_statuses':
      return (await db('claims').whereIn('shop_id', shopIds()).distinct('status_id', 'status_name').orderBy('status_id')).map((r) => ({ value: r.status_id, name: r.status_name }));
    case 'email_templates':
      return emailTemplates.map((t) => ({ value: t.value, name: t.name }));
    case 'webhook_endpoints':
      return (await db('webhook_endpoints').where({ account_id: accountId }).whereNull('deleted_at').select('id', 'name').orderBy('id')).map((r) => ({ value: String(r.id), name: r.name }));
  }
}
