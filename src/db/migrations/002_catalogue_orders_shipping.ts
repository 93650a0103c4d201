/** The first data areas: categories, products, orders with items, carriers, shipments with tracking events. */
import type { Knex } from 'knex';

/** Timestamps are stored at millisecond precision so that keyset cursors (ms, D5) compare exactly. */
function ts(t: Knex.CreateTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('categories', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('guid').notNullable();
    t.text('name').notNullable();
    t.text('parent_guid');
    t.integer('position').notNullable().defaultTo(0);
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
    t.unique(['shop_id', 'guid']);
  });

  await knex.schema.createTable('products', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('code').notNullable();
    t.text('name').notNullable();
    t.text('ean');
    t.text('plu');
    t.text('category_guid');
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('price_with_vat', 14, 2).notNullable();
    t.decimal('vat_rate', 5, 2).notNullable();
    // The current card purchase price; an order item keeps its own price at order time.
    t.decimal('purchase_price', 14, 2);
    t.boolean('active').notNullable().defaultTo(true);
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
    t.unique(['shop_id', 'code']);
    t.index(['shop_id', 'created_at', 'id'], 'products_keyset');
    t.index(['shop_id', 'ean']);
    t.index(['shop_id', 'plu']);
  });
  await knex.raw('create index products_name_search on products (shop_id, lower(name) text_pattern_ops)');

  await knex.schema.createTable('orders', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('code').notNullable();
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
    t.integer('status_id').notNullable();
    t.text('status_name').notNullable();
    t.boolean('paid').notNullable().defaultTo(false);
    ts(t, 'paid_at');
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('total_with_vat', 14, 2).notNullable();
    t.decimal('total_without_vat', 14, 2).notNullable();
    t.decimal('total_vat', 14, 2).notNullable();
    t.decimal('shipping_with_vat', 14, 2).notNullable();
    // Exchange rate to EUR stored at sync time (D23).
    t.decimal('eur_rate', 14, 6).notNullable();
    t.text('payment_method').notNullable();
    t.text('shipping_method').notNullable();
    t.text('variable_symbol').notNullable();
    // D22: lower-case hex SHA-256 of the trimmed, lower-cased e-mail.
    t.specificType('customer_email_hash', 'char(64)').notNullable();
    t.text('customer_first_name');
    t.text('customer_last_name');
    t.text('customer_company');
    t.text('customer_email');
    t.text('customer_phone');
    t.text('customer_street');
    t.text('customer_city');
    t.text('customer_zip');
    t.specificType('customer_country', 'char(2)');
    t.unique(['shop_id', 'code']);
    t.index(['shop_id', 'created_at', 'id'], 'orders_keyset');
  });

  await knex.schema.createTable('order_items', (t) => {
    t.bigIncrements('id');
    t.bigInteger('order_id').notNullable().references('orders.id').onDelete('CASCADE');
    t.integer('line_no').notNullable();
    t.text('product_code');
    t.text('name').notNullable();
    t.decimal('quantity', 12, 3).notNullable();
    t.decimal('unit_price_with_vat', 14, 2).notNullable();
    t.decimal('unit_price_without_vat', 14, 2).notNullable();
    t.decimal('vat_rate', 5, 2).notNullable();
    // Purchase price at order time as the shop stored it; null when the shop did not know it.
    t.decimal('purchase_price_without_vat', 14, 2);
    t.unique(['order_id', 'line_no']);
  });

  await knex.schema.createTable('carriers', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('code').notNullable();
    t.text('name').notNullable();
    t.jsonb('profiles').notNullable().defaultTo('[]');
    // Carrier API credentials, encrypted; never selected by any read (SPEC: never returned).
    t.binary('credentials_encrypted');
    ts(t, 'connected_at').notNullable();
    t.unique(['shop_id', 'code']);
  });

  await knex.schema.createTable('shipments', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('order_code').notNullable();
    t.text('carrier_code').notNullable();
    t.text('tracking_number').notNullable();
    t.specificType('country', 'char(2)').notNullable();
    t.text('status').notNullable();
    // Outcome group: delivered, returned, failed, in_transit, cancelled (SPEC "Other named states").
    t.text('outcome').notNullable();
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
    ts(t, 'handed_over_at');
    ts(t, 'delivered_at');
    t.unique(['shop_id', 'carrier_code', 'tracking_number']);
    t.index(['shop_id', 'created_at', 'id'], 'shipments_keyset');
    t.index(['shop_id', 'carrier_code', 'created_at', 'id'], 'shipments_carrier_keyset');
    t.index(['shop_id', 'order_code']);
  });
  await knex.raw(`alter table shipments add constraint shipments_outcome_check check (outcome in ('delivered','returned','failed','in_transit','cancelled'))`);

  await knex.schema.createTable('shipment_tracking_events', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shipment_id').notNullable().references('shipments.id').onDelete('CASCADE');
    ts(t, 'occurred_at').notNullable();
    t.text('status').notNullable();
    t.text('description').notNullable();
    t.text('location');
    t.boolean('is_delivery').notNullable().defaultTo(false);
    t.index(['shipment_id', 'occurred_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['shipment_tracking_events', 'shipments', 'carriers', 'order_items', 'orders', 'products', 'categories']) {
    await knex.schema.dropTableIfExists(table);
  }
}
