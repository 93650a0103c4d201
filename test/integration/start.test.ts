/**
 * `npm start`'s process (scripts/start.mjs) as a user runs it: its own embedded Postgres and Temporal dev server in a
 * fresh data directory, stopped by a terminal's Ctrl-C. This file starts its own Postgres and Temporal on purpose —
 * starting them is what it tests — and skips the demo data so it stays quick.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/config/projectRoot.js';
import { canConnect, findFreePort } from '../../src/infra/ports.js';
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
