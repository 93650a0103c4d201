/**
 * `npm run bench:mcp`: `tools/call orders_list {market:'sk', limit:50}` over MCP against `GET /api/v1/orders?market=sk&limit=50`
 * over REST, same server, same data, same run, calls interleaved one by one so both see the same conditions.
 * Prints p50/p99 of each and the ratio MCP/REST. The MCP call is a raw 2026-07-28 request (JSON response, the
 * headers a 2.x client sends); a third series measures the same call as a 2025-11-25 client makes it (SSE response).
 * Uses DATABASE_URL or the embedded Postgres; migrates and loads the demo data when the demo account is missing.
 * BENCH_ITERATIONS (default 1000) and BENCH_WARMUP (default 100) tune the run.
 */
import type { AddressInfo } from 'node:net';
import { createApp } from '../api/app.js';
import { createAccessKey } from '../src/auth/keys.js';
import { allScopes } from '../src/auth/scopes.js';
import { loadConfig } from '../src/config/index.js';
import { migrateLatest } from '../src/db/knex.js';
import { compose, temporalAddressOf } from '../src/entry/compose.js';
import { loadDemoAccounts } from '../src/platforms/demo/load.js';
import { findAccountByCode } from '../src/queries/shops.js';
import { ensurePostgres } from '../src/runtime.js';
import { percentile } from './lib.js';
import { createHttpServer } from '../api/http/server.js';

const iterations = Number(process.env.BENCH_ITERATIONS ?? 1000);
const warmup = Number(process.env.BENCH_WARMUP ?? 100);
const ARGS = { market: 'sk', limit: 50 } as const;

interface Series {
  name: string;
  call: () => Promise<unknown>;
  latencies: number[];
}

