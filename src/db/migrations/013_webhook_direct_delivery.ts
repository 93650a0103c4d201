/**
 * The direct delivery path (issue 15, T4): an index over the deliveries that wait for their first attempt, by endpoint,
 * so the dispatcher takes the next few of every endpoint in one cheap query however long one endpoint's queue is;
 * and NOTIFY on `webhook_work` when there is new work (outbox events, deliveries, a delivery back to PENDING, an
 * endpoint changed), so the dispatcher wakes at once instead of polling.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index webhook_deliveries_first_attempt on webhook_deliveries (endpoint_id, id)
    where status = 'PENDING' and attempts = 0 and workflow_started_at is null and held_since is null and manual_retry_at is null`);
  // One notification per statement (and Postgres folds equal ones per transaction): a 10,000-row insert costs one.
  await knex.raw(`create function notify_webhook_work() returns trigger language plpgsql as $$
    begin perform pg_notify('webhook_work', tg_table_name); return null; end $$`);
  await knex.raw(`create trigger outbox_events_notify after insert on outbox_events for each statement execute function notify_webhook_work()`);
  await knex.raw(`create trigger webhook_deliveries_notify after insert on webhook_deliveries for each statement execute function notify_webhook_work()`);
  await knex.raw(`create trigger webhook_deliveries_pending_notify after update of status on webhook_deliveries for each row
    when (new.status = 'PENDING' and old.status <> 'PENDING') execute function notify_webhook_work()`);
  await knex.raw(`create trigger webhook_endpoints_notify after update of state on webhook_endpoints for each row
    when (new.state is distinct from old.state) execute function notify_webhook_work()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists webhook_endpoints_notify on webhook_endpoints');
  await knex.raw('drop trigger if exists webhook_deliveries_pending_notify on webhook_deliveries');
  await knex.raw('drop trigger if exists webhook_deliveries_notify on webhook_deliveries');
  await knex.raw('drop trigger if exists outbox_events_notify on outbox_events');
  await knex.raw('drop function if exists notify_webhook_work()');
  await knex.raw('drop index if exists webhook_deliveries_first_attempt');
}
