/**
 * `npm run bench:rest`: the orders listing of one shop of the benchmark data set (~1M orders), first page and a page
 * ~900,000 records deep, served by our endpoint and, in the same run, by a baseline of plain node:http + pg running
 * the same queries. Prints requests/s, p50/p99 and ratios. BENCH_SECONDS, BENCH_CONCURRENCY and BENCH_WARMUP_SECONDS
 * (each series, before any is measured) tune the run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../api/app.js';
import { createAccessKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config/index.js';
import { cursorFingerprint, encodeCursor } from '../src/capabilities/cursor.js';
import { measure, report, openBenchShop } from './lib.js';
import { createHttpServer } from '../api/http/server.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const DEPTH = 900_000;
const LIMIT = 50;

// The baseline runs the same two queries our query module runs (orders page, then their items), with no framework.
const ORDERS_SQL = `select id, code, created_at, updated_at, status_id, status_name, paid, paid_at, currency, total_with_vat, total_without_vat,
  total_vat, shipping_with_vat, payment_method, shipping_method, variable_symbol, customer_email_hash, customer_first_name, customer_last_name,
  customer_company, customer_email, customer_phone, customer_street, customer_city, customer_zip, customer_country
  from orders where shop_id = $1 and ($2::timestamptz is null or (created_at, id) < ($2::timestamptz, $3::bigint))
  order by created_at desc, id desc limit $4`;
const ITEMS_SQL = 'select * from order_items where order_id = any($1::bigint[]) order by order_id, line_no';

function startBaseline(pool: pg.Pool, shopId: string): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const afterKey = url.searchParams.get('afterKey');
    const afterId = url.searchParams.get('afterId');
    const orders = await pool.query(ORDERS_SQL, [shopId, afterKey, afterId, LIMIT + 1]);
    const rows = orders.rows.slice(0, LIMIT);
    const items = await pool.query(ITEMS_SQL, [rows.map((r) => r.id)]);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ data: rows.map((r) => ({ ...r, items: items.rows.filter((i) => i.order_id === r.id) })), hasMore: orders.rows.length > LIMIT }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const config = loadConfig();
  const { postgres, db, account, shop, service } = await openBenchShop(config);
  const total = Number((await db('orders').where({ shop_id: shop.id }).count<{ count: string }[]>('* as count').first())!.count);
  const deep = await db('orders').where({ shop_id: shop.id }).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(Math.min(DEPTH, total - LIMIT - 1)).first('created_at', 'id');
  const position = { key: deep.created_at.toISOString(), id: String(deep.id) };
  const { key } = await createAccessKey(db, { accountId: account.id, name: 'bench', scopes: ['orders:read'], interfaces: ['rest'], shopCodes: null, expiresAt: null, createdBy: 'bench' });
  const deepCursor = encodeCursor(position, null, cursorFingerprint({ capability: "orders.list", account: account.id, shopId: shop.id, market: "sk" }), service.secrets.cursorSecret);

  const app = createApp(service.app);
  const ours = createHttpServer(app);
  await new Promise<void>((resolve) => ours.listen(0, '127.0.0.1', resolve));
  const pool = new pg.Pool({ connectionString: postgres.value, max: 10 });
  const baseline = await startBaseline(pool, shop.id);
  const oursUrl = `http://127.0.0.1:${(ours.address() as AddressInfo).port}/api/v1/orders?market=sk&limit=${LIMIT}`;
  const baseUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/?`;
  const headers = { Authorization: `Bearer ${key}` };
  const hit = (url: string, h: Record<string, string> = {}) => async () => {
    const res = await fetch(url, { headers: h });
    await res.arrayBuffer();
    return res.status === 200;
  };

  const check = await (await fetch(`${oursUrl}&cursor=${deepCursor}`, { headers })).json() as { data: { code: string }[] };
  if (check.data.length !== LIMIT) throw new Error('deep page did not return a full page');
  process.stdout.write(`Benchmark data: ${total.toLocaleString('en')} orders in shop bench/sk; deep page after ${Math.min(DEPTH, total - LIMIT - 1).toLocaleString('en')} records; ${concurrency} clients, ${seconds} s each.\n`);
  const out: string[] = [];
  // Every series is warmed alike before any is measured (JIT, both connection pools, prepared statements): otherwise
  // the series measured first pays the process's warm-up alone (T17).
  for (const url of [oursUrl, `${oursUrl}&cursor=${deepCursor}`]) await measure('warm-up', hit(url, headers), { seconds: warmupSeconds, concurrency });
  for (const url of [baseUrl, `${baseUrl}afterKey=${encodeURIComponent(position.key)}&afterId=${position.id}`]) await measure('warm-up', hit(url), { seconds: warmupSeconds, concurrency });
  const oursFirst = await measure('ours GET /orders (first)', hit(oursUrl, headers), { seconds, concurrency });
  const baseFirst = await measure('baseline node:http+pg', hit(baseUrl), { seconds, concurrency });
  out.push(report(`Orders listing, first page (limit ${LIMIT})`, oursFirst, baseFirst));
  const oursDeep = await measure('ours GET /orders (deep)', hit(`${oursUrl}&cursor=${deepCursor}`, headers), { seconds, concurrency });
  const baseDeep = await measure('baseline node:http+pg', hit(`${baseUrl}afterKey=${encodeURIComponent(position.key)}&afterId=${position.id}`), { seconds, concurrency });
  out.push(report(`Orders listing, page ~${DEPTH.toLocaleString('en')} records deep (limit ${LIMIT})`, oursDeep, baseDeep));
  process.stdout.write(out.join('\n') + '\n');

  ours.close();
  baseline.close();
  await pool.end();
  await db('access_keys').where({ name: 'bench', created_by: 'bench' }).delete();
  await service.close();
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
