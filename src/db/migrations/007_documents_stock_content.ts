/**
 * Documents complete (lines, VAT per rate, buyer, state, business date) with their PDFs stored once as bytes, search
 * indexes (pg_trgm) for documents and products, and the catalogue area: product and category texts, the availability
 * dictionary, the platform's content capabilities per shop, and content pages and blog articles.
 */
import type { Knex } from 'knex';

function ts(t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) {
  return t.timestamp(name, { useTz: true, precision: 3 });
}

export async function up(knex: Knex): Promise<void> {
  // Trusted since Postgres 13: a database owner may create it without superuser rights.
  await knex.raw('create extension if not exists pg_trgm');

  await knex.schema.alterTable('documents', (t) => {
    t.date('issue_date');
    t.text('payment_method');
    t.jsonb('lines').notNullable().defaultTo('[]');
    t.jsonb('vat_breakdown').notNullable().defaultTo('[]');
    t.text('customer_first_name');
    t.text('customer_last_name');
    t.text('customer_company');
    t.text('customer_email');
    t.text('customer_phone');
    t.text('customer_street');
    t.text('customer_city');
    t.text('customer_zip');
    t.specificType('customer_country', 'char(2)');
    // Neutral state (issued, paid, settled, partially_credited, credited, cancelled) and the platform's own name of it.
    t.text('lifecycle').notNullable().defaultTo('issued');
    t.text('source_state');
    t.boolean('valid').notNullable().defaultTo(true);
    ts(t, 'updated_at');
    t.boolean('pdf_available').notNullable().defaultTo(true);
  });
  // SPEC: businessDate = tax date, or issue date when the tax date is empty (proformas, D21). One definition, in the schema.
  await knex.raw('alter table documents add column business_date date generated always as (coalesce(tax_date, issue_date)) stored');
  await knex.raw(`alter table documents add column number_search text generated always as (lower(code || ' ' || coalesce(order_code, '') || ' ' || coalesce(variable_symbol, ''))) stored`);
  await knex.raw(`alter table documents add column customer_search text generated always as (lower(coalesce(customer_first_name, '') || ' ' || coalesce(customer_last_name, '') || ' ' || coalesce(customer_company, ''))) stored`);
  await knex.raw(`alter table documents add constraint documents_lifecycle_check check (lifecycle in ('issued','paid','settled','partially_credited','credited','cancelled'))`);
  await knex.raw('create index documents_business_keyset on documents (shop_id, type, business_date desc, id desc)');
  await knex.raw('create index documents_variable_symbol on documents (shop_id, variable_symbol)');
  await knex.raw('create index documents_number_trgm on documents using gin (number_search gin_trgm_ops)');
  await knex.raw('create index documents_customer_trgm on documents using gin (customer_search gin_trgm_ops)');

  await knex.schema.createTable('document_pdfs', (t) => {
    t.bigInteger('document_id').primary().references('documents.id').onDelete('CASCADE');
    t.specificType('sha256', 'char(64)').notNullable();
    t.integer('size_bytes').notNullable();
    t.binary('content').notNullable();
    ts(t, 'rendered_at').notNullable();
  });

  // Movement filters by order and by claim (the listing's own keyset is (shop_id, occurred_at, id) of migration 004).
  await knex.raw('create index stock_movements_order on stock_movements (shop_id, order_code, occurred_at desc, id desc) where order_code is not null');
  await knex.raw('create index stock_movements_kind on stock_movements (shop_id, kind, occurred_at desc, id desc)');

  await knex.raw('create index products_name_trgm on products using gin (lower(name) gin_trgm_ops)');
  await knex.raw('create index products_code_trgm on products using gin (lower(code) gin_trgm_ops)');
  await knex.raw('create index products_code_lower on products (shop_id, lower(code))');
  await knex.schema.alterTable('products', (t) => {
    t.text('availability_id');
    t.text('description');
    t.text('short_description');
    t.text('meta_title');
    t.text('meta_description');
    ts(t, 'content_updated_at');
  });
  await knex.schema.alterTable('categories', (t) => {
    t.text('description');
    t.text('description_bottom');
    t.text('meta_title');
    t.text('meta_description');
    ts(t, 'content_updated_at');
  });

  await knex.schema.createTable('availabilities', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('availability_id').notNullable();
    t.text('name').notNullable();
    t.text('description');
    t.integer('on_stock_hours');
    t.integer('delivery_hours');
    t.text('meaning').notNullable();
    t.text('color');
    t.boolean('system').notNullable().defaultTo(false);
    t.specificType('default_roles', 'text[]').notNullable().defaultTo('{}');
    t.integer('pairing_rows').notNullable().defaultTo(0);
    t.integer('position').notNullable().defaultTo(0);
    ts(t, 'updated_at').notNullable();
    t.unique(['shop_id', 'availability_id']);
  });
  await knex.raw(`alter table availabilities add constraint availabilities_meaning_check check (meaning in ('in_stock','backorder','preorder','out_of_stock'))`);

  // What the shop's platform can do with content, as the adapter reports it (read by the policy without calling the shop).
  await knex.schema.createTable('shop_content_capabilities', (t) => {
    t.bigInteger('shop_id').primary().references('shops.id').onDelete('CASCADE');
    t.specificType('product_fields', 'text[]').notNullable();
    t.specificType('category_fields', 'text[]').notNullable();
    t.boolean('availability_manageable').notNullable();
    t.text('availability_reason');
    ts(t, 'updated_at').notNullable();
  });
  await knex.raw(`alter table shop_content_capabilities add constraint shop_content_capabilities_reason_check check (availability_reason in ('PLATFORMA','BEZ_ROZSIRENIA','PROSTREDIE'))`);

  await knex.schema.createTable('content_articles', (t) => {
    t.bigIncrements('id');
    t.bigInteger('shop_id').notNullable().references('shops.id').onDelete('CASCADE');
    t.text('article_id').notNullable();
    // `article` (blog) or `page` (a content page of the shop).
    t.text('kind').notNullable();
    t.text('title').notNullable();
    t.text('text').notNullable();
    t.text('url').notNullable();
    t.text('preview_image_url');
    ts(t, 'published_at');
    ts(t, 'updated_at').notNullable();
    t.unique(['shop_id', 'article_id']);
  });
  await knex.raw(`alter table content_articles add constraint content_articles_kind_check check (kind in ('article','page'))`);
  await knex.raw(`alter table content_articles add column search text generated always as (lower(title || ' ' || text)) stored`);
  await knex.raw('create index content_articles_search_trgm on content_articles using gin (search gin_trgm_ops)');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['content_articles', 'shop_content_capabilities', 'availabilities', 'document_pdfs']) await knex.schema.dropTableIfExists(table);
  await knex.schema.alterTable('categories', (t) => {
    for (const c of ['description', 'description_bottom', 'meta_title', 'meta_description', 'content_updated_at']) t.dropColumn(c);
  });
  await knex.schema.alterTable('products', (t) => {
    for (const c of ['availability_id', 'description', 'short_description', 'meta_title', 'meta_description', 'content_updated_at']) t.dropColumn(c);
  });
  for (const index of ['stock_movements_order', 'stock_movements_kind', 'products_name_trgm', 'products_code_trgm', 'products_code_lower']) await knex.raw(`drop index if exists ${index}`);
  await knex.raw('alter table documents drop constraint if exists documents_lifecycle_check');
  await knex.schema.alterTable('documents', (t) => {
    for (const c of [
      'business_date', 'number_search', 'customer_search', 'issue_date', 'payment_method', 'lines', 'vat_breakdown', 'customer_first_name', 'customer_last_name',
      'customer_company', 'customer_email', 'customer_phone', 'customer_street', 'customer_city', 'customer_zip', 'customer_country', 'lifecycle',
      'source_state', 'valid', 'updated_at', 'pdf_available',
    ]) t.dropColumn(c);
  });
}
