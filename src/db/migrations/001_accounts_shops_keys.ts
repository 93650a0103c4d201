/** Accounts (tenants), plans and entitlements (D12), shops, access keys (D10). */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.text('code').primary();
    t.text('name').notNullable();
    t.integer('sort_order').notNullable();
  });
  // Features and limits per plan; a null limit means "per agreement" (custom) or unlimited.
  await knex.schema.createTable('plan_features', (t) => {
    t.text('plan_code').notNullable().references('plans.code');
    t.text('feature').notNullable();
    t.boolean('enabled').notNullable();
    t.integer('limit_value');
    t.primary(['plan_code', 'feature']);
  });
  await knex('plans').insert([
    { code: 'trial', name: 'Trial', sort_order: 1 },
    { code: 'beginner', name: 'Beginner', sort_order: 2 },
    { code: 'start', name: 'Start', sort_order: 3 },
    { code: 'growth', name: 'Growth', sort_order: 4 },
    { code: 'pro', name: 'Pro', sort_order: 5 },
    { code: 'custom', name: 'Custom', sort_order: 6 },
  ]);
  const webhooks: Record<string, [boolean, number | null]> = {
    trial: [false, 0], beginner: [false, 0], start: [true, 5], growth: [true, 20], pro: [true, 50], custom: [true, null],
  };
  const rows = [];
  for (const [plan, [enabled, limit]] of Object.entries(webhooks)) {
    rows.push({ plan_code: plan, feature: 'webhooks', enabled, limit_value: limit });
    rows.push({ plan_code: plan, feature: 'rest_api', enabled: true, limit_value: null });
    rows.push({ plan_code: plan, feature: 'mcp', enabled: true, limit_value: null });
  }
  await knex('plan_features').insert(rows);

  await knex.schema.createTable('accounts', (t) => {
    t.bigIncrements('id');
    t.text('code').notNullable().unique();
    t.text('name').notNullable();
    t.text('plan_code').notNullable().references('plans.code');
    t.text('time_zone').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  // Per-account overrides of plan features (custom agreements).
  await knex.schema.createTable('account_entitlements', (t) => {
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('feature').notNullable();
    t.boolean('enabled').notNullable();
    t.integer('limit_value');
    t.primary(['account_id', 'feature']);
  });

  await knex.schema.createTable('shops', (t) => {
    t.bigIncrements('id');
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('code').notNullable();
    t.text('name').notNullable();
    t.text('platform').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.specificType('country', 'char(2)').notNullable();
    t.text('language').notNullable();
    t.text('time_zone').notNullable();
    t.text('base_url').notNullable();
    // Integration status of the shop's web code (SPEC: /stores/integration-status).
    t.boolean('web_code_installed').notNullable().defaultTo(false);
    t.text('web_code_version');
    t.specificType('web_code_modules', 'text[]').notNullable().defaultTo('{}');
    t.boolean('coupon_link_ready').notNullable().defaultTo(false);
    t.timestamp('last_synced_at', { useTz: true, precision: 3 });
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('removed_at', { useTz: true, precision: 3 });
    t.unique(['account_id', 'code']);
  });

  await knex.schema.createTable('access_keys', (t) => {
    t.text('id').primary();
    t.bigInteger('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('name').notNullable();
    // Only the SHA-256 of the key is stored (D10); the prefix helps people recognise a key.
    t.binary('key_hash').notNullable().unique();
    t.text('key_hint').notNullable();
    t.specificType('interfaces', 'text[]').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.boolean('all_shops').notNullable();
    t.specificType('shop_codes', 'text[]').notNullable().defaultTo('{}');
    t.text('created_by').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true, precision: 3 });
    t.timestamp('last_used_at', { useTz: true, precision: 3 });
    t.timestamp('revoked_at', { useTz: true, precision: 3 });
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['access_keys', 'shops', 'account_entitlements', 'accounts', 'plan_features', 'plans']) {
    await knex.schema.dropTableIfExists(table);
  }
}
