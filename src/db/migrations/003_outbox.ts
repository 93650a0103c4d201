/** The transactional outbox: every domain event, written in the same transaction as the change that causes it. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outbox_events', (t) => {
    // The sequence gives dispatch a total order to read from; event_id is the public identifier (SPEC envelope).
    t.bigIncrements('id');
    t.uuid('event_id').notNullable().unique();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('shop_id').references('shops.id').onDelete('CASCADE');
    t.text('store');
    t.text('event_type').notNullable();
    t.text('resource_type').notNullable();
    t.text('resource_id').notNullable();
    t.jsonb('data').notNullable();
    t.timestamp('occurred_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    // Set once dispatch has turned the event into deliveries (or found no subscriber).
    t.timestamp('dispatched_at', { useTz: true, precision: 3 });
    t.index(['account_id', 'id']);
  });
  await knex.raw('create index outbox_events_undispatched on outbox_events (id) where dispatched_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('outbox_events');
}
