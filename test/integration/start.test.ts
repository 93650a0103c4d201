/**
 * The service's processes as they are run and stopped: `npm start` (scripts/start.mjs) with its own embedded Postgres
 * and Temporal dev server in a fresh data directory, stopped by a terminal's Ctrl-C; and the production worker stopped
 * by SIGTERM. This file starts its own Postgres and Temporal on purpose — starting and stopping them is what it
 * tests, and the worker's Schedules must not reach the shared server — and skips the demo data so it stays quick.
 */
import test from 'ava';
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/config/projectRoot.js';
import { canConnect, findFreePort } from '../../src/infra/ports.js';
import { startTemporalDevServer } from '../../src/infra/temporalDevServer.js';
import { createTestDatabase } from '../helpers/db.js';
import { waitUntil } from '../helpers/wait.js';

interface LogLine { level: number; msg: string; signal?: string }

test('When npm start gets a terminal Ctrl-C, then it stops HTTP, the worker, Temporal and Postgres in order, exits 0 and leaves nothing running', async (t) => {
  t.timeout(180_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'store-ops-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const [port, pgPort, temporalPort, uiPort] = [await findFreePort(), await findFreePort(), await findFreePort(), await findFreePort()];
  // Nothing of the test run's own Postgres or Temporal: npm start must bring up its own.
  const { DATABASE_URL: _db, TEMPORAL_ADDRESS: _temporal, ...env } = process.env;
  const child = spawn(process.execPath, [path.join(projectRoot, 'scripts/start.mjs')], {
    cwd: projectRoot,
    // Its own process group stands for the terminal's foreground group: a Ctrl-C signals every process in it.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, DATA_DIR: dataDir, PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), TEMPORAL_PORT: String(temporalPort), TEMPORAL_UI_PORT: String(uiPort), DEMO_DATA: 'false', LOG_LEVEL: 'info' },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch { /* already gone */ }
  });

  const up = Promise.race([waitUntil(async () => output.includes('Press Ctrl-C'), 150_000).then(() => true), exited.then(() => false)]);
  t.true(await up, `npm start came up:\n${output}`);
  const spec = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
  t.is(spec.status, 200);
  // No demo data on a fresh database: no account, so the banner ends with the one-time set-up link (decision SU1).
  t.regex(output, new RegExp(`First run: this service has no account\\..*\n  http://127\\.0\\.0\\.1:${port}/app/setup\\?token=[A-Za-z0-9_-]{43}\n`));

  process.kill(-child.pid!, 'SIGINT');
  t.is(await exited, 0, output);

  const lines = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine);
  const stopping = lines.findIndex((line) => line.msg === 'stopping');
  t.true(stopping >= 0, 'the Ctrl-C was seen');
  t.is(lines.filter((line) => line.msg === 'stopping').length, 1);
  t.is(lines.at(-1)?.msg, 'stopped', 'every part stopped before the process exited');
  const troubles = lines.slice(stopping).filter((line) => line.level >= 40);
  t.deepEqual(troubles, [], 'no warning or error while stopping: the worker drained against a running Temporal and Postgres');
  for (const [what, p] of [['HTTP', port], ['Postgres', pgPort], ['Temporal', temporalPort], ['Temporal UI', uiPort]] as const) {
    t.false(await canConnect(p), `${what} no longer listens`);
  }
});

test('When the production worker process gets SIGTERM, then it finishes its activities, logs stopped and exits 0', async (t) => {
  t.timeout(120_000);
  // Its own Temporal, so the worker's task queue, dispatcher and Schedules touch nothing of the other tests.
  const temporal = await startTemporalDevServer({ dbFile: null, port: await findFreePort(), uiPort: null, namespace: 'default' });
  t.teardown(() => temporal.stop());
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/src/entry/worker.js')], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, DATABASE_URL: database.url, TEMPORAL_ADDRESS: temporal.address, LOG_LEVEL: 'info', NODE_ENV: 'development',
      CURSOR_SECRET: crypto.randomBytes(32).toString('hex'), SECRETS_KEY: crypto.randomBytes(32).toString('hex'),
    },
  });
  t.teardown(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const up = Promise.race([waitUntil(async () => output.includes('"worker running"'), 90_000).then(() => true), exited.then(() => false)]);
  t.true(await up, `the worker came up:\n${output}`);
  child.kill('SIGTERM');
  t.deepEqual(await exited, { code: 0, signal: null }, output);
  t.regex(output, /"msg":"stopped"/);
});
