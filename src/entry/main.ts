/** `npm start`: everything in one process on embedded defaults — Postgres, Temporal, migrations, demo data, worker, HTTP. */
import { createApp } from '../../api/app.js';
import { createPlatformRegistry } from '../platforms/registry.js';
import { lazyTemporalAccess } from '../temporal/access.js';
import { ConfigError, loadConfig } from '../config/index.js';
import { createDb, migrateLatest } from '../db/knex.js';
import { databaseIsEmpty, runDemoDataWorkflow } from '../demoData.js';
import { logger } from '../logger.js';
import { takeOverShutdownSignals } from '../infra/embeddedPostgres.js';
import { ensurePostgres, ensureTemporal } from '../runtime.js';
import { loadSecrets } from '../secrets.js';
import { createWorker } from '../temporal/worker.js';
import { TASK_QUEUE } from '../temporal/constants.js';
import { ensureSyncSchedules } from '../sync/schedules.js';
import { ensureAutomationWorkflows } from '../temporal/automations.js';
import { reconcileProposalWorkflows, startProposalReconciler } from '../temporal/proposals.js';
import { ensureWebhookWorkflows } from '../temporal/webhooks.js';
import { webhookSettings } from '../webhooks/settings.js';
import { Client, Connection } from '@temporalio/client';
import { createHttpServer } from '../../api/http/server.js';
import { startEmailSender } from '../email/sender.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // Stopped last-started first: HTTP, then the worker drains, then Temporal and Postgres it worked against.
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (let stop = stops.pop(); stop; stop = stops.pop()) await stop().catch((err) => logger.warn({ err }, 'stop failed'));
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
    stops.push(postgres.stop);
    const db = createDb(postgres.value);
    stops.push(() => db.destroy());
    await migrateLatest(db);

    const temporal = await ensureTemporal(config);
    stops.push(temporal.stop);
    const secrets = loadSecrets(config);
    const { worker, connection } = await createWorker({ db, temporalAddress: temporal.value.address, namespace: config.TEMPORAL_NAMESPACE, webhooks: webhookSettings(config, secrets), demoClockSpeed: config.DEMO_CLOCK_SPEED });
    const running = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await running;
      await connection.close();
    });

    // The outbox dispatcher and the delivery-log retention Schedule (both idempotent to start).
    const clientConnection = await Connection.connect({ address: temporal.value.address });
    await ensureWebhookWorkflows(new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }));
    // The automation consumer (its own outbox position; idempotent to start).
    await ensureAutomationWorkflows(new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }));
    // Proposals stored without a workflow (a stop between the insert and the start) get theirs now (idempotent).
    await reconcileProposalWorkflows(db, new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }), TASK_QUEUE, new Date(), 0);
    await clientConnection.close();

    if (config.DEMO_DATA && (await databaseIsEmpty(db))) {
      logger.info('loading demo data (workflow demo-data-load-demo)');
      await runDemoDataWorkflow({ temporalAddress: temporal.value.address, namespace: config.TEMPORAL_NAMESPACE, seed: config.DEMO_SEED, endDate: new Date() });
    }

    // One sync Schedule per live shop (sync-<account>-<shop>); a reconciliation Schedule keeps them in step with the shops.
    const syncConnection = await Connection.connect({ address: temporal.value.address });
    try {
      const schedules = await ensureSyncSchedules(new Client({ connection: syncConnection, namespace: config.TEMPORAL_NAMESPACE }), db, { taskQueue: TASK_QUEUE, intervalMs: config.SYNC_INTERVAL });
      logger.info({ created: schedules.created, replaced: schedules.replaced, deleted: schedules.deleted, kept: schedules.kept.length }, 'shop sync schedules ready');
    } finally {
      await syncConnection.close();
    }

    // D30: the outbox's e-mails go out by SMTP only when it is configured; otherwise they stay queued on /app/emails.
    if (config.SMTP_URL && config.SMTP_FROM) stops.push(startEmailSender(db, { smtpUrl: config.SMTP_URL, from: config.SMTP_FROM }).stop);

    const temporalAccess = lazyTemporalAccess(temporal.value.address, config.TEMPORAL_NAMESPACE);
    stops.push(() => temporalAccess.close());
    // Proposals whose workflow could not be started (Temporal unreachable then) get it within a minute.
    const stopReconciler = startProposalReconciler(db, temporalAccess);
    stops.push(async () => stopReconciler());
    const platforms = createPlatformRegistry({ db, demoClockSpeed: config.DEMO_CLOCK_SPEED });
    const app = createApp({ db, cursorSecret: secrets.cursorSecret, now: () => new Date(), platforms, temporal: temporalAccess });
    const server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
    stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const base = config.PUBLIC_BASE_URL ?? `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;
    const lines = [
      '',
      'Store-operations data service is running.',
      `  REST API     ${base}/api/v1   (contract: ${base}/api/v1/openapi.json)`,
      `  MCP server   ${base}/api/mcp`,
      `  Application  ${base}/app   (sign in as a person; create one: npm run cli -- people create --email you@example.com --role owner)`,
      `  Temporal UI  ${temporal.value.uiUrl ?? `(external Temporal at ${temporal.value.address})`}`,
      `  E-mails      ${config.SMTP_URL ? 'sent by SMTP' : 'kept in the outbox, not sent (set SMTP_URL and SMTP_FROM to send)'}; see ${base}/app/emails`,
      `  Shop sync    every ${config.SYNC_INTERVAL / 1000} s per shop (Schedules sync-<account>-<shop>), demo clock x${config.DEMO_CLOCK_SPEED}`,
      '',
      'Get an access key (shown once):',
      '  npm run cli -- keys create --name my-key --scopes all --interfaces rest,mcp --shops all',
      `Then: curl -H "Authorization: Bearer sk_..." "${base}/api/v1/orders?market=sk&limit=2"`,
      'Press Ctrl-C to stop everything started here.',
      '',
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
