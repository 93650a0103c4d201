/**
 * The demo accounts' suppliers (data the service owns): six suppliers with contacts and cost components, and per shop
 * their offers for the shop's real catalogue products (a few offers name codes the catalogue no longer has, so they stay
 * unmatched). Seeded at demo load on the shop's transaction from new random streams (`supplier-*`).
 */
import type { ShopDefinition } from '../catalogue.js';
import { createRandom } from '../random.js';
import type { SqlRunner } from '../../../affiliate/sql.js';

/** EUR per unit of each supplier currency (fixed demo rates, as the shops' own). */
const EUR_RATE: Record<string, number> = { EUR: 1, CZK: 0.0405, HUF: 0.00252, PLN: 0.232, USD: 0.92 };

interface DemoSupplier {
  code: string; name: string; country: string; currency: string; leadDays: number; contact: string; domain: string;
  costs: Array<{ kind: 'freight' | 'duty' | 'handling'; basis: 'per_order' | 'per_unit' | 'percent'; value: number; currency: string | null; note: string }>;
}

export const DEMO_SUPPLIERS: DemoSupplier[] = [
  { code: 'HOMEWARE-CZ', name: 'Homeware Distribuce s.r.o.', country: 'CZ', currency: 'CZK', leadDays: 5, contact: 'Jana Dvořáková', domain: 'homeware-distribuce.example',
    costs: [{ kind: 'freight', basis: 'per_order', value: 890, currency: 'CZK', note: 'Pallet delivery; free above 40,000 CZK.' }] },
  { code: 'KITCHENPRO-DE', name: 'KitchenPro GmbH', country: 'DE', currency: 'EUR', leadDays: 10, contact: 'Stefan Maier', domain: 'kitchenpro.example',
    costs: [{ kind: 'freight', basis: 'per_order', value: 65, currency: 'EUR', note: 'Parcel freight to SK/CZ.' }, { kind: 'handling', basis: 'per_unit', value: 0.4, currency: 'EUR', note: 'Repacking per unit.' }] },
  { code: 'TEXTIL-SK', name: 'Textil Trade s.r.o.', country: 'SK', currency: 'EUR', leadDays: 3, contact: 'Peter Hudák', domain: 'textiltrade.example',
    costs: [{ kind: 'freight', basis: 'per_order', value: 12, currency: 'EUR', note: 'Courier.' }] },
  { code: 'GARDEN-PL', name: 'Ogród Hurt sp. z o.o.', country: 'PL', currency: 'PLN', leadDays: 7, contact: 'Anna Kowalska', domain: 'ogrodhurt.example',
    costs: [{ kind: 'freight', basis: 'per_order', value: 240, currency: 'PLN', note: 'Pallet.' }, { kind: 'handling', basis: 'percent', value: 1.5, currency: null, note: 'Order handling fee on goods value.' }] },
  { code: 'DECOR-HU', name: 'Dekor Nagyker Kft.', country: 'HU', currency: 'HUF', leadDays: 6, contact: 'Nagy Eszter', domain: 'dekornagyker.example',
    costs: [{ kind: 'freight', basis: 'per_order', value: 24000, currency: 'HUF', note: 'Pallet.' }] },
  { code: 'ASIA-IMPORT', name: 'Asia Import Ltd.', country: 'CN', currency: 'USD', leadDays: 45, contact: 'Li Wei', domain: 'asia-import.example',
    costs: [
      { kind: 'freight', basis: 'per_order', value: 1450, currency: 'USD', note: 'Sea freight, one container share.' },
      { kind: 'duty', basis: 'percent', value: 4.7, currency: null, note: 'EU import duty on goods value.' },
      { kind: 'handling', basis: 'per_unit', value: 0.3, currency: 'USD', note: 'Customs clearance and labelling.' },
    ] },
];

