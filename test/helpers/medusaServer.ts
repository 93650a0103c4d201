/**
 * One real Medusa for a whole test run, started by scripts/test.mjs when the run includes Medusa tests (decisions MH1–MH4).
 *
 * Medusa (installed by `scripts/bootstrap.mjs --test-tools` into .tools/medusa) runs on a Postgres cluster of its own,
 * copied from a snapshot that was migrated and given an admin user once per installed Medusa: migrating takes 25–70 s
 * and creating the user another 10–30 s on this machine, copying the snapshot well under a second. Each run then starts
 * Medusa, signs in and creates a fresh secret API key and publishable key, and exports to the tests:
 *   MEDUSA_URL, MEDUSA_API_KEY (secret key, Basic auth), MEDUSA_PUBLISHABLE_KEY (store API, default sales channel),
 *   MEDUSA_FORWARD_SECRET (what the event forwarder signs with), MEDUSA_EVENT_RELAY_URL (see startEventRelay).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/infra/embeddedPostgres.js';
import { findFreePort } from '../../src/infra/ports.js';
import { projectRoot } from '../../src/infra/tools.js';

/** The admin of the throwaway Medusa (loopback only, its database is deleted after the run). */
const ADMIN_EMAIL = 'admin@store-ops.test';
const ADMIN_PASSWORD = 'store-ops-medusa-admin';
const DATABASE = 'medusa';
const READY_TIMEOUT_MS = 240_000;
const KILL_AFTER_MS = 10_000;
/** A throwaway cluster: durability only costs time here (as for the run's own Postgres). */
const FAST_POSTGRES = ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];

export interface RunningMedusa {
  /** Variables for the tests (see the header). */
  env: Record<string, string>;
  /** How long each step took, in ms, for the run's log. */
  timings: Record<string, number>;
  stop(): Promise<void>;
}

interface InstalledMedusa {
  dir: string;
  version: string;
  schemaHash: string;
}

/** True when an `npm test` argument list runs Medusa tests: all files, or a file argument naming medusa. */
export function runIncludesMedusa(args: string[]): boolean {
  const files = args.filter((a) => !a.startsWith('-'));
  return files.length === 0 || files.some((a) => a.toLowerCase().includes('medusa'));
}

function installedMedusa(): InstalledMedusa {
  const root = projectRoot();
  const pin = JSON.parse(readFileSync(join(root, 'scripts/tool-versions.json'), 'utf8')).medusa as { version: string; dir: string };
  const dir = join(root, pin.dir);
  const marker = join(dir, '.installed.json');
  if (!existsSync(marker)) throw new Error(`Medusa is not installed in ${pin.dir}: run \`node scripts/bootstrap.mjs --test-tools\` (npm test does)`);
  const state = JSON.parse(readFileSync(marker, 'utf8')) as { version: string; schemaHash: string };
  if (state.version !== pin.version) throw new Error(`${pin.dir} holds Medusa ${state.version}, tool-versions.json pins ${pin.version}: run the bootstrap`);
  return { dir, version: state.version, schemaHash: state.schemaHash };
}

/** Environment of the Medusa process: only what it needs (our LOG_LEVEL, NODE_ENV and DATABASE_URL are not its). */
function medusaEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'];
  const env: NodeJS.ProcessEnv = {};
  for (const key of keep) if (process.env[key] !== undefined) env[key] = process.env[key];
  return { ...env, MEDUSA_DISABLE_TELEMETRY: 'true', LOG_LEVEL: 'info', ...extra };
}

function cliPath(medusa: InstalledMedusa): string {
  return join(medusa.dir, 'node_modules/@medusajs/cli/cli.js');
}

function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return '(no output)';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

/** Runs a `medusa` CLI command in the project to its end, its output appended to logFile. */
async function medusaCommand(medusa: InstalledMedusa, args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  const out = openSync(logFile, 'a');
  try {
    const child = spawn(process.execPath, [cliPath(medusa), ...args], { cwd: medusa.dir, env, stdio: ['ignore', out, out] });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`medusa ${args[0]} exited with ${code}; last output:\n${tail(logFile)}`);
  } finally {
    closeSync(out);
  }
}

/**
 * The data directory of a Postgres cluster with Medusa's schema migrated and its admin user created, built once per
 * installed Medusa (its key is the bootstrap's schemaHash) and kept in .tools/medusa/db-snapshot.
 */
