/** The service-wide figures a scrape reads from Postgres: what is waiting and how far behind it is. */
import { Gauge } from 'prom-client';
import type { Db } from '../db/knex.js';
import { metricsRegistry } from './registry.js';

/** Registers the gauges once per process; each scrape runs their queries (a few index-backed aggregates). */
export function registerDatabaseMetrics(db: Db): void {
  if (metricsRegistry.getSingleMetric('outbox_backlog_events')) return;
  new Gauge({
    name: 'outbox_backlog_events',
    help: 'Domain events not yet turned into webhook deliveries',
    registers: [metricsRegistry],
    async collect() {
      const row = await db('outbox_events').whereNull('dispatched_at').count<{ count: string }[]>({ count: '*' }).first();
      this.set(Number(row?.count ?? 0));
    },
  });
  new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Webhook deliveries waiting for an attempt',
    registers: [metricsRegistry],
    async collect() {
      const row = await db('webhook_deliveries').where('status', 'PENDING').count<{ count: string }[]>({ count: '*' }).first();
      this.set(Number(row?.count ?? 0));
    },
  });
  new Gauge({
    name: 'webhook_delivery_lag_seconds',
    help: 'Age of the oldest pending webhook delivery (0 when none waits)',
    registers: [metricsRegistry],
    async collect() {
      const row = await db('webhook_deliveries').where('status', 'PENDING').min<{ oldest: Date | null }[]>({ oldest: 'created_at' }).first();
      this.set(row?.oldest ? Math.max(0, (Date.now() - new Date(row.oldest).getTime()) / 1000) : 0);
    },
  });
  new Gauge({
    name: 'sync_lag_seconds',
    help: 'Per shop: seconds since the instant up to which every area is synced (the least current area)',
    labelNames: ['account', 'shop'] as const,
    registers: [metricsRegistry],
    async collect() {
      const rows = await db('sync_checkpoints as c')
        .join('shops as s', 's.id', 'c.shop_id')
        .join('accounts as a', 'a.id', 's.account_id')
        .whereNotNull('c.through')
        .groupBy('a.code', 's.code')
        .select('a.code as account', 's.code as shop')
        .min({ through: 'c.through' });
      this.reset();
      for (const row of rows as Array<{ account: string; shop: string; through: Date }>) {
        this.set({ account: row.account, shop: row.shop }, Math.max(0, (Date.now() - new Date(row.through).getTime()) / 1000));
      }
    },
  });
  new Gauge({
    name: 'email_outbox_messages',
    help: 'E-mails of the outbox by status (queued are waiting to be sent)',
    labelNames: ['status'] as const,
    registers: [metricsRegistry],
    async collect() {
      const rows = await db('email_outbox').groupBy('status').select('status').count<{ status: string; count: string }[]>({ count: '*' });
      this.reset();
      for (const status of ['queued', 'sent', 'failed', 'skipped']) this.set({ status }, 0);
      for (const row of rows) this.set({ status: row.status }, Number(row.count));
    },
  });
}
