/**
 * Invitations of people by e-mail (D27, U11): the rights the invitee will get, and only the SHA-256 of the link's
 * random token, so a database reader cannot accept an invitation. The e-mail outbox gets the source `people`.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('person_invitations', (t) => {
    t.text('id').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('role').notNullable();
    t.specificType('permissions', 'text[]').notNullable();
    t.boolean('all_shops').notNullable();
    t.specificType('shop_codes', 'text[]').notNullable();
    t.binary('token_hash').notNullable().unique();
    t.text('invited_by').notNullable().references('people.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('accepted_at', { useTz: true, precision: 3 });
    t.text('accepted_person_id').references('people.id');
    t.timestamp('revoked_at', { useTz: true, precision: 3 });
    t.index(['account_id', 'created_at']);
  });
  await knex.raw(`alter table person_invitations add constraint person_invitations_role_check check (role in ('owner','admin','member'))`);
  await knex.raw('alter table email_outbox drop constraint email_outbox_source_check');
  await knex.raw(`alter table email_outbox add constraint email_outbox_source_check check (source in ('affiliate','automation','people'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`delete from email_outbox where source = 'people'`);
  await knex.raw('alter table email_outbox drop constraint email_outbox_source_check');
  await knex.raw(`alter table email_outbox add constraint email_outbox_source_check check (source in ('affiliate','automation'))`);
  await knex.schema.dropTable('person_invitations');
}
