/**
 * The Medusa test harness (issue 28): the run's real Medusa answers, `seedMedusaShop` built what it says (read back
 * through the Admin API, field by field), the event forwarder posts signed events, and the facts about Medusa 2.21 that
 * a sync depends on (which `updated_at` moves on a price change, a capture, a stock change, a fulfilment; which filters
 * the lists take) hold, so that a Medusa upgrade that changes one of them fails here first (docs/medusa.md).
 * Serial and in this order: the first tests read the seed back as built, the later ones change it.
 */
import anyTest, { type TestFn } from 'ava';
import {
  basicAuth, capturePayment, changeVariantPrice, forwardMedusaEventsTo, fulfilOrder, getOrder, MedusaApiError, medusaClient,
  medusaTestEnv, placeOrder, seededVariant, seedMedusaShop, setStockLevel,
  type MedusaClient, type MedusaInventoryLevel, type MedusaProduct, type MedusaTestEnv, type SeededMedusaShop,
} from '../helpers/medusa.js';
import { MEDUSA_FORWARDER_SIGNATURE_HEADERS, startReceiver, verifyWebhook, type Received, type Receiver } from '../helpers/receiver.js';

interface Context {
  env: MedusaTestEnv;
  client: MedusaClient;
  shop: SeededMedusaShop;
  receiver: Receiver;
  stopForwarding: () => Promise<void>;
  seededInMs: number;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const env = medusaTestEnv();
  const client = medusaClient(env);
  const receiver = await startReceiver({ secret: env.forwardSecret, signatureHeaders: MEDUSA_FORWARDER_SIGNATURE_HEADERS });
  const stopForwarding = await forwardMedusaEventsTo(receiver, env);
  const started = Date.now();
  const shop = await seedMedusaShop(client, { key: 'harness' });
  t.context = { env, client, shop, receiver, stopForwarding, seededInMs: Date.now() - started };
});

test.after.always(async (t) => {
  await t.context.stopForwarding?.();
  await t.context.receiver?.close();
});

/** Waits for the forwarded event `name` about `id` (in `data.id`, or `data[idField]`) and returns it. */
async function forwarded(t: { context: Context }, name: string, id: string, idField = 'id'): Promise<Received> {
  const matches = (r: Received) => r.body?.event === name && r.body?.data?.[idField] === id;
  await t.context.receiver.waitFor((requests) => requests.some(matches), 60_000);
  return t.context.receiver.requests.find(matches)!;
}

async function refusal(promise: Promise<unknown>): Promise<MedusaApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof MedusaApiError) return err;
    throw err;
  }
  throw new Error('Medusa accepted the call');
}

test.serial('When the run includes Medusa, then it answers with the secret key as Basic auth and refuses a wrong key or none', async (t) => {
  const { env, client } = t.context;
  t.log(`seedMedusaShop took ${t.context.seededInMs} ms`);
  const health = await fetch(`${env.url}/health`);
  t.is(health.status, 200);
  t.is(await health.text(), 'OK');
  const { stores } = await client.admin<{ stores: { id: string }[] }>('GET', '/admin/stores');
  t.is(stores.length, 1);

  // The key with its last character changed (to another one whatever it was).
  const wrong = `${env.apiKey.slice(0, -1)}${env.apiKey.endsWith('0') ? '1' : '0'}`;
  const wrongKey = await fetch(`${env.url}/admin/stores`, { headers: { Authorization: basicAuth(wrong) } });
  t.is(wrongKey.status, 401);
  const noKey = await fetch(`${env.url}/admin/stores`);
  t.is(noKey.status, 401);
  // A publishable key is not an admin credential.
  const publishableAsAdmin = await fetch(`${env.url}/admin/stores`, { headers: { Authorization: basicAuth(env.publishableKey) } });
  t.is(publishableAsAdmin.status, 401);

  const { regions } = await client.store<{ regions: unknown[] }>(env.publishableKey, 'GET', '/store/regions');
  t.true(regions.length >= 2);
  const withoutPublishable = await fetch(`${env.url}/store/regions`);
  t.is(withoutPublishable.status, 400);
});

