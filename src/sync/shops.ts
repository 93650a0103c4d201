/** Shops as the sync sees them: the shop, its account and its platform connection. */
import type { Db } from '../db/knex.js';
import type { PlatformShop } from '../platforms/types.js';

export interface SyncShop extends PlatformShop {
  accountId: string;
  removed: boolean;
  /** False when the shop has no platform connection settings yet (nothing to sync). */
  connected: boolean;
}

function query(db: Db) {
  return db('shops as s')
    .join('accounts as a', 'a.id', 's.account_id')
    .leftJoin('shop_platform_settings as ps', 'ps.shop_id', 's.id')
    .select('s.id', 's.code', 's.platform', 's.time_zone', 's.removed_at', 'a.id as account_id', 'a.code as account_code', 'ps.settings');
}

interface ShopRow {
  id: string;
  code: string;
  platform: string;
  time_zone: string;
  removed_at: Date | null;
  account_id: string;
  account_code: string;
  settings: Record<string, unknown> | null;
}

function toShop(row: ShopRow): SyncShop {
  return {
    id: String(row.id), code: row.code, platform: row.platform, timeZone: row.time_zone, accountId: String(row.account_id),
    accountCode: row.account_code, settings: row.settings ?? {}, removed: row.removed_at !== null, connected: row.settings !== null,
  };
}

/** A shop by account and shop code (removed ones included, so a run can see that its shop is gone). */
export async function findSyncShop(db: Db, accountCode: string, shopCode: string): Promise<SyncShop | null> {
  const row = await query(db).where({ 'a.code': accountCode, 's.code': shopCode }).first();
  return row ? toShop(row) : null;
}

export async function getSyncShop(db: Db, shopId: string): Promise<SyncShop> {
  const row = await query(db).where('s.id', shopId).first();
  if (!row) throw new Error(`Shop ${shopId} does not exist`);
  return toShop(row);
}

/** Every live shop of every account (the shops that should have a sync schedule). */
export async function listLiveShops(db: Db): Promise<SyncShop[]> {
  const rows = await query(db).whereNull('s.removed_at').orderBy(['a.code', 's.code']);
  return rows.map(toShop);
}
