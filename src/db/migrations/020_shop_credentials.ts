/**
 * A connected shop's platform credentials (issue 28): the fields its adapter asks for, as one JSON document encrypted
 * with SECRETS_KEY (AES-256-GCM bound to the shop's id, as webhook secrets are). Never returned by any interface;
 * deleted when the shop is disconnected (its data stays).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('shop_credentials', (t) => {
    t.bigInteger('shop_id').primary().references('shops.id').onDelete('CASCADE');
    t.text('platform').notNullable();
    t.binary('credentials_encrypted').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('shop_credentials');
}