async function migratedSnapshot(medusa: InstalledMedusa, log: (msg: string) => void, timings: Record<string, number>): Promise<string> {
  const snapshot = join(medusa.dir, 'db-snapshot');
  const keyFile = join(snapshot, 'key');
  if (existsSync(keyFile) && readFileSync(keyFile, 'utf8').trim() === medusa.schemaHash) return join(snapshot, 'pgdata');

  log(`building the migrated Medusa ${medusa.version} database snapshot (once per installed version)`);
  const building = join(medusa.dir, `db-snapshot.building-${process.pid}`);
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const logFile = join(building, 'build.log');
  const pg = await startEmbeddedPostgres({ dataDir: join(building, 'pgdata'), port: await findFreePort(), database: DATABASE, postgresFlags: FAST_POSTGRES });
  try {
    const env = medusaEnv({ DATABASE_URL: pg.url, JWT_SECRET: 'snapshot', COOKIE_SECRET: 'snapshot' });
    let started = Date.now();
    await medusaCommand(medusa, ['db:migrate'], env, logFile);
    timings.snapshotMigrate = Date.now() - started;
    started = Date.now();
    await medusaCommand(medusa, ['user', '-e', ADMIN_EMAIL, '-p', ADMIN_PASSWORD], env, logFile);
    timings.snapshotAdminUser = Date.now() - started;
  } finally {
    await pg.stop();
  }
  writeFileSync(join(building, 'key'), `${medusa.schemaHash}\n`);
  rmSync(snapshot, { recursive: true, force: true });
  renameSync(building, snapshot);
  log(`snapshot ready: migrated in ${timings.snapshotMigrate} ms, admin user in ${timings.snapshotAdminUser} ms`);
  return join(snapshot, 'pgdata');
}

/** Stops a postmaster at once from an 'exit' handler, where nothing asynchronous runs any more. */
function killPostmasterSync(dataDir: string): void {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (pid) process.kill(pid, 'SIGQUIT');
  } catch {
    // Not running.
  }
}

export interface EventRelay {
  url: string;
  close(): Promise<void>;
}

/**
 * Medusa's forwarder posts to one address fixed when Medusa starts, but each test file starts its own receiver; the
 * relay (in the test runner's process) passes every forwarded request on, byte for byte with its signature headers, to
 * the receivers registered at that moment: POST /targets {url} → 201 {id}; DELETE /targets/:id → 204.
 */
