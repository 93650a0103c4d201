#!/usr/bin/env node
// Test orchestrator behind `npm test`: starts ONE Postgres and ONE Temporal dev server for the
// whole run (not per file), and ONE Medusa when the run includes Medusa tests, runs ava with them, and always tears
// them down.
// Usage: node scripts/test.mjs [ava args...]   (run after scripts/bootstrap.mjs built dist/)
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = (rel) => pathToFileURL(join(root, 'dist', rel)).href;
const say = (msg) => console.error(`[test] ${msg}`);

const { findFreePort } = await import(dist('src/infra/ports.js'));
const { resolveTemporalTestServer } = await import(dist('src/infra/tools.js'));

/** Teardown steps, run in reverse start order. */
const cleanups = [];
let pgTempDir;
let ava;

// Last-resort cleanup for paths that skip teardown (signals, crashes): must be synchronous.
process.on('exit', () => {
  killAva('SIGTERM');
  if (pgTempDir) rmSync(pgTempDir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    say(`${signal}: stopping`);
    if (!killAva(signal)) void teardown().then(() => process.exit(128 + osConstants.signals[signal]));
  });
}

/** Signals ava's whole process group, so its worker processes do not outlive the run. */
function killAva(signal) {
  if (!ava || ava.exitCode !== null || ava.signalCode !== null) return false;
  try {
    process.kill(-ava.pid, signal);
  } catch {
    ava.kill(signal);
  }
  return true;
}

/** Stops everything we started; safe to call twice. */
async function teardown() {
  while (cleanups.length > 0) {
    const step = cleanups.pop();
    await step().catch((err) => say(`teardown error: ${err?.message ?? err}`));
  }
}

/** Same server as `url`, but its `postgres` maintenance database (tests CREATE DATABASE ... TEMPLATE from it). */
function adminUrlOf(url) {
  const u = new URL(url);
  u.pathname = '/postgres';
  return u.toString();
}

async function main() {
  const env = { ...process.env, NODE_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };

  // Medusa needs nothing else of the run (its own Postgres cluster, decision MH2), so it starts first and comes up while
  // Postgres, Temporal and the template database are prepared.
  const { runIncludesMedusa, startMedusaForTests } = await import(dist('test/helpers/medusaServer.js'));
  const medusaStarting = runIncludesMedusa(process.argv.slice(2)) ? startMedusaForTests({ log: say }) : null;
  // Awaited below; until then a failure must not count as an unhandled rejection.
  medusaStarting?.catch(() => {});

  if (process.env.DATABASE_URL) {
    env.TEST_PG_ADMIN_URL = adminUrlOf(process.env.DATABASE_URL);
    say('using the Postgres server from DATABASE_URL');
  } else {
    const { startEmbeddedPostgres } = await import(dist('src/infra/embeddedPostgres.js'));
    pgTempDir = join(tmpdir(), `svc-test-pg-${process.pid}`);
    rmSync(pgTempDir, { recursive: true, force: true });
    const started = Date.now();
    const pg = await startEmbeddedPostgres({
      dataDir: pgTempDir,
      port: await findFreePort(),
      database: 'postgres',
      // A throwaway cluster: durability only costs time here.
      postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    });
    cleanups.push(async () => {
      await pg.stop();
      rmSync(pgTempDir, { recursive: true, force: true });
    });
    env.TEST_PG_ADMIN_URL = pg.url;
    // Test databases are copied from the template as files: with fsync off its checkpoint is cheap (decision Q13).
    env.TEST_PG_COPY_STRATEGY = 'FILE_COPY';
    say(`embedded Postgres ready in ${Date.now() - started} ms`);
  }

  if (process.env.TEMPORAL_ADDRESS) {
    say(`using Temporal at ${process.env.TEMPORAL_ADDRESS}`);
  } else {
    const { startTemporalDevServer } = await import(dist('src/infra/temporalDevServer.js'));
    const started = Date.now();
    const temporal = await startTemporalDevServer({
      dbFile: null,
      port: await findFreePort(),
      uiPort: null,
      namespace: 'default',
    });
    cleanups.push(() => temporal.stop());
    env.TEMPORAL_ADDRESS = temporal.address;
    say(`Temporal dev server ready in ${Date.now() - started} ms`);
  }
  env.TEMPORAL_TEST_SERVER = resolveTemporalTestServer();

  // Optional one-time preparation (e.g. migrate + seed a template database), owned by the test helpers.
  const globalSetup = join(root, 'dist/test/helpers/globalSetup.js');
  if (existsSync(globalSetup)) {
    Object.assign(process.env, env);
    const { prepare, dropTemplate } = await import(pathToFileURL(globalSetup).href);
    const extra = typeof prepare === 'function' ? await prepare() : undefined;
    if (extra && typeof extra === 'object') Object.assign(env, extra);
    // On an external server (DATABASE_URL) the template would outlive the run; an embedded one goes with its data dir.
    if (process.env.DATABASE_URL && extra?.TEST_TEMPLATE_DB && typeof dropTemplate === 'function') {
      cleanups.push(() => dropTemplate(extra.TEST_TEMPLATE_DB));
    }
  }

  if (medusaStarting) {
    const started = Date.now();
    const medusa = await medusaStarting;
    cleanups.push(() => medusa.stop());
    Object.assign(env, medusa.env);
    say(`Medusa ready (waited ${Date.now() - started} ms for it after the rest was ready)`);
  }

  // Own process group (detached) so a signal reaches ava's workers too; we forward Ctrl-C ourselves.
  // TEST_COMMAND (a node script) replaces ava, e.g. the mutation runner (scripts/mutation.mjs), which runs ava itself
  // many times over the one Postgres, Temporal and template database prepared here.
  const command = process.env.TEST_COMMAND ? [process.execPath, [process.env.TEST_COMMAND, ...process.argv.slice(2)]] : [join(root, 'node_modules/.bin/ava'), process.argv.slice(2)];
  ava = spawn(command[0], command[1], {
    cwd: root,
    env,
    stdio: 'inherit',
    detached: true,
  });
  const code = await new Promise((resolve) => {
    ava.once('error', (err) => {
      say(`could not start ava: ${err.message}`);
      resolve(1);
    });
    ava.once('exit', (exitCode, signal) => resolve(exitCode ?? 128 + (osConstants.signals[signal] ?? 0)));
  });
  return code;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  say(`FAILED: ${err?.stack ?? err}`);
} finally {
  await teardown();
}
process.exit(exitCode);
