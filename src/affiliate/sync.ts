/** The affiliate step of an orders sync batch: new orders become conversions, stored ones move their commission states. */
import type { Knex } from 'knex';
import type { PlatformOrder } from '../platforms/types.js';
import type { SyncShop } from '../sync/shops.js';
import { settleShopAffiliate } from './attribution.js';
import { simulateDemoVisits } from './demoProgramme.js';
import { knexRunner } from './sql.js';

/** Runs inside the batch's transaction, so a conversion is stored exactly when its order is. */
export async function affiliateAfterOrders(trx: Knex.Transaction, shop: SyncShop, orders: PlatformOrder[], until: Date): Promise<void> {
  if (!orders.length) return;
  const run = knexRunner(trx);
  // Demo shops have no real shoppers: the service's tracking of their visits is simulated from the shop's seed.
  if (shop.platform === 'demo' && typeof shop.settings.seed === 'number') {
    await simulateDemoVisits(run, { id: shop.id, code: shop.code, seed: shop.settings.seed },
      orders.map((o) => ({ code: o.code, created_at: o.createdAt, coupon_code: o.couponCode ?? null })));
  }
  await settleShopAffiliate(run, { id: shop.id, accountId: shop.accountId }, until, orders.map((o) => o.code));
}
