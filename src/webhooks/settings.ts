/** The webhook delivery rules' numbers (SPEC "Limits", D14, D17) and the settings a worker delivers with. */
import type { Config } from '../config/index.js';
import type { Secrets } from '../secrets.js';
import { systemResolver, type Resolver } from './addresses.js';

/** SPEC: retries after 1, 5, 15, 60 and 240 minutes; six attempts in total. */
export const DEFAULT_RETRY_SCHEDULE_MS = [1, 5, 15, 60, 240].map((minutes) => minutes * 60_000);
/** SPEC: the receiver must answer 2xx within 10 seconds. */
export const RECEIVER_TIMEOUT_MS = 10_000;
/** D14: paused after 30 consecutive failed attempts … */
export const PAUSE_AFTER_CONSECUTIVE_FAILURES = 30;
/** … or more than 5,000 pending deliveries. */
export const PAUSE_ABOVE_PENDING = 5_000;
/** SPEC: delivery log retention. */
export const LOG_RETENTION_DAYS = 30;

export interface WebhookSettings {
  /** AES-256-GCM key of the endpoint secrets (D18). */
  secretsKey: Buffer;
  /** The key before a rotation, still accepted for reading (SECRETS_KEY_PREVIOUS). */
  previousSecretsKey?: Buffer | null;
  /** D17: loopback over http allowed (never in production). */
  allowLoopback: boolean;
  /** Delays between attempts; attempts = delays + 1. */
  retryScheduleMs: number[];
  timeoutMs: number;
  resolve: Resolver;
  /** Requests under way in one worker process at a time (default DEFAULT_MAX_IN_FLIGHT of direct.ts; bench (f) lowers it). */
  maxInFlight?: number;
  /**
   * T22: after how long a request under way counts as stuck (default DEFAULT_STUCK_AFTER_MS of direct.ts). Tests that
   * hold requests open on purpose raise it, so that a loaded machine's slow dispatch does not narrow a lane mid-test.
   */
  stuckAfterMs?: number;
  /** Whether delivery workflows start with search attributes (W3; default true, false on the time-skipping server). */
  searchAttributes?: boolean;
}

/** The settings of the configuration (entry points); tests build their own (short time-outs, their own DNS). */
export function webhookSettings(config: Config, secrets: Secrets): WebhookSettings {
  return {
    secretsKey: secrets.secretsKey,
    previousSecretsKey: secrets.previousSecretsKey,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_RETRY_SCHEDULE_MS,
    timeoutMs: RECEIVER_TIMEOUT_MS,
    resolve: systemResolver,
  };
}
