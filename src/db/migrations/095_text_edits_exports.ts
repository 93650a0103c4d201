/**
 * Data the application owns for its text screens and customer exports (issue 25): a write batch of texts (a card
 * save, a bulk edit, an import — its id is the events' `source_run_id`), with an import's previewed changes until
 * the person confirms them; and a large customer export run by a workflow, its progress and its file until it expires.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('text_edit_batches', (t) => {
    t.text('id').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('entity').notNullable();
    t.text('kind').notNullable();
    t.text('status').notNullable();
    // Import preview: [{ id, name, fingerprint, changes: {field: text}, before: {field: text|null} }] — only real changes.
    t.jsonb('items').notNullable().defaultTo('[]');
    // After the write: [{ id, status: written|unchanged|failed, changedFields, code?, message? }].
    t.jsonb('results');
    t.text('file_name');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('written_at', { useTz: true, precision: 3 });
    t.index(['account_id', 'created_at']);
  });
  await knex.raw(`alter table text_edit_batches add constraint text_edit_batches_kind_check check (kind in ('card','bulk','import'))`);
  await knex.raw(`alter table text_edit_batches add constraint text_edit_batches_status_check check (status in ('previewed','written'))`);
  await knex.raw(`alter table text_edit_batches add constraint text_edit_batches_entity_check check (entity in ('product','category'))`);

  await knex.schema.createTable('customer_exports', (t) => {
    t.text('id').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('format').notNullable();
    t.jsonb('query').notNullable();
    t.text('status').notNullable();
    // Rows written so far (the progress the page shows) and, once ready, in the file.
    t.integer('rows_total');
    t.integer('rows_done').notNullable().defaultTo(0);
    t.binary('file');
    t.text('file_name');
    t.text('error');
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable();
    t.timestamp('finished_at', { useTz: true, precision: 3 });
    t.timestamp('expires_at', { useTz: true, precision: 3 });
    t.index(['person_id', 'created_at']);
  });
  await knex.raw(`alter table customer_exports add constraint customer_exports_format_check check (format in ('csv','xlsx'))`);
  await knex.raw(`alter table customer_exports add constraint customer_exports_status_check check (status in ('running','ready','failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('customer_exports');
  await knex.schema.dropTableIfExists('text_edit_batches');
}
