/** Service configuration: read once from the environment, validated at start-up, failing fast with a clear message. */
import { z } from 'zod';
import { isIP } from 'node:net';
import path from 'node:path';
import { projectRoot } from './projectRoot.js';
import { DEFAULT_WEBHOOK_PARTITIONS, MAX_WEBHOOK_PARTITIONS } from '../webhooks/partitions.js';

/** S2: Express's `trust proxy` value: off, a hop count, or the trusted proxies' addresses. */
export type TrustProxy = false | number | string[];

const booleanFlag = z.enum(['true', 'false']).transform((v) => v === 'true');

/** A 32-byte key given as 64 hex digits or as base64 / base64url (44 or 43 characters). */
export function decodeKey32(text: string): Buffer | null {
  const bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(text) ? Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64') : null;
  return bytes && bytes.length === 32 ? bytes : null;
}

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_BASE_URL: z.url().optional(),
  /** Bearer token for GET /metrics; in production /metrics exists only when it is set (docs/operations.md). */
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  /** A worker process serves its own /metrics on this port (the API processes serve theirs on PORT). */
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** The Temporal SDK's own worker metrics (Prometheus) on this port of HOST; off when unset. */
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** OpenTelemetry traces go to this OTLP/HTTP collector's base address (`http://collector:4318`); off when unset. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL (the collector\'s OTLP/HTTP address, e.g. http://127.0.0.1:4318)' }).optional(),
  /** Our exporter speaks OTLP over HTTP with JSON bodies; another protocol named here is refused, not silently ignored. */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.literal('http/json', { error: 'http/json (the protocol this service exports traces with)' }).optional(),
  /** The `service.name` resource attribute of the exported spans. */
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(100).default('store-ops'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().default(path.join(projectRoot, 'data')),
  DATABASE_URL: z.url().optional(),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  TEMPORAL_ADDRESS: z.string().regex(/^[^:\s]+:\d+$/, 'host:port').optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  CURSOR_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  /** AES-256-GCM key that encrypts webhook endpoint secrets (D18). */
  SECRETS_KEY: z.string().refine((v) => decodeKey32(v) !== null, '32 bytes as 64 hex digits or base64').optional(),
  /** During a rotation of SECRETS_KEY: the old key, read but never written with (`secrets re-encrypt` moves rows off it). */
  SECRETS_KEY_PREVIOUS: z.string().refine((v) => decodeKey32(v) !== null, '32 bytes as 64 hex digits or base64').optional(),
  /** D17: deliver to loopback addresses over http on any port (development and tests only). */
  WEBHOOK_ALLOW_LOOPBACK: booleanFlag.default(false),
  /** D17: delays between webhook attempts, e.g. `1s,2s,3s,4s,5s` (development and benchmarks only). */
  WEBHOOK_RETRY_SCHEDULE: z.string().optional().transform((value, ctx) => {
    if (value === undefined) return undefined;
    const parts = value.split(',').map((s) => s.trim());
    try {
      const delays = parts.map(durationMs);
      if (delays.length < 1 || delays.length > 10 || delays.some((d) => d <= 0)) throw new Error('1 to 10 positive durations');
      return delays;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'comma-separated positive durations such as 1s,2s,3s,4s,5s (1 to 10 of them)' });
      return z.NEVER;
    }
  }),
  /** WS1: the webhook dispatcher's partitions per task queue (endpoints by id), spread over the worker processes. */
  WEBHOOK_PARTITIONS: z.coerce.number().int().min(1).max(MAX_WEBHOOK_PARTITIONS).default(DEFAULT_WEBHOOK_PARTITIONS),
  DEMO_SEED: z.coerce.number().int().min(0).default(20261121),
  DEMO_DATA: booleanFlag.default(true),
  /** The demo platform's clock runs this many times faster than real time from the end of the loaded history (1 = real time). */
  DEMO_CLOCK_SPEED: z.coerce.number().positive().max(1_000_000).default(1),
  /** How often each shop is synced: the interval of its Temporal Schedule, e.g. `30s`, `1m`, `5m` (at least 1 s). */
  SYNC_INTERVAL: z.string().default('1m').transform((value, ctx) => {
    try {
      const ms = durationMs(value.trim());
      if (ms >= 1000 && ms % 1000 === 0) return ms;
    } catch { /* reported below */ }
    ctx.addIssue({ code: 'custom', message: 'a duration of whole seconds, at least 1s, such as 30s, 1m or 5m' });
    return z.NEVER;
  }),
  /** D30: with it, e-mails of the outbox are sent by SMTP (`smtp://user:pass@host:587`, `smtps://…`); without it they stay queued and visible. */
  SMTP_URL: z.string().regex(/^smtps?:\/\/[^\s]+$/, 'an smtp:// or smtps:// URL').optional(),
  /** The sender address of the service's e-mails (required with SMTP_URL). */
  SMTP_FROM: z.string().min(3).max(320).optional(),
  /**
   * S2: which reverse proxies' X-Forwarded-For/-Proto/-Host headers to believe, for Express and the authorization
   * server alike. Off by default (`false`); a hop count (`1` = the nearest proxy) or a comma list of addresses, CIDR
   * ranges or Express's names `loopback`, `linklocal`, `uniquelocal`.
   */
  TRUST_PROXY: z.string().default('false').transform((value, ctx): TrustProxy => {
    const text = value.trim();
    if (text === '' || text === 'false') return false;
    if (/^\d+$/.test(text)) {
      const hops = Number(text);
      if (hops >= 1 && hops <= 10) return hops;
    } else {
      const entries = text.split(',').map((s) => s.trim()).filter(Boolean);
      const valid = (entry: string) => ['loopback', 'linklocal', 'uniquelocal'].includes(entry) || isIP(entry) !== 0
        || (/^[^/]+\/\d{1,3}$/.test(entry) && isIP(entry.split('/')[0]) !== 0 && Number(entry.split('/')[1]) <= (isIP(entry.split('/')[0]) === 4 ? 32 : 128));
      if (entries.length > 0 && entries.every(valid)) return entries;
    }
    ctx.addIssue({ code: 'custom', message: 'false, a hop count 1 to 10, or a comma list of addresses, CIDR ranges, loopback, linklocal, uniquelocal' });
    return z.NEVER;
  }),
  /** Comma-separated origins (scheme://host[:port]) a browser-based MCP client may call /api/mcp from; others get 403. */
  MCP_ALLOWED_ORIGINS: z.string().default('').transform((value, ctx) => {
    const origins: string[] = [];
    for (const entry of value.split(',').map((s) => s.trim()).filter(Boolean)) {
      const url = URL.canParse(entry) ? new URL(entry) : null;
      if (!url || url.origin === 'null' || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
        ctx.addIssue({ code: 'custom', message: `not an origin (scheme://host[:port]): ${entry}` });
      } else {
        origins.push(url.origin);
      }
    }
    return origins;
  }),
});

