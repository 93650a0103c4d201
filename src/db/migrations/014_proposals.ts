/**
 * Proposals (issue 13): changes an assistant prepares over MCP (availability dictionary, product and category texts,
 * claims settings), their items with the result of each item's write, and the log of every content write the service
 * made (approved, autonomous or by a person in the application) that the content-change events come from.
 */
import type { Knex } from 'knex';

const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('proposals', (t) => {
    t.bigIncrements('id');
    // The public id (`draftId` of the drafts paths), also the middle of the workflow id `proposal-<draftId>`.
    t.text('draft_id').notNullable().unique();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('status').notNullable();
    // The AI write mode it was prepared under (D13): `autonomous` texts are written without a person.
    t.text('write_mode').notNullable();
    t.text('note');
    t.text('created_by').notNullable();
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'expires_at').notNullable();
    // The person's (or the autonomous policy's) decision, as the workflow recorded it.
    t.text('decision');
    t.text('decided_by');
    t.text('decision_reason');
    ts(t, 'decided_at');
    ts(t, 'finished_at');
    // Set once the workflow was started; a proposal without it is started by the reconcile path.
    ts(t, 'workflow_started_at');
    t.index(['account_id', 'status', 'created_at']);
  });
  await knex.raw(`alter table proposals add constraint proposals_kind_check check (kind in ('availabilities','product_texts','category_texts','claims_settings'))`);
  await knex.raw(`alter table proposals add constraint proposals_status_check check (status in (
    'pending','writing','executed','partial','failed','awaiting_approval','written','written_with_warnings','waiting','rejected','expired'))`);
  await knex.raw(`alter table proposals add constraint proposals_decision_check check (decision in ('approve','reject'))`);
  await knex.raw('create index proposals_unstarted on proposals (id) where workflow_started_at is null');

  await knex.schema.createTable('proposal_items', (t) => {
    t.bigIncrements('id');
    t.bigInteger('proposal_id').notNullable().references('proposals.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    // `product` code, `category` guid, `availability` id, or `claims_settings` field path.
    t.text('entity').notNullable();
    t.text('entity_id').notNullable();
    t.text('entity_name');
    // field -> proposed value; field -> value when proposed (the preview's "before").
    t.jsonb('changes').notNullable();
    t.jsonb('before').notNullable();
    // field -> value just before the write, fixed before the shop is called so a retried write compares with it.
    t.jsonb('before_write');
    t.text('status').notNullable().defaultTo('pending');
    t.jsonb('result');
    ts(t, 'written_at');
    t.unique(['proposal_id', 'position']);
  });
  await knex.raw(`alter table proposal_items add constraint proposal_items_status_check check (status in ('pending','written','unchanged','failed'))`);

  await knex.schema.createTable('content_writes', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('entity').notNullable();
    t.text('entity_id').notNullable();
    t.text('source').notNullable();
    t.text('source_run_id');
    t.specificType('changed_fields', 'text[]').notNullable();
    t.jsonb('before_hash').notNullable();
    t.jsonb('after_hash').notNullable();
    t.text('written_by').notNullable();
    // The content-change event; null when nothing really changed (no event).
    t.uuid('event_id');
    ts(t, 'written_at').notNullable().defaultTo(knex.fn.now());
    t.index(['shop_id', 'entity', 'entity_id', 'written_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('content_writes');
  await knex.schema.dropTableIfExists('proposal_items');
  await knex.schema.dropTableIfExists('proposals');
}
