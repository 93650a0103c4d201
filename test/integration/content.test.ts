/**
 * Catalogue content over the real HTTP server and Postgres: the availability dictionary with `manageable`/`reason`
 * per shop, product and category texts with hashes recomputed here, the content policy, articles, and a text changed
 * in the demo shop reaching the API through the sync.
 */
import crypto from 'node:crypto';
import { createAccessKey } from '../../src/auth/keys.js';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import { articlesPublished, productTextsChanged } from '../../src/platforms/demo/content.js';
import { searchProductsSql } from '../../src/queries/catalogue.js';
import { findAccountByCode } from '../../src/queries/shops.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { appTest } from '../helpers/app.js';
import { TEST_NOW } from '../helpers/constants.js';
import { issueKey } from '../helpers/server.js';
import { get, assertError } from '../helpers/rest.js';
import { shopId } from '../helpers/shops.js';

const test = appTest({ scopes: ['products:read', 'product-content:read', 'category-content:read'] });
const DAY = 86_400_000;

const sha256 = (text: string) => crypto.createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

/** The fingerprint as the README defines it, computed here from the values. */
function expectedFingerprint(fields: Record<string, { value: string | null }>, order: string[]): string {
  return sha256(order.map((f) => `${f}:${sha256(fields[f].value ?? '')}`).join('\n'));
}

