/**
 * The partner portal (issue 24 point 2): partners' sign-in credentials (Argon2id, lockout counters), their sessions
 * (separate from the application's staff sessions), one-time links sent by e-mail (address verification, password
 * reset; only their SHA-256 is stored) and the payout details a partner enters, kept only encrypted under SECRETS_KEY.
 */
import type { Knex } from 'knex';

const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('affiliate_partner_logins', (t) => {
    t.bigInteger('partner_id').primary().references('affiliate_partners.id').onDelete('CASCADE');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // Lower-cased; a partner signs in with it on every portal of the account.
    t.text('email').notNullable();
    t.text('password_hash').notNullable();
    ts(t, 'email_verified_at');
    t.integer('failed_sign_ins').notNullable().defaultTo(0);
    ts(t, 'locked_until');
    ts(t, 'password_changed_at').notNullable();
    ts(t, 'created_at').notNullable();
    t.unique(['account_id', 'email']);
  });

  await knex.schema.createTable('affiliate_portal_sessions', (t) => {
    t.binary('id_hash').primary();
    t.text('csrf_token').notNullable();
    // The portal (shop) the session was started on: a cookie taken to another portal is no session there.
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.bigInteger('partner_id').references('affiliate_partners.id').onDelete('CASCADE');
    ts(t, 'created_at').notNullable();
    ts(t, 'last_seen_at').notNullable();
    ts(t, 'expires_at').notNullable();
    t.index(['expires_at']);
  });

  await knex.schema.createTable('affiliate_portal_links', (t) => {
    t.binary('token_hash').primary();
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('purpose').notNullable();
    ts(t, 'created_at').notNullable();
    ts(t, 'expires_at').notNullable();
    ts(t, 'used_at');
    t.index(['partner_id', 'purpose']);
  });
  await knex.raw(`alter table affiliate_portal_links add constraint affiliate_portal_links_purpose_check check (purpose in ('verify_email','reset_password'))`);

  // Bank account and tax id as the partner entered them: AES-256-GCM under SECRETS_KEY, bound to the partner's row.
  await knex.schema.createTable('affiliate_payout_details', (t) => {
    t.bigInteger('partner_id').primary().references('affiliate_partners.id').onDelete('CASCADE');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.binary('details_encrypted').notNullable();
    ts(t, 'updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('affiliate_payout_details');
  await knex.schema.dropTableIfExists('affiliate_portal_links');
  await knex.schema.dropTableIfExists('affiliate_portal_sessions');
  await knex.schema.dropTableIfExists('affiliate_partner_logins');
}
