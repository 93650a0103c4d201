/** Starts a Temporal worker on the service's task queue with the activities bound to their dependencies. */
import { NativeConnection, Runtime, Worker, type LogLevel, type LogMetadata } from '@temporalio/worker';
import { logger } from '../logger.js';
import { createActivities } from '../../activities/index.js';
import type { WorkerDeps } from '../entry/compose.js';
import { tracingWorkerOptions } from '../tracing/temporal.js';
import { TASK_QUEUE } from './constants.js';
import { workflowsPath } from './workflowsPath.js';

export { workflowsPath };
import { announceWorker } from '../webhooks/partitions.js';

/** The compiled workflow entry point the worker bundles. */

let runtimeInstalled = false;
/** Where the SDK serves its own worker metrics (Prometheus), set by the entry point before the first worker. */
let temporalMetricsAddress: string | undefined;

/** Asks the Temporal runtime to serve its worker metrics on `address` (`host:port`); call before the first worker. */
export function serveTemporalMetrics(address: string): void {
  temporalMetricsAddress = address;
}

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
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'WARN' }, forward: {} },
      ...(temporalMetricsAddress ? { metrics: { prometheus: { bindAddress: temporalMetricsAddress } } } : {}),
    },
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

/** The worker of `deps.taskQueue` on an open connection, with every activity bound (src/entry/compose.ts connects it). */
export async function buildWorker(connection: NativeConnection, deps: Omit<WorkerDeps, 'temporalAddress'>): Promise<Worker> {
  installRuntimeLogger();
  const taskQueue = deps.taskQueue ?? TASK_QUEUE;
  const worker = await Worker.create({
    connection,
    namespace: deps.namespace,
    taskQueue,
    // Tracing bundles its workflow interceptors into the code, so a bundle built without them is not used then.
    ...(deps.workflowBundle && !deps.tracing ? { workflowBundle: deps.workflowBundle } : { workflowsPath }),
    activities: createActivities({ db: deps.db, platforms: deps.platforms, webhooks: deps.webhooks, dispatcherIdleMs: deps.dispatcherIdleMs }),
    ...tracingWorkerOptions(deps.tracing ?? null),
  });
  // The webhook dispatcher's partitions are shared among the workers that announce themselves (WS2).
  announceWorker(deps.db, taskQueue, worker);
  return worker;
}
