/** Search-console syncs of the shop's property (completed or failed) and changes of its connection state. */
import type { Knex } from 'knex';
import type { AreaRecords, PlatformSearchConsoleProperty } from '../../platforms/types.js';
import type { EventSink } from '../events.js';
import { searchConsolePropertyRow, searchConsoleRunRow } from '../rows.js';
import type { SyncShop } from '../shops.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function connectionEvents(sink: EventSink, shop: SyncShop, p: PlatformSearchConsoleProperty, afterMs: number): void {
  for (let i = 1; i < p.statusHistory.length; i++) {
    const change = p.statusHistory[i];
    if (change.at.getTime() <= afterMs) continue;
    sink.emit('search_console.connection.changed', p.property, {
      market: shop.code, status: change.status, previous_status: p.statusHistory[i - 1].status, property: p.property, previous_property: p.property,
      changed_at: change.at.toISOString(),
    }, change.at);
  }
}

export async function applySearchConsole(trx: Knex.Transaction, shop: SyncShop, records: Array<AreaRecords['search_console']>, sink: EventSink): Promise<number> {
  let written = 0;
  const runs = records.flatMap((r) => (r.kind === 'run' ? [r.run] : []));
  if (runs.length) {
    const inserted: Array<{ run_key: string }> = await trx('search_console_sync_runs').insert(runs.map((r) => searchConsoleRunRow(shop.id, r)))
      .onConflict(['shop_id', 'run_key']).ignore().returning(['run_key']);
    const fresh = new Set(inserted.map((r) => r.run_key));
    for (const r of runs) {
      if (!fresh.has(r.key)) continue;
      if (r.status === 'completed') {
        sink.emit('search_console.sync.completed', r.property, {
          market: shop.code, property: r.property, search_types: r.searchTypes, data_state: r.dataState, final_data_through: r.finalDataThrough,
          fresh_data_through: r.freshDataThrough, days_upserted: r.daysUpserted, revised_dates: r.revisedDates, sync_version: r.syncVersion,
          synced_at: r.ranAt.toISOString(),
        }, r.ranAt);
      } else {
        sink.emit('search_console.sync.failed', r.property, {
          market: shop.code, property: r.property, error: r.error ?? 'unknown error', error_code: r.errorCode ?? 'UNKNOWN',
          last_successful_sync_at: iso(r.lastSuccessfulSyncAt), retry_at: iso(r.retryAt),
        }, r.ranAt);
      }
    }
    written += inserted.length;
  }
  for (const record of records) {
    if (record.kind !== 'property') continue;
    const p = record.property;
    const row = searchConsolePropertyRow(shop.id, p);
    const stored = await trx('search_console_properties').where({ shop_id: shop.id }).first();
    if (!stored) {
      await trx('search_console_properties').insert(row);
      connectionEvents(sink, shop, p, -Infinity);
      written++;
      continue;
    }
    const same = stored.status === p.status && stored.status_changed_at.getTime() === p.statusChangedAt.getTime()
      && stored.last_sync_at?.getTime() === p.lastSyncAt?.getTime() && stored.sync_version === p.syncVersion;
    if (same) continue;
    connectionEvents(sink, shop, p, stored.status_changed_at.getTime());
    const { shop_id: _s, ...changes } = row;
    await trx('search_console_properties').where({ shop_id: shop.id }).update(changes);
    written++;
  }
  return written;
}
