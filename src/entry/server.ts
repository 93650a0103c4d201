/** Production entry: the HTTP server only (Postgres and Temporal are external). */
import { createApp } from '../../api/app.js';
import { loadConfig } from '../config/index.js';
import { createDb } from '../db/knex.js';
import { logger } from '../logger.js';
import { loadSecrets } from '../secrets.js';
import { createHttpServer } from '../../api/http/server.js';
import { createPlatformRegistry } from '../platforms/registry.js';
import { lazyTemporalAccess } from '../temporal/access.js';
import { cliTemporalAddress } from '../temporal/webhooks.js';
import { startProposalReconciler } from '../temporal/proposals.js';

const config = loadConfig();
if (!config.DATABASE_URL) {
  process.stderr.write('DATABASE_URL is required for the API process (npm start runs everything embedded).\n');
  process.exit(2);
}
const db = createDb(config.DATABASE_URL);
const temporal = lazyTemporalAccess(cliTemporalAddress(config), config.TEMPORAL_NAMESPACE);
const platforms = createPlatformRegistry({ db, demoClockSpeed: config.DEMO_CLOCK_SPEED });
const app = createApp({ db, cursorSecret: loadSecrets(config).cursorSecret, now: () => new Date(), platforms, temporal });
// Proposals whose workflow could not be started (Temporal unreachable then) get it within a minute.
const stopReconciler = startProposalReconciler(db, temporal);
const server = createHttpServer(app).listen(config.PORT, config.HOST, () => logger.info({ port: config.PORT }, 'api listening'));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopReconciler();
    server.close(() => void temporal.close().then(() => db.destroy()).then(() => process.exit(0)));
  });
}
