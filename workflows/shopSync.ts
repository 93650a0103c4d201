/** Shop sync: one run per shop, started by the shop's Schedule; pulls each data area up to one fixed instant. */
import { condition, defineSignal, executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { AreaSyncResult } from '../src/sync/runner.js';

export interface ShopSyncInput {
  accountCode: string;
  shopCode: string;
  /** The run's end in platform time; default: the platform's clock when the run starts. */
  until?: string;
  /** Records per batch (one transaction each). */
  batchSize?: number;
  /** How soon an attempt of a dead worker is retried; the default suits production, tests shorten it. */
  heartbeatTimeout?: string;
}

export interface ShopSyncResult {
  accountCode: string;
  shopCode: string;
  skipped: string | null;
  until: string | null;
  areas: AreaSyncResult[];
}

const { prepareShopSync, completeShopSync } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** Syncs every data area of one shop, area after area, from each area's checkpoint up to the same instant. */
export async function shopSyncWorkflow(input: ShopSyncInput): Promise<ShopSyncResult> {
  const { syncShopArea } = proxyActivities<Activities>({
    // A backfill of a big shop takes long; the heartbeat (every few seconds) is what detects a dead worker.
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: input.heartbeatTimeout ?? '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  const base = { accountCode: input.accountCode, shopCode: input.shopCode };
  const prepared = await prepareShopSync({ ...base, until: input.until });
  if (prepared.skipped) return { ...base, skipped: prepared.reason, until: null, areas: [] };
  const areas: AreaSyncResult[] = [];
  for (const area of prepared.areas) {
    areas.push(await syncShopArea({ shopId: prepared.shopId, area, until: prepared.until, batchSize: input.batchSize ?? 500 }));
  }
  await completeShopSync({ shopId: prepared.shopId, until: prepared.until });
  return { ...base, skipped: null, until: prepared.until, areas };
}

const { reconcileSyncSchedules } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

/** Keeps one sync Schedule per live shop (run every minute by its own Schedule). */
export async function reconcileSyncSchedulesWorkflow(input: { intervalMs: number }) {
  return reconcileSyncSchedules(input);
}

/** Signalled once per event a shop's platform forwarded (Medusa's subscriber): a sync is due. */
export const platformEventSignal = defineSignal<[{ event: string }]>('platformEvent');

/**
 * Near-real-time sync of one shop from forwarded platform events: runs a shop sync at once, and again while events
 * keep arriving during a run (their changes may be after that run's `until`); ends after a quiet minute. The inbound
 * endpoint starts it with signal-with-start, so a burst of events is one or two runs, not one per event.
 */
export async function shopEventSyncWorkflow(input: { accountCode: string; shopCode: string }): Promise<number> {
  let pending = true;
  setHandler(platformEventSignal, () => {
    pending = true;
  });
  let runs = 0;
  while (pending || (await condition(() => pending, '1 minute'))) {
    pending = false;
    runs++;
    await executeChild(shopSyncWorkflow, { args: [{ ...input }], workflowId: `${workflowInfo().workflowId}-run-${runs}` });
  }
  return runs;
}
