/** The claims settings document a claims-settings proposal reads and, once approved, changes (the service's own data). */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { claimsSettingsSchema } from '../claims/settings.js';

export async function getClaimsSettingsDocument(db: Db | Knex.Transaction, shopId: string): Promise<Record<string, unknown> | null> {
  const row = await db('claims_settings').where({ shop_id: shopId }).first('settings');
  return row ? (row.settings as Record<string, unknown>) : null;
}

/** Sets one setting (dotted path) in the locked document; the result must still be a valid settings document. */
export async function writeClaimsSetting(trx: Knex.Transaction, shopId: string, path: string, value: unknown): Promise<void> {
  const row = await trx('claims_settings').where({ shop_id: shopId }).forUpdate().first('settings');
  if (!row) throw new Error(`Shop ${shopId} has no claims settings`);
  const document = structuredClone(row.settings) as Record<string, unknown>;
  const parts = path.split('.');
  let node = document;
  for (const part of parts.slice(0, -1)) node = node[part] as Record<string, unknown>;
  node[parts[parts.length - 1]] = value;
  claimsSettingsSchema.parse(document);
  await trx('claims_settings').where({ shop_id: shopId }).update({ settings: JSON.stringify(document), updated_at: trx.fn.now() });
}
