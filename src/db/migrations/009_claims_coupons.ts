/**
 * Claims completed (status timeline, process, tags, the customer's request with a MASKED account, rating, e-mails sent),
 * the claims module's settings per shop (the service's own data), and the shop's coupons mirrored by the sync.
 */
import type { Knex } from 'knex';

function ts(t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

/** Country + four asterisks + the last four characters: the only form of an account number the service stores (CC2). */
export const MASKED_ACCOUNT_PATTERN = '^[A-Z]{2}\\*{4}[0-9A-Z]{4}$';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('claims', (t) => {
    // Every status the claim has had, oldest first: [{statusId, at}].
    t.jsonb('status_history').notNullable().defaultTo('[]');
    t.integer('process_id');
    ts(t, 'deadline_at');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    // What the customer asks for: refund, exchange or repair; a refund goes to an account, the original payment or a coupon.
    t.text('request_type');
    t.text('refund_to');
    t.text('refund_account_masked');
    t.smallint('rating');
    t.text('rating_comment');
    // E-mails the shop sent the customer about the claim: [{templateId, subject, sentAt}] (no address, no body).
    t.jsonb('emails').notNullable().defaultTo('[]');
  });
  await knex.raw(`alter table claims add constraint claims_refund_account_masked check (refund_account_masked ~ '${MASKED_ACCOUNT_PATTERN}')`);
  await knex.raw(`alter table claims add constraint claims_request_type_check check (request_type in ('refund','exchange','repair'))`);
  await knex.raw(`alter table claims add constraint claims_refund_to_check check (refund_to in ('bank_account','original_payment','coupon'))`);
  await knex.raw('alter table claims add constraint claims_rating_check check (rating between 1 and 5)');
  await knex.raw('create index claims_status on claims (shop_id, status_id, opened_at)');

  // The claims module's configuration: the service's own data per shop (not synced), one validated document.
  await knex.schema.createTable('claims_settings', (t) => {
    t.bigInteger('shop_id').primary().references('shops.id').onDelete('CASCADE');
    t.jsonb('settings').notNullable();
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
  });

  // The shop's coupons as the sync last saw them; a coupon removed in the shop is deleted here (then "not found").
  await knex.schema.createTable('coupons', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('code').notNullable();
    t.text('name').notNullable();
    t.text('discount_type').notNullable();
    t.decimal('discount_percent', 5, 2);
    t.decimal('discount_amount', 14, 2);
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('min_order_with_vat', 14, 2);
    ts(t, 'valid_from');
    // Exclusive end of validity; null = no end.
    ts(t, 'valid_until');
    t.integer('usage_limit');
    t.integer('per_customer_limit');
    t.specificType('category_guids', 'text[]').notNullable().defaultTo('{}');
    t.specificType('product_codes', 'text[]').notNullable().defaultTo('{}');
    // The shop's own switch.
    t.boolean('enabled').notNullable();
    ts(t, 'disabled_at');
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
    t.integer('partner_index');
    t.unique(['shop_id', 'code']);
  });
  await knex.raw(`alter table coupons add constraint coupons_discount_check check (
    (discount_type = 'percent' and discount_percent is not null and discount_amount is null)
    or (discount_type = 'fixed' and discount_amount is not null and discount_percent is null)
    or (discount_type = 'free_shipping' and discount_amount is null and discount_percent is null))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('coupons');
  await knex.schema.dropTableIfExists('claims_settings');
  await knex.raw('drop index if exists claims_status');
  await knex.schema.alterTable('claims', (t) => {
    for (const c of ['status_history', 'process_id', 'deadline_at', 'tags', 'request_type', 'refund_to', 'refund_account_masked', 'rating', 'rating_comment', 'emails']) t.dropColumn(c);
  });
}
