/**
 * `npm run bench:documents`: documents of the benchmark shop (~1M orders): invoice search by number and by customer
 * name, the /documents listing (first page and a page ~500,000 records deep) and the PDF endpoint — each through our
 * endpoint and, in the same run, as the same SQL run directly with pg (no HTTP, no framework). Prints requests/s,
 * p50/p99 and ratios. BENCH_SECONDS and BENCH_CONCURRENCY tune the run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../api/app.js';
import { createHttpServer } from '../api/http/server.js';
import { createAccessKey } from '../src/auth/keys.js';
import { cursorFingerprint, encodeCursor } from '../src/capabilities/cursor.js';
import { loadConfig } from '../src/config/index.js';
import { documentSearchSql, getDocumentPdf } from '../src/queries/documents.js';
import { measure, report, openBenchShop } from './lib.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const DEPTH = 500_000;
const LIMIT = 50;
const SAMPLES = 200;

// The same statements our query module runs, as plain SQL for the direct baseline.
const PAGE_SQL = `select * from documents where shop_id = $1 and type = 'invoice' and ($2::date is null or (business_date, id) < ($2::date, $3::bigint))
  order by business_date desc, id desc limit $4`;
const EXACT_SQL = `select id from documents where shop_id = $1 and type = 'invoice' and (code = $2 or order_code = $3 or variable_symbol = $3) limit 1`;
const ROWS_SQL = 'select * from documents where id = any($1::bigint[])';
const PDF_SQL = `select p.sha256, p.size_bytes, p.content from documents d join document_pdfs p on p.document_id = d.id
  where d.shop_id = $1 and d.type = 'invoice' and d.code = $2`;

/** A tiny server that answers each query kind with the same SQL directly: the baseline the figures are compared with. */
function startBaseline(pool: pg.Pool, shopId: string): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const kind = url.searchParams.get('kind');
    let body: unknown;
    if (kind === 'search') {
      const q = url.searchParams.get('q')!;
      const exact = await pool.query(EXACT_SQL, [shopId, q.toUpperCase(), q]);
      const { sql, bindings } = documentSearchSql(shopId, 'invoice', q, 20, true, exact.rows.length === 0);
      const ids = (await pool.query(sql.replace(/\?/g, (() => { let n = 0; return () => `$${++n}`; })()), bindings as unknown[])).rows.map((r) => r.id);
      body = (await pool.query(ROWS_SQL, [ids])).rows;
    } else if (kind === 'page') {
      body = (await pool.query(PAGE_SQL, [shopId, url.searchParams.get('afterKey'), url.searchParams.get('afterId'), LIMIT + 1])).rows;
    } else {
      const row = (await pool.query(PDF_SQL, [shopId, url.searchParams.get('code')])).rows[0];
      body = { sha256: row.sha256, sizeBytes: row.size_bytes, base64: row.content.toString('base64') };
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ data: body }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const config = loadConfig();
  const { postgres, db, account, shop, service } = await openBenchShop(config);
  const total = Number((await db('documents').where({ shop_id: shop.id, type: 'invoice' }).count<{ count: string }[]>('* as count').first())!.count);
  const depth = Math.min(DEPTH, total - LIMIT - 1);
  const deep = await db('documents').where({ shop_id: shop.id, type: 'invoice' }).orderBy([{ column: 'business_date', order: 'desc' }, { column: 'id', order: 'desc' }])
    .offset(depth).first(db.raw(`to_char(business_date, 'YYYY-MM-DD') as business_date`), 'id');
  const position = { key: deep.business_date as string, id: String(deep.id) };
  const deepCursor = encodeCursor(position, null, cursorFingerprint({ capability: 'documents.list', account: account.id, shopId: shop.id, market: 'sk', documentType: 'invoice' }), service.secrets.cursorSecret);
  // Samples spread over the whole history: invoice numbers, customer surnames, PDFs (rendered once here if still history).
  const samples = await db('documents').where({ shop_id: shop.id, type: 'invoice', pdf_available: true }).whereRaw('id % 997 = 0').limit(SAMPLES)
    .select('code', 'customer_last_name');
  for (const s of samples) await getDocumentPdf(db, shop.id, 'invoice', s.code);
  const { key } = await createAccessKey(db, { accountId: account.id, name: 'bench', scopes: ['invoices:read', 'personal-data:read'], interfaces: ['rest'], shopCodes: null, expiresAt: null, createdBy: 'bench' });

  const app = createApp(service.app);
  const ours = createHttpServer(app);
  await new Promise<void>((resolve) => ours.listen(0, '127.0.0.1', resolve));
  const pool = new pg.Pool({ connectionString: postgres.value, max: 10 });
  const baseline = await startBaseline(pool, shop.id);
  const oursBase = `http://127.0.0.1:${(ours.address() as AddressInfo).port}/api/v1`;
  const baseUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/?`;
  const headers = { Authorization: `Bearer ${key}` };
  let turn = 0;
  const next = () => samples[turn++ % samples.length];
  const hit = (url: () => string, h: Record<string, string> = {}) => async () => {
    const res = await fetch(url(), { headers: h });
    await res.arrayBuffer();
    return res.status === 200;
  };

  process.stdout.write(`Benchmark data: ${total.toLocaleString('en')} invoices in shop bench/sk; deep page after ${depth.toLocaleString('en')} records; ${samples.length} sampled invoices; ${concurrency} clients, ${seconds} s each.\n`);
  const out: string[] = [];
  const pairs: Array<[string, () => string, () => string]> = [
    ['Invoice search by number', () => `${oursBase}/invoices?market=sk&query=${next().code}`, () => `${baseUrl}kind=search&q=${next().code}`],
    ['Invoice search by customer name', () => `${oursBase}/invoices?market=sk&query=${encodeURIComponent(next().customer_last_name)}`, () => `${baseUrl}kind=search&q=${encodeURIComponent(next().customer_last_name)}`],
    [`/documents first page (limit ${LIMIT})`, () => `${oursBase}/documents?market=sk&documentType=invoice&limit=${LIMIT}`, () => `${baseUrl}kind=page`],
    [`/documents page ~${depth.toLocaleString('en')} deep (limit ${LIMIT})`, () => `${oursBase}/documents?market=sk&documentType=invoice&limit=${LIMIT}&cursor=${deepCursor}`,
      () => `${baseUrl}kind=page&afterKey=${position.key}&afterId=${position.id}`],
    ['PDF endpoint (stored bytes)', () => `${oursBase}/documents/invoice/${next().code}/pdf?market=sk`, () => `${baseUrl}kind=pdf&code=${next().code}`],
  ];
  for (const [title, oursUrl, baseline] of pairs) {
    const mine = await measure('ours (REST)', hit(oursUrl, headers), { seconds, concurrency });
    const direct = await measure('same SQL direct (node:http+pg)', hit(baseline), { seconds, concurrency });
    out.push(report(title, mine, direct));
    process.stdout.write(`${out[out.length - 1]}\n`);
  }

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