async function main() {
  const config = loadConfig();
  const postgres = await ensurePostgres(config);
  // The service's own dependencies (as `npm start` builds them); `service.close()` stops Postgres too.
  const service = compose(config, { databaseUrl: postgres.value, temporalAddress: temporalAddressOf(config), stop: postgres.stop }, { poolMax: 10 });
  const { db } = service;
  await migrateLatest(db);
  if (!(await findAccountByCode(db, 'demo'))) {
    process.stderr.write('Loading the demo data (once)...\n');
    await loadDemoAccounts(db, { seed: config.DEMO_SEED, endDate: new Date(), onShop: (account, shop, counts) => process.stderr.write(`  ${account}/${shop}: ${JSON.stringify(counts)}\n`) });
  }
  const account = (await findAccountByCode(db, 'demo'))!;
  const { key } = await createAccessKey(db, { accountId: account.id, name: 'bench-mcp', scopes: ['orders:read'], interfaces: ['rest', 'mcp'], shopCodes: null, expiresAt: null, createdBy: 'bench' });
  // Issue 26.6: the size of tools/list for a key with every scope (write tools included) and for a read-only one.
  const { key: fullKey } = await createAccessKey(db, { accountId: account.id, name: 'bench-mcp', scopes: [...allScopes], interfaces: ['mcp'], shopCodes: null, expiresAt: null, createdBy: 'bench', writeMode: 'autonomous' });
  const { key: readOnlyKey } = await createAccessKey(db, { accountId: account.id, name: 'bench-mcp', scopes: [...allScopes], interfaces: ['mcp'], shopCodes: null, expiresAt: null, createdBy: 'bench', writeMode: 'read_only' });

  const app = createApp(service.app);
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const auth = { Authorization: `Bearer ${key}` };

  let id = 0;
  const modernBody = () => JSON.stringify({
    jsonrpc: '2.0', id: ++id, method: 'tools/call',
    params: {
      name: 'orders_list', arguments: ARGS,
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
  const modernHeaders = { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'orders_list' };
  const legacyHeaders = { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' };
  const legacyBody = () => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'orders_list', arguments: ARGS } });

  const rest = async () => {
    const res = await fetch(`${base}/api/v1/orders?market=${ARGS.market}&limit=${ARGS.limit}`, { headers: auth });
    if (res.status !== 200) throw new Error(`REST answered ${res.status}: ${await res.text()}`);
    return (await res.json() as { data: unknown[] }).data;
  };
  const mcp = async () => {
    const res = await fetch(`${base}/api/mcp`, { method: 'POST', headers: modernHeaders, body: modernBody() });
    const body = await res.json() as { result?: { isError?: boolean; structuredContent?: { items: unknown[] } } };
    if (res.status !== 200 || !body.result || body.result.isError) throw new Error(`MCP answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
    return body.result.structuredContent!.items;
  };
  const mcpLegacy = async () => {
    const res = await fetch(`${base}/api/mcp`, { method: 'POST', headers: legacyHeaders, body: legacyBody() });
    const text = await res.text();
    const data = text.split('\n').filter((l) => l.startsWith('data:')).pop();
    const body = JSON.parse(data ? data.slice(5) : text) as { result?: { isError?: boolean; structuredContent?: { items: unknown[] } } };
    if (res.status !== 200 || !body.result || body.result.isError) throw new Error(`MCP (2025-11-25) answered ${res.status}: ${text.slice(0, 500)}`);
    return body.result.structuredContent!.items;
  };

  /** tools/list as a 2026-07-28 client gets it: bytes as sent, and the model-visible part (name, description, inputSchema). */
  const toolListSize = async (listKey: string) => {
    const { 'Mcp-Name': _name, ...listHeaders } = modernHeaders;
    const res = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { ...listHeaders, Authorization: `Bearer ${listKey}`, 'Mcp-Method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/list', params: { _meta: JSON.parse(modernBody()).params._meta } }),
    });
    const text = await res.text();
    const tools = (JSON.parse(text) as { result: { tools: Array<{ name: string; description?: string; inputSchema: unknown }> } }).result.tools;
    const modelVisible = tools.reduce((sum, tool) => sum + Buffer.byteLength(JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })), 0);
    return { tools: tools.length, whole: Buffer.byteLength(text), modelVisible };
  };
  const listSizes = [['full key (every scope, autonomous)', await toolListSize(fullKey)], ['read-only key (every scope, read_only)', await toolListSize(readOnlyKey)]] as const;

  // The same business data, or the comparison means nothing.
  const [restData, mcpData, legacyData] = [await rest(), await mcp(), await mcpLegacy()];
  if (JSON.stringify(restData) !== JSON.stringify(mcpData) || JSON.stringify(restData) !== JSON.stringify(legacyData)) throw new Error('MCP and REST returned different data');

  const series: Series[] = [
    { name: 'REST GET /api/v1/orders', call: rest, latencies: [] },
    { name: 'MCP tools/call (2026-07-28)', call: mcp, latencies: [] },
    { name: 'MCP tools/call (2025-11-25)', call: mcpLegacy, latencies: [] },
  ];
  for (let i = 0; i < warmup; i++) for (const s of series) await s.call();
  for (let i = 0; i < iterations; i++) {
    // Rotate the order so no series always runs first (or right after another).
    for (let j = 0; j < series.length; j++) {
      const s = series[(i + j) % series.length];
      const t0 = performance.now();
      await s.call();
      s.latencies.push(performance.now() - t0);
    }
  }

  const stats = series.map((s) => {
    const sorted = [...s.latencies].sort((a, b) => a - b);
    return { name: s.name, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  });
  const [restStats] = stats;
  const lines = [
    `orders_list {market:'sk', limit:50} vs GET /orders?market=sk&limit=50 — ${iterations} interleaved iterations after ${warmup} warm-up, one client, same server and data (${restData.length} orders per page)`,
    `  ${'series'.padEnd(30)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'p50 ratio'.padStart(10)} ${'p99 ratio'.padStart(10)}`,
    ...stats.map((s) => `  ${s.name.padEnd(30)} ${s.p50.toFixed(2).padStart(8)} ${s.p99.toFixed(2).padStart(8)} ${(s.p50 / restStats.p50).toFixed(2).padStart(9)}x ${(s.p99 / restStats.p99).toFixed(2).padStart(9)}x`),
    '  (ratio = series / REST)',
    'tools/list (2026-07-28), bytes:',
    ...listSizes.map(([label, size]) => `  ${label.padEnd(40)} ${String(size.tools).padStart(3)} tools  model-visible ${String(size.modelVisible).padStart(7)}  whole ${String(size.whole).padStart(7)}`),
  ];
  process.stdout.write(lines.join('\n') + '\n');

  server.close();
  await db('access_keys').where({ name: 'bench-mcp', created_by: 'bench' }).delete();
  await service.close();
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
