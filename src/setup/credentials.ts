/**
 * Shop platform credentials at rest: one JSON document per shop, AES-256-GCM under SECRETS_KEY bound to the shop's id
 * (the webhook-secret format, so `secrets re-encrypt` rotates both). Only the sync worker decrypts them; no interface
 * ever returns them.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { PlatformCredentials } from '../platforms/types.js';
import { needsReencryption, openBound, sealBound, type SecretKeys } from '../webhooks/secrets.js';

const aad = (shopId: string) => Buffer.from(`shop_credentials:${shopId}`, 'utf8');

export function encryptCredentials(key: Buffer, shopId: string, credentials: PlatformCredentials): Buffer {
  return sealBound(key, aad(shopId), JSON.stringify(credentials));
}

export function decryptCredentials(keys: SecretKeys, shopId: string, stored: Buffer): PlatformCredentials {
  return JSON.parse(openBound(keys, aad(shopId), stored)) as PlatformCredentials;
}

/** The shop's decrypted credentials, or null when it has none stored (the demo's loaded shops). */
export async function loadShopCredentials(db: Db | Knex.Transaction, keys: SecretKeys, shopId: string): Promise<PlatformCredentials | null> {
  const row = await db('shop_credentials').where({ shop_id: shopId }).first('credentials_encrypted');
  return row ? decryptCredentials(keys, shopId, row.credentials_encrypted) : null;
}

/** Rotation's last step for shop credentials (as for webhook secrets): re-encrypts every row not under the current key. */
export async function reencryptShopCredentials(db: Db, keys: SecretKeys): Promise<{ reencrypted: number; shops: number }> {
  return db.transaction(async (trx) => {
    const rows: { shop_id: string; credentials_encrypted: Buffer }[] = await trx('shop_credentials').select('shop_id', 'credentials_encrypted').orderBy('shop_id').forUpdate();
    let reencrypted = 0;
    for (const row of rows) {
      if (!needsReencryption(keys.current, row.credentials_encrypted)) continue;
      const shopId = String(row.shop_id);
      const credentials = decryptCredentials(keys, shopId, row.credentials_encrypted);
      await trx('shop_credentials').where({ shop_id: row.shop_id }).update({ credentials_encrypted: encryptCredentials(keys.current, shopId, credentials), updated_at: trx.fn.now() });
      reencrypted++;
    }
    return { reencrypted, shops: rows.length };
  });
}
