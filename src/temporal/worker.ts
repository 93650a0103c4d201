/** Starts a Temporal worker on the service's task queue with the activities bound to their dependencies. */
import path from 'node:path';
import { NativeConnection, Runtime, Worker, type LogLevel, type LogMetadata, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { logger } from '../logger.js';
import { createActivities } from '../../activities/index.js';
import { projectRoot } from '../config/projectRoot.js';
import type { Db } from '../db/knex.js';
import type { WebhookSettings } from '../webhooks/settings.js';
import { TASK_QUEUE } from './constants.js';

/** The compiled workflow entry point the worker bundles. */
export const workflowsPath = path.join(projectRoot, 'dist', 'workflows', 'index.js');

export interface WorkerDeps {
  db: Db;
  temporalAddress: string;
  namespace: string;
  /** Defaults to TASK_QUEUE; tests use their own queue so parallel test files never take each other's tasks. */
  taskQueue?: string;
  /** A pre-built bundle (tests build it once per run); otherwise the worker bundles `workflowsPath`. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Webhook delivery settings (entry points: webhookSettings(config, secrets); tests: their own DNS and time-outs). */
  webhooks?: WebhookSettings;
  /** DEMO_CLOCK_SPEED for the demo platform's clock (default real time). */
  demoClockSpeed?: number;
  /** The webhook dispatcher's longest sleep without a notification (tests lengthen it to prove LISTEN/NOTIFY wakes it). */
  dispatcherIdleMs?: number;
}

let runtimeInstalled = false;

/** Routes the Temporal SDK's own logs into our JSON log at our level (once per process, before any Temporal runtime use). */
export function installRuntimeLogger(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const temporalLog = logger.child({ component: 'temporal-sdk' });
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = { TRACE: 'trace', DEBUG: 'debug', INFO: 'debug', WARN: 'warn', ERROR: 'error' };
  Runtime.install({
    // Our entry points own shutdown (Ctrl-C stops the HTTP server, then the worker, then Temporal and Postgres).
    shutdownSignals: [],
    // The native core's warnings (e.g. the server unreachable while it restarts) come here too, as JSON, not as
    // plain text on stderr.
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'WARN' }, forward: {} } },
    logger: {
      log: (level: LogLevel, message: string, meta?: LogMetadata) => temporalLog[levels[level]](meta ?? {}, message),
      trace: (message: string, meta?: LogMetadata) => temporalLog.trace(meta ?? {}, message),
      debug: (message: string, meta?: LogMetadata) => temporalLog.debug(meta ?? {}, message),
      info: (message: string, meta?: LogMetadata) => temporalLog.debug(meta ?? {}, message),
      warn: (message: string, meta?: LogMetadata) => temporalLog.warn(meta ?? {}, message),
      error: (message: string, meta?: LogMetadata) => temporalLog.error(meta ?? {}, message),
    },
  });
}

export async function createWorker(deps: WorkerDeps): Promise<{ worker: Worker; connection: NativeConnection }> {
  installRuntimeLogger();
  const connection = await NativeConnection.connect({ address: deps.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue ?? TASK_QUEUE,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath }),
    activities: createActivities({ db: deps.db, webhooks: deps.webhooks, demoClockSpeed: deps.demoClockSpeed, dispatcherIdleMs: deps.dispatcherIdleMs }),
  });
  return { worker, connection };
}
