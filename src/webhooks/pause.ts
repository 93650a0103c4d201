/**
 * Pausing (SPEC "Webhook endpoint", D14, D16): an enabled endpoint is paused after 30 consecutive failed attempts or
 * with more than 5,000 pending deliveries, with a notification for the account's people and a log line. Both counts
 * are read from Postgres under the endpoint's row lock, so the decision and the notification happen exactly once.
 */
import type { Db } from '../db/knex.js';
import { logger } from '../logger.js';
import { pauseReason, type PauseReason } from './engine.js';

export type { PauseReason };

export async function pendingCount(db: Db, endpointId: string): Promise<number> {
  const row = await db('webhook_deliveries').where({ endpoint_id: endpointId, status: 'PENDING' }).count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

/** Pauses the endpoint if it is enabled and over a limit; returns what it found. */
export async function pauseIfOverLimits(db: Db, endpointId: string): Promise<{ paused: boolean; reason: PauseReason | null; state: string; failures: number; pending: number }> {
  const result = await db.transaction(async (trx) => {
    const endpoint = await trx('webhook_endpoints').where({ id: endpointId }).forUpdate().first('id', 'account_id', 'name', 'url', 'state', 'deleted_at', 'consecutive_failures');
    if (!endpoint) return { paused: false, reason: null, state: 'deleted', failures: 0, pending: 0 };
    const state = endpoint.deleted_at ? 'deleted' : endpoint.state;
    const failures: number = endpoint.consecutive_failures;
    const pending = await pendingCount(trx, endpointId);
    const reason = pauseReason(state, failures, pending);
    if (!reason) return { paused: false, reason: null, state, failures, pending };
    const [{ paused_at: pausedAt }] = await trx('webhook_endpoints').where({ id: endpointId })
      .update({ state: 'paused', paused_at: trx.fn.now(), pause_reason: reason, updated_at: trx.fn.now() }).returning('paused_at');
    const why = reason === 'consecutive_failures' ? `${failures} consecutive delivery attempts failed` : `${pending} deliveries are pending`;
    await trx('notifications').insert({
      account_id: endpoint.account_id,
      kind: 'webhook_endpoint_paused',
      title: `Webhook endpoint "${endpoint.name}" was paused`,
      message: `Deliveries to ${endpoint.url} are paused because ${why}. Pending deliveries are kept; repair the receiver and enable the endpoint again to deliver them.`,
      details: { endpointId: String(endpointId), reason, consecutiveFailures: failures, pendingDeliveries: pending },
      dedupe_key: `webhook_endpoint_paused:${endpointId}:${(pausedAt as Date).toISOString()}`,
    }).onConflict('dedupe_key').ignore();
    return { paused: true, reason, state: 'paused', failures, pending, accountId: String(endpoint.account_id) };
  });
  if (result.paused) {
    logger.warn({ component: 'webhooks', endpointId: String(endpointId), reason: result.reason, consecutiveFailures: result.failures, pendingDeliveries: result.pending }, 'webhook endpoint paused');
  }
  return { paused: result.paused, reason: result.reason, state: result.state, failures: result.failures, pending: result.pending };
}

/** The endpoint's state as the actor sees it ('deleted' also when the row is gone). */
export async function endpointState(db: Db, endpointId: string): Promise<'enabled' | 'paused' | 'disabled' | 'deleted'> {
  const row = await db('webhook_endpoints').where({ id: endpointId }).first('state', 'deleted_at');
  return !row || row.deleted_at ? 'deleted' : row.state;
}
