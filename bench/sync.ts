/**
 * `npm run bench:sync`: the shop sync on Temporal, in two parts, in a scratch database of its own (dropped at the end):
 *
 * 1. Backfill: a `demo` shop connected with no rows (the benchmark shop's generator: `bench/sk`, BENCH_ORDERS orders
 *    over 365 days, default 100,000 = a tenth of the 1,000,000-order benchmark set; BENCH_ORDERS=1000000 for all of it)
 *    is synced by `shopSyncWorkflow` on a real worker: records per second, per area and overall.
 * 2. Sync lag: the demo tenants (`demo`, `acme`) loaded as `npm start` loads them, the demo clock BENCH_CLOCK_SPEED
 *    times faster than real time (default 3600: a simulated hour per second), one Schedule per shop every
 *    BENCH_SYNC_INTERVAL (default 1s). For BENCH_SECONDS (default 60) new orders and new shipments are polled over REST
 *    every BENCH_POLL_MS (default 100); lag = first seen over REST − the real instant the demo clock passed the change.
 *
 * Uses DATABASE_URL or the embedded Postgres (server only; the scratch database is separate), and TEMPORAL_ADDRESS or a
 * throwaway in-memory Temporal dev server on a free port (so it never disturbs a running `npm start`).
 */
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { Client } from '@temporalio/client';
import { createApp, type AppDeps } from '../api/app.js';
import { createAccessKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config/index.js';
import { migrateLatest, type Db } from '../src/db/knex.js';
import { findFreePort } from '../src/infra/ports.js';
import { startTemporalDevServer } from '../src/infra/temporalDevServer.js';
import { shopSeed } from '../src/platforms/demo/generator.js';
import { BENCH_ACCOUNT, ensureDemoAccount, loadDemoAccounts } from '../src/platforms/demo/load.js';
import { findAccountByCode } from '../src/queries/shops.js';
import { ensurePostgres } from '../src/runtime.js';
import { reconcileSyncSchedules } from '../src/sync/schedules.js';
import { compose, startWorker } from '../src/entry/compose.js';
import type { ShopSyncResult } from '../workflows/shopSync.js';
import { percentile } from './lib.js';
import { createHttpServer } from '../api/http/server.js';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 100_000);
const CLOCK_SPEED = Number(process.env.BENCH_CLOCK_SPEED ?? 3600);
const SYNC_INTERVAL_MS = Number.parseFloat(process.env.BENCH_SYNC_INTERVAL ?? '1') * 1000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 100);
const say = (line: string) => process.stderr.write(`${line}\n`);

