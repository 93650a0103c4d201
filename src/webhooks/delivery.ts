/**
 * One delivery attempt (SPEC "Delivery behaviour"): checks the endpoint's state and plan, resolves and verifies the
 * address, signs the stored body with a fresh timestamp, POSTs it, and logs the attempt and the delivery's new state
 * in one transaction. Idempotent per (delivery, attempt number): an attempt already logged is never sent or logged
 * again, so a retried activity cannot log twice (it may send twice if it crashed between POST and log — receivers
 * de-duplicate by `event_id`, as SPEC asks). A retry may also be made by the partition dispatcher when due (WR1): the
 * attempt is sent only under its claim (claims.ts), and one the dispatcher made is reported, not made again.
 */
import type { Db } from '../db/knex.js';
import { logger } from '../logger.js';
import { countWebhookAttempt } from '../logSummary.js';
import { verifyDestination, WebhookAddressError } from './addresses.js';
import { webhooksEnabled } from './plan.js';
import { postWebhook, type SendResult } from './http.js';
import { decryptSecret } from './secrets.js';
import { deliveryRequestHeaders } from './signature.js';
import { failureNeedsPauseCheck, nextStep, retryDueAt } from './engine.js';
import type { WebhookSettings } from './settings.js';
import { claimAttempts, claimedByOther, claimLeaseMs, WORKFLOW_CLAIMANT } from './claims.js';

export type DeliveryStatus = 'PENDING' | 'SENT' | 'FAILED' | 'SKIPPED';

export interface AttemptInput {
  deliveryId: string;
  /** The attempt number, chosen by the workflow (1 for a new delivery; attempts continue after a manual retry). */
  attempt: number;
  /** The delivery's retry schedule (the workflow's input): the engine picks the delay after this attempt from it. */
  retryScheduleMs: readonly number[];
}

export interface AttemptResult {
  /**
   * `retry`: failed, attempts remain (the workflow waits `retryDelayMs`); `held`: not sent because the endpoint is
   * paused or the plan has no webhooks (the workflow waits to be woken); `done`: the delivery reached `status`;
   * `claimed`: another party (the partition dispatcher, WR1) is making this attempt now: the workflow looks again
   * after `retryDelayMs`, for the same attempt number.
   */
  outcome: 'retry' | 'held' | 'done' | 'claimed';
  status: DeliveryStatus;
  /** True when this failure brought an enabled endpoint to the pause threshold (the workflow tells the endpoint actor). */
  pauseCheck: boolean;
  httpStatus?: number | null;
  /**
   * With `retry`: the delay before the next attempt, counted from now (the workflow's timer): the engine's delay after
   * an attempt made here; for an attempt found already made (by the dispatcher, WR1), what is left until the due time
   * Postgres holds. With `claimed`: when to look again.
   */
  retryDelayMs?: number;
  /** The number of the last attempt made (the dispatcher may have made several while the workflow's timer was late). */
  lastAttempt?: number;
}

/** How long a workflow that found its attempt claimed by the dispatcher waits at most before it looks again (WR1). */
export const CLAIMED_RECHECK_MS = 5_000;
/**
 * WR1: when the last attempt was made by another party (a running dispatcher), the workflow's timer fires this long
 * after the next attempt is due, so the dispatcher makes it on time and the workflow only records it; were no
 * dispatcher running by then, the workflow makes it itself, this late. An attempt the workflow made itself gets the
 * schedule's exact delay (no dispatcher was seen).
 */
export const DISPATCHER_FIRST_MS = 2_000;

const log = logger.child({ component: 'webhooks' });

interface DeliveryRow {
  id: string;
  status: DeliveryStatus;
  attempts: number;
  body: string;
  event_id: string;
  event_type: string;
  manual_retry_at: Date | null;
  endpoint_id: string;
  account_id: string;
  url: string;
  state: 'enabled' | 'paused' | 'disabled';
  deleted_at: Date | null;
  secret_encrypted: Buffer;
  consecutive_failures: number;
  next_attempt_at: Date | null;
}

const pauseCheckFor = failureNeedsPauseCheck;

