/** Production entry: the HTTP server only (Postgres and Temporal are external). */
import { createApp } from '../../api/app.js';
import { createHttpServer } from '../../api/http/server.js';
import { logger } from '../logger.js';
import { startLogSummary } from '../logSummary.js';
import { startProposalReconciler } from '../temporal/proposals.js';
import { compose, configOrExit, firstRunSetupLink, temporalAddressOf } from './compose.js';

const config = configOrExit();
if (!config.DATABASE_URL) {
  process.stderr.write('DATABASE_URL is required for the API process (npm start runs everything embedded).\n');
  process.exit(2);
}
// Temporal is reached on first use: the API starts and serves reads while it is down (/readyz says so).
const service = compose(config, { databaseUrl: config.DATABASE_URL, temporalAddress: temporalAddressOf(config) });
// Proposals whose workflow could not be started (Temporal unreachable then) get it within a minute.
const stopReconciler = startProposalReconciler(service.db, service.temporal);
service.onClose(async () => stopReconciler());
const server = createHttpServer(createApp(service.app)).listen(config.PORT, config.HOST, () => {
  // While the service has no account, each API process prints its own one-time set-up link (any of them works, once),
  // before `api listening`: a start that prints none has none.
  void firstRunSetupLink(service.db, config).then((link) => {
    if (link) logger.info({ setupUrl: link }, `first run: no account yet; open ${link} within 24 hours to create the account and its owner`);
    logger.info({ port: config.PORT }, 'api listening');
  });
});
service.onClose(() => new Promise<void>((resolve) => server.close(() => resolve())));
service.onClose(startLogSummary(logger));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void service.close().then(() => process.exit(0)));
}
