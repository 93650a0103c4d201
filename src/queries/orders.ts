/** Reads of stored orders and their items, always within one shop. */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { money } from '../money.js';
import { preparedRows } from '../db/prepared.js';
import { iso, toPage } from './keyset.js';

const orderColumns = [
  'id', 'code', 'created_at', 'updated_at', 'status_id', 'status_name', 'paid', 'paid_at', 'currency',
  'total_with_vat', 'total_without_vat', 'total_vat', 'shipping_with_vat', 'payment_method', 'shipping_method',
  'variable_symbol', 'customer_email_hash', 'customer_first_name', 'customer_last_name', 'customer_company',
  'customer_email', 'customer_phone', 'customer_street', 'customer_city', 'customer_zip', 'customer_country', 'coupon_code', 'discount_with_vat',
];

type OrderRow = Record<string, any> & { id: string; created_at: Date };
type ItemRow = Record<string, any> & { order_id: string };

function toOrder(row: OrderRow, items: ItemRow[]) {
  const currency = row.currency.trim();
  return {
    code: row.code,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    status: { id: row.status_id, name: row.status_name },
    paid: row.paid,
    paidAt: iso(row.paid_at),
    currency,
    totalWithVat: money(row.total_with_vat, currency),
    totalWithoutVat: money(row.total_without_vat, currency),
    totalVat: money(row.total_vat, currency),
    shippingWithVat: money(row.shipping_with_vat, currency),
    couponCode: row.coupon_code,
    discountWithVat: money(row.discount_with_vat, currency),
    paymentMethod: row.payment_method,
    shippingMethod: row.shipping_method,
    variableSymbol: row.variable_symbol,
    customerEmailHash: row.customer_email_hash.trim(),
    customer: {
      firstName: row.customer_first_name,
      lastName: row.customer_last_name,
      company: row.customer_company,
      email: row.customer_email,
      phone: row.customer_phone,
      street: row.customer_street,
      zip: row.customer_zip,
      city: row.customer_city,
      country: row.customer_country?.trim() ?? null,
    },
    items: items.map((item) => ({
      lineNo: item.line_no,
      kind: item.kind,
      productCode: item.product_code,
      couponCode: item.coupon_code,
      name: item.name,
      quantity: item.quantity,
      unitPriceWithVat: money(item.unit_price_with_vat, currency),
      unitPriceWithoutVat: money(item.unit_price_without_vat, currency),
      vatRate: item.vat_rate,
      purchasePriceWithoutVat: item.purchase_price_without_vat === null ? null : money(item.purchase_price_without_vat, currency),
    })),
  };
}

export type Order = ReturnType<typeof toOrder>;

async function itemsByOrder(db: Db, orderIds: string[]): Promise<Map<string, ItemRow[]>> {
  const byOrder = new Map<string, ItemRow[]>();
  if (orderIds.length === 0) return byOrder;
  const rows: ItemRow[] = await db('order_items').whereIn('order_id', orderIds).orderBy(['order_id', 'line_no']);
  for (const row of rows) {
    const list = byOrder.get(row.order_id) ?? [];
    list.push(row);
    byOrder.set(row.order_id, list);
  }
  return byOrder;
}

/**
 * A page's items come in the same statement as its orders (one round trip, not two), as a JSON array per order; the
 * decimals are cast to text so they arrive as the same exact strings a row of order_items gives.
 */
const ITEMS_JSON = `coalesce((select json_agg(json_build_object('line_no', i.line_no, 'kind', i.kind, 'product_code', i.product_code,
  'coupon_code', i.coupon_code, 'name', i.name, 'quantity', i.quantity::text, 'unit_price_with_vat', i.unit_price_with_vat::text,
  'unit_price_without_vat', i.unit_price_without_vat::text, 'vat_rate', i.vat_rate::text,
  'purchase_price_without_vat', i.purchase_price_without_vat::text) order by i.line_no)
  from order_items i where i.order_id = o.id), '[]'::json) as items_json`;

/**
 * The orders page as four prepared statements (with or without a period, first page or after a position): each keeps
 * its own plan, so the keyset condition is a plain index bound and never an `$n is null or …` a generic plan would scan.
 */
function ordersPageSql(period: boolean, after: boolean): { name: string; text: string } {
  const where = ['o.shop_id = $1'];
  let n = 2;
  if (period) {
    where.push(`o.created_at >= ($${n}::date)::timestamp at time zone $${n + 2}::text`, `o.created_at < (($${n + 1}::date) + 1)::timestamp at time zone $${n + 2}::text`);
    n += 3;
  }
  if (after) {
    where.push(`(o.created_at, o.id) < ($${n}::timestamptz, $${n + 1}::bigint)`);
    n += 2;
  }
  return {
    name: `orders_page_v2_${period ? 'p' : 'a'}${after ? 'k' : 'f'}`,
    text: `select ${orderColumns.map((c) => `o.${c}`).join(', ')}, ${ITEMS_JSON} from orders o where ${where.join(' and ')} order by o.created_at desc, o.id desc limit $${n}::int`,
  };
}

const ORDERS_PAGE_SQL = new Map([false, true].flatMap((p) => [false, true].map((a) => [`${p}${a}`, ordersPageSql(p, a)] as const)));

/** A page of a shop's orders, newest first, optionally within a period, with their items: one prepared statement. */
export async function listOrders(db: Db, shopId: string, period: Period | null, page: PageRequest) {
  const { name, text } = ORDERS_PAGE_SQL.get(`${period !== null}${page.after !== null}`)!;
  const values: unknown[] = [shopId];
  if (period) values.push(period.from, period.to, period.timeZone);
  if (page.after) values.push(page.after.key, page.after.id);
  values.push(page.limit + 1);
  const rows = await preparedRows<OrderRow & { items_json: ItemRow[] }>(db, name, text, values);
  const result = toPage(rows, page, (r) => r.created_at, (r) => r);
  return { items: result.rows.map((r) => toOrder(r, r.items_json)), hasMore: result.hasMore, last: result.last };
}

/** One order of a shop by its code, or null (an order of another shop is not found). */
export async function getOrder(db: Db, shopId: string, code: string): Promise<Order | null> {
  const row: OrderRow | undefined = await db('orders').select(orderColumns).where({ shop_id: shopId, code }).first();
  if (!row) return null;
  const items = await itemsByOrder(db, [row.id]);
  return toOrder(row, items.get(row.id) ?? []);
}
