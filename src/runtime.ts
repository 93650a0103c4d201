/** Finds or starts the real components: Postgres (DATABASE_URL or embedded) and Temporal (TEMPORAL_ADDRESS or the CLI's dev server). */
import path from 'node:path';
import type { Config } from './config/index.js';
import { startEmbeddedPostgres } from './infra/embeddedPostgres.js';
import { startTemporalDevServer } from './infra/temporalDevServer.js';
import { logger } from './logger.js';

export interface Started<T> {
  value: T;
  stop: () => Promise<void>;
}

export const EMBEDDED_DATABASE = 'store_ops';

/** The database URL to use; starts (or joins a running) embedded Postgres under DATA_DIR when DATABASE_URL is unset. */
export async function ensurePostgres(config: Config): Promise<Started<string>> {
  if (config.DATABASE_URL) return { value: config.DATABASE_URL, stop: async () => {} };
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(config.DATA_DIR, 'postgres'),
    port: config.EMBEDDED_PG_PORT,
    database: EMBEDDED_DATABASE,
    log: (message) => logger.debug({ component: 'postgres' }, message),
  });
  return { value: pg.url, stop: pg.stop };
}

/** The Temporal address to use; starts the dev server (SQLite under DATA_DIR, Web UI) when TEMPORAL_ADDRESS is unset. */
export async function ensureTemporal(config: Config): Promise<Started<{ address: string; uiUrl: string | null }>> {
  if (config.TEMPORAL_ADDRESS) return { value: { address: config.TEMPORAL_ADDRESS, uiUrl: null }, stop: async () => {} };
  const server = await startTemporalDevServer({
    dbFile: path.join(config.DATA_DIR, 'temporal.db'),
    port: config.TEMPORAL_PORT,
    uiPort: config.TEMPORAL_UI_PORT,
    namespace: config.TEMPORAL_NAMESPACE,
    log: (line) => logger.debug({ component: 'temporal' }, line),
  });
  return { value: { address: server.address, uiUrl: server.uiUrl }, stop: server.stop };
}
