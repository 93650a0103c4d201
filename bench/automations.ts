/**
 * `npm run bench:automations`: automation runs end to end on a real Postgres and a real Temporal dev server.
 * BENCH_AUTOMATIONS enabled automations (default 50) on `order.paid` with a condition on the order as stored and one
 * tag step; a burst of BENCH_EVENTS paid orders (default 100) → BENCH_EVENTS x BENCH_AUTOMATIONS runs. Measures events
 * per second matched and runs started by the automation consumer, the lag from event to each run's first step
 * (p50/p99), the runs completed per second, and beside it, in the same run, the webhook dispatch of the same events to
 * one subscribed receiver (event → receipt). Uses its own database and an in-memory Temporal dev server (or
 * TEMPORAL_ADDRESS).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { CATALOG_VERSION } from '../src/automations/catalog.js';
import { createDraft, publishAutomation, setAutomationEnabled } from '../src/automations/drafts.js';
import { loadConfig } from '../src/config/index.js';
import { migrateLatest, type Db } from '../src/db/knex.js';
import { findFreePort } from '../src/infra/ports.js';
import { startTemporalDevServer } from '../src/infra/temporalDevServer.js';
import { ensurePostgres } from '../src/runtime.js';
import { automationConsumerWorkflowId, ensureAutomationWorkflows } from '../src/temporal/automations.js';
import { workflowIds } from '../src/temporal/constants.js';
import { ensureWebhookWorkflows } from '../src/temporal/webhooks.js';
import { compose, startWorker } from '../src/entry/compose.js';
import { systemResolver } from '../src/webhooks/addresses.js';
import { createEndpoint } from '../src/webhooks/endpoints.js';
import { percentile } from './lib.js';

const AUTOMATIONS = Number(process.env.BENCH_AUTOMATIONS ?? 50);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100);

async function waitFor(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs = 1_800_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const count = async (q: ReturnType<Db>) => Number((await q.count<{ count: string }[]>('* as count'))[0].count);
const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main() {
  const config = loadConfig();
  const postgres = await ensurePostgres(config);
  const adminUrl = new URL(postgres.value);
  adminUrl.pathname = '/postgres';
  const dbName = `bench_automations_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(postgres.value);
  dbUrl.pathname = `/${dbName}`;
  const temporal = config.TEMPORAL_ADDRESS
    ? { address: config.TEMPORAL_ADDRESS, stop: async () => {} }
    : await startTemporalDevServer({ dbFile: null, port: await findFreePort(), uiPort: null, namespace: 'default' });
  // The service's own dependencies over the scratch database and this Temporal (the bench's webhook settings below).
  const service = compose({ ...config, TEMPORAL_NAMESPACE: 'default' }, { databaseUrl: dbUrl.toString(), temporalAddress: temporal.address }, { poolMax: 20 });
  const { db } = service;
  const client = await service.temporal.client();
  const taskQueue = `bench-automations-${process.pid}`;
  const settings = { secretsKey: crypto.randomBytes(32), allowLoopback: true, retryScheduleMs: [5_000], timeoutMs: 10_000, resolve: systemResolver };
  await startWorker(service, { taskQueue, webhooks: settings });
  const receipts = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receipts.set(String(req.headers['x-service-event-id']), performance.timeOrigin + performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    await migrateLatest(db);
    const [account] = await db('accounts').insert({ code: 'benchauto', name: 'Automation bench', plan_code: 'custom', time_zone: 'Europe/Bratislava' }).returning('id');
    const [shop] = await db('shops').insert({ account_id: account.id, code: 'sk', name: 'Bench SK', platform: 'demo', currency: 'EUR', country: 'SK', language: 'sk', time_zone: 'Europe/Bratislava', base_url: 'https://bench.example' }).returning(['id', 'code']);
    const accountId = String(account.id);
    // The paid orders the events are about (conditions read them as stored).
    await db.raw(`
      insert into orders (shop_id, code, created_at, updated_at, status_id, status_name, paid, currency, total_with_vat, total_without_vat, total_vat,
                          shipping_with_vat, eur_rate, payment_method, shipping_method, variable_symbol, customer_email_hash)
      select ?, 'BA' || n, now(), now(), 2, 'Processing', true, 'EUR', 100 + n, 81.3, 18.7, 3.5, 1, 'card', 'courier', n::text, repeat('a', 64)
      from generate_series(1, ?) as n`, [shop.id, EVENTS]);
    const endpoint = await createEndpoint(db, { secretsKey: settings.secretsKey, allowLoopback: true, resolve: systemResolver }, {
      accountId, name: 'subscriber', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['order.paid'], shops: 'all', createdBy: 'bench',
    });
    const actor = { accountId, shopCodes: null, by: 'person:bench' };
    for (let i = 0; i < AUTOMATIONS; i++) {
      const draft = await createDraft(db, actor, {
        clientRequestId: `bench-${i}`,
        rule: {
          catalogVersion: CATALOG_VERSION, name: `Bench rule ${i}`, trigger: { id: 'paid', event: 'order.paid', markets: ['sk'] },
          conditions: { id: 'when', all: [{ id: 'over', field: 'order.totalWithVatEur', op: 'gt', value: 50 }, { id: 'paid_flag', field: 'order.paid', op: 'eq', value: true }] },
          steps: [{ id: 'tag', action: 'add_tag', target: 'order', tag: `rule-${i}` }],
        },
      });
      await publishAutomation(db, actor, draft.workflow_id);
      await setAutomationEnabled(db, actor, draft.workflow_id, true);
    }
    await ensureWebhookWorkflows(client, taskQueue, { retentionSchedule: false });
    await ensureAutomationWorkflows(client, taskQueue);

    const runsTotal = EVENTS * AUTOMATIONS;
    process.stderr.write(`automations: ${EVENTS} paid orders x ${AUTOMATIONS} enabled automations = ${runsTotal} runs...\n`);
    const inserted = await db.raw(`
      insert into outbox_events (event_id, account_id, shop_id, store, event_type, resource_type, resource_id, data, occurred_at)
      select gen_random_uuid(), ?, ?, 'sk', 'order.paid', 'order', 'BA' || n, jsonb_build_object('order_code', 'BA' || n), now()
      from generate_series(1, ?) as n returning event_id`, [accountId, shop.id, EVENTS]);
    const committed = performance.timeOrigin + performance.now();
    const eventIds: string[] = inserted.rows.map((r: { event_id: string }) => r.event_id);

    let matchedAt = 0;
    let startedAt = 0;
    await waitFor('the runs to be created and started', async () => {
      const created = await count(db('automation_runs'));
      if (created >= runsTotal && !matchedAt) matchedAt = performance.timeOrigin + performance.now();
      const started = await count(db('automation_runs').whereNotNull('workflow_started_at'));
      if (started >= runsTotal && !startedAt) startedAt = performance.timeOrigin + performance.now();
      return matchedAt > 0 && startedAt > 0;
    });
    await waitFor('every run to finish', async () => (await count(db('automation_runs').where({ status: 'completed' }))) >= runsTotal);
    const completedAt = performance.timeOrigin + performance.now();
    await waitFor('the webhook deliveries', () => eventIds.every((id) => receipts.has(id)));

    const firstSteps = await db('automation_run_steps as s').join('automation_runs as r', 'r.id', 's.run_id').select('s.started_at');
    const lags = firstSteps.map((s) => (s.started_at as Date).getTime() - committed).sort((a, b) => a - b);
    const hookLags = eventIds.map((id) => receipts.get(id)! - committed).sort((a, b) => a - b);
    const tags = await count(db('automation_tags'));
    const seconds = (at: number) => (at - committed) / 1000;
    const lines = [
      `Automations: ${AUTOMATIONS} enabled automations on order.paid (2 conditions on the stored order, 1 tag step), a burst of ${EVENTS} paid orders = ${runsTotal} runs, one worker`,
      `  matched:   all ${EVENTS} events matched into ${runsTotal} runs ${fmt(seconds(matchedAt))} s after the burst → ${fmt(EVENTS / seconds(matchedAt))} events/s, ${fmt(runsTotal / seconds(matchedAt))} runs/s created`,
      `  started:   all ${runsTotal} run workflows started after ${fmt(seconds(startedAt))} s → ${fmt(runsTotal / seconds(startedAt))} runs/s`,
      `  completed: all ${runsTotal} runs completed after ${fmt(seconds(completedAt))} s → ${fmt(runsTotal / seconds(completedAt))} runs/s; tags written ${tags} (expected ${runsTotal})`,
      `  event → first step of a run: p50 ${fmt(percentile(lags, 50) / 1000, 2)} s, p99 ${fmt(percentile(lags, 99) / 1000, 2)} s`,
      `  beside it, webhook dispatch of the same ${EVENTS} events to 1 subscriber: event → receipt p50 ${fmt(percentile(hookLags, 50) / 1000, 2)} s, p99 ${fmt(percentile(hookLags, 99) / 1000, 2)} s`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
    void endpoint;
  } finally {
    await client.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
    await client.workflow.getHandle(automationConsumerWorkflowId(taskQueue)).terminate().catch(() => {});
    await service.close();
    await new Promise<void>((r) => receiver.close(() => r()));
    await temporal.stop();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    await postgres.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
