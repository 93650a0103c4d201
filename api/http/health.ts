/**
 * Probes for orchestrators and load balancers (docs/operations.md): `/healthz` says the process is up (no I/O), and
 * `/readyz` says it can serve — Postgres answers, Temporal answers, and every migration of the list is applied.
 * Public (they reveal no data), outside /api/v1, never cached.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { Db } from '../../src/db/knex.js';
import { migrations } from '../../src/db/migrations/index.js';
import { logger } from '../../src/logger.js';
import type { TemporalAccess } from '../../src/temporal/access.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

/** How long one check may take before it counts as failed (probes usually give up after a few seconds). */
const CHECK_TIMEOUT_MS = 3_000;

/** Each check's verdict: `ok`, or a short reason (no addresses, no credentials: the endpoint is public). */
export type Checks = Record<'postgres' | 'temporal' | 'migrations', string>;

async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms); });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the three checks at once. */
export async function readiness(deps: { db: Db; temporal?: TemporalAccess }): Promise<{ ready: boolean; checks: Checks }> {
  const log = logger.child({ component: 'readiness' });
  const postgres = within(CHECK_TIMEOUT_MS, deps.db.raw('select 1')).then(() => 'ok', (err: unknown) => {
    log.debug({ err }, 'postgres check failed');
    return 'unreachable';
  });
  const access = deps.temporal;
  const temporal = !access ? Promise.resolve('not configured') : within(CHECK_TIMEOUT_MS, (async () => {
    const client = await access.client();
    await client.connection.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => client.connection.workflowService.getSystemInfo({}));
  })()).then(() => 'ok', (err: unknown) => {
    log.debug({ err }, 'temporal check failed');
    return 'unreachable';
  });
  const applied = within(CHECK_TIMEOUT_MS, deps.db('knex_migrations').pluck('name') as Promise<string[]>).then((names) => {
    const done = new Set(names);
    const missing = migrations.map((m) => m.name).filter((name) => !done.has(name));
    return missing.length === 0 ? 'ok' : `missing ${missing.join(', ')}`;
  }, (err: unknown) => {
    log.debug({ err }, 'migrations check failed');
    return 'unknown (the database did not answer)';
  });
  const checks: Checks = { postgres: await postgres, temporal: await temporal, migrations: await applied };
  return { ready: Object.values(checks).every((verdict) => verdict === 'ok'), checks };
}

export function createHealthRouter(deps: { db: Db; temporal?: TemporalAccess }): Router {
  const router = express.Router();
  router.get(HEALTH_PATH, (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });
  router.get(READY_PATH, async (req: Request, res: Response) => {
    const { ready, checks } = await readiness(deps);
    res.setHeader('Cache-Control', 'no-store');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks, meta: { requestId: req.requestId } });
  });
  return router;
}
