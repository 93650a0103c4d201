/**
 * Tests against the run's real Medusa (test/helpers/medusaServer.ts starts it): a small typed client for its Admin and
 * Store APIs, `seedMedusaShop` that builds a shop through those APIs only, and the changes a sync must notice (a price,
 * a capture, a stock level, a new order). Amounts are Medusa's: major units of the currency (9.9 EUR is 9.9).
 */
import type { Receiver } from './receiver.js';

export type MedusaCurrency = 'eur' | 'czk';
type Method = 'GET' | 'POST' | 'DELETE';

/** What scripts/test.mjs exports about the run's Medusa. */
export interface MedusaTestEnv {
  url: string;
  /** Secret API key, sent as HTTP Basic auth (the key as user name, no password). */
  apiKey: string;
  /** Publishable key of the default sales channel, for the Store API (`x-publishable-api-key`). */
  publishableKey: string;
  /** The secret the event forwarder signs with. */
  forwardSecret: string;
  relayUrl: string;
}

export function medusaTestEnv(): MedusaTestEnv {
  const read = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set: Medusa runs only when npm test includes a medusa test file`);
    return value;
  };
  return {
    url: read('MEDUSA_URL'),
    apiKey: read('MEDUSA_API_KEY'),
    publishableKey: read('MEDUSA_PUBLISHABLE_KEY'),
    forwardSecret: read('MEDUSA_FORWARD_SECRET'),
    relayUrl: read('MEDUSA_EVENT_RELAY_URL'),
  };
}

/** A reply other than 2xx, with Medusa's error body (`{ type, message }`). */
export class MedusaApiError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body: any,
  ) {
    super(`Medusa ${method} ${path} answered ${status}: ${typeof body === 'string' ? body : JSON.stringify(body)}`);
  }
}

export interface MedusaClient {
  url: string;
  /** Admin API call with the secret key (Basic auth). */
  admin<T = any>(method: Method, path: string, body?: unknown): Promise<T>;
  /** Store API call with a publishable key. */
  store<T = any>(publishableKey: string, method: Method, path: string, body?: unknown): Promise<T>;
}

async function call<T>(url: string, method: Method, path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: keep the text for the error.
  }
  if (!res.ok) throw new MedusaApiError(res.status, method, path, parsed);
  return parsed as T;
}

export function basicAuth(secretKey: string): string {
  return `Basic ${Buffer.from(`${secretKey}:`).toString('base64')}`;
}

export function medusaClient(env: Pick<MedusaTestEnv, 'url' | 'apiKey'> = medusaTestEnv()): MedusaClient {
  return {
    url: env.url,
    admin: (method, path, body) => call(env.url, method, path, { Authorization: basicAuth(env.apiKey) }, body),
    store: (publishableKey, method, path, body) => call(env.url, method, path, { 'x-publishable-api-key': publishableKey }, body),
  };
}

// Resources as the Admin API returns them (only the fields the tests read).
export interface MedusaPrice { id: string; amount: number; currency_code: string; updated_at: string }
export interface MedusaVariant {
  id: string; title: string; sku: string | null; product_id: string; manage_inventory: boolean; updated_at: string;
  prices?: MedusaPrice[]; options?: { value: string; option?: { title: string } }[];
  inventory_items?: { inventory_item_id: string; required_quantity: number }[];
}
export interface MedusaProduct {
  id: string; title: string; handle: string; status: string; description: string | null; metadata: Record<string, unknown> | null;
  updated_at: string; variants?: MedusaVariant[]; categories?: { id: string; handle: string }[]; sales_channels?: { id: string }[];
}
export interface MedusaInventoryLevel {
  id: string; location_id: string; inventory_item_id: string; stocked_quantity: number; reserved_quantity: number;
  available_quantity: number; updated_at: string;
}
export interface MedusaPayment { id: string; amount: number; currency_code: string; captured_at: string | null; updated_at: string }
export interface MedusaOrder {
  id: string; display_id: number; status: string; payment_status: string; fulfillment_status: string; currency_code: string;
  customer_id: string | null; email: string; total: number; updated_at: string; region_id: string; sales_channel_id: string;
  items?: { id: string; variant_id: string; variant_sku: string; quantity: number; unit_price: number }[];
  payment_collections?: { id: string; status: string; updated_at: string; payments: MedusaPayment[] }[];
  fulfillments?: { id: string; location_id: string; shipped_at: string | null; labels?: { tracking_number: string }[] }[];
}

/** The shop `seedMedusaShop` builds, before its names are made unique per seed key (see `seedNames`). */
export const MEDUSA_SEED = {
  regions: [
    { currency: 'eur', name: 'store-ops Europe (EUR)', countries: ['de', 'at', 'sk'] },
    { currency: 'czk', name: 'store-ops Czechia (CZK)', countries: ['cz'] },
  ],
  shippingPrices: { eur: 5, czk: 120 },
  categories: [
    { handle: 'mugs', name: 'Mugs' },
    { handle: 'teas', name: 'Teas' },
  ],
  products: [
    {
      handle: 'blue-mug', title: 'Blue mug', description: 'A ceramic mug, glazed blue.', category: 'mugs',
      metadata: { material: 'ceramic' }, option: 'Size',
      variants: [
        { sku: 'MUG-BLUE-S', value: 'S', prices: { eur: 9.9, czk: 249 }, stocked: 40 },
        { sku: 'MUG-BLUE-L', value: 'L', prices: { eur: 12.5, czk: 319 }, stocked: 25 },
      ],
    },
    {
      handle: 'green-tea', title: 'Green tea', description: 'Sencha from Shizuoka.', category: 'teas',
      metadata: { origin: 'JP' }, option: 'Weight',
      variants: [
        { sku: 'TEA-GREEN-100', value: '100 g', prices: { eur: 6.5, czk: 159 }, stocked: 60 },
        { sku: 'TEA-GREEN-250', value: '250 g', prices: { eur: 13.9, czk: 339 }, stocked: 30 },
      ],
    },
  ],
  customers: [
    { email: 'jana.novakova', first_name: 'Jana', last_name: 'Nováková', phone: '+420 601 234 567',
      address: { address_1: 'Dlouhá 12', city: 'Praha', postal_code: '11000', country_code: 'cz' } },
    { email: 'lukas.huber', first_name: 'Lukas', last_name: 'Huber', phone: '+43 660 123 4567',
      address: { address_1: 'Mariahilfer Straße 20', city: 'Wien', postal_code: '1070', country_code: 'at' } },
  ],
  /** Placed through the store checkout in this order; `capture` captures the payment, `fulfil` ships everything. */
  orders: [
    { customer: 0, currency: 'czk', lines: [{ sku: 'MUG-BLUE-S', quantity: 2 }, { sku: 'TEA-GREEN-100', quantity: 1 }], capture: true, fulfil: true },
    { customer: 1, currency: 'eur', lines: [{ sku: 'MUG-BLUE-L', quantity: 1 }], capture: true, fulfil: false },
    { customer: 0, currency: 'czk', lines: [{ sku: 'TEA-GREEN-250', quantity: 3 }], capture: false, fulfil: false },
  ],
} as const satisfies {
  regions: readonly { currency: MedusaCurrency; name: string; countries: readonly string[] }[];
  orders: readonly { customer: number; currency: MedusaCurrency; lines: readonly { sku: string; quantity: number }[]; capture: boolean; fulfil: boolean }[];
  [key: string]: unknown;
};

/** Names that must be unique in one Medusa (handles, SKUs, e-mails), made so from the seed key. */
export function seedNames(key: string) {
  const lower = key.toLowerCase();
  return {
    handle: (handle: string) => `${lower}-${handle}`,
    sku: (sku: string) => `${key.toUpperCase()}-${sku}`,
    email: (local: string) => `${local}+${lower}@example.test`,
    label: (text: string) => `${text} (${key})`,
  };
}

export interface SeededVariant { id: string; sku: string; title: string; inventoryItemId: string; prices: Record<MedusaCurrency, number>; stocked: number }
export interface SeededProduct { id: string; handle: string; title: string; categoryId: string; variants: SeededVariant[] }
export interface SeededCustomer { id: string; email: string; firstName: string; lastName: string; phone: string }
export interface SeededOrder {
  id: string; displayId: number; customerId: string; currency: MedusaCurrency; total: number; paymentId: string;
  captured: boolean; fulfillmentId: string | null; trackingNumber: string | null;
}
export interface SeededMedusaShop {
  key: string;
  regionIds: Record<MedusaCurrency, string>;
  salesChannelId: string;
  stockLocationId: string;
  shippingOptionId: string;
  /** Publishable key limited to this shop's sales channel. */
  publishableKey: string;
  categoryIds: Record<string, string>;
  products: SeededProduct[];
  customers: SeededCustomer[];
  orders: SeededOrder[];
}

/** The variant with this seed SKU (unprefixed, as in MEDUSA_SEED). */
export function seededVariant(shop: SeededMedusaShop, sku: string): SeededVariant & { productId: string } {
  const wanted = seedNames(shop.key).sku(sku);
  for (const product of shop.products) {
    const variant = product.variants.find((v) => v.sku === wanted);
    if (variant) return { ...variant, productId: product.id };
  }
  throw new Error(`no seeded variant ${sku}`);
}

/** Regions are shared by every seed in one Medusa (a country belongs to one region); found or created by name. */
async function ensureRegions(client: MedusaClient): Promise<Record<MedusaCurrency, string>> {
  const { stores } = await client.admin<{ stores: { id: string; supported_currencies: { currency_code: string }[] }[] }>('GET', '/admin/stores');
  const store = stores[0];
  const supported = store.supported_currencies.map((c) => c.currency_code);
  if (!MEDUSA_SEED.regions.every((r) => supported.includes(r.currency))) {
    const currencies = [...new Set([...supported, ...MEDUSA_SEED.regions.map((r) => r.currency)])];
    await client.admin('POST', `/admin/stores/${store.id}`, {
      supported_currencies: currencies.map((code) => ({ currency_code: code, is_default: code === 'eur' })),
    });
  }
  const ids = {} as Record<MedusaCurrency, string>;
  for (const region of MEDUSA_SEED.regions) {
    const find = async () =>
      (await client.admin<{ regions: { id: string }[] }>('GET', `/admin/regions?name=${encodeURIComponent(region.name)}`)).regions[0]?.id;
    let id = await find();
    if (!id) {
      try {
        id = (await client.admin<{ region: { id: string } }>('POST', '/admin/regions', {
          name: region.name, currency_code: region.currency, countries: region.countries, payment_providers: ['pp_system_default'],
        })).region.id;
      } catch (err) {
        // Another test file created it in the meantime (its countries are taken now).
        id = await find();
        if (!id) throw err;
      }
    }
    ids[region.currency] = id;
  }
  return ids;
}

/**
 * Builds a shop in the run's Medusa through its Admin and Store APIs only: regions per currency (shared), and per seed
 * key a sales channel, a stock location with shipping, categories, products with variants, prices and stock,
 * customers, and the orders of MEDUSA_SEED through the store checkout (one captured and fulfilled with a tracking
 * number, one captured, one only authorised). The same key in a fresh Medusa gives the same data (ids aside).
 */
export async function seedMedusaShop(client: MedusaClient, options: { key: string }): Promise<SeededMedusaShop> {
  const names = seedNames(options.key);
  const regionIds = await ensureRegions(client);

  const salesChannelId = (await client.admin<{ sales_channel: { id: string } }>('POST', '/admin/sales-channels', {
    name: names.label('store-ops test shop'),
  })).sales_channel.id;
  const stockLocationId = (await client.admin<{ stock_location: { id: string } }>('POST', '/admin/stock-locations', {
    name: names.label('Prague warehouse'),
    address: { address_1: 'Skladová 1', city: 'Praha', postal_code: '19000', country_code: 'cz' },
  })).stock_location.id;
  await client.admin('POST', `/admin/stock-locations/${stockLocationId}/sales-channels`, { add: [salesChannelId] });
  await client.admin('POST', `/admin/stock-locations/${stockLocationId}/fulfillment-providers`, { add: ['manual_manual'] });
  const { stock_location: withSet } = await client.admin<{ stock_location: { fulfillment_sets: { id: string }[] } }>(
    'POST', `/admin/stock-locations/${stockLocationId}/fulfillment-sets?fields=*fulfillment_sets`,
    { name: names.label('Prague shipping'), type: 'shipping' },
  );
  const { fulfillment_set: fulfillmentSet } = await client.admin<{ fulfillment_set: { service_zones: { id: string }[] } }>(
    'POST', `/admin/fulfillment-sets/${withSet.fulfillment_sets[0].id}/service-zones?fields=*service_zones`,
    { name: names.label('Shop countries'), geo_zones: MEDUSA_SEED.regions.flatMap((r) => r.countries.map((c) => ({ type: 'country', country_code: c }))) },
  );
  const { shipping_profiles: profiles } = await client.admin<{ shipping_profiles: { id: string; type: string }[] }>('GET', '/admin/shipping-profiles?type=default');
  const shippingProfileId = profiles[0].id;
  const shippingOptionId = (await client.admin<{ shipping_option: { id: string } }>('POST', '/admin/shipping-options', {
    name: names.label('Standard delivery'),
    service_zone_id: fulfillmentSet.service_zones[0].id,
    shipping_profile_id: shippingProfileId,
    provider_id: 'manual_manual',
    price_type: 'flat',
    type: { label: 'Standard', description: 'Two to three working days', code: 'standard' },
    prices: Object.entries(MEDUSA_SEED.shippingPrices).map(([currency_code, amount]) => ({ currency_code, amount })),
    rules: [
      { attribute: 'enabled_in_store', value: 'true', operator: 'eq' },
      { attribute: 'is_return', value: 'false', operator: 'eq' },
    ],
  })).shipping_option.id;

  const publishable = (await client.admin<{ api_key: { id: string; token: string } }>('POST', '/admin/api-keys', {
    title: names.label('storefront'), type: 'publishable',
  })).api_key;
  await client.admin('POST', `/admin/api-keys/${publishable.id}/sales-channels`, { add: [salesChannelId] });

  // Independent writes go in parallel (Promise.all keeps the seed's order in the results); orders stay one by one so
  // their display ids follow MEDUSA_SEED.
  const categoryIds: Record<string, string> = Object.fromEntries(await Promise.all(MEDUSA_SEED.categories.map(async (category) => [
    category.handle,
    (await client.admin<{ product_category: { id: string } }>('POST', '/admin/product-categories', {
      name: category.name, handle: names.handle(category.handle), is_active: true,
    })).product_category.id,
  ])));

  const products: SeededProduct[] = await Promise.all(MEDUSA_SEED.products.map(async (spec) => {
    const { product } = await client.admin<{ product: MedusaProduct }>('POST', '/admin/products?fields=*variants,*variants.inventory_items', {
      title: spec.title,
      handle: names.handle(spec.handle),
      status: 'published',
      description: spec.description,
      metadata: spec.metadata,
      shipping_profile_id: shippingProfileId,
      sales_channels: [{ id: salesChannelId }],
      categories: [{ id: categoryIds[spec.category] }],
      options: [{ title: spec.option, values: spec.variants.map((v) => v.value) }],
      variants: spec.variants.map((v) => ({
        title: `${spec.title} ${v.value}`,
        sku: names.sku(v.sku),
        options: { [spec.option]: v.value },
        manage_inventory: true,
        prices: Object.entries(v.prices).map(([currency_code, amount]) => ({ currency_code, amount })),
      })),
    });
    const variants: SeededVariant[] = spec.variants.map((v) => {
      const created = product.variants!.find((pv) => pv.sku === names.sku(v.sku))!;
      const inventoryItemId = created.inventory_items![0].inventory_item_id;
      return { id: created.id, sku: names.sku(v.sku), title: created.title, inventoryItemId, prices: { ...v.prices }, stocked: v.stocked };
    });
    await client.admin('POST', '/admin/inventory-items/location-levels/batch', {
      create: variants.map((v) => ({ inventory_item_id: v.inventoryItemId, location_id: stockLocationId, stocked_quantity: v.stocked })),
    });
    return { id: product.id, handle: product.handle, title: product.title, categoryId: categoryIds[spec.category], variants };
  }));

  const customers: SeededCustomer[] = await Promise.all(MEDUSA_SEED.customers.map(async (spec) => {
    const email = names.email(spec.email);
    const { customer } = await client.admin<{ customer: { id: string } }>('POST', '/admin/customers', {
      email, first_name: spec.first_name, last_name: spec.last_name, phone: spec.phone,
    });
    return { id: customer.id, email, firstName: spec.first_name, lastName: spec.last_name, phone: spec.phone };
  }));

  const shop: SeededMedusaShop = {
    key: options.key, regionIds, salesChannelId, stockLocationId, shippingOptionId, publishableKey: publishable.token,
    categoryIds, products, customers, orders: [],
  };
  for (const [index, spec] of MEDUSA_SEED.orders.entries()) {
    const order = await placeOrder(client, shop, {
      customer: spec.customer,
      currency: spec.currency,
      lines: spec.lines.map((l) => ({ variantId: seededVariant(shop, l.sku).id, quantity: l.quantity })),
    });
    let fulfillmentId: string | null = null;
    let trackingNumber: string | null = null;
    if (spec.capture) await capturePayment(client, order.id);
    if (spec.fulfil) {
      trackingNumber = `${options.key.toUpperCase()}-TRACK-${index + 1}`;
      fulfillmentId = await fulfilOrder(client, order.id, stockLocationId, { trackingNumber });
    }
    shop.orders.push({
      id: order.id, displayId: order.display_id, customerId: order.customer_id!, currency: spec.currency, total: order.total,
      paymentId: order.payment_collections![0].payments[0].id, captured: spec.capture, fulfillmentId, trackingNumber,
    });
  }
  return shop;
}

/**
 * A new order through the store checkout, as a shopper places it: cart in the currency's region → line items → address
 * → the shop's shipping option → a payment session with the system provider (authorised at once) → complete.
 * The cart carries the customer's e-mail, so Medusa links the order to that customer.
 */
export async function placeOrder(
  client: MedusaClient,
  shop: SeededMedusaShop,
  order: { customer: number; currency: MedusaCurrency; lines: { variantId: string; quantity: number }[] },
): Promise<MedusaOrder> {
  const customer = shop.customers[order.customer];
  const spec = MEDUSA_SEED.customers[order.customer];
  const address = { first_name: customer.firstName, last_name: customer.lastName, phone: customer.phone, ...spec.address };
  const store = <T>(method: Method, path: string, body?: unknown) => client.store<T>(shop.publishableKey, method, path, body);
  type Cart = { cart: { id: string } };
  const { cart } = await store<Cart>('POST', '/store/carts', {
    region_id: shop.regionIds[order.currency], sales_channel_id: shop.salesChannelId, email: customer.email,
    shipping_address: address, billing_address: address,
  });
  for (const line of order.lines) await store('POST', `/store/carts/${cart.id}/line-items`, { variant_id: line.variantId, quantity: line.quantity });
  await store('POST', `/store/carts/${cart.id}/shipping-methods`, { option_id: shop.shippingOptionId });
  const { payment_collection: collection } = await store<{ payment_collection: { id: string } }>('POST', '/store/payment-collections', { cart_id: cart.id });
  await store('POST', `/store/payment-collections/${collection.id}/payment-sessions`, { provider_id: 'pp_system_default' });
  const completed = await store<{ type: string; order?: { id: string }; error?: unknown }>('POST', `/store/carts/${cart.id}/complete`);
  if (completed.type !== 'order' || !completed.order) throw new Error(`cart ${cart.id} did not become an order: ${JSON.stringify(completed)}`);
  return getOrder(client, completed.order.id);
}

/** The order with the fields the tests compare (items, payments, fulfilments and the computed statuses). */
export async function getOrder(client: MedusaClient, orderId: string): Promise<MedusaOrder> {
  // The order's own defaults leave out who bought, in which currency and channel: `+` adds them to the defaults.
  const fields = '+customer_id,+email,+currency_code,+sales_channel_id,*items,*payment_collections,*payment_collections.payments,*fulfillments,*fulfillments.labels';
  return (await client.admin<{ order: MedusaOrder }>('GET', `/admin/orders/${orderId}?fields=${fields}`)).order;
}

/** Captures the order's (single) authorised payment in full; returns the payment as Medusa answers. */
export async function capturePayment(client: MedusaClient, orderId: string): Promise<MedusaPayment> {
  const order = await getOrder(client, orderId);
  const payment = order.payment_collections![0].payments[0];
  return (await client.admin<{ payment: MedusaPayment }>('POST', `/admin/payments/${payment.id}/capture`, {})).payment;
}

/** Fulfils every item of the order from the location and marks it shipped with a tracking number; returns the fulfilment id. */
export async function fulfilOrder(client: MedusaClient, orderId: string, locationId: string, shipment: { trackingNumber: string }): Promise<string> {
  const before = await getOrder(client, orderId);
  const known = new Set((before.fulfillments ?? []).map((f) => f.id));
  const items = before.items!.map((item) => ({ id: item.id, quantity: item.quantity }));
  await client.admin('POST', `/admin/orders/${orderId}/fulfillments`, { items, location_id: locationId });
  const fulfillment = (await getOrder(client, orderId)).fulfillments!.find((f) => !known.has(f.id))!;
  await client.admin('POST', `/admin/orders/${orderId}/fulfillments/${fulfillment.id}/shipments`, {
    items,
    labels: [{
      tracking_number: shipment.trackingNumber,
      tracking_url: `https://tracking.example.test/${shipment.trackingNumber}`,
      label_url: `https://labels.example.test/${shipment.trackingNumber}.pdf`,
    }],
  });
  return fulfillment.id;
}

