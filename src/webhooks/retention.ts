/** Delivery log retention (SPEC: 30 days): attempts older than that, and finished deliveries, are removed in batches. */
import type { Db } from '../db/knex.js';
import { LOG_RETENTION_DAYS } from './settings.js';

/** Removes log entries older than `days`; a pending delivery is never removed. Returns how many rows went. */
export async function purgeDeliveryLog(db: Db, now: Date = new Date(), days = LOG_RETENTION_DAYS, batch = 10_000): Promise<{ attempts: number; deliveries: number }> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  let attempts = 0;
  let deliveries = 0;
  for (;;) {
    const n = await db('webhook_delivery_attempts').whereIn('id', db('webhook_delivery_attempts').select('id').where('attempted_at', '<', cutoff).limit(batch)).delete();
    attempts += n;
    if (n < batch) break;
  }
  for (;;) {
    const n = await db('webhook_deliveries').whereIn('id', db('webhook_deliveries').select('id').whereNot('status', 'PENDING').where('completed_at', '<', cutoff).limit(batch)).delete();
    deliveries += n;
    if (n < batch) break;
  }
  return { attempts, deliveries };
}
