/** The account's webhook entitlement (D12, SPEC plan table), read through the one entitlement query. */
import type { Db } from '../db/knex.js';
import { getEntitlements, getFeatureUsage } from '../queries/account.js';

/** Whether the plan (with overrides) includes outbound webhooks now. */
export async function webhooksEnabled(db: Db, accountId: string): Promise<boolean> {
  return (await getEntitlements(db, accountId)).find((f) => f.feature === 'webhooks')?.enabled ?? false;
}

/** Enabled, the endpoint limit (null = per agreement) and the non-deleted endpoints that count against it. */
export async function webhookEntitlement(db: Db, accountId: string): Promise<{ enabled: boolean; limit: number | null; usage: number }> {
  // One after another: endpoint creation calls this inside its transaction (one connection, one query at a time).
  const features = await getEntitlements(db, accountId);
  const usage = await getFeatureUsage(db, accountId);
  const feature = features.find((f) => f.feature === 'webhooks');
  return { enabled: feature?.enabled ?? false, limit: feature ? feature.limit : 0, usage: usage.webhooks ?? 0 };
}
