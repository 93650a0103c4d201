/**
 * The composition root: the one place that turns a validated configuration into the service's dependencies — the
 * database, the secrets, ONE Temporal connection and client, the platform adapters, the webhook, application and MCP
 * settings, the clock — and stops them again. The entry points (main, server, worker, cli) and the benches build
 * through it; tests build through it too (`serviceParts`, `createWorker`), so they exercise what production wires.
 * No other module reads the configuration or connects to Temporal (test/contract/compositionRoot.test.ts keeps it so).
 */
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection, Worker, WorkflowBundleOption } from '@temporalio/worker';
import type { AppDeps } from '../../api/app.js';
import type { ApplicationOptions } from '../../api/app/index.js';
import type { McpOptions } from '../../api/mcp/router.js';
import { isLoopbackHost } from '../infra/hosts.js';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { createDb, type Db } from '../db/knex.js';
import { logger } from '../logger.js';
import { issueSetupToken, setupLink } from '../setup/firstRun.js';
import { createPlatformRegistry, type PlatformRegistry } from '../platforms/registry.js';
import { loadSecrets, type Secrets } from '../secrets.js';
import type { TemporalAccess } from '../temporal/access.js';
import { startTracing, type Tracing } from '../tracing/setup.js';
import { tracingClientInterceptors } from '../tracing/temporal.js';
import { systemResolver } from '../webhooks/addresses.js';
import { webhookSettings, type WebhookSettings } from '../webhooks/settings.js';

/** Where the process finds Postgres and Temporal: started by `npm start` (embedded) or external (the configuration). */
export interface Components {
  databaseUrl: string;
  temporalAddress: string;
  /** Stops what the process started for them (main's embedded Postgres and Temporal); runs last on close. */
  stop?: () => Promise<void>;
}

/** The service's dependencies, built once per process. */
export interface Service {
  config: Config;
  db: Db;
  secrets: Secrets;
  /** The one Temporal client, connected on first use (a process starts and serves reads while Temporal is down). */
  temporal: TemporalAccess;
  platforms: PlatformRegistry;
  webhooks: WebhookSettings;
  application: ApplicationOptions;
  mcp: McpOptions;
  now: () => Date;
  /** Everything `createApp` takes. */
  app: AppDeps;
  /** The process's trace export (OTEL_EXPORTER_OTLP_ENDPOINT); null when tracing is off. */
  tracing: Tracing | null;
  /** Where the worker connects (the same Temporal as `temporal`). */
  temporalAddress: string;
  /** Registers a stop for `close`, which runs stops last-registered first. */
  onClose(stop: () => Promise<void>): void;
  /** Stops everything in reverse order of building: what was registered last, then Temporal, the database, the components. */
  close(): Promise<void>;
}

/** The settings built from the configuration and the secrets alone (no I/O); tests build theirs with this too. */
export function serviceParts(config: Config, secrets: Secrets, db: Db): Pick<Service, 'platforms' | 'webhooks' | 'application' | 'mcp'> {
  return {
    platforms: createPlatformRegistry({
      db, demoClockSpeed: config.DEMO_CLOCK_SPEED, secretKeys: { current: secrets.secretsKey, previous: secrets.previousSecretsKey },
    }),
    webhooks: webhookSettings(config, secrets),
    application: { secretsKey: () => secrets.secretsKey, previousSecretsKey: () => secrets.previousSecretsKey, allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK, resolve: systemResolver, publicBaseUrl: config.PUBLIC_BASE_URL, trustProxy: config.TRUST_PROXY },
    mcp: { allowedOrigins: config.MCP_ALLOWED_ORIGINS, publicBaseUrl: config.PUBLIC_BASE_URL, localhostOnly: !config.PUBLIC_BASE_URL && isLoopbackHost(config.HOST) },
  };
}

/** The configuration of the environment; a bad one is reported on stderr and the process exits with 2. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}

/** Where a process that does not start Temporal itself finds it: TEMPORAL_ADDRESS, or the dev server `npm start` runs. */
export function temporalAddressOf(config: Config): string {
  return config.TEMPORAL_ADDRESS ?? `127.0.0.1:${config.TEMPORAL_PORT}`;
}

