/**
 * When a shop's platform credentials were deleted by a disconnect (issue 28): `shops restore` then asks for them again
 * (checked by a test connection) instead of bringing the shop back live with nothing to sync with. A shop that never
 * had stored credentials (the demo's loaded shops) keeps this null and is restored as before.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('shops', (t) => {
    t.timestamp('credentials_deleted_at', { useTz: true, precision: 3 });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('shops', (t) => {
    t.dropColumn('credentials_deleted_at');
  });
}
