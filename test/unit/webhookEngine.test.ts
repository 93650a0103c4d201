/**
 * The delivery engine's rules with the numbers as SPEC and D14 state them (literal, never read from the code under
 * test): retries after 1, 5, 15, 60 and 240 minutes, FAILED after the sixth attempt, 3xx and refused addresses FAILED
 * at once, a manual retry is one attempt, pause at the 30th consecutive failure (not the 29th) and above 5,000 pending
 * (not at 5,000), and only for enabled endpoints.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { loadConfig } from '../../src/config/index.js';
import { failureNeedsPauseCheck, nextStep, overPendingLimit, pauseReason, retryDueAt } from '../../src/webhooks/engine.js';
import type { AttemptOutcome } from '../../src/webhooks/http.js';
import { RECEIVER_TIMEOUT_MS, webhookSettings } from '../../src/webhooks/settings.js';

const MINUTE = 60_000;
/** The production schedule, as the configuration without WEBHOOK_RETRY_SCHEDULE gives it to a worker. */
const productionSchedule = () => webhookSettings(loadConfig({}), { secretsKey: crypto.randomBytes(32), cursorSecret: 'x'.repeat(32) } as never).retryScheduleMs;

test('When the configuration sets no schedule, then the worker retries after 1, 5, 15, 60 and 240 minutes and gives receivers 10 s', (t) => {
  t.deepEqual(productionSchedule(), [1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 60 * MINUTE, 240 * MINUTE]);
  t.is(RECEIVER_TIMEOUT_MS, 10_000);
});

test('When every attempt fails, then attempts 1 to 5 are retried after 1, 5, 15, 60, 240 minutes and the sixth is FAILED', (t) => {
  const schedule = productionSchedule();
  const steps = [1, 2, 3, 4, 5, 6].map((attempt) => nextStep({ outcome: 'http_error', attempt, retryScheduleMs: schedule, manualRetry: false }));
  t.deepEqual(steps, [
    { status: 'PENDING', retryDelayMs: 60_000 },
    { status: 'PENDING', retryDelayMs: 300_000 },
    { status: 'PENDING', retryDelayMs: 900_000 },
    { status: 'PENDING', retryDelayMs: 3_600_000 },
    { status: 'PENDING', retryDelayMs: 14_400_000 },
    { status: 'FAILED', why: 'last_attempt' },
  ]);
});

test('When an attempt ends, then the outcome decides: 2xx SENT; time-out, connection error and error status retried; 3xx and a refused address FAILED at once', (t) => {
  const schedule = productionSchedule();
  const at = (outcome: AttemptOutcome, attempt = 1) => nextStep({ outcome, attempt, retryScheduleMs: schedule, manualRetry: false });
  t.deepEqual(at('success'), { status: 'SENT' });
  t.deepEqual(at('success', 6), { status: 'SENT' });
  for (const outcome of ['http_error', 'timeout', 'connection_error'] as const) t.deepEqual(at(outcome), { status: 'PENDING', retryDelayMs: 60_000 }, outcome);
  t.deepEqual(at('redirect'), { status: 'FAILED', why: 'persistent' });
  t.deepEqual(at('address_rejected'), { status: 'FAILED', why: 'persistent' });
  t.deepEqual(at('address_rejected', 3), { status: 'FAILED', why: 'persistent' });
});

test('When a manual retry fails, then it is FAILED again without a schedule; when it succeeds it is SENT', (t) => {
  const schedule = productionSchedule();
  t.deepEqual(nextStep({ outcome: 'http_error', attempt: 7, retryScheduleMs: schedule, manualRetry: true }), { status: 'FAILED', why: 'manual_retry' });
  t.deepEqual(nextStep({ outcome: 'http_error', attempt: 2, retryScheduleMs: schedule, manualRetry: true }), { status: 'FAILED', why: 'manual_retry' });
  t.deepEqual(nextStep({ outcome: 'success', attempt: 7, retryScheduleMs: schedule, manualRetry: true }), { status: 'SENT' });
});

test('When a retry is scheduled, then it is due its delay after the failed attempt ended', (t) => {
  const attemptedAt = new Date('2026-11-26T10:00:00.000Z');
  t.is(retryDueAt(attemptedAt, 1_234, 60_000).toISOString(), '2026-11-26T10:01:01.234Z');
});

test('When failures follow one another, then the 29th does not pause, the 30th and 31st do, and only an enabled endpoint', (t) => {
  t.is(pauseReason('enabled', 29, 0), null);
  t.is(pauseReason('enabled', 30, 0), 'consecutive_failures');
  t.is(pauseReason('enabled', 31, 0), 'consecutive_failures');
  t.false(failureNeedsPauseCheck('enabled', 29));
  t.true(failureNeedsPauseCheck('enabled', 30));
  t.true(failureNeedsPauseCheck('enabled', 31));
  for (const state of ['paused', 'disabled', 'deleted']) {
    t.is(pauseReason(state, 31, 6_000), null, state);
    t.false(failureNeedsPauseCheck(state, 30), state);
  }
});

test('When deliveries pile up, then 5,000 pending do not pause and 5,001 do', (t) => {
  t.is(pauseReason('enabled', 0, 5_000), null);
  t.false(overPendingLimit(5_000));
  t.is(pauseReason('enabled', 0, 5_001), 'pending_deliveries');
  t.true(overPendingLimit(5_001));
  t.is(pauseReason('enabled', 30, 5_001), 'consecutive_failures', 'the failure count is named first when both hold');
});
