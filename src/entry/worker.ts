/** Production entry: a Temporal worker only (Postgres and Temporal are external). */
import { loadConfig } from '../config/index.js';
import { createDb } from '../db/knex.js';
import { logger } from '../logger.js';
import { loadSecrets } from '../secrets.js';
import { createWorker } from '../temporal/worker.js';
import { TASK_QUEUE } from '../temporal/constants.js';
import { ensureSyncSchedules } from '../sync/schedules.js';
import { ensureAutomationWorkflows } from '../temporal/automations.js';
import { reconcileProposalWorkflows } from '../temporal/proposals.js';
import { ensureWebhookWorkflows } from '../temporal/webhooks.js';
import { webhookSettings } from '../webhooks/settings.js';
import { Client, Connection } from '@temporalio/client';
import { startEmailSender } from '../email/sender.js';

const config = loadConfig();
if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
  process.stderr.write('DATABASE_URL and TEMPORAL_ADDRESS are required for the worker process (npm start runs everything embedded).\n');
  process.exit(2);
}
const db = createDb(config.DATABASE_URL);
const { worker, connection } = await createWorker({ db, temporalAddress: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE, webhooks: webhookSettings(config, loadSecrets(config)), demoClockSpeed: config.DEMO_CLOCK_SPEED });
// Every worker ensures the outbox dispatcher and the retention Schedule exist (idempotent; one of each runs).
const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
await ensureWebhookWorkflows(new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }));
// And the automation consumer (idempotent; one runs per task queue).
await ensureAutomationWorkflows(new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }));
// Proposals stored without a workflow (a stop between the insert and the start) get theirs now (idempotent).
await reconcileProposalWorkflows(db, new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }), TASK_QUEUE, new Date(), 0);
// And one sync Schedule per live shop, kept in step with the shops (idempotent).
await ensureSyncSchedules(new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }), db, { taskQueue: TASK_QUEUE, intervalMs: config.SYNC_INTERVAL });
await clientConnection.close();
// The Temporal runtime leaves signals to us (installRuntimeLogger): on SIGTERM (docker stop) or Ctrl-C the worker
// stops polling, finishes the activities it runs, then exits; without this Node would exit at once mid-activity.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    logger.info({ signal }, 'stopping: finishing the current activities');
    worker.shutdown();
  });
}
// D30: the outbox's e-mails are sent by SMTP when configured (every worker may run it: rows are taken with skip locked).
const emailSender = config.SMTP_URL && config.SMTP_FROM ? startEmailSender(db, { smtpUrl: config.SMTP_URL, from: config.SMTP_FROM }) : null;
logger.info('worker running');
await worker.run();
await emailSender?.stop();
logger.info('stopped');
await connection.close();
await db.destroy();
