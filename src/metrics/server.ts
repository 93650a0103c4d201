/** A worker process's own `/metrics` (it has no HTTP server otherwise), with the same access rules as the API's. */
import http from 'node:http';
import express from 'express';
import { createMetricsRouter, type MetricsOptions } from '../../api/http/metrics.js';
import { requestContext } from '../../api/http/requestContext.js';
import type { Db } from '../db/knex.js';

/** Listens on host:port; resolves to the stop. */
export async function serveMetrics(deps: { db: Db; metrics: MetricsOptions }, host: string, port: number): Promise<() => Promise<void>> {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext);
  app.use(createMetricsRouter(deps));
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve()));
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
