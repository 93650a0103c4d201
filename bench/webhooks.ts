/**
 * `npm run bench:webhooks`: outbound webhooks end to end on a real Postgres and a real Temporal dev server, every
 * scenario of issue 15 point 6 in one run, each with its own receivers (and endpoints), beside a plain loop of signed
 * POSTs to the same receivers in the same run:
 * 0. Latency: BENCH_SINGLE events (default 20) one at a time, event to receipt, without queueing.
 * a. Fan-out: BENCH_EVENTS events (default 1,000) × BENCH_RECEIVERS receivers (default 4), one burst: deliveries/s end
 *    to end, p50/p99 event committed → receipt; the plain loop (same count, same receivers) and the ratio. Measured
 *    BENCH_REPEAT times (default 3) after one unmeasured warm-up burst, alternating with (d); the medians are compared.
 * b. One receiver: BENCH_SINGLE_RECEIVER_EVENTS events (default 10,000) × 1 receiver, with its plain loop.
 * c. Sustained: BENCH_RATE events/s (default 200) for BENCH_SECONDS (default 60) to 4 receivers: p50/p99.
 * d. (a) again, to the same four receivers, while a fifth endpoint times out (10 s) on every attempt (a new one per
 *    repeat): the healthy receivers' figures against (a), median against median.
 * e. Retry timers: BENCH_RETRIES deliveries (default 5,000) whose first attempt fails, retried after
 *    WEBHOOK_RETRY_SCHEDULE (default 5s here): how late the retry arrives after it was due (made by the dispatcher when
 *    due and kept by the delivery workflows, WR1), the attempts' outcomes, and how many deliveries got their workflow.
 * f. Scale-out (WS1): a burst of BENCH_SCALE_EVENTS events (default 200) x BENCH_SCALE_ENDPOINTS endpoints (default 24,
 *    three per partition) whose receivers answer after 50 ms, delivered by 1 and then by 2 worker processes of their own
 *    (the in-process dispatcher stopped), each limited to BENCH_SCALE_IN_FLIGHT requests under way (default 32): the
 *    per-process limit binds, not the cores; deliveries/s of each and the ratio.
 * BENCH_ONLY picks scenarios (`e`, or `a,e`; 0 and d run with a), e.g. `BENCH_ONLY=e BENCH_RETRIES=2000`.
 * Uses its own database (created and dropped on the embedded Postgres or DATABASE_URL's server) and an in-memory
 * Temporal dev server (or TEMPORAL_ADDRESS).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config/index.js';
import { migrateLatest, type Db } from '../src/db/knex.js';
import { findFreePort } from '../src/infra/ports.js';
import { startTemporalDevServer } from '../src/infra/temporalDevServer.js';
import { ensurePostgres } from '../src/runtime.js';
import { workflowIds } from '../src/temporal/constants.js';
import { ensureWebhookWorkflows } from '../src/temporal/webhooks.js';
import { compose, startWorker } from '../src/entry/compose.js';
import { systemResolver } from '../src/webhooks/addresses.js';
import { createEndpoint } from '../src/webhooks/endpoints.js';
import { signatureHeader } from '../src/webhooks/signature.js';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { projectRoot } from '../src/config/projectRoot.js';
import { servedPartitions } from '../src/webhooks/partitions.js';
import { percentile } from './lib.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const RECEIVERS = Number(process.env.BENCH_RECEIVERS ?? 4);
const ONE_RECEIVER_EVENTS = Number(process.env.BENCH_SINGLE_RECEIVER_EVENTS ?? 10_000);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const RETRIES = Number(process.env.BENCH_RETRIES ?? 5000);
/** BENCH_ONLY: the scenarios to run, e.g. `e` or `a,e` (default all: 0 and d run with a). */
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
const want = (scenario: 'a' | 'b' | 'c' | 'e' | 'f') => ONLY.length === 0 || ONLY.includes(scenario);
const SINGLE = Number(process.env.BENCH_SINGLE ?? 20);
/** Bursts of (a) and of (d), alternating; one burst lasts about a second, so one alone is mostly noise (T19). */
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
/** The plain loop's requests at once: what the direct path may have under way to 4 endpoints and more. */
const CONCURRENCY = 100;
/** Retry deliveries are spread over endpoints of 25 each, so no endpoint reaches 30 failures in a row and pauses. */
const RETRY_EVENTS = 25;
const SCALE_EVENTS = Number(process.env.BENCH_SCALE_EVENTS ?? 200);
const SCALE_ENDPOINTS = Number(process.env.BENCH_SCALE_ENDPOINTS ?? 24);
const SCALE_IN_FLIGHT = Number(process.env.BENCH_SCALE_IN_FLIGHT ?? 32);
/** The receivers' answer time in (f): requests are open long enough for the per-process limit to bind. */
const SCALE_REPLY_MS = 50;
/** The partitions of (f), literally the default of WEBHOOK_PARTITIONS. */
const SCALE_PARTITIONS = 8;