/** Performs attempt `input.attempt` of a delivery, or reports why it is not made. */
export async function attemptDelivery(db: Db, settings: WebhookSettings, input: AttemptInput): Promise<AttemptResult> {
  const read = (): Promise<DeliveryRow | undefined> => db('webhook_deliveries as d').join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select('d.id', 'd.status', 'd.attempts', 'd.body', 'd.event_id', 'd.event_type', 'd.manual_retry_at', 'd.endpoint_id', 'd.next_attempt_at',
      'e.account_id', 'e.url', 'e.state', 'e.deleted_at', 'e.secret_encrypted', 'e.consecutive_failures')
    .where('d.id', input.deliveryId).first();
  let row = await read();
  if (!row) return { outcome: 'done', status: 'SKIPPED', pauseCheck: false };

  const made = await alreadyMade(db, row, input.attempt);
  if (made) return made;
  if (row.status !== 'PENDING') {
    await db('webhook_deliveries').where({ id: row.id }).whereNotNull('held_since').update({ held_since: null });
    return { outcome: 'done', status: row.status, pauseCheck: false };
  }
  if (row.deleted_at || row.state === 'disabled') {
    const skipped = await db('webhook_deliveries').where({ id: row.id, status: 'PENDING' }).update({ status: 'SKIPPED', completed_at: db.fn.now(), next_attempt_at: null, held_since: null });
    return { outcome: 'done', status: skipped ? 'SKIPPED' : (await currentStatus(db, row.id)), pauseCheck: false };
  }
  if (row.state === 'paused' || !(await webhooksEnabled(db, row.account_id))) {
    // A fresh time each hold, so a wake-up for an older hold can never clear this one (dispatch.ts).
    await db('webhook_deliveries').where({ id: row.id, status: 'PENDING' }).update({ held_since: db.raw('clock_timestamp()') });
    return { outcome: 'held', status: 'PENDING', pauseCheck: false };
  }

  // WR1: the attempt is made only with its claim; the partition dispatcher may be making it right now, or have made it.
  const won = await claimAttempts(db, [{ deliveryId: String(row.id), attempt: input.attempt }], WORKFLOW_CLAIMANT, claimLeaseMs(settings.timeoutMs));
  if (!won.has(String(row.id))) {
    row = await read();
    if (!row) return { outcome: 'done', status: 'SKIPPED', pauseCheck: false };
    const madeMeanwhile = await alreadyMade(db, row, input.attempt);
    if (madeMeanwhile) return madeMeanwhile;
    if (row.status !== 'PENDING') return { outcome: 'done', status: row.status, pauseCheck: false };
    const other = await claimedByOther(db, String(row.id), input.attempt, WORKFLOW_CLAIMANT);
    if (other) return { outcome: 'claimed', status: 'PENDING', pauseCheck: false, retryDelayMs: Math.min(CLAIMED_RECHECK_MS, other.leftMs) };
    // Neither made nor claimed by another: the workflow asks for an attempt number the delivery is not at.
    throw new Error(`attempt ${input.attempt} of delivery ${row.id} cannot be claimed: ${row.attempts} attempts were made`);
  }
  return sendAttempt(db, settings, row, input);
}

/**
 * What an attempt already logged (by an earlier execution of this activity, or by the dispatcher, WR1) left: its
 * result, and with the delivery still pending the time left until its next attempt is due. Sends nothing.
 */
async function alreadyMade(db: Db, row: DeliveryRow, attempt: number): Promise<AttemptResult | null> {
  const logged = await db('webhook_delivery_attempts').where({ delivery_id: row.id, attempt }).first('outcome', 'http_status');
  if (!logged) return null;
  const pending = row.status === 'PENDING';
  return {
    outcome: pending ? 'retry' : 'done', status: row.status, httpStatus: logged.http_status, lastAttempt: row.attempts,
    pauseCheck: logged.outcome !== 'success' && pauseCheckFor(row.state, row.consecutive_failures),
    ...(pending && row.next_attempt_at ? { retryDelayMs: Math.max(0, row.next_attempt_at.getTime() - Date.now()) + DISPATCHER_FIRST_MS } : {}),
  };
}

