/**
 * Coupon writes over MCP (issue 13, D25): every confirmation token that was used. The token itself is signed and
 * carries everything it is bound to; this table only makes it single-use — its id is the primary key, so of two
 * confirmations racing with one token exactly one inserts the row and the other waits on the key and is refused.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('coupon_confirmations', (t) => {
    t.uuid('token_id').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // The key or OAuth connection that asked for the preview and confirmed it.
    t.text('credential_id').notNullable();
    t.text('tool').notNullable();
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('coupon_code').notNullable();
    t.timestamp('used_at', { useTz: true, precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('coupon_confirmations');
}