test('When the dictionary is read in each demo shop, then the four shops show both answers and all three reasons', async (t) => {
  const expected: Record<string, [boolean, string | null, string]> = {
    sk: [true, null, 'Skladom'], cz: [false, 'BEZ_ROZSIRENIA', 'Skladem'], hu: [false, 'PLATFORMA', 'Raktáron'], pl: [false, 'PROSTREDIE', 'Dostępny'],
  };
  for (const [market, [manageable, reason, first]] of Object.entries(expected)) {
    const res = await get(t, `/availabilities?market=${market}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    t.like(res.body.meta, { market, manageable, reason, count: 5, hasMore: false });
    t.is(res.body.data[0].name, first);
    t.deepEqual(new Set(res.body.data.map((a: any) => a.meaning)), new Set(['in_stock', 'backorder', 'preorder', 'out_of_stock']));
    t.true(res.body.data.every((a: any) => /^#[0-9a-f]{6}$/.test(a.color) && Array.isArray(a.defaultRoles)));
  }
  const noScope = await issueKey(t.context.database.db, { scopes: ['product-content:read'] });
  assertError(t, await get(t, '/availabilities?market=sk', noScope), 403, 'INSUFFICIENT_SCOPE');
});

test('When product and category texts are read, then every hash and the fingerprint match a computation here, and writability follows the platform', async (t) => {
  const db = t.context.database.db;
  const order = ['description', 'shortDescription', 'metaTitle', 'metaDescription'];
  for (const market of ['sk', 'hu']) {
    const products = await db('products').where({ shop_id: await shopId(t.context.database.db, 'demo', market) }).orderBy('code').limit(40)
      .select('code', 'description', 'short_description', 'meta_title', 'meta_description');
    let sawMissing = false;
    for (const p of products) {
      const res = await get(t, `/products/${encodeURIComponent(p.code)}/content?market=${market}`);
      t.is(res.status, 200, JSON.stringify(res.body));
      const { fields, fingerprint } = res.body.data;
      const raw: Record<string, string | null> = { description: p.description, shortDescription: p.short_description, metaTitle: p.meta_title, metaDescription: p.meta_description };
      for (const f of order) {
        t.is(fields[f].value, raw[f]);
        t.is(fields[f].hash, sha256(raw[f] ?? ''));
        if (raw[f] === null) {
          sawMissing = true;
          t.is(fields[f].hash, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
        }
      }
      t.is(fingerprint, expectedFingerprint(fields, order));
      t.deepEqual(order.filter((f) => fields[f].writable), market === 'sk' ? order : ['metaTitle', 'metaDescription']);
    }
    t.true(sawMissing, 'some products lack a text');
  }
  const category = await db('categories').where({ shop_id: await shopId(t.context.database.db, 'demo', 'cz') }).first('guid', 'description', 'description_bottom');
  const res = await get(t, `/categories/${category.guid}/content?market=cz`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const corder = ['description', 'descriptionBottom', 'metaTitle', 'metaDescription'];
  t.is(res.body.data.fields.description.hash, sha256(category.description ?? ''));
  t.is(res.body.data.fields.descriptionBottom.hash, sha256(category.description_bottom ?? ''));
  t.is(res.body.data.fingerprint, expectedFingerprint(res.body.data.fields, corder));
  t.deepEqual(corder.filter((f) => res.body.data.fields[f].writable), ['description']);

  assertError(t, await get(t, '/products/NOPE-1/content?market=sk'), 404, 'NOT_FOUND');
  assertError(t, await get(t, `/categories/${category.guid}/content?market=sk`), 404, 'NOT_FOUND');
  const productOnly = await issueKey(db, { scopes: ['product-content:read'] });
  assertError(t, await get(t, `/categories/${category.guid}/content?market=cz`, productOnly), 403, 'INSUFFICIENT_SCOPE');
  const czOnly = await issueKey(db, { scopes: ['product-content:read'], shops: ['cz'] });
  assertError(t, await get(t, '/products/X/content?market=sk', czOnly), 403, 'SHOP_FORBIDDEN');
});

test('When the content policy is read, then it follows the key\'s write mode and scopes and the shop\'s platform, without calling the shop', async (t) => {
  const db = t.context.database.db;
  const proposals = await get(t, '/product-content/policy?market=hu');
  t.is(proposals.status, 200, JSON.stringify(proposals.body));
  t.like(proposals.body.data, {
    writeMode: 'proposals', approvalMode: 'person', autonomousWriting: false,
    read: { products: true, categories: true }, propose: { products: true, categories: false, availabilities: false },
    writableFields: { product: ['metaTitle', 'metaDescription'], category: [] }, availabilities: { manageable: false, reason: 'PLATFORMA' },
  });
  const account = (await findAccountByCode(db, 'demo'))!;
  const { key: readOnlyKey } = await createAccessKey(db, {
    accountId: account.id, name: 'ro', scopes: ['product-content:read'], interfaces: ['rest'], shopCodes: null, expiresAt: null, createdBy: 'test', writeMode: 'read_only',
  });
  const ro = await get(t, '/product-content/policy?market=sk', readOnlyKey);
  t.like(ro.body.data, { writeMode: 'read_only', approvalMode: 'none', propose: { products: false, categories: false, availabilities: false }, read: { categories: false } });
  const { key: autoKey } = await createAccessKey(db, {
    accountId: account.id, name: 'auto', scopes: ['product-content:read', 'availabilities:draft'], interfaces: ['rest'], shopCodes: null, expiresAt: null, createdBy: 'test', writeMode: 'autonomous',
  });
  const auto = await get(t, '/product-content/policy?market=sk', autoKey);
  t.like(auto.body.data, { writeMode: 'autonomous', approvalMode: 'policy', autonomousWriting: true, propose: { products: true, availabilities: true }, availabilities: { manageable: true, reason: null } });
});

test('When articles are searched, then title matches come first, at most limit, with address and preview image; pages can be asked apart', async (t) => {
  const all = await get(t, '/content/articles?market=sk&limit=100');
  t.is(all.status, 200, JSON.stringify(all.body));
  t.true(all.body.data.length > 20);
  t.true(all.body.data.every((a: any) => a.url.startsWith('https://www.domov-kuchyna.sk/')));
  t.true(all.body.data.some((a: any) => a.previewImageUrl !== null));
  const pages = await get(t, '/content/articles?market=sk&kind=page');
  t.deepEqual(pages.body.data.map((a: any) => a.kind), ['page', 'page', 'page']);
  const found = await get(t, `/content/articles?market=sk&query=${encodeURIComponent('pečenie')}&limit=3`);
  t.true(found.body.data.length > 0 && found.body.data.length <= 3);
  t.true(found.body.data.every((a: any) => `${a.title} ${a.text}`.toLowerCase().includes('pečenie')));
  t.true(found.body.data[0].title.toLowerCase().includes('pečenie'));
  const inText = await get(t, '/content/articles?market=pl&query=inspiracj');
  t.true(inText.body.data.length > 0);
  t.is((await get(t, '/content/articles?market=sk&query=zzzqqq')).body.data.length, 0);
  assertError(t, await get(t, '/content/articles?market=sk&limit=101'), 400, 'LIMIT_OUT_OF_RANGE');
  assertError(t, await get(t, '/content/articles?market=sk&cursor=x'), 400, 'UNKNOWN_PARAMETER');
  assertError(t, await get(t, '/content/articles?market=sk&kind=news'), 400, 'INVALID_PARAMETER');
});

test.serial('When a product text changes in the demo shop after the load, then the next sync brings it with a new hash, and a re-sync writes nothing', async (t) => {
  const db = t.context.database.db;
  const platform = new DemoPlatform({ db });
  const shop = (await findSyncShop(db, 'demo', 'cz'))!;
  const model = platform.model(shop);
  const until = new Date(TEST_NOW.getTime() + 30 * DAY);
  const changed = productTextsChanged(model.settings.seed, model.definition, model.timeline.model, TEST_NOW.getTime(), until.getTime());
  t.true(changed.length > 0, 'the shop revises some texts within a month');
  const target = changed[0];
  const before = (await get(t, `/products/${encodeURIComponent(target.code)}/content?market=cz`)).body.data;
  const published = articlesPublished(model.settings.seed, model.definition, model.timeline.model, TEST_NOW.getTime(), until.getTime());
  t.true(published.length > 0);

  const first = await syncArea(db, platform, shop, 'catalogue', until, { batchSize: 100 });
  t.true(first.written >= changed.length + published.length, `written ${first.written}`);
  t.is(first.events, 0, 'changes in the shop\'s own panel are not content-change events');
  const after = (await get(t, `/products/${encodeURIComponent(target.code)}/content?market=cz`)).body.data;
  t.is(after.fields.description.value, target.texts.description);
  t.is(after.fields.description.hash, sha256(target.texts.description ?? ''));
  t.not(after.fingerprint, before.fingerprint);
  t.is(after.updatedAt, target.updatedAt.toISOString());
  const article = (await get(t, `/content/articles?market=cz&query=${encodeURIComponent(published[0].title)}`)).body.data;
  t.true(article.some((a: any) => a.id === published[0].id));

  await db('sync_checkpoints').where({ shop_id: shop.id, area: 'catalogue' }).update({ through: TEST_NOW });
  const again = await syncArea(db, platform, shop, 'catalogue', until, { batchSize: 100 });
  t.is(again.written, 0, 'unchanged content writes nothing');
});

test.serial('When products are searched on a table far bigger than a shop\'s, then the plan uses indexes, never a sequential scan of products', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(t.context.database.db, 'demo', 'sk');
  const cz = await shopId(t.context.database.db, 'demo', 'cz');
  await db.raw(`insert into products (shop_id, code, name, ean, plu, category_guid, currency, price_with_vat, vat_rate, created_at, updated_at)
    select ?, 'BULK-' || g, 'Hrnček ' || g, lpad(g::text, 13, '0'), null, null, 'CZK', 100, 21, now(), now() from generate_series(1, 60000) g`, [cz]);
  await db.raw('analyze products');
  for (const text of ['hrnc', 'SK-10001', '8580000000017']) {
    const { sql, bindings } = searchProductsSql(sk, text, 20);
    const plan = (await db.raw(`explain ${sql}`, bindings)).rows.map((r: any) => r['QUERY PLAN']).join('\n');
    t.false(/Seq Scan on products/.test(plan), `${text}:\n${plan}`);
  }
  const res = await get(t, '/products?market=cz&query=BULK-59999&limit=5');
  t.is(res.body.data[0].code, 'BULK-59999', 'exact code first');
});
