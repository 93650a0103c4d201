/**
 * Data the service owns (not synced from a shop): the affiliate (partner) programme it runs for an account, the web
 * chatbot it runs on the shops' pages, and suppliers with their offers. Conversions point at real synced orders.
 */
import type { Knex } from 'knex';

function ts(t: Knex.CreateTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

const accountRef = (t: Knex.CreateTableBuilder) => t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
const shopRef = (t: Knex.CreateTableBuilder) => t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');

async function check(knex: Knex, table: string, name: string, condition: string): Promise<void> {
  await knex.raw(`alter table ${table} add constraint ${table}_${name} check (${condition})`);
}

export async function up(knex: Knex): Promise<void> {
  // ---- Affiliate programme ----
  await knex.schema.createTable('affiliate_programmes', (t) => {
    t.bigInteger('account_id').primary().references('accounts.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.decimal('default_commission_percent', 5, 2).notNullable();
    t.integer('click_window_days').notNullable();
    t.decimal('payout_minimum_eur', 14, 2).notNullable();
    t.boolean('referrals_enabled').notNullable();
    t.decimal('referral_commission_percent', 5, 2);
    t.boolean('auto_approve_partners').notNullable();
    t.integer('return_period_days').notNullable();
    t.text('contact_name');
    t.text('contact_email');
    t.jsonb('colours').notNullable().defaultTo('{}');
    t.text('privacy_policy_url');
    ts(t, 'created_at').notNullable();
    ts(t, 'updated_at').notNullable();
  });

  await knex.schema.createTable('affiliate_portals', (t) => {
    t.bigInteger('shop_id').primary().references('shops.id').onDelete('CASCADE');
    t.text('address').notNullable();
    t.text('custom_domain');
    t.text('custom_domain_status');
    t.boolean('registration_open').notNullable();
    t.text('registration_closed_reason');
    t.text('contact_name');
    t.text('contact_email');
    t.jsonb('appearance').notNullable().defaultTo('{}');
    // [{language, page, status, updatedAt}]: custom page texts and whether each is published.
    t.jsonb('texts').notNullable().defaultTo('[]');
    ts(t, 'updated_at').notNullable();
  });

  await knex.schema.createTable('affiliate_partners', (t) => {
    t.bigIncrements('id');
    accountRef(t);
    // The demo partners are indexed like the partner codes of the demo coupon book (P40).
    t.integer('partner_index');
    t.text('handle').notNullable();
    t.text('state').notNullable();
    t.text('state_reason');
    ts(t, 'state_changed_at').notNullable();
    t.text('kind').notNullable();
    t.text('web');
    t.text('language').notNullable();
    // Contacts: served only with personal-data:read.
    t.text('contact_name');
    t.text('company');
    t.text('email');
    t.text('phone');
    // Bank and tax data: needed for payouts, never selected by a query that serves REST or MCP.
    t.text('bank_iban');
    t.text('bank_account_holder');
    t.text('tax_id');
    t.text('vat_id');
    t.bigInteger('referred_by_partner_id').references('affiliate_partners.id');
    ts(t, 'registered_at').notNullable();
    t.unique(['account_id', 'handle']);
    t.unique(['account_id', 'partner_index']);
    t.index(['account_id', 'registered_at', 'id'], 'affiliate_partners_keyset');
  });
  await check(knex, 'affiliate_partners', 'state_check', `state in ('waiting','approved','rejected','suspended')`);

  await knex.schema.createTable('affiliate_campaigns', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.text('name').notNullable();
    t.text('reward_type').notNullable();
    t.decimal('reward_percent', 5, 2);
    t.decimal('reward_amount', 14, 2);
    t.specificType('currency', 'char(3)').notNullable();
    t.integer('attribution_window_days').notNullable();
    t.text('availability').notNullable();
    t.text('approval').notNullable();
    t.boolean('enabled').notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.jsonb('descriptions').notNullable().defaultTo('{}');
    ts(t, 'created_at').notNullable();
    t.index(['shop_id', 'id']);
  });
  await check(knex, 'affiliate_campaigns', 'reward_check',
    `(reward_type = 'percent' and reward_percent is not null) or (reward_type = 'fixed' and reward_amount is not null)`);
  await check(knex, 'affiliate_campaigns', 'availability_check', `availability in ('all','chosen')`);
  await check(knex, 'affiliate_campaigns', 'approval_check', `approval in ('manual','automatic')`);

  await knex.schema.createTable('affiliate_campaign_partners', (t) => {
    t.bigInteger('campaign_id').notNullable().references('affiliate_campaigns.id').onDelete('CASCADE');
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.primary(['campaign_id', 'partner_id']);
  });

  await knex.schema.createTable('affiliate_discount_codes', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.text('code').notNullable();
    ts(t, 'created_at').notNullable();
    t.unique(['shop_id', 'code']);
  });

  await knex.schema.createTable('affiliate_code_requests', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.text('requested_code').notNullable();
    t.text('state').notNullable();
    t.text('reason');
    ts(t, 'requested_at').notNullable();
    ts(t, 'decided_at');
  });
  await check(knex, 'affiliate_code_requests', 'state_check', `state in ('pending','approved','rejected')`);

  // Clicks on tracked links, as the service's redirect records them; the visitor id is the first-party cookie.
  await knex.schema.createTable('affiliate_clicks', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.bigInteger('campaign_id').notNullable().references('affiliate_campaigns.id').onDelete('CASCADE');
    t.text('visitor_id').notNullable();
    ts(t, 'clicked_at').notNullable();
    t.text('target_type').notNullable();
    t.text('target_ref');
    t.index(['shop_id', 'clicked_at', 'id'], 'affiliate_clicks_keyset');
    t.index(['shop_id', 'visitor_id', 'clicked_at']);
  });

  // The service's script on the shop's thank-you page: which visitor placed which order.
  await knex.schema.createTable('affiliate_order_visitors', (t) => {
    shopRef(t);
    t.text('order_code').notNullable();
    t.text('visitor_id').notNullable();
    ts(t, 'recorded_at').notNullable();
    t.primary(['shop_id', 'order_code']);
  });

  await knex.schema.createTable('affiliate_payouts', (t) => {
    t.bigIncrements('id');
    accountRef(t);
    shopRef(t);
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('amount', 14, 2).notNullable();
    t.integer('conversions').notNullable();
    t.text('state').notNullable();
    t.date('period_from').notNullable();
    t.date('period_to').notNullable();
    ts(t, 'created_at').notNullable();
    ts(t, 'paid_at');
    t.index(['shop_id', 'created_at', 'id'], 'affiliate_payouts_keyset');
  });
  await check(knex, 'affiliate_payouts', 'state_check', `state in ('requested','approved','paid','cancelled')`);

  await knex.schema.createTable('affiliate_conversions', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.bigInteger('order_id').notNullable().references('orders.id').onDelete('CASCADE');
    t.text('order_code').notNullable();
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.bigInteger('campaign_id').notNullable().references('affiliate_campaigns.id').onDelete('CASCADE');
    t.text('source').notNullable();
    t.bigInteger('click_id').references('affiliate_clicks.id');
    t.text('coupon_code');
    ts(t, 'ordered_at').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('commission_base', 14, 2).notNullable();
    t.decimal('order_total_with_vat', 14, 2).notNullable();
    t.decimal('commission', 14, 2).notNullable();
    t.text('commission_state').notNullable();
    t.text('state_reason').notNullable();
    t.integer('order_status_id').notNullable();
    t.text('order_status_name').notNullable();
    ts(t, 'approved_at');
    t.text('credit_note_code');
    t.bigInteger('payout_id').references('affiliate_payouts.id');
    ts(t, 'updated_at').notNullable();
    t.unique(['order_id']);
    t.index(['shop_id', 'ordered_at', 'id'], 'affiliate_conversions_keyset');
    t.index(['partner_id']);
  });
  await check(knex, 'affiliate_conversions', 'source_check', `source in ('click','coupon')`);
  await check(knex, 'affiliate_conversions', 'state_check', `commission_state in ('pending','approved','rejected','paid')`);

  await knex.schema.createTable('affiliate_articles', (t) => {
    t.bigIncrements('id');
    accountRef(t);
    t.text('key').notNullable();
    t.boolean('is_default').notNullable();
    t.boolean('enabled').notNullable();
    t.integer('position').notNullable();
    // {language: {title, slug, html, status}}; variables are stored unsubstituted.
    t.jsonb('translations').notNullable();
    ts(t, 'updated_at').notNullable();
    t.unique(['account_id', 'key']);
  });

  await knex.schema.createTable('affiliate_email_templates', (t) => {
    t.bigIncrements('id');
    accountRef(t);
    t.text('event').notNullable();
    t.text('language').notNullable();
    t.text('subject').notNullable();
    t.text('body_html').notNullable();
    t.boolean('enabled').notNullable();
    t.boolean('customised').notNullable();
    ts(t, 'updated_at').notNullable();
    t.unique(['account_id', 'event', 'language']);
  });

  await knex.schema.createTable('affiliate_documents', (t) => {
    t.bigIncrements('id');
    accountRef(t);
    t.text('key').notNullable();
    t.text('title').notNullable();
    t.text('applies_to').notNullable();
    t.text('confirm_when').notNullable();
    t.boolean('signed_copy').notNullable();
    t.boolean('email_attachment').notNullable();
    t.boolean('enabled').notNullable();
    t.unique(['account_id', 'key']);
  });

  await knex.schema.createTable('affiliate_document_versions', (t) => {
    t.bigIncrements('id');
    t.bigInteger('document_id').notNullable().references('affiliate_documents.id').onDelete('CASCADE');
    t.text('language').notNullable();
    t.integer('version').notNullable();
    t.text('status').notNullable();
    t.text('stored_text').notNullable();
    t.text('public_text').notNullable();
    t.specificType('text_sha256', 'char(64)').notNullable();
    t.specificType('pdf_sha256', 'char(64)');
    t.text('source').notNullable();
    t.jsonb('pdf').notNullable().defaultTo('{}');
    ts(t, 'created_at').notNullable();
    ts(t, 'published_at');
    t.unique(['document_id', 'language', 'version']);
  });
  await check(knex, 'affiliate_document_versions', 'status_check', `status in ('draft','published','superseded')`);

  await knex.schema.createTable('affiliate_signatures', (t) => {
    t.bigIncrements('id');
    accountRef(t);
    t.bigInteger('partner_id').notNullable().references('affiliate_partners.id').onDelete('CASCADE');
    t.bigInteger('document_id').notNullable().references('affiliate_documents.id');
    t.bigInteger('version_id').notNullable().references('affiliate_document_versions.id');
    t.integer('version').notNullable();
    t.text('language').notNullable();
    t.bigInteger('shop_id').references('shops.id');
    ts(t, 'signed_at').notNullable();
    t.text('method').notNullable();
    t.text('verification').notNullable();
    t.specificType('text_sha256', 'char(64)').notNullable();
    t.specificType('pdf_sha256', 'char(64)');
    t.text('state').notNullable();
    t.text('signed_text').notNullable();
    t.jsonb('values_snapshot').notNullable();
    t.index(['account_id', 'signed_at', 'id'], 'affiliate_signatures_keyset');
  });
  // A signature is evidence: once written it never changes (a new version of the document needs a new signature).
  await knex.raw(`
    create function affiliate_signatures_immutable() returns trigger language plpgsql as $$
    begin raise exception 'affiliate signatures are immutable'; end $$`);
  await knex.raw(`create trigger affiliate_signatures_no_update before update on affiliate_signatures
    for each row execute function affiliate_signatures_immutable()`);

  // ---- Web chatbot ----
  await knex.schema.createTable('chatbot_settings', (t) => {
    t.bigInteger('shop_id').primary().references('shops.id').onDelete('CASCADE');
    ts(t, 'installed_at').notNullable();
    // Outcomes are classified only from this instant; earlier conversations are unmeasured.
    ts(t, 'outcomes_measured_since');
  });

  await knex.schema.createTable('chatbot_conversations', (t) => {
    t.bigIncrements('id');
    shopRef(t);
    t.text('session_id').notNullable();
    ts(t, 'started_at').notNullable();
    ts(t, 'last_activity_at').notNullable();
    t.text('start_page_url').notNullable();
    t.text('start_page_type').notNullable();
    t.text('language').notNullable();
    t.text('first_question').notNullable();
    t.text('topic').notNullable();
    t.specificType('product_codes', 'text[]').notNullable().defaultTo('{}');
    t.text('outcome');
    t.integer('rating');
    t.integer('messages').notNullable();
    t.unique(['shop_id', 'session_id']);
    t.index(['shop_id', 'last_activity_at', 'id'], 'chatbot_conversations_keyset');
  });
  await check(knex, 'chatbot_conversations', 'outcome_check', `outcome is null or outcome in ('resolved','unresolved','bot_error','unknown')`);

  await knex.schema.createTable('chatbot_messages', (t) => {
    t.bigIncrements('id');
    t.bigInteger('conversation_id').notNullable().references('chatbot_conversations.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    ts(t, 'sent_at').notNullable();
    t.text('role').notNullable();
    t.text('text').notNullable();
    t.jsonb('sources').notNullable().defaultTo('[]');
    t.unique(['conversation_id', 'position']);
  });

  await knex.schema.createTable('chatbot_daily', (t) => {
    shopRef(t);
    t.date('day').notNullable();
    t.integer('bubble_shown').notNullable();
    t.integer('bubble_opened').notNullable();
    t.integer('conversations_started').notNullable();
    t.primary(['shop_id', 'day']);
  });

  // ---- Suppliers and purchasing ----
  await knex.schema.createTable('suppliers', (t) => {
    t.bigIncrements('id');
    accountRef(t);
    t.text('code').notNullable();
    t.text('name').notNullable();
    t.specificType('country', 'char(2)').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.integer('default_lead_time_days').notNullable();
    t.text('contact_name');
    t.text('contact_email');
    t.text('contact_phone');
    t.text('bank_iban');
    t.text('tax_id');
    ts(t, 'created_at').notNullable();
    t.unique(['account_id', 'code']);
  });

  await knex.schema.createTable('supplier_offers', (t) => {
    t.bigIncrements('id');
    t.bigInteger('supplier_id').notNullable().references('suppliers.id').onDelete('CASCADE');
    shopRef(t);
    t.text('product_code').notNullable();
    t.text('supplier_code').notNullable();
    t.decimal('price', 14, 2).notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.decimal('min_quantity', 12, 3).notNullable();
    t.integer('lead_time_days').notNullable();
    ts(t, 'updated_at').notNullable();
    t.unique(['supplier_id', 'shop_id', 'product_code']);
  });

  await knex.schema.createTable('supplier_cost_components', (t) => {
    t.bigIncrements('id');
    t.bigInteger('supplier_id').notNullable().references('suppliers.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('basis').notNullable();
    t.decimal('value', 14, 4).notNullable();
    t.specificType('currency', 'char(3)');
    t.text('note');
  });
  await check(knex, 'supplier_cost_components', 'kind_check', `kind in ('freight','duty','handling')`);
  await check(knex, 'supplier_cost_components', 'basis_check', `basis in ('per_order','per_unit','percent')`);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'supplier_cost_components', 'supplier_offers', 'suppliers', 'chatbot_daily', 'chatbot_messages', 'chatbot_conversations', 'chatbot_settings',
    'affiliate_signatures', 'affiliate_document_versions', 'affiliate_documents', 'affiliate_email_templates', 'affiliate_articles',
    'affiliate_conversions', 'affiliate_payouts', 'affiliate_order_visitors', 'affiliate_clicks', 'affiliate_code_requests',
    'affiliate_discount_codes', 'affiliate_campaign_partners', 'affiliate_campaigns', 'affiliate_partners', 'affiliate_portals', 'affiliate_programmes',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('drop function if exists affiliate_signatures_immutable()');
}