test.serial('When the shop is seeded, then the Admin API returns its regions, channel, location, categories, products, variants, prices and customers as seeded', async (t) => {
  const { client, shop } = t.context;

  const regions = await Promise.all(Object.values(shop.regionIds).map(async (id) =>
    (await client.admin<{ region: { name: string; currency_code: string; countries: { iso_2: string }[]; payment_providers: { id: string }[] } }>(
      'GET', `/admin/regions/${id}?fields=*countries,*payment_providers`)).region));
  t.deepEqual(
    regions.map((r) => ({ name: r.name, currency: r.currency_code, countries: r.countries.map((c) => c.iso_2).sort(), providers: r.payment_providers.map((p) => p.id) })),
    [
      { name: 'store-ops Europe (EUR)', currency: 'eur', countries: ['at', 'de', 'sk'], providers: ['pp_system_default'] },
      { name: 'store-ops Czechia (CZK)', currency: 'czk', countries: ['cz'], providers: ['pp_system_default'] },
    ],
  );

  const { sales_channel: channel } = await client.admin('GET', `/admin/sales-channels/${shop.salesChannelId}`);
  t.is(channel.name, 'store-ops test shop (harness)');
  const { stock_location: location } = await client.admin('GET', `/admin/stock-locations/${shop.stockLocationId}?fields=*address,*sales_channels`);
  t.is(location.name, 'Prague warehouse (harness)');
  t.like(location.address, { address_1: 'Skladová 1', city: 'Praha', postal_code: '19000', country_code: 'cz' });
  t.deepEqual(location.sales_channels.map((c: { id: string }) => c.id), [shop.salesChannelId]);

  const { product_categories: categories } = await client.admin('GET', '/admin/product-categories?handle[]=harness-mugs&handle[]=harness-teas&order=handle&fields=id,name,handle,is_active');
  t.deepEqual(categories.map((c: any) => [c.id, c.name, c.handle, c.is_active]), [
    [shop.categoryIds.mugs, 'Mugs', 'harness-mugs', true],
    [shop.categoryIds.teas, 'Teas', 'harness-teas', true],
  ]);

  const { products, count } = await client.admin<{ products: MedusaProduct[]; count: number }>(
    'GET', `/admin/products?sales_channel_id[]=${shop.salesChannelId}&order=handle&fields=*variants,*variants.prices,*variants.options,*variants.options.option,*categories,*sales_channels,*variants.inventory_items`,
  );
  t.is(count, 2);
  const shape = products.map((p) => ({
    title: p.title, handle: p.handle, status: p.status, description: p.description, metadata: p.metadata,
    categories: p.categories!.map((c) => c.id), channels: p.sales_channels!.map((c) => c.id),
    variants: p.variants!.sort((a, b) => a.sku!.localeCompare(b.sku!)).map((v) => ({
      title: v.title, sku: v.sku, manage_inventory: v.manage_inventory,
      option: v.options!.map((o) => `${o.option!.title}=${o.value}`),
      prices: Object.fromEntries(v.prices!.map((price) => [price.currency_code, price.amount])),
      inventoryItem: v.inventory_items![0].inventory_item_id,
    })),
  }));
  const item = (sku: string) => seededVariant(shop, sku).inventoryItemId;
  t.deepEqual(shape, [
    {
      title: 'Blue mug', handle: 'harness-blue-mug', status: 'published', description: 'A ceramic mug, glazed blue.',
      metadata: { material: 'ceramic' }, categories: [shop.categoryIds.mugs], channels: [shop.salesChannelId],
      variants: [
        { title: 'Blue mug L', sku: 'HARNESS-MUG-BLUE-L', manage_inventory: true, option: ['Size=L'], prices: { eur: 12.5, czk: 319 }, inventoryItem: item('MUG-BLUE-L') },
        { title: 'Blue mug S', sku: 'HARNESS-MUG-BLUE-S', manage_inventory: true, option: ['Size=S'], prices: { eur: 9.9, czk: 249 }, inventoryItem: item('MUG-BLUE-S') },
      ],
    },
    {
      title: 'Green tea', handle: 'harness-green-tea', status: 'published', description: 'Sencha from Shizuoka.',
      metadata: { origin: 'JP' }, categories: [shop.categoryIds.teas], channels: [shop.salesChannelId],
      variants: [
        { title: 'Green tea 100 g', sku: 'HARNESS-TEA-GREEN-100', manage_inventory: true, option: ['Weight=100 g'], prices: { eur: 6.5, czk: 159 }, inventoryItem: item('TEA-GREEN-100') },
        { title: 'Green tea 250 g', sku: 'HARNESS-TEA-GREEN-250', manage_inventory: true, option: ['Weight=250 g'], prices: { eur: 13.9, czk: 339 }, inventoryItem: item('TEA-GREEN-250') },
      ],
    },
  ]);

  const customers = await Promise.all(shop.customers.map(async (c) => (await client.admin('GET', `/admin/customers/${c.id}`)).customer));
  t.deepEqual(customers.map((c: any) => [c.email, c.first_name, c.last_name, c.phone, c.has_account]), [
    ['jana.novakova+harness@example.test', 'Jana', 'Nováková', '+420 601 234 567', false],
    ['lukas.huber+harness@example.test', 'Lukas', 'Huber', '+43 660 123 4567', false],
  ]);
});

