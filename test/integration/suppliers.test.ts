/** Suppliers over the real HTTP server and a real Postgres: offers matched to the shop's catalogue, counts, contacts only with personal data, never bank or tax data. */
import { appTest } from '../helpers/app.js';
import { issueKey } from '../helpers/server.js';
import { get } from '../helpers/rest.js';
import { shopId } from '../helpers/shops.js';

const test = appTest({ scopes: ['purchasing:read'] });

test('When suppliers are listed, then each one\'s offer and matched-product counts equal those computed from its offers and the shop\'s catalogue', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(t.context.database.db, 'demo', 'sk');
  const res = await get(t, '/suppliers?market=sk');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.data.length, 6);
  const products = new Set((await db('products').where({ shop_id: sk }).select('code')).map((p) => p.code));
  for (const s of res.body.data) {
    const offers = await db('supplier_offers').where({ supplier_id: s.supplierId, shop_id: sk }).select('product_code');
    t.is(s.counts.offers, offers.length, s.code);
    t.is(s.counts.matchedProducts, new Set(offers.map((o) => o.product_code).filter((c) => products.has(c))).size, s.code);
    t.true(s.counts.unmatchedOffers > 0, `${s.code} has unmatched offers`);
    t.true(s.costComponents.length > 0);
    t.false('contact' in s, 'no contact without personal-data:read');
  }
  const asia = res.body.data.find((s: any) => s.code === 'ASIA-IMPORT');
  t.deepEqual(asia.costComponents.map((c: any) => c.kind), ['freight', 'duty', 'handling']);
  t.is(asia.costComponents[1].percent, '4.7');
});

test('When one supplier is read, then its offers point at the shop\'s real products, other shops\' offers are not included, and contacts need personal data', async (t) => {
  const db = t.context.database.db;
  const list = await get(t, '/suppliers?market=cz');
  const supplier = list.body.data[0];
  const res = await get(t, `/suppliers/${supplier.supplierId}?market=cz`);
  t.is(res.status, 200);
  t.is(res.body.data.offers.length, supplier.counts.offers);
  const cz = await shopId(t.context.database.db, 'demo', 'cz');
  for (const o of res.body.data.offers) {
    const product = await db('products').where({ shop_id: cz, code: o.productCode }).first('name');
    t.is(o.matched, product !== undefined, o.productCode);
    if (product) t.is(o.productName, product.name);
    t.true(o.productCode.startsWith(o.matched ? 'CZ-' : 'CZ-9'));
  }
  t.false('contact' in res.body.data);
  const personal = await issueKey(db, { scopes: ['purchasing:read', 'personal-data:read'] });
  const full = await get(t, `/suppliers/${supplier.supplierId}?market=cz`, personal);
  t.truthy(full.body.data.contact.email);
  const secrets = await db('suppliers').select('bank_iban', 'tax_id');
  for (const key of [t.context.key, personal]) {
    for (const path of ['/suppliers?market=cz', `/suppliers/${supplier.supplierId}?market=cz`]) {
      const text = JSON.stringify((await get(t, path, key)).body);
      for (const s of secrets) t.false(text.includes(s.bank_iban) || text.includes(s.tax_id), `${path}: bank or tax data leaked`);
      t.false(/iban|taxId/i.test(text));
    }
  }
  t.is((await get(t, '/suppliers/999999999?market=cz')).status, 404);
  const acme = await issueKey(db, { account: 'acme', scopes: ['purchasing:read'] });
  t.is((await get(t, `/suppliers/${supplier.supplierId}?market=cz`, acme)).status, 404, 'another tenant\'s supplier is not found');
  t.is((await get(t, '/suppliers?market=cz', await issueKey(db, { scopes: ['affiliate:read'] }))).status, 403);
});

test('When one supplier is read without purchase-prices:read, then its offers carry no price; with it every offer has one (SPEC scope-to-data rules)', async (t) => {
  const db = t.context.database.db;
  const supplier = (await get(t, '/suppliers?market=cz')).body.data[0];
  const without = await get(t, `/suppliers/${supplier.supplierId}?market=cz`);
  t.is(without.status, 200);
  t.true(without.body.data.offers.length > 0);
  for (const o of without.body.data.offers) t.false('price' in o, `${o.productCode}: a purchase price without purchase-prices:read`);
  const prices = await issueKey(db, { scopes: ['purchasing:read', 'purchase-prices:read'] });
  const withScope = await get(t, `/suppliers/${supplier.supplierId}?market=cz`, prices);
  t.is(withScope.status, 200);
  t.is(withScope.body.data.offers.length, without.body.data.offers.length);
  for (const o of withScope.body.data.offers) t.truthy(o.price, `${o.productCode}: no price with purchase-prices:read`);
});
