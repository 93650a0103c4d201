/**
 * The e-mail outbox (D30) every e-mail of the service goes through (affiliate partner decisions and code requests,
 * automation `send_email` steps, which move here from `automation_emails`), and the affiliate writes' own records:
 * code reservations (one code, one partner, per shop) and the portal texts' wording.
 */
import type { Knex } from 'knex';

const ts = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 3 });

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_outbox', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // What produced the e-mail: `affiliate` (partner decisions, code requests) or `automation` (a run's send_email step).
    t.text('source').notNullable();
    // The partner e-mail event (`account_approved`, `code_request_decided`, ...) or the automation template.
    t.text('event').notNullable();
    // Makes a retried producer insert the e-mail once (e.g. `automation:<runId>:<nodeId>`); null when the producing
    // change itself can happen only once (a partner's state change, a code request's decision).
    t.text('dedupe_key');
    t.bigInteger('shop_id').references('shops.id').onDelete('SET NULL');
    t.bigInteger('partner_id').references('affiliate_partners.id').onDelete('SET NULL');
    // One address, or a group resolved when the e-mail is sent (`account_people`: the account's people).
    t.text('recipient');
    t.text('recipient_group');
    t.text('language');
    t.text('subject').notNullable();
    t.text('body_html').notNullable();
    // [{documentKey, title, language, version, fileName, kind, content}]: the documents attached, with the text as it
    // was when the e-mail was queued (a later version of the document does not change an e-mail already written).
    t.jsonb('attachments').notNullable().defaultTo('[]');
    // queued: waits for the sender (stays so without SMTP_URL); sent; failed (gave up after the attempts); skipped
    // (never to be sent: the event's template is disabled or the partner has no address; `last_error` says which).
    t.text('status').notNullable().defaultTo('queued');
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    ts(t, 'next_attempt_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'created_at').notNullable().defaultTo(knex.fn.now());
    ts(t, 'sent_at');
    t.unique(['account_id', 'dedupe_key']);
    t.index(['account_id', 'created_at', 'id']);
  });
  await knex.raw(`alter table email_outbox add constraint email_outbox_status_check check (status in ('queued','sent','failed','skipped'))`);
  await knex.raw(`alter table email_outbox add constraint email_outbox_source_check check (source in ('affiliate','automation'))`);
  await knex.raw(`alter table email_outbox add constraint email_outbox_recipient_check check (status = 'skipped' or recipient is not null or recipient_group is not null)`);
  await knex.raw(`create index email_outbox_due on email_outbox (next_attempt_at, id) where status = 'queued'`);

  // Automation e-mails move into the one outbox (same subject and body; sent_at kept).
  await knex.raw(`
    insert into email_outbox (account_id, source, event, dedupe_key, recipient_group, subject, body_html, status, created_at, sent_at)
    select account_id, 'automation', template, 'automation:' || run_id || ':' || node_id, recipients, subject, body,
      case when sent_at is null then 'queued' else 'sent' end, created_at, sent_at
    from automation_emails`);
  await knex.schema.dropTable('automation_emails');

  // A code approved for a partner is reserved for them in the shop: no second partner can be given it (case-insensitive).
  await knex.schema.createTable('affiliate_code_reservations', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.bigInteger('request_id').references('affiliate_code_requests.id').onDelete('SET NULL');
    t.text('code').notNullable();
    ts(t, 'reserved_at').notNullable();
  });
  await knex.raw('create unique index affiliate_code_reservations_code on affiliate_code_reservations (shop_id, upper(code))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('affiliate_code_reservations');
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
  await knex.schema.dropTableIfExists('email_outbox');
}