/** The address people open: PUBLIC_BASE_URL, else the listening host and port (loopback for 0.0.0.0). */
export function baseUrlOf(config: Config): string {
  return config.PUBLIC_BASE_URL ?? `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;
}

/**
 * While the service has no account, a new one-time set-up link (src/setup/firstRun.ts), else null. A database that
 * cannot say (not migrated yet) gives none and a warning; the next start tries again.
 */
export async function firstRunSetupLink(db: Db, config: Config): Promise<string | null> {
  try {
    const token = await issueSetupToken(db, new Date());
    return token ? setupLink(baseUrlOf(config), token) : null;
  } catch (err) {
    logger.warn({ err }, 'no first-run set-up link: the database could not issue one (are the migrations applied?)');
    return null;
  }
}

/** Builds the service's dependencies over `components`; nothing connects yet (knex and Temporal connect on first use). */
export function compose(config: Config, components: Components, options: { poolMax?: number; temporalConnectTimeoutMs?: number } = {}): Service {
  const stops: Array<() => Promise<void>> = [];
  if (components.stop) stops.push(components.stop);
  // Before the database: the pg driver is instrumented when knex loads it. Stopped after everything but the components,
  // so the spans of the last requests and activities are exported.
  const tracing = startTracing(config);
  if (tracing) stops.push(() => tracing.shutdown());
  const db = createDb(components.databaseUrl, options.poolMax === undefined ? {} : { max: options.poolMax });
  stops.push(() => db.destroy());
  const temporal = lazyTemporalAccess(components.temporalAddress, config.TEMPORAL_NAMESPACE, options.temporalConnectTimeoutMs, tracing);
  stops.push(() => temporal.close());
  const secrets = loadSecrets(config);
  const parts = serviceParts(config, secrets, db);
  const now = () => new Date();
  let closing: Promise<void> | null = null;
  return {
    config, db, secrets, temporal, now, tracing, ...parts,
    app: {
      db, cursorSecret: secrets.cursorSecret, now, platforms: parts.platforms, temporal, application: parts.application, mcp: parts.mcp,
      metrics: { requireToken: config.NODE_ENV === 'production', ...(config.METRICS_TOKEN ? { token: config.METRICS_TOKEN } : {}) },
    },
    temporalAddress: components.temporalAddress,
    onClose: (stop) => void stops.push(stop),
    close() {
      closing ??= (async () => {
        for (let stop = stops.pop(); stop; stop = stops.pop()) await stop().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
      })();
      return closing;
    },
  };
}

/**
 * A lazily connected Temporal client: connects on first use, so a process starts and serves reads while Temporal is
 * down, and reconnects after a failed connect.
 */
export function lazyTemporalAccess(address: string, namespace: string, connectTimeoutMs = 5_000, tracing: Tracing | null = null): TemporalAccess {
  let connecting: Promise<{ connection: Connection; client: Client }> | null = null;
  const connect = () => {
    connecting ??= Connection.connect({ address, connectTimeout: connectTimeoutMs })
      .then((connection) => ({ connection, client: new Client({ connection, namespace, interceptors: { workflow: tracingClientInterceptors(tracing) } }) }))
      .catch((error: unknown) => {
        connecting = null;
        throw error;
      });
    return connecting;
  };
  return {
    client: async () => (await connect()).client,
    async close() {
      const pending = connecting;
      connecting = null;
      if (pending) await pending.then(({ connection }) => connection.close(), () => undefined);
    },
  };
}

export interface WorkerDeps {
  db: Db;
  platforms: PlatformRegistry;
  webhooks: WebhookSettings;
  temporalAddress: string;
  namespace: string;
  /** Defaults to TASK_QUEUE; tests use their own queue so parallel test files never take each other's tasks. */
  taskQueue?: string;
  /** A pre-built bundle (the test run builds one, TEST_WORKFLOW_BUNDLE); otherwise the worker bundles the compiled workflows. */
  workflowBundle?: WorkflowBundleOption;
  /** The process's trace export: with it the worker continues traces into workflows and activities. */
  tracing?: Tracing | null;
  /** The webhook dispatcher's longest sleep without a notification (tests lengthen it to prove LISTEN/NOTIFY wakes it). */
  dispatcherIdleMs?: number;
}

/** Connects a worker to Temporal (its own native connection: a worker polls through it) with every activity bound. */
export async function createWorker(deps: WorkerDeps): Promise<{ worker: Worker; connection: NativeConnection }> {
  // Loaded here, not at the top: the worker SDK and its native bridge cost an API process (and every test file that
  // builds only the HTTP side) about a second of start-up for nothing.
  const { NativeConnection } = await import('@temporalio/worker');
  const { buildWorker, installRuntimeLogger } = await import('../temporal/worker.js');
  installRuntimeLogger();
  const connection = await NativeConnection.connect({ address: deps.temporalAddress });
  try {
    return { worker: await buildWorker(connection, deps), connection };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** Starts the service's worker; `close` stops it first (it stops polling and finishes its current activities). */
export async function startWorker(service: Service, options: Partial<Pick<WorkerDeps, 'taskQueue' | 'webhooks' | 'dispatcherIdleMs'>> = {}): Promise<{ worker: Worker; running: Promise<void> }> {
  const { worker, connection } = await createWorker({
    db: service.db, platforms: service.platforms, webhooks: service.webhooks, temporalAddress: service.temporalAddress,
    namespace: service.config.TEMPORAL_NAMESPACE, tracing: service.tracing, ...options,
  });
  const running = worker.run();
  service.onClose(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await connection.close();
  });
  return { worker, running };
}
