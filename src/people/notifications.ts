/**
 * What the application shows a person about their account: notifications (D16; a paused webhook endpoint only to
 * people who may see webhooks) and the plan's entitlements with usage (D12).
 */
import type { Db } from '../db/knex.js';
import { getAccountWithPlan, getEntitlements, getFeatureUsage } from '../queries/account.js';
import type { Person } from './model.js';
import { mayReadWebhooks } from './webhooks.js';

export const NOTIFICATIONS_SHOWN = 50;

export interface NotificationView {
  id: string;
  kind: string;
  title: string;
  message: string;
  createdAt: string;
  read: boolean;
  /** The endpoint a webhook notification is about, to link to it. */
  endpointId: string | null;
}

function visible(person: Person) {
  return (kind: string) => !kind.startsWith('webhook_') || mayReadWebhooks(person);
}

/** The newest notifications of the person's account that the person may see. */
export async function notificationsOf(db: Db, person: Person): Promise<NotificationView[]> {
  const rows = await db('notifications').where({ account_id: person.accountId }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(NOTIFICATIONS_SHOWN * 2);
  return rows.filter((r) => visible(person)(r.kind)).slice(0, NOTIFICATIONS_SHOWN).map((r) => ({
    id: String(r.id), kind: r.kind, title: r.title, message: r.message, createdAt: r.created_at.toISOString(), read: r.read_at !== null,
    endpointId: typeof r.details?.endpointId === 'string' ? r.details.endpointId : null,
  }));
}

/** Marks the account's notifications the person sees as read (read state is the account's, as notifications are). */
export async function markNotificationsRead(db: Db, person: Person): Promise<number> {
  const ids = (await notificationsOf(db, person)).filter((n) => !n.read).map((n) => n.id);
  if (ids.length === 0) return 0;
  return db('notifications').where({ account_id: person.accountId }).whereIn('id', ids).update({ read_at: new Date() });
}

/** What a person reads for each plan feature key (plan_features.feature); an unknown key is shown as it is. */
export const FEATURE_NAMES: Record<string, string> = {
  webhooks: 'Webhook endpoints',
  rest_api: 'REST API',
  mcp: 'MCP server for AI assistants',
};

/** The plan and each feature's entitlement with current usage. */
export async function planOf(db: Db, person: Person) {
  // One after another, so that `db` may be a transaction too (one connection takes one query at a time).
  const account = await getAccountWithPlan(db, person.accountId);
  const entitlements = await getEntitlements(db, person.accountId);
  const usage = await getFeatureUsage(db, person.accountId);
  return {
    plan: { code: account.plan_code as string, name: account.plan_name as string },
    features: entitlements.map((e) => ({ ...e, name: FEATURE_NAMES[e.feature] ?? e.feature, usage: usage[e.feature] ?? null })),
  };
}