/** Sets one price of a variant (the variant's other prices stay); returns the variant with its prices. */
export async function changeVariantPrice(
  client: MedusaClient,
  variant: { productId: string; id: string },
  currency: MedusaCurrency,
  amount: number,
): Promise<MedusaVariant> {
  const path = `/admin/products/${variant.productId}/variants/${variant.id}`;
  const { variant: current } = await client.admin<{ variant: MedusaVariant }>('GET', `${path}?fields=*prices`);
  const prices = current.prices!.map((p) => ({ id: p.id, currency_code: p.currency_code, amount: p.currency_code === currency ? amount : p.amount }));
  await client.admin('POST', path, { prices });
  return (await client.admin<{ variant: MedusaVariant }>('GET', `${path}?fields=*prices`)).variant;
}

/** Sets the stocked quantity of an inventory item at a location; returns the level. */
export async function setStockLevel(client: MedusaClient, inventoryItemId: string, locationId: string, stocked: number): Promise<MedusaInventoryLevel> {
  await client.admin('POST', `/admin/inventory-items/${inventoryItemId}/location-levels/${locationId}`, { stocked_quantity: stocked });
  const { inventory_levels: levels } = await client.admin<{ inventory_levels: MedusaInventoryLevel[] }>(
    'GET', `/admin/inventory-items/${inventoryItemId}/location-levels?location_id=${locationId}`,
  );
  return levels[0];
}

/**
 * Lets `receiver` get the events Medusa's forwarder sends from now on (through the run's relay, byte for byte with the
 * forwarder's signature headers); returns the function that stops it.
 */
export async function forwardMedusaEventsTo(receiver: Receiver, env: MedusaTestEnv = medusaTestEnv()): Promise<() => Promise<void>> {
  const res = await fetch(`${env.relayUrl}/targets`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ url: receiver.url }),
  });
  if (res.status !== 201) throw new Error(`the Medusa event relay refused ${receiver.url}: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  return async () => {
    await fetch(`${env.relayUrl}/targets/${id}`, { method: 'DELETE' });
  };
}
