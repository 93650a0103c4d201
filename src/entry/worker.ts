/** Production entry: a Temporal worker only (Postgres and Temporal are external). */
import { logger } from '../logger.js';
import { startLogSummary } from '../logSummary.js';
import { TASK_QUEUE } from '../temporal/constants.js';
import { ensureSyncSchedules } from '../sync/schedules.js';
import { ensureAutomationWorkflows } from '../temporal/automations.js';
import { ensureAffiliatePayoutSchedule } from '../temporal/affiliate.js';
import { reconcileProposalWorkflows } from '../temporal/proposals.js';
import { ensureWebhookWorkflows } from '../temporal/webhooks.js';
import { startEmailSender } from '../email/sender.js';
import { serveMetrics } from '../metrics/server.js';
import { serveTemporalMetrics } from '../temporal/worker.js';
import { compose, configOrExit, startWorker } from './compose.js';

const config = configOrExit();
if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
  process.stderr.write('DATABASE_URL and TEMPORAL_ADDRESS are required for the worker process (npm start runs everything embedded).\n');
  process.exit(2);
}
const service = compose(config, { databaseUrl: config.DATABASE_URL, temporalAddress: config.TEMPORAL_ADDRESS });
const { db } = service;
if (config.TEMPORAL_METRICS_PORT) serveTemporalMetrics(`${config.HOST}:${config.TEMPORAL_METRICS_PORT}`);
const { worker, running } = await startWorker(service);
const client = await service.temporal.client();
// Every worker ensures the outbox dispatcher and the retention Schedule exist (idempotent; one of each runs).
await ensureWebhookWorkflows(client, TASK_QUEUE, { partitions: config.WEBHOOK_PARTITIONS });
// And the automation consumer (idempotent; one runs per task queue).
await ensureAutomationWorkflows(client);
// And the monthly Schedule that drafts the affiliate payouts (idempotent).
await ensureAffiliatePayoutSchedule(client);
// Proposals stored without a workflow (a stop between the insert and the start) get theirs now (idempotent).
await reconcileProposalWorkflows(db, client, TASK_QUEUE, new Date(), 0);
// And one sync Schedule per live shop, kept in step with the shops (idempotent).
await ensureSyncSchedules(client, db, { taskQueue: TASK_QUEUE, intervalMs: config.SYNC_INTERVAL });
// D30: the outbox's e-mails are sent by SMTP when configured (every worker may run it: rows are taken with skip locked).
if (config.SMTP_URL && config.SMTP_FROM) service.onClose(startEmailSender(db, { smtpUrl: config.SMTP_URL, from: config.SMTP_FROM }).stop);
service.onClose(startLogSummary(logger));
if (config.METRICS_PORT) service.onClose(await serveMetrics({ db, metrics: service.app.metrics! }, config.HOST, config.METRICS_PORT));
// The Temporal runtime leaves signals to us (installRuntimeLogger): on SIGTERM (docker stop) or Ctrl-C the worker
// stops polling, finishes the activities it runs, then exits; without this Node would exit at once mid-activity.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    logger.info({ signal }, 'stopping: finishing the current activities');
    worker.shutdown();
  });
}
logger.info('worker running');
await running;
await service.close();
logger.info('stopped');
