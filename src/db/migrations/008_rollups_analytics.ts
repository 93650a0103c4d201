/**
 * Finished figures: daily rollups of orders per shop and of customers (maintained by the sync in the transaction of the
 * rows they summarise), and the analytics areas the platform adds — web visits by channel, order tracking, advertising
 * spend, monthly company costs and search-console rows — each record with the EUR rate of its sync time (D23).
 */
import type { Knex } from 'knex';
import { rebuildShopRollups } from '../../rollups/orders.js';

function ts(t: Knex.CreateTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

function shopRef(t: Knex.CreateTableBuilder) {
  return t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
}

/** An exact sum (NUMERIC without a scale: EUR sums keep every digit of amount x rate until the response rounds them). */
function sum(t: Knex.CreateTableBuilder, name: string) {
  return t.specificType(name, 'numeric').notNullable().defaultTo(0);
}

export async function up(knex: Knex): Promise<void> {
  // Every read of one customer's orders (rollup refresh, directory detail) goes through this index.
  await knex.raw('create index orders_customer on orders (shop_id, customer_email_hash, created_at)');

  // Orders per local calendar day of the shop (D5), in the shop currency and in EUR at each order's stored rate.
  await knex.schema.createTable('order_daily_rollups', (t) => {
    shopRef(t);
    t.date('day').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.integer('orders_count').notNullable();
    t.integer('cancelled_count').notNullable();
    for (const c of ['revenue_with_vat', 'revenue_without_vat', 'vat', 'shipping_with_vat', 'discount_with_vat']) {
      sum(t, c);
      sum(t, `${c}_eur`);
    }
    // Cost of goods over the product lines whose purchase price is known, and how many lines there are.
    t.integer('product_lines').notNullable();
    t.integer('priced_lines').notNullable();
    sum(t, 'cogs_eur');
    // Goods revenue without VAT (product lines) and the part of it whose purchase price is known.
    sum(t, 'product_revenue_without_vat_eur');
    sum(t, 'priced_revenue_without_vat_eur');
    t.primary(['shop_id', 'day', 'currency']);
  });

  // Orders per local day and hour (heatmap: weekday x hour in the shop's zone).
  await knex.schema.createTable('order_hourly_rollups', (t) => {
    shopRef(t);
    t.date('day').notNullable();
    t.smallint('hour').notNullable();
    t.integer('orders_count').notNullable();
    sum(t, 'revenue_with_vat_eur');
    t.primary(['shop_id', 'day', 'hour']);
  });

  // One row per (shop, customer pseudonym, currency): lifetime figures; `last_order_id` names the order whose
  // identity (name, e-mail, country) the directory shows.
  await knex.schema.createTable('customer_rollups', (t) => {
    shopRef(t);
    t.specificType('customer_key', 'char(64)').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.integer('orders_count').notNullable();
    t.integer('cancelled_count').notNullable();
    sum(t, 'revenue_with_vat');
    ts(t, 'first_order_at').notNullable();
    ts(t, 'last_order_at').notNullable();
    t.bigInteger('last_order_id').notNullable();
    t.primary(['shop_id', 'customer_key', 'currency']);
    t.index(['shop_id', 'last_order_at', 'customer_key'], 'customer_rollups_activity');
  });
  await knex.raw('create index customer_rollups_revenue on customer_rollups (shop_id, revenue_with_vat desc, customer_key)');

  // Per customer and local day: the purchase-activity filter and the period figures of the directory.
  await knex.schema.createTable('customer_daily_rollups', (t) => {
    shopRef(t);
    t.specificType('customer_key', 'char(64)').notNullable();
    t.date('day').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.integer('orders_count').notNullable();
    t.integer('cancelled_count').notNullable();
    sum(t, 'revenue_with_vat');
    ts(t, 'first_order_at').notNullable();
    ts(t, 'last_order_at').notNullable();
    t.primary(['shop_id', 'day', 'customer_key', 'currency']);
    t.index(['shop_id', 'customer_key']);
  });

  // Web analytics: visits per local day by channel, source, device and landing page, as the platform reports them.
  await knex.schema.createTable('web_visits', (t) => {
    shopRef(t);
    t.date('day').notNullable();
    t.text('channel').notNullable();
    t.text('source').notNullable();
    t.text('device').notNullable();
    t.text('landing_page').notNullable();
    t.integer('visits').notNullable();
    t.primary(['shop_id', 'day', 'channel', 'source', 'device', 'landing_page']);
  });

  // Which orders web analytics tracked to a visit (order coverage), with the visit's channel and source.
  await knex.schema.createTable('order_tracking', (t) => {
    shopRef(t);
    t.text('order_code').notNullable();
    t.text('channel').notNullable();
    t.text('source').notNullable();
    t.text('device').notNullable();
    t.text('landing_page').notNullable();
    ts(t, 'tracked_at').notNullable();
    t.primary(['shop_id', 'order_code']);
  });

  // Visits, tracked orders and their revenue per local day, channel and source (refreshed with the rows above).
  await knex.schema.createTable('channel_daily_rollups', (t) => {
    shopRef(t);
    t.date('day').notNullable();
    t.text('channel').notNullable();
    t.text('source').notNullable();
    t.integer('visits').notNullable();
    t.integer('orders_count').notNullable();
    sum(t, 'revenue_with_vat_eur');
    t.primary(['shop_id', 'day', 'channel', 'source']);
  });

  // Advertising: daily spend, budget, clicks and attributed conversions per ad platform and campaign.
  await knex.schema.createTable('ad_spend_daily', (t) => {
    shopRef(t);
    t.text('platform').notNullable();
    t.text('campaign').notNullable();
    t.date('day').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('spend', 14, 2).notNullable();
    t.decimal('budget', 14, 2).notNullable();
    t.integer('impressions').notNullable();
    t.integer('clicks').notNullable();
    t.integer('conversions').notNullable();
    t.decimal('conversion_value', 14, 2).notNullable();
    t.decimal('eur_rate', 14, 6).notNullable();
    t.primary(['shop_id', 'day', 'platform', 'campaign']);
  });

  // Monthly company costs (rent, salaries, software...) for the result after costs.
  await knex.schema.createTable('company_costs', (t) => {
    shopRef(t);
    t.date('month').notNullable();
    t.text('category').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('amount', 14, 2).notNullable();
    t.decimal('eur_rate', 14, 6).notNullable();
    t.primary(['shop_id', 'month', 'category']);
  });

  // Search-console rows by day, query, page, country and device; `data_state` fresh rows are replaced by final ones.
  await knex.schema.createTable('search_console_rows', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.date('day').notNullable();
    t.text('query').notNullable();
    t.text('page').notNullable();
    t.specificType('country', 'char(3)').notNullable();
    t.text('device').notNullable();
    t.integer('clicks').notNullable();
    t.integer('impressions').notNullable();
    t.decimal('position', 8, 2).notNullable();
    t.text('data_state').notNullable();
    t.specificType('content_hash', 'char(64)').notNullable();
    t.unique(['shop_id', 'day', 'query', 'page', 'country', 'device']);
    t.index(['shop_id', 'day', 'id'], 'search_console_rows_keyset');
  });

  // A database migrated with orders already in it gets its rollups now; later the sync and the loader keep them.
  const shops: Array<{ id: string }> = await knex('shops').select('id');
  for (const shop of shops) await rebuildShopRollups(knex, String(shop.id));
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'search_console_rows', 'company_costs', 'ad_spend_daily', 'channel_daily_rollups', 'order_tracking', 'web_visits',
    'customer_daily_rollups', 'customer_rollups', 'order_hourly_rollups', 'order_daily_rollups',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('drop index if exists orders_customer');
}
