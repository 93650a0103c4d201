/**
 * First-run set-up links (issue 28.2): while the service has no account, each start of an API process issues one.
 * Only the SHA-256 of the link's random token is stored, so a database reader cannot use a link; a link is good once,
 * until it expires, and only while no account exists.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('setup_tokens', (t) => {
    t.bigIncrements('id').primary();
    t.binary('token_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('used_at', { useTz: true, precision: 3 });
    // The account the link made (kept for the audit trail; a deleted account leaves the used link used).
    t.bigInteger('account_id').references('accounts.id').onDelete('SET NULL');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('setup_tokens');
}
