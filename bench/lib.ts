/** Small load-measurement helpers shared by the benchmarks: closed-loop clients, percentiles, a table, the bench tenant. */
import type { Config } from '../src/config/index.js';
import { migrateLatest } from '../src/db/knex.js';
import { compose, temporalAddressOf } from '../src/entry/compose.js';
import { loadBenchAccount } from '../src/platforms/demo/load.js';
import { findAccountByCode, findShopByCode } from '../src/queries/shops.js';
import { ensurePostgres } from '../src/runtime.js';

export interface Measurement {
  name: string;
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  errors: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** Runs `concurrency` closed-loop clients for `seconds`, each awaiting `call` in turn; a call returns false on error. */
export async function measure(name: string, call: () => Promise<boolean>, opts: { seconds: number; concurrency: number; warmup?: number }): Promise<Measurement> {
  for (let i = 0; i < (opts.warmup ?? 20); i++) await call();
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  await Promise.all(Array.from({ length: opts.concurrency }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const ok = await call();
      latencies.push(performance.now() - t0);
      if (!ok) errors++;
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, requests: latencies.length, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

/** Prints ours beside the baseline with ratios (ours / baseline for latency, ours / baseline for throughput). */
export function report(title: string, ours: Measurement, baseline: Measurement): string {
  const rps = (m: Measurement) => m.requests / m.seconds;
  const lines = [
    `\n${title}`,
    `  ${'server'.padEnd(28)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)}`,
    ...[ours, baseline].map((m) => `  ${m.name.padEnd(28)} ${rps(m).toFixed(0).padStart(9)} ${m.p50.toFixed(2).padStart(8)} ${m.p99.toFixed(2).padStart(8)} ${String(m.errors).padStart(7)}`),
    `  ratio ours/baseline: throughput ${(rps(ours) / rps(baseline)).toFixed(2)}x, p50 ${(ours.p50 / baseline.p50).toFixed(2)}x, p99 ${(ours.p99 / baseline.p99).toFixed(2)}x`,
  ];
  return lines.join('\n');
}

/**
 * The benchmark tenant (`bench`, shop `sk`) in the Postgres of `config`, migrated and loaded once (about 1,000,000
 * orders via COPY; `BENCH_ORDERS` sets another size). Every read benchmark starts here.
 */
export async function openBenchShop(config: Config) {
  const postgres = await ensurePostgres(config);
  // The service's own dependencies (as `npm start` builds them); `service.close()` stops Postgres too.
  const service = compose(config, { databaseUrl: postgres.value, temporalAddress: temporalAddressOf(config), stop: postgres.stop }, { poolMax: 10 });
  const { db } = service;
  await migrateLatest(db);
  if (!(await findAccountByCode(db, 'bench'))) {
    process.stderr.write('Loading the benchmark data set (once; about 1,000,000 orders via COPY)...\n');
    await loadBenchAccount(db, { seed: config.DEMO_SEED, endDate: new Date(), orders: Number(process.env.BENCH_ORDERS ?? 1_000_000), onProgress: (done: number, total: number) => process.stderr.write(`\r  ${done.toLocaleString('en')} / ${total.toLocaleString('en')} orders`) });
    process.stderr.write('\n');
    // What autovacuum would do soon after a bulk load (visibility map, hint bits): otherwise it runs during the first
    // measured series and costs it about a tenth (a first-page ratio of 0.76x against 0.87x–0.98x after it).
    process.stderr.write('Vacuuming the freshly loaded tables (once)...\n');
    await db.raw('vacuum (analyze)');
  }
  const account = (await findAccountByCode(db, 'bench'))!;
  const shop = (await findShopByCode(db, account.id, 'sk'))!;
  return { postgres, db, account, shop, service };
}