interface Receipt { at: number; eventId: string; status: number }

/** A receiver that verifies every signature (counting failures) and records when each event arrived. */
async function startReceiver(reply: (deliveryId: string) => number, delayMs = 0) {
  const secrets = new Map<string, string>();
  const receipts: Receipt[] = [];
  let badSignatures = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const secret = secrets.get(req.url ?? '');
      const timestamp = String(req.headers['x-service-timestamp']);
      const expected = secret ? Buffer.from(signatureHeader(secret, Number(timestamp), raw.toString('utf8'))) : Buffer.alloc(0);
      const given = Buffer.from(String(req.headers['x-service-signature'] ?? ''));
      if (!secret || given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) badSignatures++;
      const eventId = String(req.headers['x-service-event-id']);
      const status = reply(String(req.headers['x-service-delivery']));
      receipts.push({ at: performance.timeOrigin + performance.now(), eventId, status });
      // 0: never answer (the client times out).
      if (status !== 0) {
        if (delayMs > 0) setTimeout(() => res.writeHead(status).end(), delayMs);
        else res.writeHead(status).end();
      }
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base, secrets, receipts, bad: () => badSignatures,
    close: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  };
}

async function waitFor(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs = 600_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Records `count` events of `type` in one statement (a burst), returning event_id → the time it was committed. */
async function burst(db: Db, accountId: string, shop: { id: string; code: string }, type: string, count: number): Promise<Map<string, number>> {
  const rows = await db.raw(`
    insert into outbox_events (event_id, account_id, shop_id, store, event_type, resource_type, resource_id, data, occurred_at)
    select gen_random_uuid(), ?, ?, ?, ?, 'order', 'BW' || n, jsonb_build_object('order_code', 'BW' || n), now()
    from generate_series(1, ?) as n returning event_id`, [accountId, shop.id, shop.code, type, count]);
  const committed = performance.timeOrigin + performance.now();
  return new Map(rows.rows.map((r: { event_id: string }) => [r.event_id, committed]));
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

interface Measured { rate: number; p50: number; p99: number; complete: boolean; duplicates: number }

/** The median of each figure over repeated runs (complete only if every run was, duplicates summed). */
function medianOf(list: Measured[]): Measured {
  const median = (values: number[]) => {
    const sorted = [...values].sort((x, y) => x - y);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  return {
    rate: median(list.map((m) => m.rate)), p50: median(list.map((m) => m.p50)), p99: median(list.map((m) => m.p99)),
    complete: list.every((m) => m.complete), duplicates: list.reduce((n, m) => n + m.duplicates, 0),
  };
}

/** A worker process of (f) (bench/webhookWorker.ts); resolves once it polls. */
async function startBenchWorker(databaseUrl: string, temporalAddress: string, taskQueue: string, secretsKey: Buffer) {
  const child: ChildProcess = spawn(process.execPath, [path.join(projectRoot, 'dist', 'bench', 'webhookWorker.js')], {
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress, BENCH_TASK_QUEUE: taskQueue, BENCH_SECRETS_KEY: secretsKey.toString('hex'), BENCH_MAX_IN_FLIGHT: String(SCALE_IN_FLIGHT) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: ((r: { delivered: number; partitions: number[] }) => void)[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') resolve();
      else if (line.startsWith('{"report"')) waiting.shift()?.((JSON.parse(line) as { report: { delivered: number; partitions: number[] } }).report);
    });
    void exited.then(() => reject(new Error('a bench worker process exited')));
  });
  return {
    report: () => new Promise<{ delivered: number; partitions: number[] }>((resolve) => {
      waiting.push(resolve);
      child.stdin!.write('report\n');
    }),
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      child.kill('SIGKILL');
    },
  };
}

const runs = (list: Measured[]) => list.map((m) => `${fmt(m.rate, 0)}/s p99 ${fmt(m.p99, 0)} ms`).join('; ');

async function main() {
  const config = loadConfig();
  const postgres = await ensurePostgres(config);
  const adminUrl = new URL(postgres.value);
  adminUrl.pathname = '/postgres';
  const dbName = `bench_webhooks_${process.pid}`;
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
  const taskQueue = `bench-webhooks-${process.pid}`;
  const retryScheduleMs = config.WEBHOOK_RETRY_SCHEDULE ?? [5_000];
  const settings = { secretsKey: crypto.randomBytes(32), allowLoopback: true, retryScheduleMs, timeoutMs: 10_000, resolve: systemResolver };
  await startWorker(service, { taskQueue, webhooks: settings });
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  try {
    await migrateLatest(db);
    const [account] = await db('accounts').insert({ code: 'benchhooks', name: 'Webhook bench', plan_code: 'custom', time_zone: 'Europe/Bratislava' }).returning('id');
    const [shop] = await db('shops').insert({ account_id: account.id, code: 'sk', name: 'Bench SK', platform: 'demo', currency: 'EUR', country: 'SK', language: 'sk', time_zone: 'Europe/Bratislava', base_url: 'https://bench.example' }).returning(['id', 'code']);
    const accountId = String(account.id);
    const shopRef = { id: String(shop.id), code: shop.code as string };
    const endpointDeps = { secretsKey: settings.secretsKey, allowLoopback: true, resolve: systemResolver };

    type BenchReceiver = Awaited<ReturnType<typeof startReceiver>>;
    let scenario = 0;
    /** `n` receivers, each behind an endpoint of its own subscribed to order.created; earlier scenarios' endpoints are disabled. */
    const receiversFor = async (n: number, reply: () => number = () => 200, delayMs = 0): Promise<BenchReceiver[]> => {
      await db('webhook_endpoints').where({ account_id: accountId }).whereNot('state', 'disabled').update({ state: 'disabled' });
      scenario++;
      const list: BenchReceiver[] = [];
      for (let i = 0; i < n; i++) {
        const r = await startReceiver(reply, delayMs);
        receivers.push(r);
        const created = await createEndpoint(db, endpointDeps, { accountId, name: `scenario ${scenario} receiver ${i}`, url: `${r.base}/s${scenario}`, events: ['order.created'], shops: 'all', createdBy: 'bench' });
        r.secrets.set(`/s${scenario}`, created.secret);
        list.push(r);
      }
      return list;
    };
    /** Waits until `targets` have `total` receipts; deliveries/s from the first commit to the last receipt, latencies. */
    const measureDeliveries = async (what: string, targets: BenchReceiver[], sentAt: Map<string, number>, total: number): Promise<Measured> => {
      await waitFor(what, () => targets.reduce((n, r) => n + r.receipts.length, 0) >= total);
      const started = Math.min(...sentAt.values());
      const latencies = targets.flatMap((r) => r.receipts.map((x) => x.at - sentAt.get(x.eventId)!)).sort((a, b) => a - b);
      const lastReceipt = Math.max(...targets.flatMap((r) => r.receipts.map((x) => x.at)));
      const distinct = targets.reduce((n, r) => n + new Set(r.receipts.map((x) => x.eventId)).size, 0);
      const duplicates = targets.reduce((n, r) => n + r.receipts.length, 0) - distinct;
      const m = { rate: total / ((lastReceipt - started) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), complete: distinct === total, duplicates };
      process.stderr.write(`   ${what}: ${fmt(m.rate)}/s, p50 ${fmt(m.p50)} ms, p99 ${fmt(m.p99)} ms\n`);
      return m;
    };
    /** The same number of signed POSTs as a plain loop (CONCURRENCY at once) to the same receivers: the ceiling. */
    const plainLoop = async (targets: BenchReceiver[], total: number) => {
      const agent = new Agent({ connections: CONCURRENCY });
      const loopSecret = 'whsec_bench-plain-loop';
      for (const r of targets) r.secrets.set('/plain', loopSecret);
      const body = JSON.stringify({ event_id: crypto.randomUUID(), event_type: 'order.created', version: 1, occurred_at: new Date().toISOString(), tenant: 'benchhooks', store: 'sk', resource: { type: 'order', id: 'X' }, data: { order_code: 'X' } });
      const latencies: number[] = [];
      let next = 0;
      const loopStart = performance.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) {
          const i = next++;
          const timestamp = Math.floor(Date.now() / 1000);
          const t0 = performance.now();
          const res = await request(`${targets[i % targets.length].base}/plain`, {
            method: 'POST', dispatcher: agent, body,
            headers: { 'Content-Type': 'application/json', 'X-Service-Event-Id': `plain-${i}`, 'X-Service-Timestamp': String(timestamp), 'X-Service-Signature': signatureHeader(loopSecret, timestamp, body) },
          });
          await res.body.dump();
          latencies.push(performance.now() - t0);
        }
      }));
      const rate = total / ((performance.now() - loopStart) / 1000);
      latencies.sort((a, b) => a - b);
      process.stderr.write(`   plain loop, same receivers: ${fmt(rate)}/s, p50 ${fmt(percentile(latencies, 50), 2)} ms, p99 ${fmt(percentile(latencies, 99), 2)} ms\n`);
      await agent.close();
      for (const r of targets) r.receipts.splice(0, r.receipts.length, ...r.receipts.filter((x) => !x.eventId.startsWith('plain')));
      return { rate, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
    };
    await ensureWebhookWorkflows(client, taskQueue, { retentionSchedule: false });

    const row = (label: string, m: { rate: number; p50: number; p99: number }, note = '') =>
      `  ${label.padEnd(52)} ${fmt(m.rate).padStart(12)} ${fmt(m.p50).padStart(9)} ${fmt(m.p99).padStart(9)}${note}`;
    const checks = (m: { complete: boolean; duplicates: number }) => `every event at every receiver: ${m.complete ? 'yes' : 'NO'}; duplicates: ${m.duplicates}`;
    const out: string[] = [];
    const table: string[] = [];
    if (want('a')) {
      // 0. One event at a time on an idle system: the latency of the path itself, without queueing.
      const fanOut = await receiversFor(RECEIVERS);
      const single: number[] = [];
      for (let i = 0; i < SINGLE; i++) {
        const sent = await burst(db, accountId, shopRef, 'order.created', 1);
        const [eventId, at] = [...sent][0];
        await waitFor('a single delivery', () => fanOut.every((r) => r.receipts.some((x) => x.eventId === eventId)));
        single.push(Math.max(...fanOut.map((r) => r.receipts.find((x) => x.eventId === eventId)!.at)) - at);
      }
      single.sort((a, b) => a - b);
      for (const r of fanOut) r.receipts.length = 0;

      // a. and d. Fan-out bursts to the same receivers: first one unmeasured (the process's and the database's warm-up,
      // which the first burst of a run paid alone: T19), then (a) and (d) alternating, so both see the same conditions.
      // (d) adds a fifth endpoint, new each time, that never answers (every attempt times out after 10 s).
      const total = EVENTS * RECEIVERS;
      const fanOutBurst = async (what: string) => {
        const m = await measureDeliveries(what, fanOut, await burst(db, accountId, shopRef, 'order.created', EVENTS), total);
        for (const r of fanOut) r.receipts.length = 0;
        return m;
      };
      process.stderr.write(`a./d. fan-out: ${EVENTS} events x ${RECEIVERS} receivers = ${total} deliveries, warm-up then ${REPEAT} x (a, d)...\n`);
      await fanOutBurst('warm-up burst (not measured)');
      const aRuns: Measured[] = [];
      const dRuns: Measured[] = [];
      const hangingRequests: number[] = [];
      for (let run = 0; run < REPEAT; run++) {
        aRuns.push(await fanOutBurst(`a. the fan-out deliveries (${run + 1})`));
        const hanging = await startReceiver(() => 0);
        receivers.push(hanging);
        const hangingEndpoint = await createEndpoint(db, endpointDeps, { accountId, name: `times out ${run + 1}`, url: `${hanging.base}/hang`, events: ['order.created'], shops: 'all', createdBy: 'bench' });
        hanging.secrets.set('/hang', hangingEndpoint.secret);
        dRuns.push(await fanOutBurst(`d. the healthy deliveries beside a timing-out endpoint (${run + 1})`));
        hangingRequests.push(hanging.receipts.length);
        await db('webhook_endpoints').where({ id: hangingEndpoint.id }).update({ state: 'disabled' });
      }
      const a = medianOf(aRuns);
      const d = medianOf(dRuns);
      const aLoop = await plainLoop(fanOut, total);
      out.push(`Single events on an idle system (${SINGLE}, one at a time, each to ${RECEIVERS} receivers): event committed → last receipt p50 ${fmt(percentile(single, 50))} ms, p99 ${fmt(percentile(single, 99))} ms`, '');
      table.push(row(`a. ${EVENTS} events x ${RECEIVERS} receivers (burst; median of ${REPEAT})`, a, `   runs: ${runs(aRuns)}`),
        row(`   plain loop, same receivers (${CONCURRENCY} at once)`, aLoop, `   ratio ${(a.rate / aLoop.rate).toFixed(3)}x; ${checks(a)}`));
      table.push(row(`d. (a) beside a 5th endpoint that times out (median of ${REPEAT})`, d, `   vs (a): ${(d.rate / a.rate).toFixed(2)}x rate, p50 ${(d.p50 / a.p50).toFixed(2)}x, p99 ${(d.p99 / a.p99).toFixed(2)}x; ${checks(d)}; requests to the 5th: ${hangingRequests.join(', ')}; runs: ${runs(dRuns)}`));
    }
    if (want('b')) {
      // b. One receiver, a long queue.
      process.stderr.write(`b. one receiver: ${ONE_RECEIVER_EVENTS} events...\n`);
      const oneReceiver = await receiversFor(1);
      const b = await measureDeliveries('the one-receiver deliveries', oneReceiver, await burst(db, accountId, shopRef, 'order.created', ONE_RECEIVER_EVENTS), ONE_RECEIVER_EVENTS);
      const bLoop = await plainLoop(oneReceiver, ONE_RECEIVER_EVENTS);
      table.push(row(`b. ${ONE_RECEIVER_EVENTS} events x 1 receiver (burst)`, b),
        row(`   plain loop, same receiver (${CONCURRENCY} at once)`, bLoop, `   ratio ${(b.rate / bLoop.rate).toFixed(3)}x; ${checks(b)}`));
    }
    if (want('c')) {
      // c. A sustained rate: every 50 ms a twentieth of a second's events.
      process.stderr.write(`c. sustained: ${RATE} events/s for ${SECONDS} s to ${RECEIVERS} receivers...\n`);
      const sustained = await receiversFor(RECEIVERS);
      const cSent = new Map<string, number>();
      const perTick = RATE / 20;
      const cStart = performance.now();
      for (let tick = 0; tick < SECONDS * 20; tick++) {
        const due = cStart + tick * 50;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const count = Math.floor((tick + 1) * perTick) - Math.floor(tick * perTick);
        if (count > 0) for (const [id, at] of await burst(db, accountId, shopRef, 'order.created', count)) cSent.set(id, at);
      }
      const cSeconds = (performance.now() - cStart) / 1000;
      const c = await measureDeliveries('the sustained deliveries', sustained, cSent, cSent.size * RECEIVERS);
      table.push(row(`c. ${RATE} events/s for ${SECONDS} s x ${RECEIVERS} receivers`, c, `   (${fmt(cSent.size / cSeconds)} events/s offered); ${checks(c)}`));
    }
    if (table.length > 0) out.push(`  ${'scenario (event committed → receipt; plain loop: request → reply)'.padEnd(52)} ${'deliveries/s'.padStart(12)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`, ...table, '');
    if (want('e')) {
      // e. Retry timers: every delivery's first attempt fails with 503, the retry after the schedule's delay is answered.
      const retryEndpoints = Math.ceil(RETRIES / RETRY_EVENTS);
      const seen = new Set<string>();
      const flaky = await startReceiver((deliveryId) => (seen.has(deliveryId) ? 200 : (seen.add(deliveryId), 503)));
      receivers.push(flaky);
      for (let i = 0; i < retryEndpoints; i++) {
        const created = await createEndpoint(db, endpointDeps, { accountId, name: `retry ${i}`, url: `${flaky.base}/retry/${i}`, events: ['order.paid'], shops: 'all', createdBy: 'bench' });
        flaky.secrets.set(`/retry/${i}`, created.secret);
      }
      const retryTotal = retryEndpoints * RETRY_EVENTS;
      process.stderr.write(`retries: ${RETRY_EVENTS} events x ${retryEndpoints} endpoints = ${retryTotal} deliveries, first attempt fails, retry after ${retryScheduleMs[0]} ms...\n`);
      const firstRetryAt = performance.timeOrigin + performance.now();
      await burst(db, accountId, shopRef, 'order.paid', RETRY_EVENTS);
      // Until none is pending: on a loaded machine a first attempt can time out unseen by the receiver, and then the
      // retry is answered 503 too (FAILED after the last attempt); those are counted, not waited for.
      await waitFor('the retried deliveries', async () => Number((await db('webhook_deliveries').where({ event_type: 'order.paid' }).whereNot('status', 'PENDING').count<{ count: string }[]>('* as count').first())!.count) >= retryTotal);
      const unsent = Number((await db('webhook_deliveries').where({ event_type: 'order.paid' }).whereNot('status', 'SENT').count<{ count: string }[]>('* as count').first())!.count);
      const outcomes = (await db('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.event_type', 'order.paid')
        .select('a.attempt', 'a.outcome').count<{ attempt: number; outcome: string; count: string }[]>('* as count').groupBy('a.attempt', 'a.outcome').orderBy(['a.attempt', 'a.outcome']))
        .map((r) => `attempt ${r.attempt} ${r.outcome} ${r.count}`).join(', ');
      // Workflow starts are marked in Postgres per round of up to 500: counted once the count holds for 2 s (at most 30 s).
      const countWorkflows = async () => Number((await db('webhook_deliveries').where({ event_type: 'order.paid' }).whereNotNull('workflow_started_at').count<{ count: string }[]>('* as count').first())!.count);
      let withWorkflow = await countWorkflows();
      for (let waited = 0; waited < 30_000; waited += 2_000) {
        await new Promise((r) => setTimeout(r, 2_000));
        const now = await countWorkflows();
        if (now === withWorkflow) break;
        withWorkflow = now;
      }
      const doubled = Number((await db.raw(`select count(*) as count from (select event_id from webhook_deliveries d join webhook_delivery_attempts a on a.delivery_id = d.id
        where d.event_type = 'order.paid' and a.outcome = 'success' group by d.id, event_id having count(*) > 1) x`)).rows[0].count);
      // Per delivery: when its retry was due (first attempt logged + delay) and when the receiver got it.
      const attempts = await db('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .where('d.event_type', 'order.paid').select('a.delivery_id', 'a.attempt', 'a.attempted_at', 'a.duration_ms').orderBy(['a.delivery_id', 'a.attempt']);
      const byDelivery = new Map<string, { first?: number; second?: number }>();
      for (const a of attempts) {
        const entry = byDelivery.get(String(a.delivery_id)) ?? {};
        const at = (a.attempted_at as Date).getTime();
        if (a.attempt === 1) entry.first = at + a.duration_ms; else if (a.attempt === 2) entry.second = at;
        byDelivery.set(String(a.delivery_id), entry);
      }
      const lateness = [...byDelivery.values()].filter((e) => e.first && e.second).map((e) => e.second! - (e.first! + retryScheduleMs[0])).sort((a, b) => a - b);
      const firstAttemptsDone = Math.max(...[...byDelivery.values()].map((e) => e.first ?? 0));
      out.push(
        `e. Retry timers: ${lateness.length} deliveries whose first attempt failed (503), retry delay ${retryScheduleMs[0]} ms`,
        `  first attempts of all ${retryTotal} done ${fmt((firstAttemptsDone - firstRetryAt) / 1000)} s after the burst`,
        `  retry arrived after it was due by: p50 ${fmt(percentile(lateness, 50))} ms, p99 ${fmt(percentile(lateness, 99))} ms, max ${fmt(lateness[lateness.length - 1] ?? NaN)} ms`,
        `  not SENT: ${unsent}; deliveries with more than one successful attempt: ${doubled}; receipts: ${flaky.receipts.length} for ${retryTotal} deliveries`,
        `  attempts: ${outcomes}; deliveries that got their workflow: ${withWorkflow}`,
        '',
      );
    }
    if (want('f')) {
      // f. Scale-out: the in-process dispatcher stops (its partitions would send too), then 1 and 2 worker processes.
      await client.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
      await waitFor('the in-process dispatcher to stop', () => servedPartitions(taskQueue).length === 0, 120_000);
      const scaleRuns: { workers: number; m: Measured; shares: number[] }[] = [];
      for (const workers of [1, 2]) {
        const queue = `bench-webhooks-f${workers}-${process.pid}`;
        process.stderr.write(`f. scale-out: ${SCALE_EVENTS} events x ${SCALE_ENDPOINTS} endpoints (replies after ${SCALE_REPLY_MS} ms), ${workers} worker process(es) of ${SCALE_IN_FLIGHT} requests at once...\n`);
        const children = await Promise.all(Array.from({ length: workers }, () => startBenchWorker(dbUrl.toString(), temporal.address, queue, settings.secretsKey)));
        try {
          const targets = await receiversFor(SCALE_ENDPOINTS, () => 200, SCALE_REPLY_MS);
          await ensureWebhookWorkflows(client, queue, { retentionSchedule: false, partitions: SCALE_PARTITIONS });
          await waitFor('the partitions to spread over the workers', async () => {
            const reports = await Promise.all(children.map((c) => c.report()));
            return reports.every((r) => r.partitions.length > 0) && reports.reduce((n, r) => n + r.partitions.length, 0) === SCALE_PARTITIONS;
          }, 120_000);
          await measureDeliveries('f. warm-up burst (not measured)', targets, await burst(db, accountId, shopRef, 'order.created', 20), 20 * SCALE_ENDPOINTS);
          for (const r of targets) r.receipts.length = 0;
          const before = await Promise.all(children.map(async (c) => (await c.report()).delivered));
          const m = await measureDeliveries(`f. ${workers} worker process(es)`, targets, await burst(db, accountId, shopRef, 'order.created', SCALE_EVENTS), SCALE_EVENTS * SCALE_ENDPOINTS);
          const after = await Promise.all(children.map(async (c) => (await c.report()).delivered));
          scaleRuns.push({ workers, m, shares: after.map((n, i) => n - before[i]) });
        } finally {
          await client.workflow.getHandle(workflowIds.webhookDispatcher(queue)).terminate().catch(() => {});
          await Promise.all(children.map((c) => c.stop()));
        }
      }
      const [f1, f2] = scaleRuns;
      out.push(
        `f. Scale-out: ${SCALE_EVENTS} events x ${SCALE_ENDPOINTS} endpoints, replies after ${SCALE_REPLY_MS} ms, ${SCALE_IN_FLIGHT} requests at once per worker process, ${SCALE_PARTITIONS} partitions`,
        row('   1 worker process', f1.m, `   ${checks(f1.m)}`),
        row('   2 worker processes', f2.m, `   ratio ${(f2.m.rate / f1.m.rate).toFixed(2)}x; deliveries per process: ${f2.shares.join(', ')}; ${checks(f2.m)}`),
        '',
      );
    }
    out.push(`  bad signatures over the whole run: ${receivers.reduce((n, r) => n + r.bad(), 0)}`);
    process.stdout.write(out.join('\n') + '\n');
  } finally {
    await client.workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
    await service.close();
    for (const r of receivers) await r.close();
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
