/**
 * The service's dependencies for tests, built by the composition root's own builders (src/entry/compose.ts) over the
 * test configuration, so tests exercise what production wires.
 */
import crypto from 'node:crypto';
import type { AppDeps } from '../../api/app.js';
import type { Db } from '../../src/db/knex.js';
import { loadConfig } from '../../src/config/index.js';
import { serviceParts, type WorkerDeps } from '../../src/entry/compose.js';
import { workflowsPath } from '../../src/temporal/workflowsPath.js';
import type { Secrets } from '../../src/secrets.js';
import { TEST_CURSOR_SECRET } from './constants.js';

/** The configuration tests run under: the defaults (a loopback bind, no public URL), read as the service reads them. */
export const TEST_CONFIG = loadConfig({ NODE_ENV: 'test' });
/** The secrets the root would load; fixed cursor secret, a fresh secrets key per test file. */
export const TEST_SECRETS: Secrets = { cursorSecret: TEST_CURSOR_SECRET, secretsKey: crypto.randomBytes(32), previousSecretsKey: null };

/**
 * createApp's dependencies built by the composition root's own builder (serviceParts) over the test configuration, as
 * a read-only instance unless `writes` gives the platforms and Temporal; `overrides` replace single options.
 */
export function testAppDeps(db: Db, now: () => Date, writes: Pick<AppDeps, 'platforms' | 'temporal'> = {}, overrides: Partial<Pick<AppDeps, 'mcp' | 'application'>> = {}): AppDeps {
  const parts = serviceParts(TEST_CONFIG, TEST_SECRETS, db);
  return { db, cursorSecret: TEST_SECRETS.cursorSecret, now, mcp: overrides.mcp ?? parts.mcp, application: overrides.application ?? parts.application, ...writes };
}

/** A worker's dependencies as the root builds them over the test configuration; `deps` adds or replaces (own DNS, settings). */
export function testWorkerDeps(deps: Pick<WorkerDeps, 'db' | 'temporalAddress'> & Partial<WorkerDeps>): WorkerDeps {
  const parts = serviceParts(TEST_CONFIG, TEST_SECRETS, deps.db);
  return { namespace: 'default', platforms: parts.platforms, webhooks: parts.webhooks, ...testWorkflowSource(), ...deps };
}

/**
 * The workflow code for a test worker: the bundle the run built once (globalSetup, TEST_WORKFLOW_BUNDLE), so ~45
 * workers per run do not each run webpack over the workflows; outside `npm test` the compiled entry point.
 */
export function testWorkflowSource(): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  return process.env.TEST_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE } } : { workflowsPath };
}

/** The root's settings over the test configuration (for test worker processes that register activities themselves). */
export function testParts(db: Db): ReturnType<typeof serviceParts> {
  return serviceParts(TEST_CONFIG, TEST_SECRETS, db);
}
