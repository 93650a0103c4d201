/**
 * The delivery engine's rules in one place (SPEC "Delivery behaviour", D14, D15, D17, D19; issue 27 point 1): what an
 * attempt's outcome makes of its delivery and when the next attempt is due, and when an endpoint is paused. The
 * dispatcher's first attempts (direct.ts), the retries of a delivery's workflow and manual retries (delivery.ts) and
 * the endpoint actor (pause.ts) all decide through these functions; nothing else holds a copy of a rule.
 */
import type { AttemptOutcome } from './http.js';
import { PAUSE_ABOVE_PENDING, PAUSE_AFTER_CONSECUTIVE_FAILURES } from './settings.js';

/** Outcomes that are FAILED at once, never retried: a 3xx (redirects are not followed) and a refused address. */
export const PERSISTENT_OUTCOMES: readonly AttemptOutcome[] = ['redirect', 'address_rejected'];

export type NextStep =
  | { status: 'SENT' }
  | { status: 'FAILED'; why: 'persistent' | 'last_attempt' | 'manual_retry' }
  /** Retried `retryDelayMs` after this attempt ended (the delay counts from the end, like a workflow's timer). */
  | { status: 'PENDING'; retryDelayMs: number };

export interface AttemptFacts {
  outcome: AttemptOutcome;
  /** The number of the attempt just made (1 for the first). */
  attempt: number;
  /** Delays between attempts (attempts = delays + 1): after failed attempt n the next waits `retryScheduleMs[n - 1]`. */
  retryScheduleMs: readonly number[];
  /** A manual retry (D15) is one attempt: if it fails the delivery is FAILED again, without a schedule. */
  manualRetry: boolean;
}

/** What the attempt makes of the delivery: SENT, FAILED (and why), or PENDING with the delay before the next attempt. */
export function nextStep(facts: AttemptFacts): NextStep {
  if (facts.outcome === 'success') return { status: 'SENT' };
  if (PERSISTENT_OUTCOMES.includes(facts.outcome)) return { status: 'FAILED', why: 'persistent' };
  if (facts.manualRetry) return { status: 'FAILED', why: 'manual_retry' };
  const delay = retryDelayAfter(facts.attempt, facts.retryScheduleMs);
  return delay === null ? { status: 'FAILED', why: 'last_attempt' } : { status: 'PENDING', retryDelayMs: delay };
}

/** The delay after failed attempt `attempt`, or null when it was the last scheduled one (the sixth by default). */
export function retryDelayAfter(attempt: number, retryScheduleMs: readonly number[]): number | null {
  return retryScheduleMs[attempt - 1] ?? null;
}

/** When the next attempt is due: the delay after the failed attempt ended (start + its duration). */
export function retryDueAt(attemptedAt: Date, durationMs: number, retryDelayMs: number): Date {
  return new Date(attemptedAt.getTime() + durationMs + retryDelayMs);
}

export type PauseReason = 'consecutive_failures' | 'pending_deliveries';

/**
 * Whether an endpoint in `state` with these counts is paused now (D14): enabled, and 30 or more consecutive failed
 * attempts, or more than 5,000 pending deliveries. Paused, disabled and deleted endpoints are never judged.
 */
export function pauseReason(state: string, consecutiveFailures: number, pending: number): PauseReason | null {
  if (state !== 'enabled') return null;
  if (consecutiveFailures >= PAUSE_AFTER_CONSECUTIVE_FAILURES) return 'consecutive_failures';
  if (pending > PAUSE_ABOVE_PENDING) return 'pending_deliveries';
  return null;
}

/** Whether a failed attempt should ask the endpoint's actor to judge its limits (the failure count reached 30). */
export function failureNeedsPauseCheck(state: string, consecutiveFailures: number): boolean {
  return pauseReason(state, consecutiveFailures, 0) === 'consecutive_failures';
}

/** Whether an endpoint with `pending` deliveries is over the pending limit (checked whenever deliveries are added). */
export function overPendingLimit(pending: number): boolean {
  return pending > PAUSE_ABOVE_PENDING;
}
