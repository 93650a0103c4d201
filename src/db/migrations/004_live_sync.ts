/**
 * Live shop data: platform connection settings, sync checkpoints per shop and data area, and the areas the sync adds —
 * documents (invoices, proformas, credit notes), claims with their return shipments, stock items and movements,
 * search-console property and sync runs — plus the demo platform's store for the writes the service makes.
 */
import type { Knex } from 'knex';

function ts(t: Knex.CreateTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

function shopRef(t: Knex.CreateTableBuilder) {
  return t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
}

export async function up(knex: Knex): Promise<void> {
  // When the current status was reached: the sync emits status changes that happened after it.
  await knex.schema.alterTable('orders', (t) => {
    ts(t, 'status_changed_at');
  });

  await knex.schema.createTable('shop_platform_settings', (t) => {
    t.bigInteger('shop_id').primary().references('shops.id').onDelete('CASCADE');
    t.text('platform').notNullable();
    // Platform-specific connection settings; for `demo` the seed and the history window.
    t.jsonb('settings').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('sync_checkpoints', (t) => {
    shopRef(t);
    t.text('area').notNullable();
    // Every change up to this instant is stored; null before the first complete run (backfill).
    ts(t, 'through');
    // Changes at or before this instant are history, not news: they are stored without events.
    ts(t, 'events_from').notNullable();
    // A run in progress: its end instant and the adapter position after its last committed batch.
    ts(t, 'run_until');
    t.text('run_position');
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    t.primary(['shop_id', 'area']);
  });

  await knex.schema.createTable('documents', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.text('type').notNullable();
    t.text('code').notNullable();
    t.text('order_code');
    ts(t, 'issued_at').notNullable();
    // Proformas have no tax date (D21); businessDate = tax date, else issue date (SPEC).
    t.date('tax_date');
    t.date('due_date');
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('total_with_vat', 14, 2).notNullable();
    t.decimal('total_without_vat', 14, 2).notNullable();
    t.decimal('total_vat', 14, 2).notNullable();
    t.text('variable_symbol');
    t.specificType('customer_email_hash', 'char(64)');
    t.text('related_code');
    t.unique(['shop_id', 'type', 'code']);
    t.index(['shop_id', 'type', 'issued_at', 'id'], 'documents_keyset');
    t.index(['shop_id', 'order_code']);
  });
  await knex.raw(`alter table documents add constraint documents_type_check check (type in ('invoice','proforma','credit_note'))`);
  await knex.raw(`alter table documents add constraint documents_proforma_tax_date check (type <> 'proforma' or tax_date is null)`);

  await knex.schema.createTable('claims', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.text('code').notNullable();
    t.text('order_code');
    t.text('type').notNullable();
    t.text('reason');
    ts(t, 'opened_at').notNullable();
    ts(t, 'updated_at').notNullable();
    t.integer('status_id').notNullable();
    t.text('status_name').notNullable();
    ts(t, 'status_changed_at').notNullable();
    ts(t, 'closed_at');
    t.text('resolution');
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('refund_with_vat', 14, 2);
    t.jsonb('items').notNullable().defaultTo('[]');
    // The customer's return shipment belongs to the claim (never a `shipment.*` event).
    t.text('return_carrier_code');
    t.text('return_tracking_number');
    t.text('return_status');
    ts(t, 'return_created_at');
    ts(t, 'return_delivered_at');
    t.specificType('customer_email_hash', 'char(64)');
    t.unique(['shop_id', 'code']);
    t.index(['shop_id', 'opened_at', 'id'], 'claims_keyset');
  });

  await knex.schema.createTable('stock_items', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.text('code').notNullable();
    t.text('sku').notNullable();
    // Where the figure comes from (SPEC "Stock"): the shop's balance or the product card.
    t.text('source').notNullable();
    t.decimal('quantity', 12, 3).notNullable();
    // Only when the shop keeps a balance; otherwise null (no invented figure).
    t.decimal('physical', 12, 3);
    t.decimal('reserved', 12, 3);
    t.decimal('available', 12, 3);
    ts(t, 'updated_at').notNullable();
    t.unique(['shop_id', 'code']);
  });
  await knex.raw(`alter table stock_items add constraint stock_items_source_check check (source in ('balance','product_card','variants'))`);

  await knex.schema.createTable('stock_movements', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    // The platform's identifier: applying a movement twice is impossible.
    t.text('movement_id').notNullable();
    t.text('item_code').notNullable();
    t.text('kind').notNullable();
    t.decimal('quantity', 12, 3).notNullable();
    ts(t, 'occurred_at').notNullable();
    t.text('order_code');
    t.text('claim_code');
    t.unique(['shop_id', 'movement_id']);
    t.index(['shop_id', 'occurred_at', 'id'], 'stock_movements_keyset');
    t.index(['shop_id', 'item_code', 'occurred_at']);
  });

  await knex.schema.createTable('search_console_properties', (t) => {
    shopRef(t).primary();
    t.text('property');
    t.text('status').notNullable();
    ts(t, 'status_changed_at').notNullable();
    ts(t, 'last_sync_at');
    ts(t, 'last_successful_sync_at');
    t.integer('sync_version');
    t.date('final_data_through');
    t.date('fresh_data_through');
  });

  await knex.schema.createTable('search_console_sync_runs', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.text('run_key').notNullable();
    ts(t, 'ran_at').notNullable();
    t.text('status').notNullable();
    t.text('property').notNullable();
    t.specificType('search_types', 'text[]').notNullable();
    t.text('data_state').notNullable();
    t.date('final_data_through');
    t.date('fresh_data_through');
    t.integer('days_upserted').notNullable();
    t.specificType('revised_dates', 'date[]').notNullable();
    t.integer('sync_version').notNullable();
    t.text('error');
    t.text('error_code');
    ts(t, 'last_successful_sync_at');
    ts(t, 'retry_at');
    t.unique(['shop_id', 'run_key']);
  });

  // The demo platform's own store for the writes the service makes (availability dictionary, texts, coupons).
  await knex.schema.createTable('demo_shop_writes', (t) => {
    shopRef(t);
    t.text('kind').notNullable();
    t.text('key').notNullable();
    t.jsonb('value').notNullable();
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    t.primary(['shop_id', 'kind', 'key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'demo_shop_writes', 'search_console_sync_runs', 'search_console_properties', 'stock_movements', 'stock_items', 'claims', 'documents',
    'sync_checkpoints', 'shop_platform_settings',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.schema.alterTable('orders', (t) => t.dropColumn('status_changed_at'));
}
