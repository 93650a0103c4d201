/** `npm start`: everything in one process on embedded defaults — Postgres, Temporal, migrations, demo data, worker, HTTP. */
import { createApp } from '../../api/app.js';
import { ConfigError, loadConfig } from '../config/index.js';
import { migrateLatest } from '../db/knex.js';
import { databaseIsEmpty, runDemoDataWorkflow } from '../platforms/registry.js';
import { logger } from '../logger.js';
import { startLogSummary } from '../logSummary.js';
import { takeOverShutdownSignals } from '../infra/embeddedPostgres.js';
import { ensurePostgres, ensureTemporal } from '../runtime.js';
import { TASK_QUEUE } from '../temporal/constants.js';
import { ensureSyncSchedules } from '../sync/schedules.js';
import { ensureAffiliatePayoutSchedule } from '../temporal/affiliate.js';
import { ensureAutomationWorkflows } from '../temporal/automations.js';
import { reconcileProposalWorkflows, startProposalReconciler } from '../temporal/proposals.js';
import { ensureWebhookWorkflows } from '../temporal/webhooks.js';
import { createHttpServer } from '../../api/http/server.js';
import { startEmailSender } from '../email/sender.js';
import { serveTemporalMetrics } from '../temporal/worker.js';
import { baseUrlOf, compose, firstRunSetupLink, startWorker, type Service } from './compose.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // Before the root exists, what was started is stopped here; then the root's close stops everything in reverse order.
  const started: Array<() => Promise<void>> = [];
  let service: Service | null = null;
  const stopAll = async () => {
    if (service) return service.close();
    for (let stop = started.pop(); stop; stop = started.pop()) await stop().catch((err) => logger.warn({ err }, 'stop failed'));
  };
  takeOverShutdownSignals();
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (stopping) return void logger.info({ signal }, 'already stopping; the worker finishes its current activities first');
      stopping = true;
      logger.info({ signal }, 'stopping');
      void stopAll().then(() => {
        logger.info('stopped');
        process.exit(0);
      });
    });
  }
  try {
    const postgres = await ensurePostgres(config);
    started.push(postgres.stop);
    const temporal = await ensureTemporal(config);
    started.push(temporal.stop);
    // From here the root owns them: its close stops the embedded Temporal, then Postgres, last.
    service = compose(config, { databaseUrl: postgres.value, temporalAddress: temporal.value.address, stop: async () => { await temporal.stop(); await postgres.stop(); } });
    started.length = 0;
    const { db } = service;
    await migrateLatest(db);

    if (config.TEMPORAL_METRICS_PORT) serveTemporalMetrics(`${config.HOST}:${config.TEMPORAL_METRICS_PORT}`);
    await startWorker(service);
    const client = await service.temporal.client();
    // The outbox dispatcher and the delivery-log retention Schedule (both idempotent to start).
    await ensureWebhookWorkflows(client, TASK_QUEUE, { partitions: config.WEBHOOK_PARTITIONS });
    // The automation consumer (its own outbox position; idempotent to start).
    await ensureAutomationWorkflows(client);
    // The monthly Schedule that drafts the affiliate payouts for a person to confirm (idempotent to create).
    await ensureAffiliatePayoutSchedule(client);
    // Proposals stored without a workflow (a stop between the insert and the start) get theirs now (idempotent).
    await reconcileProposalWorkflows(db, client, TASK_QUEUE, new Date(), 0);

    if (config.DEMO_DATA && (await databaseIsEmpty(db))) {
      logger.info('loading demo data (workflow demo-data-load-demo)');
      await runDemoDataWorkflow(client, { seed: config.DEMO_SEED, endDate: new Date() });
    }

    // One sync Schedule per live shop (sync-<account>-<shop>); a reconciliation Schedule keeps them in step with the shops.
    const schedules = await ensureSyncSchedules(client, db, { taskQueue: TASK_QUEUE, intervalMs: config.SYNC_INTERVAL });
    logger.info({ created: schedules.created, replaced: schedules.replaced, deleted: schedules.deleted, kept: schedules.kept.length }, 'shop sync schedules ready');

    // D30: the outbox's e-mails go out by SMTP only when it is configured; otherwise they stay queued on /app/emails.
    if (config.SMTP_URL && config.SMTP_FROM) service.onClose(startEmailSender(db, { smtpUrl: config.SMTP_URL, from: config.SMTP_FROM }).stop);

    // Proposals whose workflow could not be started (Temporal unreachable then) get it within a minute.
    const stopReconciler = startProposalReconciler(db, service.temporal);
    service.onClose(async () => stopReconciler());
    const server = createHttpServer(createApp(service.app));
    await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
    service.onClose(() => new Promise<void>((resolve) => server.close(() => resolve())));
    // Every request is logged at debug; at info, one line a minute sums them up (LOG_LEVEL=debug shows each).
    service.onClose(startLogSummary(logger));
    const base = baseUrlOf(config);
    // A service without any account (DEMO_DATA=false on a fresh database) is set up in the application: one link a start.
    const setup = await firstRunSetupLink(db, config);
    const lines = [
      '',
      'Store-operations data service is running.',
      `  REST API     ${base}/api/v1   (contract: ${base}/api/v1/openapi.json)`,
      `  MCP server   ${base}/api/mcp`,
      setup
        ? `  Application  ${base}/app   (no account yet: set the service up with the link below)`
        : `  Application  ${base}/app   (sign in as a person; create one: npm run cli -- people create --email you@example.com --role owner)`,
      `  Temporal UI  ${temporal.value.uiUrl ?? `(external Temporal at ${temporal.value.address})`}`,
      `  E-mails      ${config.SMTP_URL ? 'sent by SMTP' : 'kept in the outbox, not sent (set SMTP_URL and SMTP_FROM to send)'}; see ${base}/app/emails`,
      `  Health       ${base}/healthz   (readiness: ${base}/readyz)`,
      `  Shop sync    every ${config.SYNC_INTERVAL / 1000} s per shop (Schedules sync-<account>-<shop>), demo clock x${config.DEMO_CLOCK_SPEED}`,
      '',
      // Without an account there is nothing to issue a key for yet: the owner does it after set-up (Access keys).
      ...(setup ? [] : [
        'Get an access key (shown once):',
        '  npm run cli -- keys create --name my-key --scopes all --interfaces rest,mcp --shops all',
        `Then: curl -H "Authorization: Bearer sk_..." "${base}/api/v1/orders?market=sk&limit=2"`,
      ]),
      'Logs: one summary line a minute (LOG_LEVEL=debug shows every request). Press Ctrl-C to stop everything started here.',
      '',
      ...(setup ? [
        'First run: this service has no account. Open this one-time link (24 hours) to create the account and its owner:',
        `  ${setup}`,
        'Then connect a shop and issue access keys in the application.',
        '',
      ] : []),
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } catch (error) {
    await stopAll();
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    logger.fatal({ err: error }, 'start-up failed');
    process.exit(1);
  }
}

void main();
