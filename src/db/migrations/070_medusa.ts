/**
 * Issue 28, the Medusa adapter: the events a Medusa shop's forwarder delivered (each once; its credentials are in
 * shop_credentials, migration 020), and the shop's sync state (why the last run failed, for REST /stores and the application).
 */
import type { Knex } from 'knex';

function ts(t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('medusa_forwarded_events', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    // The forwarder's per-POST UUID: a repeated delivery is stored once.
    t.uuid('event_id').notNullable();
    t.text('event').notNullable();
    ts(t, 'occurred_at').notNullable();
    ts(t, 'received_at').notNullable().defaultTo(knex.fn.now());
    t.unique(['shop_id', 'event_id']);
    t.index(['shop_id', 'received_at']);
  });

  await knex.schema.alterTable('shops', (t) => {
    // Why the last sync attempt failed (cleared by the next complete run), and since when it has been failing.
    t.text('sync_error');
    ts(t, 'sync_error_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('shops', (t) => {
    t.dropColumn('sync_error');
    t.dropColumn('sync_error_at');
  });
  await knex.schema.dropTableIfExists('medusa_forwarded_events');
}
