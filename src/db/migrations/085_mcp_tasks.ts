/**
 * Issue 26.2, proposals as MCP tasks: which proposals an MCP client asked for as a task (the task id is the proposal's
 * draft id). Everything else about a task — its state, its result — is the proposal's own row and its Temporal workflow,
 * so every API process answers tasks/get, tasks/result, tasks/list and tasks/cancel alike.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mcp_tasks', (t) => {
    t.text('task_id').primary().references('proposals.draft_id').onDelete('CASCADE');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // The key or OAuth connection that created it (`key:<id>` / `oauth:<id>`, as proposals.created_by).
    t.text('created_by').notNullable();
    // The tool that created it: reading the task needs that tool's scope.
    t.text('tool').notNullable();
    // The retention the client asked for (ms), as the task reports it back; null = the proposal's own life.
    t.bigInteger('ttl_ms');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mcp_tasks');
}
