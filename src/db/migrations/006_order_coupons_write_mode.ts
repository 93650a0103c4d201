/**
 * Orders carry the coupon the customer applied and its discount lines (an order line of kind `discount`, no product,
 * negative prices); access keys carry the AI write mode of D13 (what write tools their holder gets over MCP).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('orders', (t) => {
    t.text('coupon_code');
    // Sum of the discount lines with VAT (zero or negative); already included in the order totals.
    t.decimal('discount_with_vat', 14, 2).notNullable().defaultTo(0);
  });
  await knex.raw('create index orders_coupon_code on orders (shop_id, coupon_code) where coupon_code is not null');
  await knex.schema.alterTable('order_items', (t) => {
    t.text('kind').notNullable().defaultTo('product');
    t.text('coupon_code');
  });
  await knex.raw(`alter table order_items add constraint order_items_kind_check check (kind in ('product','discount'))`);
  await knex.raw(`alter table order_items add constraint order_items_discount_has_no_product check (kind = 'product' or product_code is null)`);

  await knex.schema.alterTable('access_keys', (t) => {
    t.text('write_mode').notNullable().defaultTo('proposals');
  });
  await knex.raw(`alter table access_keys add constraint access_keys_write_mode_check check (write_mode in ('read_only','proposals','autonomous'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('access_keys', (t) => t.dropColumn('write_mode'));
  await knex.schema.alterTable('order_items', (t) => {
    t.dropColumn('kind');
    t.dropColumn('coupon_code');
  });
  await knex.raw('drop index if exists orders_coupon_code');
  await knex.schema.alterTable('orders', (t) => {
    t.dropColumn('coupon_code');
    t.dropColumn('discount_with_vat');
  });
}
