/**
 * Issue 26.3, 2025-era elicitation: the sessions this server issues to 2025-era clients that can ask their user
 * (`Mcp-Session-Id`), and the questions (`elicitation/create`) asked on a session. Both live here, not in a process's
 * memory, so any API process answers any request of a session, and a person's answer POSTed to another process still
 * reaches the call that waits for it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mcp_sessions', (t) => {
    // SHA-256 (hex) of the session id: the id travels in a header and logs of proxies; the table never holds it.
    t.text('id_hash').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // The key or OAuth connection that initialized it (`key:<id>` / `oauth:<id>`); no other credential may use it.
    t.text('credential').notNullable();
    t.text('protocol_version').notNullable();
    // The client's declared capabilities from `initialize`, as sent (elicitation decides the confirmation path).
    t.jsonb('client_capabilities').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('last_seen_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('ended_at', { useTz: true, precision: 3 });
    t.index(['expires_at']);
  });
  await knex.schema.createTable('mcp_session_questions', (t) => {
    // The JSON-RPC id of our `elicitation/create` request; the client's response names it.
    t.text('rpc_id').primary();
    t.text('session_hash').notNullable().references('mcp_sessions.id_hash').onDelete('CASCADE');
    t.text('tool').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    // The person's answer: accept / decline / cancel, and the form's content on accept; null while unanswered.
    t.text('action');
    t.jsonb('content');
    t.timestamp('answered_at', { useTz: true, precision: 3 });
    t.index(['session_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mcp_session_questions');
  await knex.schema.dropTable('mcp_sessions');
}
