/**
 * `npm run bench:reports`: the summaries over 366 days of the benchmark shop (~1M orders) — financial summary,
 * analytics overview, customers performance (first page; also over the last 30 days) and shipping stats — each served by our endpoint and, in the
 * same run, computed from the raw rows by plain SQL. Prints p50/p99 of both, the ratio, and whether the figures are
 * equal. BENCH_SECONDS (default 5) per measurement; one client at a time (latency, not throughput).
 */
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../api/app.js';
import { createHttpServer } from '../api/http/server.js';
import { createAccessKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config/index.js';
import { DemoPlatform } from '../src/platforms/demo/adapter.js';
import { CANCELLED_STATUS_ID } from '../src/rollups/orders.js';
import { syncArea } from '../src/sync/runner.js';
import { findSyncShop } from '../src/sync/shops.js';
import { measure, type Measurement, openBenchShop } from './lib.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);

interface Case {
  title: string;
  path: string;
  raw: string;
  /** The figure compared: from our response and from the raw query's first row. */
  ours: (data: any) => string;
  baseline: (rows: any[]) => string;
}

async function main() {
  const config = loadConfig();
  const { postgres, db, account, shop, service } = await openBenchShop(config);
  // A data set loaded before the analytics areas existed gets them from the platform the way a shop would: one sync.
  const syncShop = (await findSyncShop(db, 'bench', 'sk'))!;
  if (!(await db('web_visits').where({ shop_id: shop.id }).first())) {
    process.stderr.write('Syncing web analytics, company costs and search-console rows of the benchmark shop (once)...\n');
    const platform = new DemoPlatform({ db });
    const until = platform.now(syncShop);
    for (const area of ['company_costs', 'web_analytics', 'search_console_data'] as const) await syncArea(db, platform, syncShop, area, until, { batchSize: 5000 });
  }
  const settings = await db('shop_platform_settings').where({ shop_id: shop.id }).first('settings');
  const to = String(settings.settings.historyEnd).slice(0, 10);
  const from = new Date(Date.parse(`${to}T00:00:00Z`) - 365 * 86_400_000).toISOString().slice(0, 10);
  const tz = shop.timeZone;
  const rangeFrom = (start: string) => `created_at >= ('${start}'::date)::timestamp at time zone '${tz}' and created_at < ('${to}'::date + 1)::timestamp at time zone '${tz}'`;
  const range = rangeFrom(from);
  const orders = `from orders where shop_id = ${shop.id} and status_id <> ${CANCELLED_STATUS_ID} and ${range}`;
  // The last 30 days: a period that is not the whole history, so customers performance sums per-day rollups.
  const from30 = new Date(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
  const orders30 = `from orders where shop_id = ${shop.id} and status_id <> ${CANCELLED_STATUS_ID} and ${rangeFrom(from30)}`;
  const customersRaw = (source: string) => `with c as (select customer_email_hash as key, count(*) as n, sum(total_with_vat) as revenue ${source} group by customer_email_hash)
            select (select string_agg(key, ',' order by revenue desc, key) from (select * from c order by revenue desc, key limit 50) p) as page,
                   count(*)::int as customers, sum(revenue)::text as revenue from c`;
  const hours = (fraction: number) => `round((percentile_cont(${fraction}) within group (order by delivery_ms) / 3600000.0::float8)::numeric, 2)::text`;

  const cases: Case[] = [
    {
      title: 'Financial summary (revenue with VAT, EUR)',
      path: `/reports/financial-summary?market=sk&from=${from}&to=${to}`,
      raw: `select count(*)::int as orders, round(sum(total_with_vat * eur_rate), 2)::text as revenue ${orders}`,
      ours: (d) => `${d.orders} orders, ${d.revenueWithVat.amount} EUR`,
      baseline: (r) => `${r[0].orders} orders, ${r[0].revenue} EUR`,
    },
    {
      title: 'Analytics overview (visits, orders, revenue)',
      path: `/analytics/overview?market=sk&from=${from}&to=${to}`,
      raw: `select (select coalesce(sum(visits), 0)::int from web_visits where shop_id = ${shop.id} and day between '${from}' and '${to}') as visits,
              count(*)::int as orders, round(sum(total_with_vat * eur_rate), 2)::text as revenue ${orders}`,
      ours: (d) => `${d.visits} visits, ${d.orders} orders, ${d.revenueWithVat.amount} EUR`,
      baseline: (r) => `${r[0].visits} visits, ${r[0].orders} orders, ${r[0].revenue} EUR`,
    },
    {
      title: 'Customers performance, first page (50) and totals',
      path: `/customers/performance?market=sk&from=${from}&to=${to}&limit=50`,
      raw: customersRaw(orders),
      ours: (d) => `${d.totals.customers} customers, ${d.totals.revenueByCurrency[0].amount} EUR, page ${hash(d.customers.map((c: any) => c.customerKey).join(','))}`,
      baseline: (r) => `${r[0].customers} customers, ${Number(r[0].revenue).toFixed(2)} EUR, page ${hash(String(r[0].page).split(',').map((k) => k.trim()).join(','))}`,
    },
    {
      title: 'Customers performance over the last 30 days, first page (50) and totals',
      path: `/customers/performance?market=sk&from=${from30}&to=${to}&limit=50`,
      raw: customersRaw(orders30),
      ours: (d) => `${d.totals.customers} customers, ${d.totals.revenueByCurrency[0].amount} EUR, page ${hash(d.customers.map((c: any) => c.customerKey).join(','))}`,
      baseline: (r) => `${r[0].customers} customers, ${Number(r[0].revenue).toFixed(2)} EUR, page ${hash(String(r[0].page).split(',').map((k) => k.trim()).join(','))}`,
    },
    {
      title: 'Shipping stats (shipments, delivered, median and p90 delivery hours)',
      path: `/shipping/stats?market=sk&from=${from}&to=${to}`,
      raw: `with ps as (
              select s.outcome, case when s.outcome <> 'cancelled' then extract(epoch from (fd.first_delivery_at - s.handed_over_at)) * 1000 end::float8 as delivery_ms
              from shipments s left join lateral (
                select min(e.occurred_at) as first_delivery_at from shipment_tracking_events e where e.shipment_id = s.id and e.is_delivery) fd on true
              where s.shop_id = ${shop.id} and s.${range})
            select count(*) filter (where outcome <> 'cancelled')::int as total, count(*) filter (where outcome = 'delivered')::int as delivered,
                   ${hours(0.5)} as median, ${hours(0.9)} as p90
            from ps`,
      ours: (d) => `${d.shipments.total} shipments, ${d.shipments.delivered} delivered, median ${d.delivery.medianHours} h, p90 ${d.delivery.p90Hours} h`,
      baseline: (r) => `${r[0].total} shipments, ${r[0].delivered} delivered, median ${Number(r[0].median)} h, p90 ${Number(r[0].p90)} h`,
    },
  ];

  const { key } = await createAccessKey(db, {
    accountId: account.id, name: 'bench-reports', scopes: ['reports:read', 'analytics:read', 'shipping:read', 'purchase-prices:read'], interfaces: ['rest'],
    shopCodes: null, expiresAt: null, createdBy: 'bench',
  });
  const app = createApp(service.app);
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  const pool = new pg.Pool({ connectionString: postgres.value, max: 2 });
  const total = Number((await db('orders').where({ shop_id: shop.id }).count<{ count: string }[]>('* as count').first())!.count);
  process.stdout.write(`Benchmark data: ${total.toLocaleString('en')} orders in shop bench/sk; period ${from}..${to} (366 days); ${seconds} s per measurement, one client.\n`);

  const lines: string[] = [];
  for (const c of cases) {
    const res = await fetch(`${base}${c.path}`, { headers: { Authorization: `Bearer ${key}` } });
    const body = await res.json() as { data: unknown };
    if (res.status !== 200) throw new Error(`${c.path}: ${res.status} ${JSON.stringify(body)}`);
    const ourFigure = c.ours(body.data);
    const rawFigure = c.baseline((await pool.query(c.raw)).rows);
    const oursM = await measure('ours', async () => {
      const r = await fetch(`${base}${c.path}`, { headers: { Authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      return r.status === 200;
    }, { seconds, concurrency: 1, warmup: 3 });
    const rawM = await measure('raw SQL', async () => {
      await pool.query(c.raw);
      return true;
    }, { seconds, concurrency: 1, warmup: 1 });
    lines.push(row(c.title, oursM, rawM, ourFigure === rawFigure, ourFigure, rawFigure));
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);
  server.close();
  await pool.end();
  await db('access_keys').where({ name: 'bench-reports', created_by: 'bench' }).delete();
  await service.close();
}

function hash(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) >>> 0;
  return h.toString(16);
}

function row(title: string, ours: Measurement, raw: Measurement, equal: boolean, ourFigure: string, rawFigure: string): string {
  return [
    title,
    `  ours (HTTP, rollups)   p50 ${ours.p50.toFixed(2).padStart(8)} ms   p99 ${ours.p99.toFixed(2).padStart(8)} ms   (${ours.requests} calls, ${ours.errors} errors)`,
    `  raw SQL (no rollup)    p50 ${raw.p50.toFixed(2).padStart(8)} ms   p99 ${raw.p99.toFixed(2).padStart(8)} ms   (${raw.requests} runs)`,
    `  ratio ours/raw p50 ${(ours.p50 / raw.p50).toFixed(3)}x; figures ${equal ? 'EQUAL' : 'DIFFERENT'}: ${ourFigure}${equal ? '' : ` vs raw ${rawFigure}`}`,
  ].join('\n');
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
