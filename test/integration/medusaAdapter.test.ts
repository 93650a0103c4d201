/**
 * The Medusa adapter against the run's real Medusa 2.21.2 (issue 28): a shop seeded through Medusa's own Admin and
 * Store APIs is connected to the demo account (beside its demo shops), synced, and what REST and MCP answer is compared
 * field by field with what Medusa holds; a price change, a capture, a stock change and a new order each reach the
 * service and its outbox (the webhooks' source); the service's writes (a coupon, an approved text proposal) are visible
 * in Medusa; forwarded events arrive signed and start a sync, bad ones are refused; a Medusa that is down makes the
 * Temporal run retry while the shop's sync state says why. Serial: later tests change the seeded shop.
 */
import anyTest, { type TestFn } from 'ava';
import crypto from 'node:crypto';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { allScopes } from '../../src/auth/scopes.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { AppError } from '../../src/errors.js';
import { connectMedusaShop } from '../../src/platforms/medusa/connection.js';
import { ORDER_FIELDS, toOrder, type MedusaOrder as MedusaOrderRecord } from '../../src/platforms/medusa/records.js';
import { connectShop } from '../../src/setup/setup.js';
import type { PlatformRegistry } from '../../src/platforms/registry.js';
import type { ShopPlatformAdapter } from '../../src/platforms/types.js';
import { CheckpointMovedError, syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { decideProposal } from '../../src/temporal/proposals.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import {
  capturePayment, changeVariantPrice, forwardMedusaEventsTo, getOrder, medusaClient, medusaTestEnv, placeOrder, seededVariant,
  seedMedusaShop, setStockLevel, type MedusaClient, type MedusaTestEnv, type SeededMedusaShop,
} from '../helpers/medusa.js';
import { closedPort, type Receiver } from '../helpers/receiver.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { TEST_SECRETS, testParts } from '../helpers/service.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { waitUntil } from '../helpers/wait.js';

interface Context {
  database: TestDatabase;
  env: MedusaTestEnv;
  medusa: MedusaClient;
  seed: SeededMedusaShop;
  platforms: PlatformRegistry;
  adapter: ShopPlatformAdapter;
  server: TestServer;
  temporal: TemporalAccess;
  worker: InProcessWorker;
  key: string;
  mcp: ModernClient;
  stopForwarding: () => Promise<void>;
}
const test = anyTest as TestFn<Context>;

const SHOP = 'mdcz';
/** The shop's stated EUR rate for CZK (Medusa has none). */
const CZK_EUR = 0.04;

test.before(async (t) => {
  const database = await createTestDatabase();
  const { db } = database;
  const env = medusaTestEnv();
  const medusa = medusaClient(env);
  const seed = await seedMedusaShop(medusa, { key: 'adapter' });
  const platforms = testParts(db).platforms;
  // Connected as `shops connect --platform medusa --credential …` connects it: the port's test connection, shop_credentials.
  await connectShop(db, platforms, TEST_SECRETS.secretsKey, {
    accountCode: 'demo', platform: 'medusa', code: SHOP, name: 'Medusa Praha', currency: 'CZK', country: 'CZ', language: 'cs', timeZone: 'Europe/Prague',
    credentials: {
      url: env.url, apiKey: env.apiKey, salesChannelId: seed.salesChannelId, stockLocationIds: seed.stockLocationId, eurRates: `CZK=${CZK_EUR}`,
      forwardSecret: env.forwardSecret,
    },
  });
  const worker = await startInProcessWorker(db, { prefix: 'test-medusa' });
  const { taskQueue } = worker;
  const temporal: TemporalAccess = { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue };
  // A real clock: forwarded events are signed with the current time.
  const server = await startTestServer(db, () => new Date(), undefined, { platforms, temporal });
  const key = await issueKey(db, { scopes: allScopes });
  const mcp = await connectModern(server, key);
  t.context = {
    database, env, medusa, seed, platforms, adapter: platforms.get('medusa')!, server, temporal, worker, key, mcp,
    stopForwarding: async () => undefined,
  };
});

