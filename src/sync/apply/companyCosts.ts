/** Company costs: one row per (shop, month, category); a re-read month replaces its amount and rate. */
import type { Knex } from 'knex';
import type { AreaRecords, PlatformCompanyCost } from '../../platforms/types.js';
import { formatMinor } from '../../records/money.js';
import type { Row } from '../rows.js';
import type { SyncShop } from '../shops.js';

export function companyCostRow(shopId: string, c: PlatformCompanyCost): Row {
  return { shop_id: shopId, month: c.month, category: c.category, currency: c.currency, amount: formatMinor(c.amountMinor), eur_rate: c.eurRate.toFixed(6) };
}

export async function applyCompanyCosts(trx: Knex.Transaction, shop: SyncShop, records: Array<AreaRecords['company_costs']>): Promise<number> {
  if (!records.length) return 0;
  await trx('company_costs').insert(records.map((c) => companyCostRow(shop.id, c)))
    .onConflict(['shop_id', 'month', 'category']).merge(['currency', 'amount', 'eur_rate']);
  return records.length;
}