test.serial('When the shop is seeded, then its orders came through the store checkout with their customers, lines, totals, payments, fulfilment and stock', async (t) => {
  const { client, shop } = t.context;
  const [jana, lukas] = shop.customers.map((c) => c.id);
  const orders = await Promise.all(shop.orders.map((o) => getOrder(client, o.id)));
  t.deepEqual(orders.map((o) => ({
    customer: o.customer_id, email: o.email, currency: o.currency_code, region: o.region_id, channel: o.sales_channel_id,
    lines: o.items!.map((i) => [i.variant_sku, i.quantity, i.unit_price]).sort(), total: o.total, status: o.status,
    payment: o.payment_status, fulfilment: o.fulfillment_status,
    captured: o.payment_collections![0].payments[0].captured_at !== null,
    tracking: (o.fulfillments ?? []).flatMap((f) => (f.labels ?? []).map((l) => l.tracking_number)),
  })), [
    {
      customer: jana, email: 'jana.novakova+harness@example.test', currency: 'czk', region: shop.regionIds.czk, channel: shop.salesChannelId,
      lines: [['HARNESS-MUG-BLUE-S', 2, 249], ['HARNESS-TEA-GREEN-100', 1, 159]], total: 777, status: 'pending',
      payment: 'captured', fulfilment: 'shipped', captured: true, tracking: ['HARNESS-TRACK-1'],
    },
    {
      customer: lukas, email: 'lukas.huber+harness@example.test', currency: 'eur', region: shop.regionIds.eur, channel: shop.salesChannelId,
      lines: [['HARNESS-MUG-BLUE-L', 1, 12.5]], total: 17.5, status: 'pending',
      payment: 'captured', fulfilment: 'not_fulfilled', captured: true, tracking: [],
    },
    {
      customer: jana, email: 'jana.novakova+harness@example.test', currency: 'czk', region: shop.regionIds.czk, channel: shop.salesChannelId,
      lines: [['HARNESS-TEA-GREEN-250', 3, 339]], total: 1137, status: 'pending',
      payment: 'authorized', fulfilment: 'not_fulfilled', captured: false, tracking: [],
    },
  ]);
  t.deepEqual(shop.orders.map((o) => [o.total, o.captured, o.fulfillmentId !== null]), [[777, true, true], [17.5, true, false], [1137, false, false]]);

  // Stock: the fulfilled order took its items off the shelf, the open ones hold reservations.
  const levels = await Promise.all(['MUG-BLUE-S', 'TEA-GREEN-100', 'MUG-BLUE-L', 'TEA-GREEN-250'].map(async (sku) => {
    const { inventory_levels: found } = await client.admin<{ inventory_levels: MedusaInventoryLevel[] }>(
      'GET', `/admin/inventory-items/${seededVariant(shop, sku).inventoryItemId}/location-levels`);
    return found.map((l) => [sku, l.location_id === shop.stockLocationId, l.stocked_quantity, l.reserved_quantity, l.available_quantity]);
  }));
  t.deepEqual(levels, [
    [['MUG-BLUE-S', true, 38, 0, 38]],
    [['TEA-GREEN-100', true, 59, 0, 59]],
    [['MUG-BLUE-L', true, 25, 1, 24]],
    [['TEA-GREEN-250', true, 30, 3, 27]],
  ]);
});