test.after.always(async (t) => {
  await t.context.stopForwarding?.();
  await t.context.mcp?.close();
  await t.context.server?.close();
  await t.context.temporal?.close();
  await t.context.worker?.stop();
  await t.context.database?.drop();
});

/** Syncs every area the adapter has, up to now, as the Temporal activity does. */
async function syncNow(t: { context: Context }) {
  const { db } = t.context.database;
  const shop = (await findSyncShop(db, 'demo', SHOP))!;
  const until = t.context.adapter.now(shop);
  const results = [];
  for (const area of t.context.adapter.capabilities.areas) {
    // A forwarded event's sync on the worker may hold the same checkpoint: retried, as Temporal retries the activity.
    for (let attempt = 1; ; attempt++) {
      try {
        results.push(await syncArea(db, t.context.adapter, shop, area, until, { batchSize: 50 }));
        break;
      } catch (error) {
        if (!(error instanceof CheckpointMovedError) || attempt === 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
  return results;
}

const rest = (t: { context: Context }, path: string) => api(t.context.server, path, t.context.key);
const money = (major: number) => major.toFixed(2);

async function outbox(t: { context: Context }) {
  const { db } = t.context.database;
  const shop = (await findSyncShop(db, 'demo', SHOP))!;
  return db('outbox_events').where({ shop_id: shop.id }).orderBy('id').select('event_type', 'resource_id', 'data');
}

test.serial('When the shop is connected with a wrong key or to an unreachable Medusa, then it is refused and nothing is saved', async (t) => {
  const { db } = t.context.database;
  const before = await db('shops').count<{ count: string }[]>('* as count');
  const base = {
    accountCode: 'demo', shopCode: 'mdbad', name: 'Bad', currency: 'EUR', country: 'DE', language: 'de', timeZone: 'Europe/Berlin',
  };
  const settings = { url: t.context.env.url, salesChannelId: t.context.seed.salesChannelId, stockLocationIds: [t.context.seed.stockLocationId] };
  const { platforms } = t.context;
  const refused = { instanceOf: AppError, code: 'PLATFORM_CONNECTION_REFUSED' } as const;
  const wrongKey = await t.throwsAsync(connectMedusaShop(db, platforms, TEST_SECRETS.secretsKey, { ...base, settings, apiKey: 'sk_wrong' }), refused);
  t.regex(wrongKey!.message, /refused the API key/);
  t.is((wrongKey as AppError).details?.reason, 'credentials_rejected');
  const down = await t.throwsAsync(connectMedusaShop(db, platforms, TEST_SECRETS.secretsKey, {
    ...base, settings: { ...settings, url: `http://127.0.0.1:${await closedPort()}` }, apiKey: t.context.env.apiKey,
  }), refused);
  t.regex(down!.message, /cannot be reached/);
  t.is((down as AppError).details?.reason, 'unreachable');
  const noChannel = await t.throwsAsync(connectMedusaShop(db, platforms, TEST_SECRETS.secretsKey, {
    ...base, settings: { ...settings, salesChannelId: 'sc_nosuch' }, apiKey: t.context.env.apiKey,
  }), refused);
  t.regex(noChannel!.message, /no sales channel sc_nosuch/);
  const badRates = await t.throwsAsync(connectShop(db, platforms, TEST_SECRETS.secretsKey, {
    accountCode: 'demo', platform: 'medusa', code: 'mdbad', currency: 'EUR', country: 'DE', timeZone: 'Europe/Berlin',
    credentials: { url: t.context.env.url, apiKey: t.context.env.apiKey, salesChannelId: t.context.seed.salesChannelId, stockLocationIds: t.context.seed.stockLocationId, eurRates: 'CZK=-1' },
  }), refused);
  t.regex(badRates!.message, /eurRates/);
  // A rate is a positive number: 0 is refused like -1 (the shop connected above with CZK=0.04 is the accepted side).
  const zeroRate = await t.throwsAsync(connectShop(db, platforms, TEST_SECRETS.secretsKey, {
    accountCode: 'demo', platform: 'medusa', code: 'mdzero', currency: 'EUR', country: 'DE', timeZone: 'Europe/Berlin',
    credentials: { url: t.context.env.url, apiKey: t.context.env.apiKey, salesChannelId: t.context.seed.salesChannelId, stockLocationIds: t.context.seed.stockLocationId, eurRates: 'CZK=0' },
  }), refused);
  t.regex(zeroRate!.message, /eurRates/);
  t.deepEqual(await db('shops').count<{ count: string }[]>('* as count'), before);
  // The key is stored encrypted: its text appears nowhere in the row.
  const row = await db('shop_credentials').where({ platform: 'medusa' }).first();
  t.false(Buffer.from(row.credentials_encrypted).toString('latin1').includes(t.context.env.apiKey));
});

test.serial('When the shop is synced, then REST orders equal Medusa\'s orders field by field', async (t) => {
  const results = await syncNow(t);
  t.true(results.some((r) => r.area === 'orders' && r.written === 3), JSON.stringify(results));
  const { seed, medusa } = t.context;
  for (const seeded of seed.orders) {
    const m = await getOrder(medusa, seeded.id);
    const res = await rest(t, `/orders/${m.display_id}?market=${SHOP}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    const o = res.body.data;
    t.is(o.code, String(m.display_id));
    t.is(o.currency, m.currency_code.toUpperCase());
    t.deepEqual(o.totalWithVat, { amount: money(m.total), currency: m.currency_code.toUpperCase() });
    t.is(o.paid, seeded.captured);
    t.is(o.paidAt, seeded.captured ? m.payment_collections![0].payments[0].captured_at : null);
    t.is(o.createdAt, new Date((m as any).created_at).toISOString());
    t.is(o.customer.email, m.email);
    t.is(o.customerEmailHash, crypto.createHash('sha256').update(m.email.trim().toLowerCase()).digest('hex'));
    t.deepEqual(
      o.items.map((i: any) => ({ code: i.productCode, quantity: Number(i.quantity), price: i.unitPriceWithVat.amount })).sort((a: any, b: any) => a.code.localeCompare(b.code)),
      m.items!.map((i) => ({ code: i.variant_sku, quantity: i.quantity, price: money(i.unit_price) })).sort((a, b) => a.code.localeCompare(b.code)),
    );
    // Status from Medusa's fulfilment state: the first order is shipped, the others are new (spec literal ids 3 and 1).
    t.deepEqual(o.status, seeded.fulfillmentId ? { id: 3, name: 'Shipped' } : { id: 1, name: 'New' });
  }
  // The seed's literal figures (MEDUSA_SEED): 2 × 249 + 159 + 120 shipping = 777 CZK; 12.5 + 5 = 17.5 EUR; 3 × 339 + 120 = 1137 CZK.
  const list = (await rest(t, `/orders?market=${SHOP}&limit=10`)).body.data;
  t.deepEqual(list.map((o: any) => o.totalWithVat.amount).sort(), ['1137.00', '17.50', '777.00']);
  // A backfill is history: nothing was announced.
  t.deepEqual(await outbox(t), []);
});

test.serial('When the shop is synced, then products, categories, stock, shipments and coupons equal what Medusa holds', async (t) => {
  const { seed, medusa } = t.context;
  for (const product of seed.products) {
    const { product: m } = await medusa.admin<{ product: any }>('GET', `/admin/products/${product.id}?fields=*variants,*variants.prices,*categories`);
    for (const v of m.variants) {
      const res = await rest(t, `/products/${encodeURIComponent(v.sku)}?market=${SHOP}`);
      t.is(res.status, 200, v.sku);
      const p = res.body.data;
      t.is(p.code, v.sku);
      t.is(p.name, v.title);
      t.is(p.priceWithVat.amount, money(v.prices.find((pr: any) => pr.currency_code === 'czk').amount));
      t.is(p.category?.guid, m.categories[0].id);
      t.is(p.category?.name, m.categories[0].name);
      t.true(p.active);
    }
  }
  // A second warehouse of the same Medusa that is not the shop's (no link to its sales channel) holds 7 mugs S: they
  // are not the shop's stock, before or after a sync.
  const { stock_location: other } = await medusa.admin<{ stock_location: { id: string } }>('POST', '/admin/stock-locations', { name: 'Other shop warehouse (G12)' });
  const mugItem = seededVariant(seed, 'MUG-BLUE-S').inventoryItemId;
  await medusa.admin('POST', `/admin/inventory-items/${mugItem}/location-levels`, { location_id: other.id, stocked_quantity: 7 });
  const { inventory_levels: otherLevels } = await medusa.admin<{ inventory_levels: any[] }>('GET', `/admin/inventory-items/${mugItem}/location-levels?location_id=${other.id}`);
  t.is(otherLevels[0].stocked_quantity, 7);
  await syncNow(t);
  // Stock per item at the shop's location: the seed stocks 40 mugs S and the first order reserved then shipped 2.
  for (const sku of ['MUG-BLUE-S', 'TEA-GREEN-250']) {
    const variant = seededVariant(seed, sku);
    const { inventory_levels: [level] } = await medusa.admin<{ inventory_levels: any[] }>('GET', `/admin/inventory-items/${variant.inventoryItemId}/location-levels?location_id=${seed.stockLocationId}`);
    const s = (await rest(t, `/inventory/stock?market=${SHOP}&code=${variant.sku}`)).body.data;
    t.like(s, { code: variant.sku, source: 'balance', physical: level.stocked_quantity.toFixed(3), reserved: level.reserved_quantity.toFixed(3), available: level.available_quantity.toFixed(3) });
  }
  const mug = (await rest(t, `/inventory/stock?market=${SHOP}&code=${seededVariant(seed, 'MUG-BLUE-S').sku}`)).body.data;
  t.is(mug.physical, '38.000', '40 stocked, 2 shipped in the first order');
  const tea250 = (await rest(t, `/inventory/stock?market=${SHOP}&code=${seededVariant(seed, 'TEA-GREEN-250').sku}`)).body.data;
  t.like(tea250, { physical: '30.000', reserved: '3.000', available: '27.000' }, 'the authorised order of 3 reserves them');
  // Medusa removes a level only when nothing is stocked there.
  await setStockLevel(medusa, mugItem, other.id, 0);
  await medusa.admin('DELETE', `/admin/inventory-items/${mugItem}/location-levels/${other.id}`);
  await medusa.admin('DELETE', `/admin/stock-locations/${other.id}`);

  const shipped = seed.orders[0];
  const order = (await rest(t, `/orders/${shipped.displayId}?market=${SHOP}`)).body.data;
  t.is(order.code, String(shipped.displayId));
  const { db } = t.context.database;
  const shipment = await db('shipments').where({ tracking_number: shipped.trackingNumber }).first();
  t.like(shipment, { order_code: String(shipped.displayId), carrier_code: 'manual_manual', status: 'HANDED_OVER', outcome: 'in_transit', country: 'CZ' });

  const capabilities = (await rest(t, `/coupons/capabilities?market=${SHOP}`));
  t.is(capabilities.status, 200);
  const availabilities = await rest(t, `/availabilities?market=${SHOP}`);
  t.is(availabilities.status, 200, JSON.stringify(availabilities.body));
  t.like(availabilities.body.meta, { manageable: false, reason: 'PLATFORMA' });
  t.deepEqual(availabilities.body.data, []);
});

test.serial('When a Medusa line\'s price is tax-exclusive, then the stored price with VAT adds the line\'s tax rate; a tax-inclusive price is the price with VAT as it is', async (t) => {
  const { seed, medusa } = t.context;
  // The seed's EUR order: one mug L at 12.50 EUR (MEDUSA_SEED); its line read from Medusa, then given a 20 % tax line.
  const { order } = await medusa.admin<{ order: MedusaOrderRecord }>('GET', `/admin/orders/${seed.orders[1].id}?fields=${ORDER_FIELDS}`);
  t.is(order.currency_code, 'eur');
  t.is(order.items!.length, 1);
  t.is(Number(order.items![0].unit_price), 12.5);
  const withLine = (inclusive: boolean): MedusaOrderRecord => ({ ...order, items: order.items!.map((i) => ({ ...i, is_tax_inclusive: inclusive, tax_lines: [{ rate: 20 }] })) });
  const exclusive = toOrder(withLine(false), {}).items[0];
  t.like(exclusive, { vatRate: 20, unitPriceWithVatMinor: 1500, unitPriceWithoutVatMinor: 1250 }, '12.50 + 20 % = 15.00 with VAT');
  const inclusive = toOrder(withLine(true), {}).items[0];
  t.like(inclusive, { vatRate: 20, unitPriceWithVatMinor: 1250, unitPriceWithoutVatMinor: 1042 }, '12.50 with VAT is 10.42 without (12.50 / 1.2 = 10.4166…)');
});

test.serial('When an MCP client lists the Medusa shop\'s orders, then it gets what REST gets', async (t) => {
  const result = await t.context.mcp.callTool({ name: 'orders_list', arguments: { market: SHOP, limit: 10 } });
  const data = (result as any).structuredContent.items;
  const viaRest = (await rest(t, `/orders?market=${SHOP}&limit=10`)).body.data;
  t.deepEqual(data, viaRest);
  t.is(viaRest.length, 3);
});

test.serial('When a price, a capture, a stock level and a new order change in Medusa, then each reaches the service and its outbox', async (t) => {
  const { seed, medusa } = t.context;
  const tea100 = seededVariant(seed, 'TEA-GREEN-100');
  await changeVariantPrice(medusa, tea100, 'czk', 179);
  const authorised = seed.orders[2];
  await capturePayment(medusa, authorised.id);
  const mugL = seededVariant(seed, 'MUG-BLUE-L');
  await setStockLevel(medusa, mugL.inventoryItemId, seed.stockLocationId, 99);
  const fresh = await placeOrder(medusa, seed, { customer: 1, currency: 'czk', lines: [{ variantId: tea100.id, quantity: 2 }] });
  await syncNow(t);

  t.is((await rest(t, `/products/${tea100.sku}?market=${SHOP}`)).body.data.priceWithVat.amount, '179.00');
  const paid = (await rest(t, `/orders/${authorised.displayId}?market=${SHOP}`)).body.data;
  t.true(paid.paid);
  t.like((await rest(t, `/inventory/stock?market=${SHOP}&code=${mugL.sku}`)).body.data, { physical: '99.000' });
  const created = (await rest(t, `/orders/${fresh.display_id}?market=${SHOP}`)).body.data;
  t.is(created.totalWithVat.amount, money(2 * 179 + 120));

  const events = await outbox(t);
  const of = (type: string) => events.filter((e) => e.event_type === type);
  t.deepEqual(of('order.paid').map((e) => e.data), [{ order_code: String(authorised.displayId) }]);
  t.true(of('order.created').some((e) => e.data.order_code === String(fresh.display_id)));
  // item_id is Medusa's inventory item, sku the variant's SKU: two values, not one twice.
  t.true(of('inventory.stock_changed').some((e) => e.data.item_id === mugL.inventoryItemId && e.data.sku === mugL.sku && e.data.kind === 'adjustment'), JSON.stringify(events));
  t.not(mugL.inventoryItemId, mugL.sku);
  // SPEC has no price event (a price change emits nothing); the new order's reservation moves the tea's stock too.
  t.false(events.some((e) => e.event_type.startsWith('product')));

  // A second sync of the same state announces nothing again.
  const count = events.length;
  await syncNow(t);
  t.is((await outbox(t)).length, count);
});

test.serial('When Medusa forwards a signed event, then the service stores it once and its sync brings the change; a bad signature or an unknown shop is refused', async (t) => {
  const { db } = t.context.database;
  const path = `/api/v1/platforms/medusa/events/demo/${SHOP}`;
  const receiver = { url: `${t.context.server.baseUrl}${path}` } as Receiver;
  t.context.stopForwarding = await forwardMedusaEventsTo(receiver, t.context.env);
  const before = await db('medusa_forwarded_events').count<{ count: string }[]>('* as count');

  // Refusals first: nothing is stored for them.
  const body = JSON.stringify({ version: 1, id: crypto.randomUUID(), event: 'order.placed', occurred_at: new Date().toISOString(), data: { id: 'order_x' } });
  const ts = String(Math.floor(Date.now() / 1000));
  const sign = (secret: string) => `v1=${crypto.createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
  const post = (to: string, signature: string) => fetch(`${t.context.server.baseUrl}${to}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Store-Ops-Timestamp': ts, 'X-Store-Ops-Signature': signature }, body,
  });
  const bad = await post(path, sign('not-the-secret'));
  t.is(bad.status, 401);
  t.is(((await bad.json()) as any).error.code, 'INVALID_CREDENTIALS');
  const unknown = await post('/api/v1/platforms/medusa/events/demo/nosuch', sign(t.context.env.forwardSecret));
  t.is(unknown.status, 404);
  t.is(((await unknown.json()) as any).error.code, 'SHOP_NOT_FOUND');
  t.deepEqual(await db('medusa_forwarded_events').count<{ count: string }[]>('* as count'), before);

  // A stock change in Medusa: the forwarder posts inventory-level.updated, the endpoint starts the shop's event sync.
  const mugS = seededVariant(t.context.seed, 'MUG-BLUE-S');
  await setStockLevel(t.context.medusa, mugS.inventoryItemId, t.context.seed.stockLocationId, 77);
  await waitUntil(async () => (await db('medusa_forwarded_events').where({ event: 'inventory-level.updated' }).first()) !== undefined, 60_000);
  await waitUntil(async () => (await rest(t, `/inventory/stock?market=${SHOP}&code=${mugS.sku}`)).body.data.physical === '77.000', 90_000);
  const replay = await post(path, sign(t.context.env.forwardSecret));
  t.is(replay.status, 202);
  t.deepEqual(await replay.json(), { received: true, duplicate: false });
  const again = await post(path, sign(t.context.env.forwardSecret));
  t.deepEqual(await again.json(), { received: true, duplicate: true });
});

test.serial('When a coupon is written and a text proposal approved, then Medusa holds them', async (t) => {
  const { db } = t.context.database;
  const shop = (await findSyncShop(db, 'demo', SHOP))!;
  await t.context.adapter.saveCoupon(shop, { code: 'ADAPTER15', discountPercent: 15, validUntil: new Date('2027-03-01T00:00:00Z'), usageLimit: 40, name: 'Spring' });
  const { promotions } = await t.context.medusa.admin<{ promotions: any[] }>('GET', '/admin/promotions?code=ADAPTER15&fields=*application_method,*campaign,+limit');
  t.is(promotions.length, 1);
  t.like(promotions[0], { code: 'ADAPTER15', status: 'active', is_automatic: false, limit: 40, application_method: { type: 'percentage', value: 15, target_type: 'order' } });
  t.is(promotions[0].campaign.ends_at, '2027-03-01T00:00:00.000Z');
  await syncNow(t);
  const coupon = (await rest(t, `/coupons/ADAPTER15?market=${SHOP}`));
  t.is(coupon.status, 200, JSON.stringify(coupon.body));

  const tea = seededVariant(t.context.seed, 'TEA-GREEN-250');
  const read = (await rest(t, `/products/${tea.sku}/content?market=${SHOP}`));
  t.is(read.status, 200, JSON.stringify(read.body));
  const content = read.body.data;
  const proposed = await t.context.mcp.callTool({ name: 'products_content_propose', arguments: {
    market: SHOP, products: [{ code: tea.sku, fingerprint: content.fingerprint, fields: { metaTitle: 'Sencha 250 g | Medusa Praha', description: 'Sencha ze Šizuoky.' } }],
  } });
  const draft = (proposed as any).structuredContent?.data;
  t.truthy(draft?.draftId, JSON.stringify(proposed));
  const outcome = await decideProposal(await t.context.temporal.client(), draft.draftId, { approve: true, by: 'person:1' });
  t.is(outcome.status, 'written');
  const product = t.context.seed.products.find((p) => p.variants.some((v) => v.sku === tea.sku))!;
  const { product: m } = await t.context.medusa.admin<{ product: any }>('GET', `/admin/products/${product.id}?fields=description,metadata`);
  t.is(m.description, 'Sencha ze Šizuoky.');
  t.is(m.metadata.meta_title, 'Sencha 250 g | Medusa Praha');
  t.is(m.metadata.origin, 'JP', 'the seed\'s own metadata stays');
});

test.serial('When an account has a demo shop and a Medusa shop, then the stores and the per-shop reports answer for both', async (t) => {
  const stores = (await rest(t, '/stores')).body.data;
  const platforms = new Map(stores.map((s: any) => [s.code, s.platform]));
  t.is(platforms.get(SHOP), 'medusa');
  t.is(platforms.get('sk'), 'demo');
  for (const market of [SHOP, 'sk']) {
    const summary = await rest(t, `/reports/financial-summary?market=${market}&from=2026-11-01&to=2026-11-30`);
    t.is(summary.status, 200, JSON.stringify(summary.body));
  }
  const medusaSummary = (await rest(t, `/reports/financial-summary?market=${SHOP}&from=2026-11-01&to=2026-11-30`)).body.data;
  t.truthy(medusaSummary);
  const jana = crypto.createHash('sha256').update(t.context.seed.customers[0].email).digest('hex');
  const customer = await rest(t, `/customers/${jana}?market=${SHOP}`);
  t.is(customer.status, 200, JSON.stringify(customer.body));
});

test.serial('When Medusa is down during a sync, then the Temporal run retries and the shop\'s sync state says why, until it is back', async (t) => {
  const { db } = t.context.database;
  const shop = (await findSyncShop(db, 'demo', SHOP))!;
  const settings = shop.settings as Record<string, unknown>;
  await db('shop_platform_settings').where({ shop_id: shop.id }).update({ settings: JSON.stringify({ ...settings, url: `http://127.0.0.1:${await closedPort()}` }) });
  const client = await t.context.temporal.client();
  const handle = await client.workflow.start('shopSyncWorkflow', {
    taskQueue: t.context.temporal.taskQueue!, workflowId: `medusa-down-${crypto.randomBytes(4).toString('hex')}`, args: [{ accountCode: 'demo', shopCode: SHOP }],
  });
  // Wait for this run's own error: an earlier sync of the shop may have left another one (a checkpoint race).
  await waitUntil(async () => /Medusa unreachable/.test((await db('shops').where({ id: shop.id }).first('sync_error')).sync_error ?? ''), 60_000);
  const store = (await rest(t, '/stores')).body.data.find((s: any) => s.code === SHOP);
  // The first area the run pulls names itself (catalogue or products, by where its checkpoint stands).
  t.regex(store.sync.error, /^[a-z_]+: Medusa unreachable: /);
  t.truthy(store.sync.failingSince);
  t.is((await handle.describe()).status.name, 'RUNNING', 'the run is retrying, not failed');

  await db('shop_platform_settings').where({ shop_id: shop.id }).update({ settings: JSON.stringify(settings) });
  await handle.result();
  const after = (await rest(t, '/stores')).body.data.find((s: any) => s.code === SHOP);
  t.is(after.sync.error, null);
  t.is(after.sync.failingSince, null);
});