/** Resolves, verifies, signs and POSTs the attempt, then records it. */
async function sendAttempt(db: Db, settings: WebhookSettings, row: DeliveryRow, input: AttemptInput): Promise<AttemptResult> {
  const attemptedAt = new Date();
  let result: SendResult;
  try {
    const destination = await verifyDestination(row.url, settings, settings.resolve);
    const secret = decryptSecret({ current: settings.secretsKey, previous: settings.previousSecretsKey }, String(row.endpoint_id), row.secret_encrypted);
    const headers = deliveryRequestHeaders({
      eventType: row.event_type, eventId: row.event_id, deliveryId: String(row.id), secret, body: row.body, timestamp: Math.floor(Date.now() / 1000),
    });
    result = await postWebhook({ url: destination.url, hostname: destination.hostname, addresses: destination.addresses, headers, body: row.body, timeoutMs: settings.timeoutMs });
  } catch (error) {
    if (!(error instanceof WebhookAddressError)) throw error;
    // A temporary DNS failure is retried like a connection error; any other address refusal is persistent.
    result = { outcome: error.retryable ? 'connection_error' : 'address_rejected', httpStatus: null, error: error.message, durationMs: Date.now() - attemptedAt.getTime() };
  }
  return recordAttempt(db, row, input, attemptedAt, result);
}

/** The delivery's status now (SKIPPED when the delivery no longer exists). */
export async function currentStatus(db: Db, id: string): Promise<DeliveryStatus> {
  return (await db('webhook_deliveries').where({ id }).first('status'))?.status ?? 'SKIPPED';
}

/** Logs the attempt and moves the delivery and the endpoint's failure count, once per attempt number. */
async function recordAttempt(db: Db, row: DeliveryRow, input: AttemptInput, attemptedAt: Date, result: SendResult): Promise<AttemptResult> {
  const success = result.outcome === 'success';
  const step = nextStep({ outcome: result.outcome, attempt: input.attempt, retryScheduleMs: input.retryScheduleMs, manualRetry: row.manual_retry_at !== null });
  const status: DeliveryStatus = step.status;
  const dueAt = step.status === 'PENDING' ? retryDueAt(attemptedAt, result.durationMs, step.retryDelayMs) : null;
  const outcome = await db.transaction(async (trx) => {
    const inserted = await trx('webhook_delivery_attempts').insert({
      delivery_id: row.id, attempt: input.attempt, outcome: result.outcome, http_status: result.httpStatus, error: result.error,
      attempted_at: attemptedAt, duration_ms: result.durationMs,
    }).onConflict(['delivery_id', 'attempt']).ignore().returning('id');
    if (inserted.length === 0) return null;
    // A delivery skipped while this attempt was under way stays SKIPPED unless the receiver took it (then it was sent).
    const moved = await trx('webhook_deliveries').where({ id: row.id }).where((w) => (success ? w.whereIn('status', ['PENDING', 'SKIPPED']) : w.where('status', 'PENDING'))).update({
      status, attempts: input.attempt, last_attempt_at: attemptedAt, last_http_status: result.httpStatus, held_since: null,
      next_attempt_at: dueAt,
      completed_at: status === 'PENDING' ? null : trx.fn.now(),
    });
    const [endpoint] = await trx('webhook_endpoints').where({ id: row.endpoint_id })
      .update({ consecutive_failures: success ? 0 : trx.raw('consecutive_failures + 1') }).returning(['consecutive_failures', 'state']);
    return { status: moved ? status : await currentStatus(trx, row.id), failures: endpoint.consecutive_failures as number, state: endpoint.state as string };
  });
  if (!outcome) {
    // Another execution logged this attempt first; report the state it left.
    const now = await currentStatus(db, row.id);
    return { outcome: now === 'PENDING' ? 'retry' : 'done', status: now, pauseCheck: false, httpStatus: result.httpStatus };
  }
  countWebhookAttempt(success);
  if (!success) {
    log.info({ deliveryId: row.id, endpointId: row.endpoint_id, eventId: row.event_id, attempt: input.attempt, outcome: result.outcome, httpStatus: result.httpStatus, status: outcome.status }, 'webhook attempt failed');
  }
  return {
    outcome: outcome.status === 'PENDING' ? 'retry' : 'done',
    status: outcome.status,
    pauseCheck: !success && pauseCheckFor(outcome.state, outcome.failures),
    httpStatus: result.httpStatus,
    lastAttempt: input.attempt,
    ...(outcome.status === 'PENDING' && step.status === 'PENDING' ? { retryDelayMs: step.retryDelayMs } : {}),
  };
}
