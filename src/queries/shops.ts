/** Queries over accounts and shops. Every query takes the account id: no read can cross tenants (D9). */
import type { Db } from '../db/knex.js';
import type { AccountRef, ShopRef } from '../capabilities/context.js';

const shopRefColumns = ['id', 'code', 'name', 'currency', 'time_zone as timeZone'];

/** One live shop of the account by its code, or null. */
export async function findShopByCode(db: Db, accountId: string, code: string): Promise<ShopRef | null> {
  const row = await db('shops').select(shopRefColumns).where({ account_id: accountId, code }).whereNull('removed_at').first();
  return row ? { ...row, id: String(row.id) } : null;
}

export async function findAccountByCode(db: Db, code: string): Promise<AccountRef | null> {
  const row = await db('accounts').select('id', 'code', 'time_zone as timeZone').where({ code }).first();
  return row ? { ...row, id: String(row.id) } : null;
}

export interface ShopRow {
  id: string;
  code: string;
  name: string;
  platform: string;
  currency: string;
  country: string;
  language: string;
  time_zone: string;
  base_url: string;
  web_code_installed: boolean;
  web_code_version: string | null;
  web_code_modules: string[];
  coupon_link_ready: boolean;
  last_synced_at: Date | null;
  /** Why the latest sync attempt failed; null once a run completes. */
  sync_error: string | null;
  sync_error_at: Date | null;
  created_at: Date;
}

/** The account's live shops the caller may see (null = all), ordered by code. */
export async function listShops(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null): Promise<ShopRow[]> {
  const q = db('shops').select('*').where({ account_id: accountId }).whereNull('removed_at').orderBy('code');
  if (shopCodes) q.whereIn('code', [...shopCodes]);
  return q;
}
