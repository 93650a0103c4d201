/**
 * The sync Schedules follow the shops: one Temporal Schedule per live, connected shop (`sync-<account>-<shop>`,
 * overlap SKIP), none for a removed shop. Reconciliation runs at start-up and then every minute from its own Schedule,
 * so a shop added or removed later gets or loses its Schedule without a restart. Only Schedules of this task queue
 * are touched, so several deployments (or parallel tests) can share one Temporal namespace.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { Db } from '../db/knex.js';
import { scheduleIds, workflowIds } from '../temporal/constants.js';
import { startLabelled } from '../temporal/labelledStart.js';
import { listLiveShops } from './shops.js';

/** Marks our Schedules in their memo. */
export const SYNC_SCHEDULE_KIND = 'shop-sync';

export interface ReconcileResult {
  created: string[];
  replaced: string[];
  deleted: string[];
  kept: string[];
}

interface ScheduleMemo {
  kind: string;
  taskQueue: string;
  accountCode: string;
  shopCode: string;
  intervalMs: number;
}

async function createShopSchedule(client: Client, memo: ScheduleMemo): Promise<void> {
  // Each run carries OpsAccount/OpsShop/OpsKind=sync (docs/operations.md), unless the namespace lacks them.
  await startLabelled({ account: memo.accountCode, shop: memo.shopCode, kind: 'sync' }, (typedSearchAttributes) => client.schedule.create({
    scheduleId: workflowIds.shopSync(memo.accountCode, memo.shopCode),
    spec: { intervals: [{ every: memo.intervalMs }] },
    action: {
      type: 'startWorkflow', workflowType: 'shopSyncWorkflow', taskQueue: memo.taskQueue,
      // Temporal appends the scheduled time, e.g. sync-demo-sk-2026-11-21T10:00:00Z.
      workflowId: workflowIds.shopSync(memo.accountCode, memo.shopCode),
      args: [{ accountCode: memo.accountCode, shopCode: memo.shopCode }],
      ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
    },
    // A sync that is still running when the next one is due makes the next one wait for the one after.
    policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    memo: { ...memo },
  }));
}

async function deleteSchedule(client: Client, scheduleId: string): Promise<void> {
  try {
    await client.schedule.getHandle(scheduleId).delete();
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
  }
}

/** Creates the missing Schedules, replaces those whose settings changed, and deletes those of shops that are gone. */
export async function reconcileSyncSchedules(client: Client, db: Db, opts: { taskQueue: string; intervalMs: number }): Promise<ReconcileResult> {
  const result: ReconcileResult = { created: [], replaced: [], deleted: [], kept: [] };
  const wanted = new Map<string, ScheduleMemo>();
  for (const shop of await listLiveShops(db)) {
    if (!shop.connected) continue;
    const memo = { kind: SYNC_SCHEDULE_KIND, taskQueue: opts.taskQueue, accountCode: shop.accountCode, shopCode: shop.code, intervalMs: opts.intervalMs };
    wanted.set(workflowIds.shopSync(shop.accountCode, shop.code), memo);
  }
  for (const [scheduleId, memo] of wanted) {
    try {
      await createShopSchedule(client, memo);
      result.created.push(scheduleId);
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
      const existing = await client.schedule.getHandle(scheduleId).describe();
      const every = existing.spec.intervals?.[0]?.every;
      if (existing.action.taskQueue === memo.taskQueue && every === memo.intervalMs) {
        result.kept.push(scheduleId);
        continue;
      }
      // Settings changed (interval or task queue): replace it; a run in progress is not affected.
      await deleteSchedule(client, scheduleId);
      try {
        await createShopSchedule(client, memo);
      } catch (raced) {
        // Another process replaced it at the same moment: theirs has the same settings.
        if (!(raced instanceof ScheduleAlreadyRunning)) throw raced;
      }
      result.replaced.push(scheduleId);
    }
  }
  // Listing is eventually consistent: a Schedule just created may be missing here, but only unwanted ones are deleted.
  for await (const schedule of client.schedule.list()) {
    const memo = schedule.memo as Partial<ScheduleMemo> | undefined;
    if (memo?.kind !== SYNC_SCHEDULE_KIND || memo.taskQueue !== opts.taskQueue || wanted.has(schedule.scheduleId)) continue;
    await deleteSchedule(client, schedule.scheduleId);
    result.deleted.push(schedule.scheduleId);
  }
  return result;
}

/** Reconciles now and makes sure the reconciliation Schedule exists (every minute). Safe to call at every start. */
export async function ensureSyncSchedules(client: Client, db: Db, opts: { taskQueue: string; intervalMs: number }): Promise<ReconcileResult> {
  const result = await reconcileSyncSchedules(client, db, opts);
  try {
    await client.schedule.create({
      scheduleId: scheduleIds.syncScheduleReconcile,
      spec: { intervals: [{ every: '1 minute' }] },
      action: { type: 'startWorkflow', workflowType: 'reconcileSyncSchedulesWorkflow', taskQueue: opts.taskQueue, args: [{ intervalMs: opts.intervalMs }] },
      policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const existing = await client.schedule.getHandle(scheduleIds.syncScheduleReconcile).describe();
    const args = existing.action.args as Array<{ intervalMs?: number }> | undefined;
    if (args?.[0]?.intervalMs !== opts.intervalMs || existing.action.taskQueue !== opts.taskQueue) {
      await deleteSchedule(client, scheduleIds.syncScheduleReconcile);
      return ensureSyncSchedules(client, db, opts);
    }
  }
  return result;
}