function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(url, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Part 1: a connected shop without rows, backfilled by the sync workflow. */
async function backfill(db: Db, client: Client, taskQueue: string, seed: number) {
  const accountId = await ensureDemoAccount(db, BENCH_ACCOUNT);
  const shop = await db('shops').where({ account_id: accountId, code: 'sk' }).first('id');
  const historyEnd = new Date();
  await db('shop_platform_settings').insert({
    shop_id: shop.id, platform: 'demo', settings: JSON.stringify({ seed: shopSeed(seed, BENCH_ACCOUNT.code, 'sk'), orders: ORDERS, days: 365, historyEnd: historyEnd.toISOString() }),
  });
  say(`backfill: ${ORDERS.toLocaleString('en')} orders over 365 days for ${BENCH_ACCOUNT.code}/sk ...`);
  const started = performance.now();
  const result = (await client.workflow.execute('shopSyncWorkflow', {
    taskQueue, workflowId: `bench-backfill-${crypto.randomBytes(4).toString('hex')}`,
    args: [{ accountCode: BENCH_ACCOUNT.code, shopCode: 'sk', until: historyEnd.toISOString(), batchSize: 1000 }],
  })) as ShopSyncResult;
  const seconds = (performance.now() - started) / 1000;
  const rows: Record<string, number> = {};
  for (const table of ['orders', 'shipments', 'documents', 'claims', 'stock_items', 'stock_movements', 'search_console_sync_runs']) {
    rows[table] = Number((await db(table).where({ shop_id: shop.id }).count<{ count: string }[]>('* as count'))[0].count);
  }
  rows.order_items = Number((await db('order_items as i').join('orders as o', 'o.id', 'i.order_id').where('o.shop_id', shop.id).count<{ count: string }[]>('* as count'))[0].count);
  rows.tracking_events = Number((await db('shipment_tracking_events as e').join('shipments as s', 's.id', 'e.shipment_id').where('s.shop_id', shop.id).count<{ count: string }[]>('* as count'))[0].count);
  const events = Number((await db('outbox_events').where({ shop_id: shop.id }).count<{ count: string }[]>('* as count'))[0].count);
  // The benchmark shop leaves the lag part alone.
  await db('shops').where({ id: shop.id }).update({ removed_at: new Date() });
  const records = result.areas.reduce((n, a) => n + a.records, 0);
  const totalRows = Object.values(rows).reduce((a, b) => a + b, 0);
  return [
    `Backfill of ${BENCH_ACCOUNT.code}/sk (${ORDERS.toLocaleString('en')} orders, 365 days; ${ORDERS === 1_000_000 ? 'the benchmark data set' : 'a 1/' + Math.round(1_000_000 / ORDERS) + ' slice of the 1,000,000-order benchmark set'}) by shopSyncWorkflow, batches of 1000:`,
    `  ${seconds.toFixed(1)} s, ${records.toLocaleString('en')} platform records = ${(records / seconds).toFixed(0)} records/s; ${totalRows.toLocaleString('en')} rows = ${(totalRows / seconds).toFixed(0)} rows/s; events: ${events} (history is not news)`,
    ...result.areas.map((a) => `    ${a.area.padEnd(15)} ${String(a.records).padStart(9)} records in ${String(a.batches).padStart(5)} batches`),
    `  rows: ${JSON.stringify(rows)}`,
  ].join('\n');
}

/** Part 2: the demo shops live, sync lag seen from REST. */
async function lag(appDeps: AppDeps, client: Client, taskQueue: string, seed: number) {
  const { db } = appDeps;
  say('lag: loading the demo tenants ...');
  const loaded = await loadDemoAccounts(db, { seed, endDate: new Date() });
  const account = (await findAccountByCode(db, 'demo'))!;
  const { key } = await createAccessKey(db, { accountId: account.id, name: 'bench-sync', scopes: ['orders:read', 'shipping:read'], interfaces: ['rest'], shopCodes: null, expiresAt: null, createdBy: 'bench' });
  const app = createApp(appDeps);
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const settings = await db('shop_platform_settings as ps').join('shops as s', 's.id', 'ps.shop_id').where('s.account_id', account.id).select('s.code', 'ps.settings');
  const historyEnd = new Map(settings.map((r) => [r.code as string, Date.parse(r.settings.historyEnd)]));
  // The real instant at which the demo clock of a shop reaches a simulated instant.
  const realTime = (shop: string, simulatedMs: number) => historyEnd.get(shop)! + (simulatedMs - historyEnd.get(shop)!) / CLOCK_SPEED;

  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const period = { from: day(Date.now() - 2 * 86_400_000), to: day(Date.now() + (SECONDS * CLOCK_SPEED * 1000) + 3 * 86_400_000) };
  const seen = new Map<string, number>();
  const lags: Record<'orders' | 'shipments', number[]> = { orders: [], shipments: [] };
  const shops = ['sk', 'cz', 'hu', 'pl'];
  const get = async (path: string) => {
    const res = await fetch(`${base}/api/v1${path}`, { headers: { Authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`REST answered ${res.status}: ${await res.text()}`);
    return (await res.json() as { data: Array<Record<string, string>> }).data;
  };
  const poll = async (measure: boolean) => {
    for (const shop of shops) {
      const now = Date.now();
      for (const o of await get(`/orders?market=${shop}&limit=20`)) {
        const k = `o|${shop}|${o.code}`;
        if (seen.has(k)) continue;
        seen.set(k, now);
        if (measure && Date.parse(o.createdAt) > historyEnd.get(shop)!) lags.orders.push(now - realTime(shop, Date.parse(o.createdAt)));
      }
      // The simulated shops run ahead of the wall clock, so the default period (last 30 real days) would miss them.
      for (const s of await get(`/shipping/shipments?market=${shop}&limit=20&from=${period.from}&to=${period.to}`)) {
        const k = `s|${shop}|${s.shipmentId}`;
        if (seen.has(k)) continue;
        seen.set(k, now);
        if (measure && Date.parse(s.createdAt) > historyEnd.get(shop)!) lags.shipments.push(now - realTime(shop, Date.parse(s.createdAt)));
      }
    }
  };
  await poll(false);

  say(`lag: clock x${CLOCK_SPEED}, a Schedule per shop every ${SYNC_INTERVAL_MS / 1000} s, polling REST every ${POLL_MS} ms for ${SECONDS} s ...`);
  await reconcileSyncSchedules(client, db, { taskQueue, intervalMs: SYNC_INTERVAL_MS });
  const deadline = Date.now() + SECONDS * 1000;
  // Changes that happened before measuring started are not counted: a warm-up of two sync intervals.
  const warmupUntil = Date.now() + 2 * SYNC_INTERVAL_MS;
  while (Date.now() < deadline) {
    const t0 = Date.now();
    await poll(Date.now() > warmupUntil);
    await new Promise((r) => setTimeout(r, Math.max(0, POLL_MS - (Date.now() - t0))));
  }
  const runs: number[] = [];
  try {
    for await (const w of client.workflow.list({ query: `WorkflowType = "shopSyncWorkflow" AND ExecutionStatus = "Completed" AND TaskQueue = "${taskQueue}"` })) {
      // Scheduled runs only (their IDs start with the Schedule's), not the backfill of part 1.
      if (w.closeTime && w.workflowId.startsWith('sync-')) runs.push(w.closeTime.getTime() - w.startTime.getTime());
      if (runs.length >= 5000) break;
    }
  } catch (error) {
    say(`(listing sync runs failed: ${(error as Error).message})`);
  }
  for await (const s of client.schedule.list()) {
    if ((s.memo as { taskQueue?: string } | undefined)?.taskQueue === taskQueue) await client.schedule.getHandle(s.scheduleId).delete();
  }
  server.close();
  const line = (name: string, values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `  ${name.padEnd(16)} ${String(values.length).padStart(6)} changes   p50 ${percentile(sorted, 50).toFixed(0).padStart(6)} ms   p99 ${percentile(sorted, 99).toFixed(0).padStart(6)} ms`;
  };
  const sortedRuns = runs.sort((a, b) => a - b);
  const orderCount = loaded.filter((l) => l.accountCode === 'demo').reduce((n, l) => n + l.counts.orders, 0);
  return [
    `Sync lag, change in the demo platform -> visible over REST (${shops.length} demo shops, ${orderCount.toLocaleString('en')} orders of history; acme's 2 shops sync too), clock x${CLOCK_SPEED}, Schedule interval ${SYNC_INTERVAL_MS / 1000} s, poll ${POLL_MS} ms, ${SECONDS} s:`,
    line('new orders', lags.orders),
    line('new shipments', lags.shipments),
    line('all', [...lags.orders, ...lags.shipments]),
    `  sync runs (workflow start -> close, ${runs.length} runs): p50 ${percentile(sortedRuns, 50)} ms, p99 ${percentile(sortedRuns, 99)} ms`,
  ].join('\n');
}

async function main() {
  const config = loadConfig();
  const postgres = await ensurePostgres(config);
  const scratch = `bench_sync_${crypto.randomBytes(4).toString('hex')}`;
  await admin(postgres.value, (c) => c.query(`create database ${scratch}`));
  let temporalStop = async () => {};
  let address = config.TEMPORAL_ADDRESS;
  if (!address) {
    const temporal = await startTemporalDevServer({ dbFile: null, port: await findFreePort(), uiPort: null, namespace: 'default' });
    address = temporal.address;
    temporalStop = temporal.stop;
  }
  const taskQueue = `bench-sync-${crypto.randomBytes(4).toString('hex')}`;
  // The service's own dependencies over the scratch database and this Temporal, its demo clock CLOCK_SPEED times faster.
  const service = compose({ ...config, DEMO_CLOCK_SPEED: CLOCK_SPEED }, { databaseUrl: databaseUrl(postgres.value, scratch), temporalAddress: address }, { poolMax: 12 });
  const { db } = service;
  const client = await service.temporal.client();
  await startWorker(service, { taskQueue });
  try {
    await migrateLatest(db);
    const first = await backfill(db, client, taskQueue, config.DEMO_SEED);
    process.stdout.write(`${first}\n`);
    const second = await lag(service.app, client, taskQueue, config.DEMO_SEED);
    process.stdout.write(`${second}\n`);
  } finally {
    await service.close();
    await admin(postgres.value, (c) => c.query(`drop database if exists ${scratch} with (force)`));
    await temporalStop();
    await postgres.stop();
  }
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
