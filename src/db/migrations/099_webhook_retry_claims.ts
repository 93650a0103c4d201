/**
 * Retries made on time by the partition dispatcher while the delivery's workflow keeps the schedule (WR1): the claim of
 * a delivery's next attempt (its number, by whom, and until when it holds), taken by compare-and-set by whichever of the two makes
 * the attempt, so each attempt is made once; and the index the dispatcher finds due retries by, now whether or not the
 * delivery has its workflow (019's index required none).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.integer('claimed_attempt');
    t.timestamp('claimed_until', { useTz: true });
    // 'workflow' (the delivery's one workflow, which may take its own claim again) or the claiming worker process.
    t.text('claimed_by');
  });
  await knex.raw('drop index if exists webhook_deliveries_due_retry');
  await knex.raw(`create index webhook_deliveries_due_retry on webhook_deliveries (endpoint_id, next_attempt_at)
    where status = 'PENDING' and attempts > 0 and held_since is null and manual_retry_at is null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_deliveries_due_retry');
  await knex.raw(`create index webhook_deliveries_due_retry on webhook_deliveries (endpoint_id, next_attempt_at)
    where status = 'PENDING' and attempts > 0 and workflow_started_at is null and held_since is null and manual_retry_at is null`);
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('claimed_by');
    t.dropColumn('claimed_until');
    t.dropColumn('claimed_attempt');
  });
}
