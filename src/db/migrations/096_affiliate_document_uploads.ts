/**
 * Document wording uploaded in the application (issue 24 point 3): a version keeps the sanitised HTML it was uploaded
 * as (null for an uploaded PDF and for the demo's text versions), the PDF file of the version (the uploaded one, or
 * the one rendered from the HTML at upload; its SHA-256 is `pdf_sha256`) and who uploaded it. At most one version per
 * document and language is published: the partial unique index makes a racing second publish fail instead of leaving
 * two current versions.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('affiliate_document_versions', (t) => {
    t.text('html');
    t.binary('file');
    t.text('created_by_person_id').references('people.id').onDelete('SET NULL');
  });
  await knex.raw(`create unique index affiliate_document_versions_one_published on affiliate_document_versions (document_id, language) where status = 'published'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists affiliate_document_versions_one_published');
  await knex.schema.alterTable('affiliate_document_versions', (t) => {
    t.dropColumn('created_by_person_id');
    t.dropColumn('file');
    t.dropColumn('html');
  });
}
