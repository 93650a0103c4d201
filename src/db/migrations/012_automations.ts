/** Automations (issue 14): rules with their versions, runs with their steps, the service's tags and e-mails, and the automation outbox consumer. */
import type { Knex } from 'knex';

const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('automations', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // The public id (`/automations/{workflowId}`), also the middle of every run's workflow id.
    t.text('workflow_id').notNullable().unique();
    t.text('name').notNullable();
    t.text('state').notNullable().defaultTo('draft');
    t.boolean('enabled').notNullable().defaultTo(false);
    // The draft's version: +1 on every saved change; `expectedVersion` of automations_update_draft compares with it.
    t.integer('version').notNullable().defaultTo(1);
    t.jsonb('dsl').notNullable();
    t.text('catalog_version').notNullable();
    t.boolean('valid').notNullable();
    t.jsonb('problems').notNullable().defaultTo('[]');
    // Shop scope (trigger.markets; null = every shop) and trigger, copied from the published rule for matching.
    t.specificType('markets', 'text[]');
    t.text('trigger_event');
    t.integer('published_version');
    // A draft made over MCP from a published automation names it here (a published one is never changed over MCP).
    t.text('source_workflow_id');
    t.text('client_request_id');
    t.text('request_hash');
    t.text('created_by').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'published_at');
    ts(t, 'enabled_at');
    t.unique(['account_id', 'client_request_id']);
    t.index(['account_id', 'created_at', 'id']);
  });
  await knex.raw(`alter table automations add constraint automations_state_check check (state in ('draft','published'))`);
  await knex.raw(`alter table automations add constraint automations_enabled_published check (not enabled or state = 'published')`);
  await knex.raw('create index automations_enabled_trigger on automations (account_id, trigger_event) where enabled');

  await knex.schema.createTable('automation_versions', (t) => {
    t.bigInteger('automation_id').notNullable().references('automations.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.jsonb('dsl').notNullable();
    t.text('catalog_version').notNullable();
    t.boolean('valid').notNullable();
    t.jsonb('problems').notNullable().defaultTo('[]');
    t.text('created_by').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.primary(['automation_id', 'version']);
  });

  await knex.schema.createTable('automation_runs', (t) => {
    t.bigIncrements('id');
    t.bigInteger('automation_id').notNullable().references('automations.id').onDelete('CASCADE');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('run_workflow_id').notNullable().unique();
    t.integer('automation_version').notNullable();
    t.bigInteger('outbox_event_id');
    t.uuid('event_id').notNullable();
    t.text('event_type').notNullable();
    t.bigInteger('shop_id').references('shops.id').onDelete('CASCADE');
    t.text('store');
    t.text('entity_type').notNullable();
    t.text('entity_id').notNullable();
    t.text('order_code');
    t.text('status').notNullable().defaultTo('pending');
    t.text('outcome');
    t.boolean('manual').notNullable().defaultTo(false);
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'workflow_started_at');
    ts(t, 'finished_at');
    // One run per automation and event, whatever crashes in between (SPEC: an event never starts two runs).
    t.unique(['automation_id', 'event_id']);
    t.index(['automation_id', 'created_at', 'id']);
  });
  await knex.raw(`alter table automation_runs add constraint automation_runs_status_check check (status in ('pending','running','waiting','completed','not_matched','cancelled','failed'))`);
  await knex.raw(`create index automation_runs_unstarted on automation_runs (id) where workflow_started_at is null and status = 'pending'`);

  await knex.schema.createTable('automation_run_steps', (t) => {
    t.bigInteger('run_id').notNullable().references('automation_runs.id').onDelete('CASCADE');
    t.text('node_id').notNullable();
    t.integer('position').notNullable();
    t.text('action').notNullable();
    t.text('status').notNullable();
    ts(t, 'started_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'finished_at');
    ts(t, 'wait_until');
    t.jsonb('detail');
    t.primary(['run_id', 'node_id']);
  });

  await knex.schema.createTable('automation_tags', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('entity_type').notNullable();
    t.text('entity_code').notNullable();
    t.text('tag').notNullable();
    t.bigInteger('run_id').references('automation_runs.id').onDelete('SET NULL');
    t.text('node_id');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    t.unique(['shop_id', 'entity_type', 'entity_code', 'tag']);
  });

  await knex.schema.createTable('automation_emails', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('run_id').notNullable().references('automation_runs.id').onDelete('CASCADE');
    t.text('node_id').notNullable();
    t.text('template').notNullable();
    t.text('recipients').notNullable();
    t.text('subject').notNullable();
    t.text('body').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'sent_at');
    t.unique(['run_id', 'node_id']);
  });

  // The automation consumer's own position in the outbox (independent of webhook dispatch): every event at or below
  // `position` was looked at; events above it that were looked at are listed in automation_outbox_seen.
  await knex.schema.createTable('automation_outbox_consumer', (t) => {
    t.text('name').primary();
    t.bigInteger('position').notNullable().defaultTo(0);
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('automation_outbox_seen', (t) => {
    t.bigInteger('outbox_event_id').primary();
    ts(t, 'seen_at').notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['automation_outbox_seen', 'automation_outbox_consumer', 'automation_emails', 'automation_tags', 'automation_run_steps', 'automation_runs', 'automation_versions', 'automations']) {
    await knex.schema.dropTableIfExists(table);
  }
}
