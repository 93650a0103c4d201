/**
 * People of an account (D27) and their sessions in the application; the OAuth authorization server's storage (D28):
 * one table for the library's short-lived artefacts (codes, tokens, sessions, registered clients) and the
 * connections people grant to clients. Access keys learn which person issued them.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('people', (t) => {
    t.text('id').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // Stored trimmed and lower-cased; one person signs in to one account, so an e-mail is unique service-wide.
    t.text('email').notNullable().unique();
    t.text('name').notNullable().defaultTo('');
    // Argon2id PHC string; never returned by any page or API.
    t.text('password_hash').notNullable();
    t.text('role').notNullable();
    t.specificType('permissions', 'text[]').notNullable().defaultTo('{}');
    t.boolean('all_shops').notNullable().defaultTo(true);
    t.specificType('shop_codes', 'text[]').notNullable().defaultTo('{}');
    // TOTP secret encrypted like webhook secrets (AES-256-GCM, the person id as additional data).
    t.binary('totp_secret');
    t.timestamp('totp_enabled_at', { useTz: true, precision: 3 });
    // The last accepted TOTP time step: a code is never accepted twice.
    t.bigInteger('totp_last_step');
    // SHA-256 of the unused one-time recovery codes.
    t.specificType('recovery_code_hashes', 'bytea[]').notNullable().defaultTo('{}');
    t.integer('failed_sign_ins').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true, precision: 3 });
    t.timestamp('password_changed_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('disabled_at', { useTz: true, precision: 3 });
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id']);
  });
  await knex.raw(`alter table people add constraint people_role_check check (role in ('owner','admin','member'))`);

  // Sessions of the application. Only the SHA-256 of the cookie value is stored; a sign-in always starts a new row.
  await knex.schema.createTable('app_sessions', (t) => {
    t.binary('id_hash').primary();
    t.text('csrf_token').notNullable();
    // Set once the password (and second factor, when enabled) is checked.
    t.text('person_id').references('people.id').onDelete('CASCADE');
    // Password checked, second factor still to come.
    t.text('pending_person_id').references('people.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    t.index(['person_id']);
    t.index(['expires_at']);
  });

  await knex.schema.alterTable('access_keys', (t) => {
    t.text('person_id').references('people.id').onDelete('SET NULL');
  });

  // The authorization server library's storage (its adapter interface): one row per artefact, payload as JSON.
  await knex.schema.createTable('oauth_artifacts', (t) => {
    t.text('kind').notNullable();
    t.text('id').notNullable();
    t.jsonb('payload').notNullable();
    t.text('grant_id');
    t.text('uid');
    t.text('user_code');
    t.timestamp('expires_at', { useTz: true, precision: 3 });
    t.timestamp('consumed_at', { useTz: true, precision: 3 });
    t.primary(['kind', 'id']);
    t.index(['grant_id']);
    t.index(['uid']);
    t.index(['expires_at']);
  });

  // A connection: one person's grant to one client (D28) — what the consent screen ticked.
  await knex.schema.createTable('oauth_connections', (t) => {
    t.text('id').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('client_id').notNullable();
    t.text('client_name').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.boolean('all_shops').notNullable();
    t.specificType('shop_codes', 'text[]').notNullable().defaultTo('{}');
    t.text('write_mode').notNullable().defaultTo('proposals');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true, precision: 3 });
    t.timestamp('revoked_at', { useTz: true, precision: 3 });
    t.index(['person_id']);
  });
  await knex.raw(`alter table oauth_connections add constraint oauth_connections_write_mode_check check (write_mode in ('read_only','proposals','autonomous'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('oauth_connections');
  await knex.schema.dropTableIfExists('oauth_artifacts');
  await knex.schema.alterTable('access_keys', (t) => t.dropColumn('person_id'));
  await knex.schema.dropTableIfExists('app_sessions');
  await knex.schema.dropTableIfExists('people');
}
