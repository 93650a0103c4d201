/**
 * The affiliate programme that pays (issue 24): tracked clicks as the redirect records them (keyed hashes of the
 * address and user agent, the public click token the shop's thank-you page hands back, repeats of a flood counted on
 * the first click), the conversion beacons as received, a person's commission decisions, and payouts drawn up as
 * drafts that a person confirms and marks paid — one payout per shop, partner, currency and month.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('affiliate_clicks', (t) => {
    // Public id of a click: handed to the shop in the redirect's parameter and back in the beacon (never the row id).
    t.text('token');
    t.text('ip_hash');
    t.text('ua_hash');
    t.text('target_url');
    // Further requests of the same address for the same link within the flood window: counted here, not as clicks.
    t.integer('repeats').notNullable().defaultTo(0);
    t.timestamp('last_seen_at', { useTz: true });
  });
  await knex.raw('create unique index affiliate_clicks_token on affiliate_clicks (token) where token is not null');
  await knex.raw('create index affiliate_clicks_flood on affiliate_clicks (shop_id, ip_hash, clicked_at) where ip_hash is not null');

  await knex.schema.createTable('affiliate_beacons', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('order_code').notNullable();
    t.text('click_token');
    t.bigInteger('click_id').references('affiliate_clicks.id');
    // attributed | unattributed (with the reason: unknown_click, no_click, outside_window, order_not_synced, coupon)
    t.text('outcome').notNullable();
    t.text('reason');
    t.timestamp('received_at', { useTz: true }).notNullable();
    t.index(['shop_id', 'order_code']);
  });

  await knex.schema.alterTable('affiliate_conversions', (t) => {
    // A person's decision on a commission (manual-approval campaigns, or a rejection at any time before payout).
    t.text('manual_decision');
    t.text('manual_reason');
    t.text('decided_by_person_id');
    t.timestamp('decided_at', { useTz: true });
  });
  await knex.raw(`alter table affiliate_conversions add constraint affiliate_conversions_manual_decision_check
    check (manual_decision is null or manual_decision in ('approved','rejected'))`);

  await knex.schema.alterTable('affiliate_payouts', (t) => {
    t.text('confirmed_by_person_id');
    t.timestamp('confirmed_at', { useTz: true });
    t.text('paid_by_person_id');
    t.text('payment_reference');
    t.text('drawn_up_by');
  });
  // A payout run repeated (a retried activity, a restarted worker) finds the month's payout and adds none.
  await knex.raw(`create unique index affiliate_payouts_one_per_month on affiliate_payouts (shop_id, partner_id, currency, period_to)
    where state <> 'cancelled'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists affiliate_payouts_one_per_month');
  await knex.schema.alterTable('affiliate_payouts', (t) => {
    t.dropColumns('confirmed_by_person_id', 'confirmed_at', 'paid_by_person_id', 'payment_reference', 'drawn_up_by');
  });
  await knex.raw('alter table affiliate_conversions drop constraint if exists affiliate_conversions_manual_decision_check');
  await knex.schema.alterTable('affiliate_conversions', (t) => t.dropColumns('manual_decision', 'manual_reason', 'decided_by_person_id', 'decided_at'));
  await knex.schema.dropTable('affiliate_beacons');
  await knex.raw('drop index if exists affiliate_clicks_flood');
  await knex.raw('drop index if exists affiliate_clicks_token');
  await knex.schema.alterTable('affiliate_clicks', (t) => t.dropColumns('token', 'ip_hash', 'ua_hash', 'target_url', 'repeats', 'last_seen_at'));
}
