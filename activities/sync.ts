/** Activities of the shop sync: thin wrappers over src/sync, bound to the database and the platform adapters. */
import { activityInfo, Context, getClient } from '@temporalio/activity';
import type { Db } from '../src/db/knex.js';
import type { PlatformRegistry } from '../src/platforms/registry.js';
import { SYNC_AREAS, type SyncArea } from '../src/platforms/types.js';
import { syncArea, type AreaSyncOptions, type AreaSyncResult } from '../src/sync/runner.js';
import { reconcileSyncSchedules, type ReconcileResult } from '../src/sync/schedules.js';
import { findSyncShop, getSyncShop } from '../src/sync/shops.js';
import { loadShopCredentials } from '../src/setup/credentials.js';
import type { SecretKeys } from '../src/webhooks/secrets.js';

export interface SyncActivityDeps {
  db: Db;
  /** The shop platforms' adapters (the composition root's). */
  platforms: PlatformRegistry;
  /** SECRETS_KEY (and the previous one): the shop's platform credentials are decrypted with it for the run. */
  secretKeys?: SecretKeys;
  /** A test seam: runs inside every batch transaction just before commit. */
  beforeSyncCommit?: AreaSyncOptions['beforeCommit'];
}

export type PreparedShopSync =
  | { skipped: false; shopId: string; until: string; areas: SyncArea[] }
  | { skipped: true; reason: string };

export interface SyncAreaInput {
  shopId: string;
  area: SyncArea;
  until: string;
  batchSize: number;
}

const HEARTBEAT_EVERY_MS = 2000;

/** Builds the sync activities bound to their dependencies. */
export function createSyncActivities(deps: SyncActivityDeps) {
  const platforms = deps.platforms;
  const adapterOf = (platform: string) => {
    const adapter = platforms.get(platform);
    if (!adapter) throw new Error(`No adapter for platform ${platform}`);
    return adapter;
  };

  return {
    /** Finds the shop and fixes the run's end (`until`): the platform's current time, unless the caller gives one. */
    async prepareShopSync(input: { accountCode: string; shopCode: string; until?: string }): Promise<PreparedShopSync> {
      const shop = await findSyncShop(deps.db, input.accountCode, input.shopCode);
      if (!shop) return { skipped: true, reason: 'no such shop' };
      if (shop.removed) return { skipped: true, reason: 'shop removed' };
      if (!shop.connected) return { skipped: true, reason: 'shop has no platform connection' };
      const adapter = platforms.get(shop.platform);
      if (!adapter) return { skipped: true, reason: `no adapter for platform ${shop.platform}` };
      const until = input.until ?? adapter.now(shop).toISOString();
      return { skipped: false, shopId: shop.id, until, areas: SYNC_AREAS.filter((a) => adapter.capabilities.areas.includes(a)) };
    },

    /** Pulls one data area up to `until`, one transaction per batch; heartbeats so a dead worker's attempt is retried soon. */
    async syncShopArea(input: SyncAreaInput): Promise<AreaSyncResult> {
      const shop = await getSyncShop(deps.db, input.shopId);
      // The platform's secret keys (e.g. Medusa's API key), in this activity's memory only, never logged or returned.
      if (deps.secretKeys) shop.credentials = await loadShopCredentials(deps.db, deps.secretKeys, shop.id);
      const context = Context.current();
      let progress: AreaSyncResult | null = null;
      // Heartbeats also while a resumed read regenerates the part it has already applied (no batch for a while).
      const timer = setInterval(() => context.heartbeat(progress), HEARTBEAT_EVERY_MS);
      try {
        const result = await syncArea(deps.db, adapterOf(shop.platform), shop, input.area, new Date(input.until), {
          batchSize: input.batchSize,
          signal: context.cancellationSignal,
          onBatch: (p) => {
            progress = { ...p };
            context.heartbeat(progress);
          },
          beforeCommit: deps.beforeSyncCommit,
        });
        return result;
      } catch (error) {
        // The shop's sync state says why (REST /stores, the application) while Temporal retries the attempt.
        const reason = `${input.area}: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
        await deps.db('shops').where({ id: input.shopId })
          .update({ sync_error: reason, sync_error_at: deps.db.raw('coalesce(sync_error_at, now())') })
          .catch(() => undefined);
        throw error;
      } finally {
        clearInterval(timer);
      }
    },

    /** Records that the shop's data is current up to `until`. */
    async completeShopSync(input: { shopId: string; until: string }): Promise<void> {
      await deps.db('shops').where({ id: input.shopId }).update({
        last_synced_at: deps.db.raw('greatest(coalesce(last_synced_at, ?::timestamptz), ?::timestamptz)', [input.until, input.until]),
        sync_error: null, sync_error_at: null,
      });
    },

    /** Makes the sync Schedules follow the shops: one per live shop, none for removed shops (this worker's task queue). */
    async reconcileSyncSchedules(input: { intervalMs: number }): Promise<ReconcileResult> {
      return reconcileSyncSchedules(getClient(), deps.db, { taskQueue: activityInfo().taskQueue, intervalMs: input.intervalMs });
    },
  };
}
