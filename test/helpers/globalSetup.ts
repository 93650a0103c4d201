/**
 * Run once per `npm test` by scripts/test.mjs: migrates a template database and loads the demo data into it,
 * so each test file gets its own copy in milliseconds (CREATE DATABASE ... TEMPLATE).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { workflowsPath } from '../../src/temporal/workflowsPath.js';
import { createDb, migrateLatest } from '../../src/db/knex.js';
import { databaseUrl } from './db.js';
import { loadDemoAccounts } from '../../src/platforms/demo/load.js';
import { TEST_NOW, TEST_SEED } from './constants.js';

export { databaseUrl } from './db.js';

export async function prepare(): Promise<Record<string, string>> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  if (!adminUrl) throw new Error('TEST_PG_ADMIN_URL is not set (run tests with npm test)');
  const template = `svc_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  await admin.end();
  const seeding = (async () => {
    const db = createDb(databaseUrl(adminUrl, template));
    try {
      await migrateLatest(db);
      await loadDemoAccounts(db, { seed: TEST_SEED, endDate: TEST_NOW });
    } finally {
      await db.destroy();
    }
  })();
  // The demo load mostly waits for Postgres (its process is idle about three quarters of the time), so webpack's
  // bundle and the browser's start go meanwhile instead of after it: seconds off every run's critical path.
  const [, workflows, browser] = await Promise.all([seeding, bundleWorkflows(), prepareBrowser()]);
  return { TEST_TEMPLATE_DB: template, ...workflows, ...browser };
}

/**
 * Bundles the workflows once per run (webpack, seconds of CPU each time) into a file every test worker loads
 * (test/helpers/service.ts `testWorkflowSource`); the file goes with the run's process.
 */
async function bundleWorkflows(): Promise<Record<string, string>> {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
  const codePath = path.join(tmpdir(), `svc-test-workflows-${process.pid}.js`);
  writeFileSync(codePath, code);
  process.once('exit', () => { try { rmSync(codePath, { force: true }); } catch { /* already gone */ } });
  return { TEST_WORKFLOW_BUNDLE: codePath };
}

/** Drops the run's template database: on a server the run does not own (DATABASE_URL) it would outlive the run. */
export async function dropTemplate(template: string): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${template} with (force)`);
  } finally {
    await admin.end();
  }
}

/**
 * One headless Chromium per run for the e2e tests (test/e2e), started only when the run includes them (no file
 * arguments, or an e2e path among them). It is a child of the test runner and ends with it.
 */
export async function prepareBrowser(): Promise<Record<string, string>> {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  if (args.length > 0 && !args.some((a) => a.includes('e2e'))) return {};
  const { launchBrowserServer } = await import('./browser.js');
  const server = await launchBrowserServer();
  process.once('exit', () => void server.close());
  return { TEST_BROWSER_WS: server.wsEndpoint() };
}
