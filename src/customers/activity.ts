/**
 * A directory customer's recent activity in one shop for the Customers screen: their latest orders, claims and
 * documents, found by the pseudonym (`customerKey` = the rows' `customer_email_hash`). Always within one shop id,
 * which the caller resolved within the person's account and shops. Amounts are shown only with `reports:read`.
 */
import type { Db } from '../db/knex.js';

export const ACTIVITY_LIMIT = 20;

export interface CustomerActivity {
  orders: Array<{ code: string; createdAt: string; status: string; total: string | null }>;
  claims: Array<{ code: string; orderCode: string | null; openedAt: string; status: string; type: string }>;
  documents: Array<{ type: string; code: string; issuedAt: string; total: string | null }>;
}

export async function customerActivity(db: Db, shopId: string, customerKey: string, withMoney: boolean): Promise<CustomerActivity> {
  const money = (amount: string, currency: string) => (withMoney ? `${amount} ${currency.trim()}` : null);
  const [orders, claims, documents] = await Promise.all([
    db('orders').select('code', 'created_at', 'status_name', 'total_with_vat', 'currency')
      .where({ shop_id: shopId, customer_email_hash: customerKey }).orderBy('created_at', 'desc').limit(ACTIVITY_LIMIT),
    db('claims').select('code', 'order_code', 'opened_at', 'status_name', 'type')
      .where({ shop_id: shopId, customer_email_hash: customerKey }).orderBy('opened_at', 'desc').limit(ACTIVITY_LIMIT),
    db('documents').select('type', 'code', 'issued_at', 'total_with_vat', 'currency')
      .where({ shop_id: shopId, customer_email_hash: customerKey }).orderBy('issued_at', 'desc').limit(ACTIVITY_LIMIT),
  ]);
  return {
    orders: orders.map((o) => ({ code: o.code, createdAt: o.created_at.toISOString(), status: o.status_name, total: money(o.total_with_vat, o.currency) })),
    claims: claims.map((c) => ({ code: c.code, orderCode: c.order_code, openedAt: c.opened_at.toISOString(), status: c.status_name, type: c.type })),
    documents: documents.map((d) => ({ type: d.type, code: d.code, issuedAt: d.issued_at.toISOString(), total: money(d.total_with_vat, d.currency) })),
  };
}
