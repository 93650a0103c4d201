/**
 * One data area of one shop, synced from its checkpoint to `until`: the adapter's changes arrive in batches, and each
 * batch is ONE transaction — idempotent upserts, the events of the real changes, and the checkpoint's new position.
 * A crash rolls the open batch back; the retried run resumes after the last committed batch, so nothing is lost and
 * nothing is applied (or announced) twice. The checkpoint row is locked for each batch, so two runs of the same
 * shop and area can never interleave.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { AreaRecords, ShopPlatformAdapter, SyncArea } from '../platforms/types.js';
import { applyCatalogue } from './apply/catalogue.js';
import { applyClaims } from './apply/claims.js';
import { applyCompanyCosts } from './apply/companyCosts.js';
import { applyWebAnalytics } from './apply/webAnalytics.js';
import { applySearchConsoleData } from './apply/searchConsoleRows.js';
import { applyDocuments } from './apply/documents.js';
import { applyOrders } from './apply/orders.js';
import { applySearchConsole } from './apply/searchConsole.js';
import { applyShipments } from './apply/shipments.js';
import { applyStock } from './apply/stock.js';
import { applyCoupons } from './apply/coupons.js';
import { applyProducts } from './apply/products.js';
import { EventSink } from './events.js';
import { affiliateAfterBatch } from '../affiliate/sync.js';
import type { SyncShop } from './shops.js';

export interface AreaSyncOptions {
  /** Records per batch (one transaction). */
  batchSize: number;
  /** Called after every committed batch (activities heartbeat here). */
  onBatch?: (progress: AreaSyncResult) => void;
  /** Stops between batches when aborted (activity cancellation). */
  signal?: AbortSignal;
  /** Runs inside each batch's transaction just before it commits; a test seam for crashing mid-batch. */
  beforeCommit?: (info: { area: SyncArea; batch: number }) => Promise<void>;
}

export interface AreaSyncResult {
  area: SyncArea;
  batches: number;
  records: number;
  written: number;
  events: number;
  /** True when the run continued an interrupted run of the same `until`. */
  resumed: boolean;
}

interface CheckpointRow {
  through: Date | null;
  events_from: Date;
  run_until: Date | null;
  run_position: string | null;
}

/** Thrown when the checkpoint moved under us: another run of the same shop and area got there first. */
export class CheckpointMovedError extends Error {}

const ms = (d: Date | null) => (d ? d.getTime() : null);

async function applyBatch(trx: Knex.Transaction, area: SyncArea, shop: SyncShop, records: Array<AreaRecords[SyncArea]>, sink: EventSink): Promise<number> {
  switch (area) {
    case 'products': return applyProducts(trx, shop, records as Array<AreaRecords['products']>);
    case 'orders': return applyOrders(trx, shop, records as Array<AreaRecords['orders']>, sink);
    case 'documents': return applyDocuments(trx, shop, records as Array<AreaRecords['documents']>, sink);
    case 'shipments': return applyShipments(trx, shop, records as Array<AreaRecords['shipments']>, sink);
    case 'claims': return applyClaims(trx, shop, records as Array<AreaRecords['claims']>, sink);
    case 'stock': return applyStock(trx, shop, records as Array<AreaRecords['stock']>, sink);
    case 'search_console': return applySearchConsole(trx, shop, records as Array<AreaRecords['search_console']>, sink);
    case 'company_costs': return applyCompanyCosts(trx, shop, records as Array<AreaRecords['company_costs']>);
    case 'catalogue': return applyCatalogue(trx, shop, records as Array<AreaRecords['catalogue']>);
    case 'web_analytics': return applyWebAnalytics(trx, shop, records as Array<AreaRecords['web_analytics']>);
    case 'coupons': return applyCoupons(trx, shop, records as Array<AreaRecords['coupons']>);
    case 'search_console_data': return applySearchConsoleData(trx, shop, records as Array<AreaRecords['search_console_data']>);
  }
}

/** Locks the checkpoint row and checks it still is where this run left it. */
async function lockCheckpoint(trx: Knex.Transaction, shopId: string, area: SyncArea, expected: CheckpointRow): Promise<CheckpointRow> {
  const row: CheckpointRow = await trx('sync_checkpoints').where({ shop_id: shopId, area }).forUpdate().first();
  if (!row || ms(row.through) !== ms(expected.through) || ms(row.run_until) !== ms(expected.run_until) || row.run_position !== expected.run_position) {
    throw new CheckpointMovedError(`Checkpoint of ${shopId}/${area} moved: another sync of this shop ran meanwhile`);
  }
  return row;
}

/** Syncs one area of one shop from its checkpoint up to `until` (the platform's time at the start of the run). */
export async function syncArea(db: Db, adapter: ShopPlatformAdapter, shop: SyncShop, area: SyncArea, until: Date, options: AreaSyncOptions): Promise<AreaSyncResult> {
  // A shop's first read is a backfill: what happened up to this run's end is history, stored without events.
  await db('sync_checkpoints').insert({ shop_id: shop.id, area, through: null, events_from: until }).onConflict(['shop_id', 'area']).ignore();
  let checkpoint: CheckpointRow = await db('sync_checkpoints').where({ shop_id: shop.id, area }).first();
  const result: AreaSyncResult = { area, batches: 0, records: 0, written: 0, events: 0, resumed: false };
  if (checkpoint.through && checkpoint.through.getTime() >= until.getTime()) return result;
  const resume = checkpoint.run_until && checkpoint.run_until.getTime() === until.getTime() ? checkpoint.run_position : null;
  result.resumed = resume !== null;

  const changes = adapter.readChanges(shop, area, { since: checkpoint.through, until, resume, limit: options.batchSize });
  for await (const batch of changes) {
    options.signal?.throwIfAborted();
    const applied = await db.transaction(async (trx) => {
      const locked = await lockCheckpoint(trx, shop.id, area, checkpoint);
      const sink = new EventSink(trx, shop, locked.events_from.getTime());
      const written = await applyBatch(trx, area, shop, batch.records, sink);
      await affiliateAfterBatch(trx, adapter, shop, area, batch.records, until);
      const events = await sink.flush();
      await options.beforeCommit?.({ area, batch: result.batches + 1 });
      await trx('sync_checkpoints').where({ shop_id: shop.id, area }).update({ run_until: until, run_position: batch.position, updated_at: new Date() });
      return { written, events };
    });
    checkpoint = { ...checkpoint, run_until: until, run_position: batch.position };
    result.batches++;
    result.records += batch.records.length;
    result.written += applied.written;
    result.events += applied.events;
    options.onBatch?.(result);
  }
  options.signal?.throwIfAborted();
  await db.transaction(async (trx) => {
    await lockCheckpoint(trx, shop.id, area, checkpoint);
    await trx('sync_checkpoints').where({ shop_id: shop.id, area }).update({ through: until, run_until: null, run_position: null, updated_at: new Date() });
  });
  return result;
}
