/**
 * Rollups for shipping stats, the one summary that still read raw rows over a year (issue 9): counts per local day,
 * carrier and country; delivery times per shipment with running 15-minute histograms (src/rollups/shipping.ts).
 */
import type { Knex } from 'knex';
import { refreshShippingDays } from '../../rollups/shipping.js';
import { knexRunner, rebuildBuyerCount } from '../../rollups/orders.js';

function shopRef(t: Knex.CreateTableBuilder) {
  return t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
}

export async function up(knex: Knex): Promise<void> {
  // Shipments per local created day, carrier and destination, by outcome; `measured` = with a delivery time.
  await knex.schema.createTable('shipping_daily_rollups', (t) => {
    shopRef(t);
    t.date('day').notNullable();
    t.text('carrier_code').notNullable();
    t.text('country').notNullable();
    for (const c of ['total', 'delivered', 'returned', 'failed', 'in_transit', 'cancelled', 'measured']) t.integer(c).notNullable();
    t.primary(['shop_id', 'day', 'carrier_code', 'country']);
  });

  // One row per measured shipment: the exact delivery time percentiles are picked from, in value order.
  await knex.schema.createTable('shipment_delivery_times', (t) => {
    t.bigInteger('shipment_id').primary().references('shipments.id').onDelete('CASCADE');
    shopRef(t);
    t.date('day').notNullable();
    t.text('carrier_code').notNullable();
    t.text('country').notNullable();
    t.bigInteger('delivery_ms').notNullable();
    t.integer('bucket').notNullable();
    t.index(['shop_id', 'day']);
  });
  // Index-only picks: the whole shop, one carrier, or one country, each in delivery-time order.
  await knex.raw('create index shipment_delivery_times_value on shipment_delivery_times (shop_id, delivery_ms) include (day, carrier_code, country)');
  await knex.raw('create index shipment_delivery_times_carrier on shipment_delivery_times (shop_id, carrier_code, delivery_ms) include (day, country)');
  await knex.raw('create index shipment_delivery_times_country on shipment_delivery_times (shop_id, country, delivery_ms) include (day, carrier_code)');

  // Per (carrier, country) and each local day its measured shipments change: the running count of measured shipments
  // created up to that day per 15-minute delivery-time bucket, as one dense array starting at `first_bucket`.
  await knex.schema.createTable('shipping_delivery_histograms', (t) => {
    shopRef(t);
    t.text('carrier_code').notNullable();
    t.text('country').notNullable();
    t.date('day').notNullable();
    t.integer('first_bucket').notNullable();
    t.specificType('counts', 'integer[]').notNullable();
    t.primary(['shop_id', 'carrier_code', 'country', 'day']);
  });
  // The (carrier, country) pairs a shop has histograms for: the as-of lookups start from this short list.
  await knex.schema.createTable('shipping_delivery_groups', (t) => {
    shopRef(t);
    t.text('carrier_code').notNullable();
    t.text('country').notNullable();
    t.primary(['shop_id', 'carrier_code', 'country']);
  });

  // Customers performance over the whole history counts the shop's buyers: an index-only scan of this partial index.
  await knex.raw('create index customer_rollups_buyers on customer_rollups (shop_id, customer_key) where orders_count > cancelled_count');

  // The number of buyers per shop, kept by the orders sync (src/rollups/orders.ts): customers performance over the whole
  // history needs it, and counting 700,000 customers per call took over 50 ms.
  await knex.schema.createTable('shop_buyer_counts', (t) => {
    t.bigInteger('shop_id').primary().references('shops.id').onDelete('CASCADE');
    t.integer('buyers').notNullable();
  });

  // The affiliate settlement looks up each conversion's withdrawal claims by order code; without this index that is a
  // scan of every claim per conversion, which kept the million-order benchmark load busy for most of its 44 minutes.
  await knex.raw('create index if not exists claims_order on claims (shop_id, order_code)');

  const shops: Array<{ id: string }> = await knex('shops').select('id');
  for (const shop of shops) {
    await refreshShippingDays(knexRunner(knex), String(shop.id), null);
    await rebuildBuyerCount(knexRunner(knex), String(shop.id));
  }
  await knex.raw('analyze shipping_daily_rollups, shipment_delivery_times, shipping_delivery_histograms, shipping_delivery_groups');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists claims_order');
  await knex.raw('drop index if exists customer_rollups_buyers');
  for (const table of ['shop_buyer_counts', 'shipping_delivery_groups', 'shipping_delivery_histograms', 'shipment_delivery_times', 'shipping_daily_rollups']) {
    await knex.schema.dropTableIfExists(table);
  }
}