export async function startEventRelay(): Promise<EventRelay> {
  const targets = new Map<string, string>();
  const passOn = ['content-type', 'user-agent'];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '';
      if (req.method === 'POST' && path === '/events') {
        res.writeHead(202).end();
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === 'string' && (passOn.includes(name) || name.startsWith('x-store-ops-'))) headers[name] = value;
        }
        for (const url of targets.values()) {
          void fetch(url, { method: 'POST', headers, body: raw, signal: AbortSignal.timeout(5_000) })
            .then((r) => r.arrayBuffer())
            .catch(() => undefined);
        }
        return;
      }
      if (req.method === 'POST' && path === '/targets') {
        let url: URL | undefined;
        try {
          url = new URL(String(JSON.parse(raw.toString('utf8')).url));
        } catch {
          url = undefined;
        }
        if (!url || url.hostname !== '127.0.0.1') {
          res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"error":"url must be an http://127.0.0.1 address"}');
          return;
        }
        const id = crypto.randomUUID();
        targets.set(id, url.toString());
        res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id }));
        return;
      }
      const target = /^\/targets\/([\w-]+)$/.exec(path);
      if (req.method === 'DELETE' && target) {
        res.writeHead(targets.delete(target[1]) ? 204 : 404).end();
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function waitForHealth(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Medusa exited during start-up (${child.exitCode ?? child.signalCode}); last output:\n${tail(logFile)}`);
    }
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false);
    if (ok) return;
    await sleep(250);
  }
  throw new Error(`Medusa did not answer ${url}/health within ${READY_TIMEOUT_MS / 1000} s; last output:\n${tail(logFile)}`);
}

async function adminCall<T>(url: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`Medusa ${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

/** Signs in as the snapshot's admin and creates this run's secret and publishable API keys. */
async function createApiKeys(url: string): Promise<{ secret: string; publishable: string }> {
  const login = await fetch(`${url}/auth/user/emailpass`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  if (!login.ok) throw new Error(`Medusa admin sign-in answered ${login.status}: ${await login.text()}`);
  const { token } = (await login.json()) as { token: string };
  type Key = { api_key: { id: string; token: string } };
  const secret = await adminCall<Key>(url, token, 'POST', '/admin/api-keys', { title: 'store-ops tests', type: 'secret' });
  const publishable = await adminCall<Key>(url, token, 'POST', '/admin/api-keys', { title: 'store-ops tests storefront', type: 'publishable' });
  const { stores } = await adminCall<{ stores: { default_sales_channel_id: string }[] }>(url, token, 'GET', '/admin/stores');
  await adminCall(url, token, 'POST', `/admin/api-keys/${publishable.api_key.id}/sales-channels`, { add: [stores[0].default_sales_channel_id] });
  return { secret: secret.api_key.token, publishable: publishable.api_key.token };
}

/** Starts Medusa for a test run (see the header); `stop` ends Medusa, its Postgres and the relay and deletes the copy. */
export async function startMedusaForTests(options: { log?: (msg: string) => void } = {}): Promise<RunningMedusa> {
  const log = options.log ?? (() => {});
  const timings: Record<string, number> = {};
  const medusa = installedMedusa();
  const snapshotData = await migratedSnapshot(medusa, log, timings);

  let started = Date.now();
  const runDir = join(tmpdir(), `svc-test-medusa-${process.pid}`);
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const dataDir = join(runDir, 'pgdata');
  // `cp -a` keeps the files' owner: as root, Postgres runs as the `postgres` user and must own its data directory.
  const copy = spawnSync('cp', ['-a', snapshotData, dataDir]);
  if (copy.status !== 0) throw new Error(`copying the Medusa database snapshot failed: ${copy.stderr?.toString() ?? copy.error?.message}`);
  timings.copySnapshot = Date.now() - started;

  let child: ChildProcess | undefined;
  let pg: RunningPostgres | undefined;
  let relay: EventRelay | undefined;
  const killOnExit = (): void => {
    if (child?.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    killPostmasterSync(dataDir);
    try {
      rmSync(runDir, { recursive: true, force: true });
    } catch {
      // Postgres may still be writing while it stops; a leftover directory in the temp dir is harmless.
    }
  };
  process.on('exit', killOnExit);

  const stop = async (): Promise<void> => {
    process.off('exit', killOnExit);
    if (child?.pid && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => {
        try {
          process.kill(-child!.pid!, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, KILL_AFTER_MS);
      await exited;
      clearTimeout(timer);
    }
    await relay?.close();
    await pg?.stop();
    rmSync(runDir, { recursive: true, force: true });
  };

  try {
    started = Date.now();
    pg = await startEmbeddedPostgres({ dataDir, port: await findFreePort(), database: DATABASE, postgresFlags: FAST_POSTGRES });
    timings.startPostgres = Date.now() - started;

    relay = await startEventRelay();
    const forwardSecret = crypto.randomBytes(32).toString('hex');
    const port = await findFreePort();
    const url = `http://127.0.0.1:${port}`;
    // Kept after the run (overwritten by the next one) for whoever needs to know why a Medusa call failed.
    const logFile = join(medusa.dir, 'last-run.log');
    rmSync(logFile, { force: true });
    const out = openSync(logFile, 'a');
    started = Date.now();
    child = spawn(process.execPath, [cliPath(medusa), 'start', '--host', '127.0.0.1', '--port', String(port)], {
      cwd: medusa.dir,
      env: medusaEnv({
        DATABASE_URL: pg.url,
        JWT_SECRET: crypto.randomBytes(24).toString('hex'),
        COOKIE_SECRET: crypto.randomBytes(24).toString('hex'),
        STORE_OPS_FORWARD_URL: `${relay.url}/events`,
        STORE_OPS_FORWARD_SECRET: forwardSecret,
      }),
      stdio: ['ignore', out, out],
      // Its own process group: Ctrl-C reaches the test runner, which stops Medusa before its database.
      detached: true,
    });
    closeSync(out);
    await waitForHealth(url, child, logFile);
    timings.startMedusa = Date.now() - started;

    started = Date.now();
    const keys = await createApiKeys(url);
    timings.createApiKeys = Date.now() - started;
    log(`Medusa ${medusa.version} ready at ${url} (${Object.entries(timings).map(([k, v]) => `${k} ${v} ms`).join(', ')})`);
    return {
      env: {
        MEDUSA_URL: url,
        MEDUSA_API_KEY: keys.secret,
        MEDUSA_PUBLISHABLE_KEY: keys.publishable,
        MEDUSA_FORWARD_SECRET: forwardSecret,
        MEDUSA_EVENT_RELAY_URL: relay.url,
      },
      timings,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
