/**
 * The affiliate step of a sync batch, in the batch's transaction: new orders become conversions, and the commission
 * states follow what the batch changed (an order's status, a refunded withdrawal, a credit note) and the clock.
 */
import type { Knex } from 'knex';
import type { AreaRecords, PlatformOrder, ShopPlatformAdapter, SyncArea } from '../platforms/types.js';
import type { SyncShop } from '../sync/shops.js';
import { refreshCommissionStates, settleShopAffiliate } from './attribution.js';
import { knexRunner } from './sql.js';

/** The areas whose changes move conversions or their commission states. */
const AFFILIATE_AREAS: ReadonlySet<SyncArea> = new Set(['orders', 'claims', 'documents']);

export async function affiliateAfterBatch(trx: Knex.Transaction, adapter: ShopPlatformAdapter, shop: SyncShop, area: SyncArea, records: Array<AreaRecords[SyncArea]>, until: Date): Promise<void> {
  if (!AFFILIATE_AREAS.has(area) || !records.length) return;
  const run = knexRunner(trx);
  const ref = { id: shop.id, accountId: shop.accountId };
  if (area !== 'orders') {
    const [programme] = await run.rows(trx('affiliate_programmes').where({ account_id: shop.accountId }).select('account_id'));
    if (!programme) return;
    const orderCodes = (records as Array<{ orderCode?: string | null }>).map((r) => r.orderCode).filter((c): c is string => typeof c === 'string');
    await refreshCommissionStates(run, shop.id, until, orderCodes);
    return;
  }
  const orders = records as PlatformOrder[];
  // A simulated platform (the demo) has no real shoppers: it simulates what the service's tracking saw of them.
  await adapter.simulateTrackedVisits?.(trx, shop, orders);
  await settleShopAffiliate(run, ref, until, orders.map((o) => o.code));
}