export type Config = z.infer<typeof schema>;

/** Parses the environment; throws a ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const config = result.data;
  if (config.SMTP_URL && !config.SMTP_FROM) throw new ConfigError('Invalid configuration:\n  SMTP_FROM: required with SMTP_URL (the sender address of the service\'s e-mails)');
  if (config.NODE_ENV === 'production') {
    const refused = [
      !config.CURSOR_SECRET && 'CURSOR_SECRET: required when NODE_ENV=production',
      !config.SECRETS_KEY && 'SECRETS_KEY: required when NODE_ENV=production',
      // Without it the OAuth issuer, the MCP metadata and every link in e-mails would name the bind address (0.0.0.0).
      !config.PUBLIC_BASE_URL && 'PUBLIC_BASE_URL: required when NODE_ENV=production (the https address clients use)',
      config.WEBHOOK_ALLOW_LOOPBACK && 'WEBHOOK_ALLOW_LOOPBACK: refused when NODE_ENV=production (D17)',
      config.WEBHOOK_RETRY_SCHEDULE && 'WEBHOOK_RETRY_SCHEDULE: refused when NODE_ENV=production (D17)',
    ].filter(Boolean);
    if (refused.length > 0) throw new ConfigError(`Invalid configuration:\n${refused.map((line) => `  ${line}`).join('\n')}`);
  }
  return config;
}

export class ConfigError extends Error {}

/** Parses a duration such as "30s" into milliseconds. */
export function durationMs(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text);
  if (!m) throw new Error(`not a duration: ${text}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}
