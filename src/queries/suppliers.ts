/**
 * Reads of suppliers, their offers matched to one shop's catalogue, and cost components. Supplier bank and tax columns
 * are never selected; contacts are selected and removed by the projection without `personal-data:read`.
 */
import type { Db } from '../db/knex.js';
import { money, type Money } from '../money.js';

const supplierColumns = ['s.id', 's.code', 's.name', 's.country', 's.currency', 's.default_lead_time_days', 's.contact_name', 's.contact_email', 's.contact_phone', 's.created_at'];

interface SupplierRow {
  id: string; code: string; name: string; country: string; currency: string; default_lead_time_days: number;
  contact_name: string | null; contact_email: string | null; contact_phone: string | null; created_at: Date;
}

export interface CostComponent {
  kind: 'freight' | 'duty' | 'handling';
  basis: 'per_order' | 'per_unit' | 'percent';
  amount: Money | null;
  percent: string | null;
  note: string | null;
}

async function costComponents(db: Db, supplierIds: string[]): Promise<Map<string, CostComponent[]>> {
  const rows = await db('supplier_cost_components').whereIn('supplier_id', supplierIds).orderBy(['supplier_id', 'id'])
    .select('supplier_id', 'kind', 'basis', 'value', 'currency', 'note');
  const out = new Map<string, CostComponent[]>();
  for (const r of rows) {
    const component: CostComponent = {
      kind: r.kind, basis: r.basis,
      amount: r.basis === 'percent' ? null : money(Number(r.value).toFixed(2), r.currency),
      percent: r.basis === 'percent' ? Number(r.value).toString() : null,
      note: r.note,
    };
    out.set(String(r.supplier_id), [...(out.get(String(r.supplier_id)) ?? []), component]);
  }
  return out;
}

function toSupplier(r: SupplierRow) {
  return {
    supplierId: String(r.id), code: r.code, name: r.name, country: r.country.trim(), currency: r.currency.trim(),
    defaultLeadTimeDays: r.default_lead_time_days,
    contact: { name: r.contact_name, email: r.contact_email, phone: r.contact_phone },
    createdAt: r.created_at.toISOString(),
  };
}

/** Every supplier of the account with counts of its offers and matched products in one shop, and its cost components. */
export async function listSuppliers(db: Db, accountId: string, shopId: string) {
  const rows: Array<SupplierRow & { offers: number; matched: number }> = await db('suppliers as s')
    .select(supplierColumns)
    .select(db.raw(`(select count(*)::int from supplier_offers o where o.supplier_id = s.id and o.shop_id = ?) as offers`, [shopId]))
    .select(db.raw(`(select count(distinct o.product_code)::int from supplier_offers o join products p on p.shop_id = o.shop_id and p.code = o.product_code
      where o.supplier_id = s.id and o.shop_id = ?) as matched`, [shopId]))
    .where('s.account_id', accountId).orderBy('s.code');
  const costs = await costComponents(db, rows.map((r) => String(r.id)));
  return rows.map((r) => ({
    ...toSupplier(r),
    counts: { offers: r.offers, matchedProducts: r.matched, unmatchedOffers: r.offers - r.matched },
    costComponents: costs.get(String(r.id)) ?? [],
  }));
}

/** One supplier of the account with its offers in one shop (matched to the catalogue where the product exists), or null. */
export async function getSupplier(db: Db, accountId: string, shopId: string, supplierId: string) {
  const row: SupplierRow | undefined = await db('suppliers as s').select(supplierColumns).where({ 's.account_id': accountId, 's.id': supplierId }).first();
  if (!row) return null;
  const offers = await db('supplier_offers as o')
    .leftJoin('products as p', function joinProduct() { this.on('p.shop_id', '=', 'o.shop_id').andOn('p.code', '=', 'o.product_code'); })
    .where({ 'o.supplier_id': supplierId, 'o.shop_id': shopId }).orderBy('o.product_code')
    .select('o.product_code', 'p.name as product_name', 'o.supplier_code', 'o.price', 'o.currency', 'o.min_quantity', 'o.lead_time_days', 'o.updated_at');
  const costs = await costComponents(db, [supplierId]);
  const matched = offers.filter((o) => o.product_name !== null).length;
  return {
    ...toSupplier(row),
    counts: { offers: offers.length, matchedProducts: matched, unmatchedOffers: offers.length - matched },
    costComponents: costs.get(supplierId) ?? [],
    offers: offers.map((o) => ({
      productCode: o.product_code, matched: o.product_name !== null, productName: o.product_name, supplierCode: o.supplier_code,
      price: money(o.price, o.currency), minQuantity: o.min_quantity, leadTimeDays: o.lead_time_days, updatedAt: o.updated_at.toISOString(),
    })),
  };
}
