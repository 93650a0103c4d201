/**
 * The public address of each product and category page, when the shop's platform knows it (issue 23.6): it is the
 * `canonical_url` of product_content.changed and category_content.changed (SPEC "public address of the product or
 * category if known, else null"). Synced with the catalogue; null for platforms that do not know their storefront.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  for (const table of ['products', 'categories']) {
    await knex.schema.alterTable(table, (t) => {
      t.text('url');
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['products', 'categories']) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('url');
    });
  }
}
