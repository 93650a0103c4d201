/** Reads about the account itself: plan, entitlements with usage, and the credential in use. */
import type { Db } from '../db/knex.js';

export async function getAccountWithPlan(db: Db, accountId: string) {
  return db('accounts as a').join('plans as p', 'p.code', 'a.plan_code')
    .select('a.code', 'a.name', 'a.time_zone', 'p.code as plan_code', 'p.name as plan_name')
    .where('a.id', accountId).first();
}

/** Features of the account's plan, with per-account overrides applied. */
export async function getEntitlements(db: Db, accountId: string): Promise<{ feature: string; enabled: boolean; limit: number | null }[]> {
  const rows = await db('accounts as a')
    .join('plan_features as f', 'f.plan_code', 'a.plan_code')
    .leftJoin('account_entitlements as o', (j) => j.on('o.account_id', 'a.id').andOn('o.feature', 'f.feature'))
    .select('f.feature', db.raw('coalesce(o.enabled, f.enabled) as enabled'), db.raw('case when o.account_id is null then f.limit_value else o.limit_value end as limit_value'))
    .where('a.id', accountId).orderBy('f.feature');
  return rows.map((r) => ({ feature: r.feature, enabled: r.enabled, limit: r.limit_value }));
}

/** Current usage per feature; a feature without a countable resource yet reports 0. */
export async function getFeatureUsage(db: Db, accountId: string): Promise<Record<string, number>> {
  const row = await db('webhook_endpoints').where({ account_id: accountId }).whereNull('deleted_at').count<{ count: string }[]>('* as count').first();
  return { webhooks: Number(row?.count ?? 0) };
}

export async function getAccessKeyInfo(db: Db, id: string) {
  return db('access_keys').select('id', 'name', 'interfaces', 'scopes', 'all_shops', 'shop_codes', 'created_by', 'created_at', 'expires_at').where({ id }).first();
}

/** An OAuth connection (D28) as its diagnostics show it: the client and the person who consented. */
export async function getConnectionInfo(db: Db, id: string) {
  return db('oauth_connections as c').join('people as p', 'p.id', 'c.person_id')
    .select('c.id', 'c.client_id', 'c.client_name', 'c.created_at', 'p.email as granted_by').where('c.id', id).first();
}
