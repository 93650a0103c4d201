/**
 * `GET /metrics` in Prometheus text format (docs/operations.md). Open in development; with METRICS_TOKEN set it needs
 * `Authorization: Bearer <token>`, and in production it is served only then (without a token it does not exist), so
 * a deployment never publishes its figures by accident.
 */
import crypto from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import type { Db } from '../../src/db/knex.js';
import { AppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { sendError } from './errors.js';
import { registerDatabaseMetrics } from '../../src/metrics/database.js';
import { metricsRegistry } from '../../src/metrics/registry.js';

export const METRICS_PATH = '/metrics';

/** Who may read /metrics: `token` (METRICS_TOKEN) when set; `requireToken` (production) hides it without one. */
export interface MetricsOptions {
  token?: string;
  requireToken: boolean;
}

/** Compares in constant time, so the token cannot be guessed a character at a time. */
function sameToken(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function createMetricsRouter(deps: { db: Db; metrics?: MetricsOptions }): Router {
  const router = express.Router();
  const options = deps.metrics ?? { requireToken: false };
  registerDatabaseMetrics(deps.db);
  router.get(METRICS_PATH, async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    if (options.requireToken && !options.token) {
      sendError(res, req.requestId, new AppError('ROUTE_NOT_FOUND', 'No endpoint at this path.'));
      return;
    }
    if (options.token) {
      const header = req.get('authorization') ?? '';
      const given = header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!given || !sameToken(given, options.token)) {
        const code = given ? 'INVALID_CREDENTIALS' : 'MISSING_CREDENTIALS';
        sendError(res, req.requestId, new AppError(code, 'The metrics need Authorization: Bearer <METRICS_TOKEN>.', undefined, { 'WWW-Authenticate': 'Bearer realm="metrics"' }));
        return;
      }
    }
    try {
      const text = await metricsRegistry.metrics();
      res.type(metricsRegistry.contentType).send(text);
    } catch (err) {
      logger.warn({ err }, 'metrics collection failed');
      sendError(res, req.requestId, new AppError('METRICS_UNAVAILABLE', 'The service-wide figures could not be read (is Postgres reachable?).'));
    }
  });
  return router;
}
