/** Runs `temporal server start-dev` as a child process when no TEMPORAL_ADDRESS is given. */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { canConnect } from './ports.js';
import { resolveTemporalCli } from './tools.js';
import { devServerSearchAttributes } from '../temporal/searchAttributes.js';

export interface TemporalDevServerOptions {
  /** SQLite file that persists workflows across restarts; null keeps everything in memory (tests). */
  dbFile: string | null;
  port: number;
  /** Web UI port, or null for a headless server. */
  uiPort: number | null;
  namespace: string;
  log?: (line: string) => void;
}

export interface RunningTemporal {
  address: string;
  uiUrl: string | null;
  /** Stops the server (SIGTERM, SIGKILL after 10 s); `crash` kills it at once, as a crash would (recovery tests). */
  stop(options?: { crash?: boolean }): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;
const KILL_AFTER_MS = 10_000;

/** Starts a Temporal dev server and resolves once its frontend serves the namespace. */
export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<RunningTemporal> {
  const log = opts.log ?? (() => {});
  const cli = resolveTemporalCli();
  const address = `127.0.0.1:${opts.port}`;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port)];
  if (opts.dbFile) {
    const dbFile = resolve(opts.dbFile);
    mkdirSync(dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile);
  }
  args.push('--namespace', opts.namespace, '--log-level', 'warn');
  // The service's search attributes (webhook deliveries in the UI), registered on every start (idempotent).
  for (const attribute of devServerSearchAttributes) args.push('--search-attribute', attribute);
  args.push(...(opts.uiPort === null ? ['--headless'] : ['--ui-port', String(opts.uiPort)]));

  log(`starting ${cli} ${args.join(' ')}`);
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Kept for the error message when the server never becomes ready.
  const recent: string[] = [];
  const onOutput = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      log(line);
    }
    recent.splice(0, Math.max(0, recent.length - 30));
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);

  let exited = false;
  const exitedPromise = new Promise<void>((done) =>
    child.once('exit', () => {
      exited = true;
      done();
    }),
  );
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  // A dev server outliving its parent would keep the port and the SQLite lock.
  const killOnExit = (): void => void child.kill('SIGTERM');
  process.on('exit', killOnExit);

  const stop = async (options: { crash?: boolean } = {}): Promise<void> => {
    process.off('exit', killOnExit);
    if (exited || child.exitCode !== null) return;
    child.kill(options.crash ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    await exitedPromise;
    clearTimeout(timer);
  };

  try {
    const earlyFailure = (): Error | undefined =>
      spawnError ?? (exited ? new Error(`exited early with code ${child.exitCode}`) : undefined);
    await waitUntilReady(opts.port, address, opts.namespace, earlyFailure);
  } catch (err) {
    await stop();
    throw new Error(
      `Temporal dev server (${cli}) did not become ready on ${address}: ${(err as Error).message}\n` +
        `Last server output:\n${recent.join('\n')}`,
      { cause: err },
    );
  }
  log(`temporal ready on ${address}`);
  return { address, uiUrl: opts.uiPort === null ? null : `http://127.0.0.1:${opts.uiPort}`, stop };
}

/** Polls the port, then asks the frontend for the namespace, so callers can start workers right away. */
async function waitUntilReady(
  port: number,
  address: string,
  namespace: string,
  failure: () => Error | undefined,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const failed = failure();
    if (failed) throw failed;
    if (await canConnect(port)) {
      try {
        const connection = await Connection.connect({ address, connectTimeout: 2_000 });
        try {
          await connection.workflowService.describeNamespace({ namespace });
          return;
        } finally {
          await connection.close();
        }
      } catch (err) {
        lastError = err;
      }
    }
    await sleep(200);
  }
  const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`not ready after ${READY_TIMEOUT_MS / 1000}s${detail}`);
}
