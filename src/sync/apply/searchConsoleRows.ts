/**
 * Search-console performance rows: a delivered day replaces that day's rows (fresh data is revised, then replaced by
 * final data). Each row carries a SHA-256 of its content, so a client can tell a revised row from an unchanged one.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { AreaRecords } from '../../platforms/types.js';
import type { SearchConsoleDay } from '../../records/types.js';
import type { Row } from '../rows.js';
import type { SyncShop } from '../shops.js';

/** The content hash of a row: its key, its figures and its data state. */
export function searchConsoleContentHash(day: string, r: { query: string; page: string; country: string; device: string; clicks: number; impressions: number; position: number }, dataState: string): string {
  const canonical = JSON.stringify([day, r.query, r.page, r.country, r.device, r.clicks, r.impressions, r.position.toFixed(2), dataState]);
  return createHash('sha256').update(canonical).digest('hex');
}

export function searchConsoleDayRows(shopId: string, d: SearchConsoleDay): Row[] {
  return d.rows.map((r) => ({
    shop_id: shopId, day: d.day, query: r.query, page: r.page, country: r.country, device: r.device, clicks: r.clicks, impressions: r.impressions,
    position: r.position.toFixed(2), data_state: d.dataState, content_hash: searchConsoleContentHash(d.day, r, d.dataState),
  }));
}

export async function applySearchConsoleData(trx: Knex.Transaction, shop: SyncShop, records: Array<AreaRecords['search_console_data']>): Promise<number> {
  let written = 0;
  for (const d of records) {
    await trx('search_console_rows').where({ shop_id: shop.id, day: d.day }).delete();
    const rows = searchConsoleDayRows(shop.id, d);
    for (let i = 0; i < rows.length; i += 500) await trx('search_console_rows').insert(rows.slice(i, i + 500));
    written += rows.length;
  }
  return written;
}
