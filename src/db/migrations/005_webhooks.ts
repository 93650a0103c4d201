/**
 * Outbound webhooks: endpoints (D18 secrets encrypted), deliveries (one per event and endpoint, the exact body that is
 * signed, D19), the attempt log (one row per attempt, never a body), and account notifications (D16).
 */
import type { Knex } from 'knex';

function ts(t: Knex.CreateTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('url').notNullable();
    // `all_events`: every subscribable type, including types added later; otherwise `event_types`.
    t.boolean('all_events').notNullable();
    t.specificType('event_types', 'text[]').notNullable().defaultTo('{}');
    // `all_shops`: every shop of the account, including future ones; otherwise `shop_codes`.
    t.boolean('all_shops').notNullable();
    t.specificType('shop_codes', 'text[]').notNullable().defaultTo('{}');
    // AES-256-GCM under SECRETS_KEY (D18): version byte | IV | tag | ciphertext. Never selected by a read.
    t.binary('secret_encrypted').notNullable();
    ts(t, 'secret_rotated_at');
    t.text('state').notNullable().defaultTo('enabled');
    ts(t, 'paused_at');
    t.text('pause_reason');
    // D14: consecutive failed attempts of any kind; a 2xx resets it. Kept here, not in a workflow, so that
    // concurrent deliveries count it exactly (row lock) and every reader sees the same number.
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.text('created_by').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'updated_at').notNullable().defaultTo(knex.fn.now());
    // A deleted endpoint stays for its delivery log; it no longer counts against the plan.
    ts(t, 'deleted_at');
    t.index(['account_id']);
  });
  await knex.raw(`alter table webhook_endpoints add constraint webhook_endpoints_state_check check (state in ('enabled','paused','disabled'))`);
  await knex.raw(`alter table webhook_endpoints add constraint webhook_endpoints_pause_reason_check check (pause_reason is null or pause_reason in ('consecutive_failures','pending_deliveries'))`);

  await knex.schema.createTable('webhook_deliveries', (t) => {
    // The numeric X-Service-Delivery identifier; the workflow ID is webhook-delivery-<id>.
    t.bigIncrements('id');
    t.bigInteger('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.uuid('event_id').notNullable();
    t.bigInteger('outbox_event_id');
    t.text('event_type').notNullable();
    t.text('store');
    // The envelope serialised once at dispatch: every attempt sends these exact bytes (D19).
    t.text('body').notNullable();
    t.text('status').notNullable().defaultTo('PENDING');
    t.integer('attempts').notNullable().defaultTo(0);
    ts(t, 'last_attempt_at');
    t.integer('last_http_status');
    ts(t, 'next_attempt_at');
    // Set once a delivery workflow was started for it; the dispatcher starts the rest (nothing is lost).
    ts(t, 'workflow_started_at');
    // Set while its workflow waits because the endpoint is paused or the plan has no webhooks.
    ts(t, 'held_since');
    // D15: a manual retry makes one attempt and no schedule.
    ts(t, 'manual_retry_at');
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'completed_at');
    t.unique(['event_id', 'endpoint_id']);
    t.index(['endpoint_id', 'created_at', 'id'], 'webhook_deliveries_keyset');
  });
  await knex.raw(`alter table webhook_deliveries add constraint webhook_deliveries_status_check check (status in ('PENDING','SENT','FAILED','SKIPPED'))`);
  // Pending counts per endpoint (D14) and the dispatcher's look-ups read these small partial indexes.
  await knex.raw(`create index webhook_deliveries_pending on webhook_deliveries (endpoint_id) where status = 'PENDING'`);
  await knex.raw(`create index webhook_deliveries_unstarted on webhook_deliveries (id) where status = 'PENDING' and workflow_started_at is null`);
  await knex.raw(`create index webhook_deliveries_held on webhook_deliveries (endpoint_id) where status = 'PENDING' and held_since is not null`);
  await knex.raw(`create index webhook_deliveries_completed on webhook_deliveries (completed_at) where status <> 'PENDING'`);

  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.bigIncrements('id');
    t.bigInteger('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    // success | http_error | redirect | timeout | connection_error | address_rejected
    t.text('outcome').notNullable();
    t.integer('http_status');
    t.text('error');
    ts(t, 'attempted_at').notNullable();
    t.integer('duration_ms').notNullable();
    // One row per attempt number: an activity retried after a crash cannot log an attempt twice.
    t.unique(['delivery_id', 'attempt']);
    t.index(['attempted_at']);
  });

  await knex.schema.createTable('notifications', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('title').notNullable();
    t.text('message').notNullable();
    t.jsonb('details').notNullable().defaultTo('{}');
    // Makes a notification of one occurrence (e.g. one pause) idempotent under activity retries.
    t.text('dedupe_key').notNullable().unique();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'read_at');
    t.index(['account_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['notifications', 'webhook_delivery_attempts', 'webhook_deliveries', 'webhook_endpoints']) {
    await knex.schema.dropTableIfExists(table);
  }
}
