/**
 * Retries made by the dispatcher's sender (issue 15, T10): an index over the deliveries whose first attempt failed and
 * whose next attempt is due at `next_attempt_at`, by endpoint and due time, so the sender takes each endpoint's due
 * retries, and finds when the next one falls due, with one cheap look-up per endpoint however many wait; and an index
 * over the few deliveries that still need a workflow (manual retries, held ones), which the dispatcher looks for four
 * times a second and which would otherwise be found among every pending delivery.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index webhook_deliveries_due_retry on webhook_deliveries (endpoint_id, next_attempt_at)
    where status = 'PENDING' and attempts > 0 and workflow_started_at is null and held_since is null and manual_retry_at is null`);
  await knex.raw(`create index webhook_deliveries_needs_workflow on webhook_deliveries (id)
    where status = 'PENDING' and workflow_started_at is null and (held_since is not null or manual_retry_at is not null)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_deliveries_needs_workflow');
  await knex.raw('drop index if exists webhook_deliveries_due_retry');
}