test.serial('When a new order is placed, then the forwarder posts order.placed with its id only, signed with the shared secret', async (t) => {
  const { client, shop, env } = t.context;
  const order = await placeOrder(client, shop, { customer: 1, currency: 'eur', lines: [{ variantId: seededVariant(shop, 'TEA-GREEN-100').id, quantity: 2 }] });
  t.is(order.total, 18);

  const request = await forwarded(t, 'order.placed', order.id);
  t.is(request.method, 'POST');
  t.is(request.verifyError, null);
  t.is(request.headers['content-type'], 'application/json');
  t.is(request.headers['user-agent'], 'StoreOps-Medusa-Forwarder/1');
  t.is(request.headers['x-store-ops-event'], 'order.placed');
  t.is(request.headers['x-store-ops-event-id'], request.body.id);
  t.deepEqual(Object.keys(request.body).sort(), ['data', 'event', 'id', 'occurred_at', 'version']);
  t.is(request.body.version, 1);
  t.deepEqual(request.body.data, { id: order.id });
  t.regex(request.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.regex(request.body.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.true(Math.abs(Date.parse(request.body.occurred_at) - Date.now()) < 300_000);
  // Ids only: nothing about the person.
  t.false(request.raw.toString('utf8').includes('lukas'));

  // The signature is over these bytes with this secret: anything else fails.
  const headers = request.headers;
  const names = MEDUSA_FORWARDER_SIGNATURE_HEADERS;
  t.is(verifyWebhook(`${env.forwardSecret}x`, headers, request.raw, Date.now() / 1000, names), 'signature mismatch');
  t.is(verifyWebhook(env.forwardSecret, headers, Buffer.from(request.raw.toString('utf8').replace(order.id, `${order.id}x`)), Date.now() / 1000, names), 'signature mismatch');
  t.is(verifyWebhook(env.forwardSecret, { ...headers, [names.timestamp]: String(Number(headers[names.timestamp]) + 1) }, request.raw, Date.now() / 1000, names), 'signature mismatch');
});

test.serial('When a price changes, then the variant and the price move their updated_at, the product does not, and product-variant.updated is forwarded', async (t) => {
  const { client, shop } = t.context;
  const variant = seededVariant(shop, 'MUG-BLUE-L');
  const product = async () => (await client.admin<{ product: MedusaProduct }>('GET', `/admin/products/${variant.productId}?fields=id,updated_at,*variants,*variants.prices`)).product;
  const before = await product();
  const variantBefore = before.variants!.find((v) => v.id === variant.id)!;

  const changed = await changeVariantPrice(client, variant, 'eur', 13.9);
  t.deepEqual(Object.fromEntries(changed.prices!.map((p) => [p.currency_code, p.amount])), { eur: 13.9, czk: 319 });

  const after = await product();
  const variantAfter = after.variants!.find((v) => v.id === variant.id)!;
  t.is(after.updated_at, before.updated_at, 'a price change does not touch the product');
  t.true(variantAfter.updated_at > variantBefore.updated_at, 'it moves the variant');
  const price = (v: typeof variantAfter, currency: string) => v.prices!.find((p) => p.currency_code === currency)!;
  t.true(price(variantAfter, 'eur').updated_at > price(variantBefore, 'eur').updated_at);
  t.is(price(variantAfter, 'eur').id, price(variantBefore, 'eur').id, 'the price is updated in place, not replaced');
  t.is(price(variantAfter, 'czk').updated_at, price(variantBefore, 'czk').updated_at);

  // So an incremental read must poll variants: the product list filtered by updated_at misses the change.
  const since = encodeURIComponent(before.updated_at);
  const products = await client.admin<{ count: number }>('GET', `/admin/products?id=${variant.productId}&updated_at[$gt]=${since}`);
  t.is(products.count, 0);
  const variants = await client.admin<{ variants: { id: string }[]; count: number }>(
    'GET', `/admin/product-variants?id=${variant.id}&updated_at[$gt]=${encodeURIComponent(variantBefore.updated_at)}&fields=id`);
  t.deepEqual(variants.variants.map((v) => v.id), [variant.id]);

  const event = await forwarded(t, 'product-variant.updated', variant.id);
  t.is(event.verifyError, null);
});

test.serial('When a payment is captured, then the order keeps its updated_at, its payment_status says captured, and payment.captured is forwarded', async (t) => {
  const { client, shop } = t.context;
  const seeded = shop.orders[2];
  const before = await getOrder(client, seeded.id);
  t.is(before.payment_status, 'authorized');

  const payment = await capturePayment(client, seeded.id);
  t.is(payment.id, seeded.paymentId);
  t.not(payment.captured_at, null);

  const after = await getOrder(client, seeded.id);
  t.is(after.payment_status, 'captured');
  t.is(after.updated_at, before.updated_at, 'a capture does not touch the order');
  t.true(after.payment_collections![0].updated_at > before.payment_collections![0].updated_at, 'it moves the payment collection');
  const orders = await client.admin<{ count: number }>('GET', `/admin/orders?id=${seeded.id}&updated_at[$gt]=${encodeURIComponent(before.updated_at)}`);
  t.is(orders.count, 0);

  const event = await forwarded(t, 'payment.captured', seeded.paymentId);
  t.is(event.verifyError, null);
});

test.serial('When a stock level changes, then the level moves its updated_at, the inventory item does not (and refuses the filter), and inventory-level.updated is forwarded', async (t) => {
  const { client, shop } = t.context;
  const variant = seededVariant(shop, 'TEA-GREEN-100');
  const item = async () => (await client.admin<{ inventory_item: { updated_at: string; location_levels: MedusaInventoryLevel[] } }>(
    'GET', `/admin/inventory-items/${variant.inventoryItemId}?fields=id,updated_at,*location_levels`)).inventory_item;
  const before = await item();

  const level = await setStockLevel(client, variant.inventoryItemId, shop.stockLocationId, 55);
  t.is(level.stocked_quantity, 55);

  const after = await item();
  t.is(after.updated_at, before.updated_at, 'a stock change does not touch the inventory item');
  t.true(after.location_levels[0].updated_at > before.location_levels[0].updated_at);

  const refused = await refusal(client.admin('GET', `/admin/inventory-items?updated_at[$gt]=${encodeURIComponent(before.updated_at)}`));
  t.is(refused.status, 400);
  t.is(refused.body.type, 'invalid_data');
  t.regex(refused.body.message, /updated_at/);

  const event = await forwarded(t, 'inventory-level.updated', level.id);
  t.is(event.verifyError, null);
});

test.serial('When an order is fulfilled and shipped, then its updated_at moves and order.fulfillment_created and shipment.created are forwarded', async (t) => {
  const { client, shop } = t.context;
  const seeded = shop.orders[1];
  const before = await getOrder(client, seeded.id);
  t.is(before.fulfillment_status, 'not_fulfilled');

  const fulfillmentId = await fulfilOrder(client, seeded.id, shop.stockLocationId, { trackingNumber: 'HARNESS-TRACK-9' });

  const after = await getOrder(client, seeded.id);
  t.is(after.fulfillment_status, 'shipped');
  t.true(after.updated_at > before.updated_at, 'a fulfilment is an order change: it moves the order');
  t.deepEqual(after.fulfillments!.map((f) => [f.id, f.location_id, f.shipped_at !== null, f.labels!.map((l) => l.tracking_number)]), [
    [fulfillmentId, shop.stockLocationId, true, ['HARNESS-TRACK-9']],
  ]);

  const created = await forwarded(t, 'order.fulfillment_created', seeded.id, 'order_id');
  t.deepEqual(created.body.data, { order_id: seeded.id, fulfillment_id: fulfillmentId });
  await forwarded(t, 'shipment.created', fulfillmentId);
});

test.serial('When lists are read, then they take order, limit and offset and report count', async (t) => {
  const { client, shop } = t.context;
  const page = await client.admin<{ products: { handle: string }[]; count: number; limit: number; offset: number }>(
    'GET', `/admin/products?sales_channel_id[]=${shop.salesChannelId}&order=-handle&limit=1&offset=1&fields=id,handle`);
  t.deepEqual([page.products, page.count, page.limit, page.offset], [[{ id: shop.products[0].id, handle: 'harness-blue-mug' }], 2, 1, 1]);
});

test.serial('When product texts are written, then metadata keys merge, an empty string removes one, and product.updated is forwarded', async (t) => {
  const { client, shop } = t.context;
  const productId = shop.products[1].id;
  const write = async (body: Record<string, unknown>) =>
    (await client.admin<{ product: MedusaProduct }>('POST', `/admin/products/${productId}?fields=id,description,metadata,updated_at`, body)).product;

  const first = await write({ description: 'Sencha from Shizuoka, first flush.', metadata: { seo_title: 'Green tea Sencha' } });
  t.is(first.description, 'Sencha from Shizuoka, first flush.');
  t.deepEqual(first.metadata, { origin: 'JP', seo_title: 'Green tea Sencha' });
  const second = await write({ metadata: { seo_title: '' } });
  t.deepEqual(second.metadata, { origin: 'JP' });
  t.true(second.updated_at > first.updated_at);
  await forwarded(t, 'product.updated', productId);
});

test.serial('When a coupon is created as a Medusa promotion, then it reads back as written and promotion.promotion.created is forwarded', async (t) => {
  const { client } = t.context;
  const { promotion } = await client.admin('POST', '/admin/promotions', {
    code: 'HARNESS10', type: 'standard', status: 'active', is_automatic: false, limit: 100,
    application_method: { type: 'percentage', target_type: 'order', value: 10 },
  });
  const { promotion: read } = await client.admin('GET', `/admin/promotions/${promotion.id}?fields=*application_method`);
  t.like(read, { code: 'HARNESS10', type: 'standard', status: 'active', is_automatic: false, limit: 100, used: 0 });
  t.like(read.application_method, { type: 'percentage', target_type: 'order', value: 10, currency_code: null });
  const duplicate = await refusal(client.admin('POST', '/admin/promotions', {
    code: 'HARNESS10', type: 'standard', status: 'active', application_method: { type: 'percentage', target_type: 'order', value: 5 },
  }));
  t.is(duplicate.status, 400);
  await forwarded(t, 'promotion.promotion.created', promotion.id);
});
