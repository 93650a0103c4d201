/**
 * Sign-in limits (S4): wrong second-factor codes counted per person (like wrong passwords), and wrong passwords for
 * e-mail addresses that belong to nobody counted too, under the SHA-256 of the address, so an unknown address locks
 * exactly like a known one and the lockout tells nobody which addresses exist.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('people', (t) => {
    t.integer('failed_second_factors').notNullable().defaultTo(0);
    t.timestamp('second_factor_locked_until', { useTz: true, precision: 3 });
  });
  await knex.schema.createTable('sign_in_unknown_failures', (t) => {
    t.binary('email_hash').primary();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true, precision: 3 });
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sign_in_unknown_failures');
  await knex.schema.alterTable('people', (t) => {
    t.dropColumn('second_factor_locked_until');
    t.dropColumn('failed_second_factors');
  });
}