/** The account's suppliers (once per account; concurrent shop loads insert the same rows once). */
async function ensureSuppliers(run: SqlRunner, accountId: string, accountCode: string, seed: number, createdMs: number): Promise<Map<string, { id: string; supplier: DemoSupplier }>> {
  const k = run.knex;
  const rows = DEMO_SUPPLIERS.map((s) => {
    const rng = createRandom(seed, 'supplier', accountCode, s.code);
    return {
      account_id: accountId, code: s.code, name: s.name, country: s.country, currency: s.currency, default_lead_time_days: s.leadDays,
      contact_name: s.contact, contact_email: `orders@${s.domain}`, contact_phone: `+${rng.digits(3)} ${rng.digits(3)} ${rng.digits(3)} ${rng.digits(3)}`,
      bank_iban: `${s.country === 'CN' ? 'DE' : s.country}${rng.digits(2)}${rng.digits(20)}`, tax_id: `${s.country}${rng.digits(10)}`,
      created_at: new Date(createdMs - rng.int(30, 400) * 86_400_000),
    };
  });
  const inserted = await run.rows<{ id: string; code: string }>(k('suppliers').insert(rows).onConflict(['account_id', 'code']).ignore().returning(['id', 'code']));
  const byCode = new Map(DEMO_SUPPLIERS.map((s) => [s.code, s]));
  for (const r of inserted) {
    const s = byCode.get(r.code)!;
    await run.rows(k('supplier_cost_components').insert(s.costs.map((c) => ({ supplier_id: r.id, kind: c.kind, basis: c.basis, value: c.value, currency: c.currency, note: c.note }))));
  }
  const all = await run.rows<{ id: string; code: string }>(k('suppliers').where({ account_id: accountId }).orderBy('code').select('id', 'code'));
  return new Map(all.filter((r) => byCode.has(r.code)).map((r) => [r.code, { id: String(r.id), supplier: byCode.get(r.code)! }]));
}

/** Offers of the suppliers for one shop's catalogue, from its products as loaded on this transaction. */
export async function seedDemoSuppliers(
  run: SqlRunner, input: { accountId: string; accountCode: string; seed: number; shopId: string; shop: ShopDefinition; shopSeed: number; historyEndMs: number },
): Promise<void> {
  const suppliers = await ensureSuppliers(run, input.accountId, input.accountCode, input.seed, input.historyEndMs);
  const products = await run.rows<{ code: string; purchase_price: string | null; price_with_vat: string }>(run.knex('products')
    .where({ shop_id: input.shopId }).orderBy('code').select('code', 'purchase_price', 'price_with_vat'));
  const list = [...suppliers.values()];
  const shopRate = EUR_RATE[input.shop.currency];
  const offers: Record<string, unknown>[] = [];
  const updated = new Date(input.historyEndMs - 5 * 86_400_000);
  const offer = (rng: ReturnType<typeof createRandom>, s: { id: string; supplier: DemoSupplier }, productCode: string, costInShop: number) => {
    const price = (costInShop * shopRate) / EUR_RATE[s.supplier.currency] * rng.float(0.85, 1.0);
    offers.push({
      supplier_id: s.id, shop_id: input.shopId, product_code: productCode, supplier_code: `${s.supplier.code.slice(0, 3)}-${rng.digits(6)}`,
      price: price.toFixed(2), currency: s.supplier.currency, min_quantity: rng.pick([1, 5, 10, 12, 24, 50]),
      lead_time_days: Math.max(1, s.supplier.leadDays + rng.int(-2, 4)), updated_at: updated,
    });
  };
  for (const p of products) {
    const rng = createRandom(input.shopSeed, 'supplier-offer', input.shop.code, p.code);
    const cost = p.purchase_price !== null ? Number(p.purchase_price) : Number(p.price_with_vat) * 0.45;
    if (!rng.chance(0.85)) continue;
    const first = rng.pick(list);
    offer(rng, first, p.code, cost);
    if (rng.chance(0.3)) {
      const second = rng.pick(list.filter((s) => s !== first));
      offer(rng, second, p.code, cost);
    }
  }
  // A few offers for goods the catalogue no longer has: they stay unmatched.
  for (const s of list) {
    const rng = createRandom(input.shopSeed, 'supplier-unmatched', input.shop.code, s.supplier.code);
    for (let i = 0; i < 2; i++) offer(rng, s, `${input.shop.code.toUpperCase()}-9${rng.digits(4)}`, rng.int(200, 4000) / 100 / shopRate);
  }
  for (let i = 0; i < offers.length; i += 2000) {
    await run.rows(run.knex('supplier_offers').insert(offers.slice(i, i + 2000)).onConflict(['supplier_id', 'shop_id', 'product_code']).ignore());
  }
}
