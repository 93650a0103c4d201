/**
 * The direct delivery path (issue 15, T4): the dispatcher makes every delivery's FIRST attempt itself, without a
 * workflow, and only a delivery whose first attempt fails with retries left is handed to its own
 * `webhook-delivery-<id>` workflow, which owns the retry timers from there (delivery.ts, workflows/webhookDelivery.ts).
 *
 * - Postgres stays the state: a delivery is taken only while it is PENDING with no attempt and no workflow; its attempt
 *   is logged and its state moved in one transaction per batch of finished attempts (unique per delivery and attempt
 *   number, so a batch written twice logs nothing twice). A crash between the POST and that commit leaves the
 *   delivery PENDING, and it is sent again (receivers de-duplicate by `event_id`, SPEC).
 * - Fairness: every endpoint has its own lane of at most `perEndpointConcurrency` requests under way, and the next
 *   deliveries are taken per endpoint, so a receiver that times out or fails holds only its own lane.
 * - The receiver is never flooded: at most `perEndpointConcurrency` requests to one endpoint at a time from a worker.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { logger } from '../logger.js';
import { verifyDestination, WebhookAddressError, type ResolvedAddress } from './addresses.js';
import { postWebhook, type AttemptOutcome, type SendResult } from './http.js';
import { webhooksEnabled } from './plan.js';
import { decryptSecret } from './secrets.js';
import { PAUSE_AFTER_CONSECUTIVE_FAILURES, type WebhookSettings } from './settings.js';
import { deliveryRequestHeaders } from './signature.js';

/** T5: requests under way to one endpoint at a time (per worker process). */
export const DEFAULT_PER_ENDPOINT_CONCURRENCY = 16;
/** Requests under way in one worker process at a time, over all endpoints. */
export const DEFAULT_MAX_IN_FLIGHT = 512;
/**
 * T7: an account's outbox events wait while one of its endpoints has more than this many deliveries waiting for their
 * first attempt and drains them within DRAIN_HORIZON_MS at the rate it is taking them: a burst then stays in the
 * outbox instead of counting as pending deliveries (D14 pauses above 5,000). Other accounts are never held, and a slow
 * endpoint (one that would need longer) holds nobody: its backlog grows and D14 pauses it.
 */
export const DISPATCH_AHEAD = 2_000;
const DRAIN_HORIZON_MS = 60_000;
/** The window over which an endpoint's delivery rate is measured. */
const RATE_WINDOW_MS = 2_000;
/** How long dispatch waits for a busy endpoint's first answers before its rate is known. */
const RATE_UNKNOWN_HOLD_MS = 1_000;

/** Failed first attempts that may wait for their workflow start at once before failing endpoints get no more. */
const HANDOFF_QUEUE_MAX = 64;
/** Workflow starts under way at once (the hand-overs of all lanes together). */
const HANDOFF_CONCURRENCY = 32;

/** How long an entitlement answer is reused (a plan change reaches first attempts within this time). */
const ENTITLEMENT_TTL_MS = 1_000;
/** An endpoint whose deliveries could not even be prepared (e.g. its secret does not decrypt) waits this long. */
const COOL_DOWN_MS = 5_000;

const log = logger.child({ component: 'webhooks' });

/**
 * Deliveries taken by a sender of this process and not yet recorded (or handed over). Process-wide, so two dispatcher
 * runs that overlap in one worker (a timed-out run still finishing) never send the same delivery twice.
 */
const claimed = new Set<string>();

/** Delivery ids this process is working on (the dispatcher leaves them out of its own workflow starts). */
export function claimedDeliveries(): ReadonlySet<string> {
  return claimed;
}

/** A delivery whose first attempt failed with retries left: its workflow continues at `firstRetryAt`. */
export interface RetryHandOff {
  deliveryId: string;
  endpointId: string;
  firstAttempt: number;
  firstRetryAt: number;
}

export interface DirectSenderOptions {
  perEndpointConcurrency?: number;
  maxInFlight?: number;
  /** Starts the retry workflows of these deliveries; resolves with the ids actually started. */
  handOff(deliveries: RetryHandOff[]): Promise<string[]>;
  /** Asks the endpoint's actor to check its pause limits (D14). */
  checkEndpoint(endpointId: string): Promise<void>;
  /** Called when a batch was recorded: slots are free again. */
  onProgress?: () => void;
}

interface Taken {
  consecutive_failures: number;
  id: string;
  endpoint_id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  body: string;
  url: string;
  secret_encrypted: Buffer;
}

interface Finished {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  attemptedAt: Date;
  result: SendResult;
}

const persistent: AttemptOutcome[] = ['redirect', 'address_rejected'];

/** Bindings of which some are arrays: each array is one Postgres array parameter (`?::bigint[]`, used with unnest). */
function arrays(...values: unknown[]): Knex.RawBinding[] {
  return values as Knex.RawBinding[];
}

/** The first-attempt sender of one dispatcher run. */
export class DirectSender {
  private readonly perEndpoint: number;
  private readonly maxInFlight: number;
  /** Per endpoint: deliveries taken and not yet recorded and handed over. */
  private readonly busy = new Map<string, number>();
  private readonly coolUntil = new Map<string, number>();
  private readonly entitled = new Map<string, { ok: boolean; at: number }>();
  private inFlight = 0;
  /** Failed first attempts waiting for their workflow to start. */
  private handingOff = 0;
  private finished: Finished[] = [];
  private flushing: Promise<void> | null = null;
  private flushFailures = 0;
  private readonly sends = new Set<Promise<void>>();
  private readonly handOffs = new Set<Promise<void>>();
  private readonly asking = new Set<string>();
  private starting = 0;
  private readonly startWaiters: Array<() => void> = [];
  /** Per endpoint: since when its lane has been busy without a break. */
  private readonly laneStarted = new Map<string, number>();
  /** Per endpoint: when its recent attempts were recorded (for its delivery rate). */
  private readonly recorded = new Map<string, number[]>();
  /** Totals for the dispatcher's heartbeat and log. */
  readonly totals = { sent: 0, failed: 0, retrying: 0 };

  constructor(private readonly db: Db, private readonly settings: WebhookSettings, private readonly options: DirectSenderOptions) {
    this.perEndpoint = options.perEndpointConcurrency ?? DEFAULT_PER_ENDPOINT_CONCURRENCY;
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  }

  /** Requests under way or waiting to be recorded. */
  get active(): number {
    return this.inFlight;
  }

  /**
   * Takes the next deliveries waiting for their first attempt — per endpoint as many as its lane has room for, oldest
   * first — and starts sending them. Returns how many it started.
   */
  async fill(): Promise<number> {
    const room = this.maxInFlight - this.inFlight;
    if (room <= 0) return 0;
    const now = Date.now();
    const full = [...this.busy].filter(([, n]) => n >= this.perEndpoint).map(([id]) => id);
    for (const [id, until] of this.coolUntil) if (until > now) full.push(id); else this.coolUntil.delete(id);
    const result = await this.db.raw<{ rows: Taken[] }>(`
      select d.id, d.endpoint_id, e.account_id, d.event_id, d.event_type, d.body, e.url, e.secret_encrypted, e.consecutive_failures
      from webhook_endpoints e
      cross join lateral (
        select d.id, d.endpoint_id, d.event_id, d.event_type, d.body from webhook_deliveries d
        where d.endpoint_id = e.id and d.status = 'PENDING' and d.attempts = 0 and d.workflow_started_at is null
          and d.held_since is null and d.manual_retry_at is null and not (d.id = any(?::bigint[]))
        order by d.id limit ?
      ) d
      where e.state = 'enabled' and e.deleted_at is null and not (e.id = any(?::bigint[]))`,
    arrays([...claimed], this.perEndpoint, full));
    if (result.rows.length === 0) return 0;

    // Per endpoint what its lane has room for, then round-robin over endpoints within the process-wide room.
    const byEndpoint = new Map<string, Taken[]>();
    for (const row of result.rows) {
      // Taken meanwhile by an overlapping run in this process.
      if (claimed.has(String(row.id))) continue;
      const id = String(row.endpoint_id);
      const list = byEndpoint.get(id) ?? [];
      if (list.length < this.perEndpoint - (this.busy.get(id) ?? 0)) list.push(row);
      byEndpoint.set(id, list);
    }
    const accounts = [...new Set(result.rows.map((r) => String(r.account_id)))];
    const allowed = new Set<string>();
    for (const account of accounts) if (await this.isEntitled(account, now)) allowed.add(account);
    // While many failed first attempts wait for their workflows, endpoints that are failing wait too: their next
    // attempts would most likely fail and queue behind them, and their retry timers would start late (T5).
    const throttleFailing = this.handingOff >= HANDOFF_QUEUE_MAX;
    const lanes = [...byEndpoint.values()].filter((list) => list.length > 0 && allowed.has(String(list[0].account_id))
      && !(throttleFailing && list[0].consecutive_failures > 0));
    const picked: Taken[][] = lanes.map(() => []);
    let left = room;
    for (let i = 0; left > 0; i++) {
      let any = false;
      lanes.forEach((list, lane) => {
        if (left > 0 && i < list.length) {
          picked[lane].push(list[i]);
          left--;
          any = true;
        }
      });
      if (!any) break;
    }
    let started = 0;
    for (const batch of picked) {
      if (batch.length === 0) continue;
      for (const row of batch) {
        claimed.add(String(row.id));
        const lane = String(row.endpoint_id);
        if (!this.busy.get(lane)) this.laneStarted.set(lane, Date.now());
        this.busy.set(lane, (this.busy.get(lane) ?? 0) + 1);
        this.inFlight++;
      }
      started += batch.length;
      this.track(this.sendLane(batch));
    }
    return started;
  }

  /** Attempts per second recorded for the endpoint over the last RATE_WINDOW_MS. */
  rateOf(endpointId: string, now = Date.now()): number {
    const times = (this.recorded.get(endpointId) ?? []).filter((at) => now - at < RATE_WINDOW_MS);
    this.recorded.set(endpointId, times);
    if (times.length === 0) return 0;
    // Over the time the window actually covers, so a burst's first quarter second already shows its rate.
    return times.length / (Math.max(250, now - times[0]) / 1000);
  }

  /**
   * The accounts whose outbox events wait (T7): those with an endpoint that has more than DISPATCH_AHEAD deliveries
   * waiting for their first attempt and is taking them fast enough to be through them within DRAIN_HORIZON_MS.
   */
  async accountsToHold(): Promise<string[]> {
    const backlog = await this.db('webhook_deliveries').select('endpoint_id', 'account_id').count<{ endpoint_id: string; account_id: string; count: string }[]>('* as count')
      .where({ status: 'PENDING', attempts: 0 }).whereNull('workflow_started_at').whereNull('held_since').whereNull('manual_retry_at')
      .groupBy('endpoint_id', 'account_id').havingRaw('count(*) > ?', [DISPATCH_AHEAD]);
    const now = Date.now();
    return [...new Set(backlog.filter((row) => {
      const id = String(row.endpoint_id);
      const rate = this.rateOf(id, now);
      // Before an endpoint's first answers there is no rate yet: wait for it, but only briefly (it may never answer).
      if (rate === 0) return (this.busy.get(id) ?? 0) > 0 && now - (this.laneStarted.get(id) ?? 0) < RATE_UNKNOWN_HOLD_MS;
      return rate * (DRAIN_HORIZON_MS / 1000) >= Number(row.count);
    }).map((row) => String(row.account_id)))];
  }

  private async isEntitled(accountId: string, now: number): Promise<boolean> {
    const cached = this.entitled.get(accountId);
    if (cached && now - cached.at < ENTITLEMENT_TTL_MS) return cached.ok;
    const ok = await webhooksEnabled(this.db, accountId);
    this.entitled.set(accountId, { ok, at: now });
    return ok;
  }

  private track(work: Promise<void>): void {
    this.sends.add(work);
    void work.finally(() => this.sends.delete(work));
  }

  /** Sends one endpoint's deliveries of this round: the address is resolved and verified once for the round. */
  private async sendLane(batch: Taken[]): Promise<void> {
    const endpointId = String(batch[0].endpoint_id);
    let destination: { url: URL; hostname: string; addresses: ResolvedAddress[] } | null = null;
    let refusal: SendResult | null = null;
    let secret = '';
    const attemptedAt = new Date();
    try {
      destination = await verifyDestination(batch[0].url, this.settings, this.settings.resolve);
      secret = decryptSecret({ current: this.settings.secretsKey, previous: this.settings.previousSecretsKey }, endpointId, batch[0].secret_encrypted);
    } catch (error) {
      if (!(error instanceof WebhookAddressError)) {
        // Not the receiver's fault and not an attempt: leave the deliveries pending and look again later.
        log.error({ err: error, endpointId }, 'webhook deliveries could not be prepared; trying again later');
        this.coolUntil.set(endpointId, Date.now() + COOL_DOWN_MS);
        this.inFlight -= batch.length;
        this.release(batch.map((row) => ({ deliveryId: String(row.id), endpointId })), { slot: true });
        return;
      }
      // A temporary DNS failure is retried like a connection error; any other address refusal is persistent.
      refusal = { outcome: error.retryable ? 'connection_error' : 'address_rejected', httpStatus: null, error: error.message, durationMs: Date.now() - attemptedAt.getTime() };
    }
    await Promise.all(batch.map(async (row) => {
      const started = new Date();
      let result: SendResult;
      if (refusal || !destination) {
        result = refusal!;
      } else {
        const headers = deliveryRequestHeaders({
          eventType: row.event_type, eventId: row.event_id, deliveryId: String(row.id), secret, body: row.body, timestamp: Math.floor(Date.now() / 1000),
        });
        result = await postWebhook({ url: destination.url, hostname: destination.hostname, addresses: destination.addresses, headers, body: row.body, timeoutMs: this.settings.timeoutMs });
      }
      this.finished.push({ deliveryId: String(row.id), endpointId, eventId: row.event_id, attemptedAt: started, result });
      // A 2xx frees its slot at once (the receiver is done with it); a failure keeps it until its hand-over.
      if (result.outcome === 'success') this.freeSlot(endpointId);
      this.scheduleFlush();
    }));
  }

  /**
   * One request of the endpoint's lane is over. The dispatcher is woken when half the lane is free (or all of it), so
   * a lane is refilled in groups rather than with a query per finished request.
   */
  private freeSlot(endpointId: string): void {
    const left = (this.busy.get(endpointId) ?? 1) - 1;
    if (left > 0) this.busy.set(endpointId, left); else this.busy.delete(endpointId);
    if (left === 0 || left === Math.floor(this.perEndpoint / 2)) this.options.onProgress?.();
  }

  /** Deliveries that leave this sender: their claim ends, and with `slot` their lane slot too. */
  private release(items: { deliveryId: string; endpointId: string }[], opts: { slot: boolean }): void {
    for (const item of items) {
      claimed.delete(item.deliveryId);
      if (opts.slot) this.freeSlot(item.endpointId);
    }
    this.options.onProgress?.();
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      try {
        while (this.finished.length > 0) {
          const batch = this.finished;
          this.finished = [];
          try {
            await this.record(batch);
            this.flushFailures = 0;
          } catch (error) {
            // Postgres unreachable or a lock conflict: keep the results and write them again shortly.
            this.finished = batch.concat(this.finished);
            this.flushFailures++;
            log.warn({ err: error, deliveries: batch.length }, 'recording webhook attempts failed; retrying');
            await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** this.flushFailures, 2_000)));
          }
        }
      } finally {
        this.flushing = null;
      }
    })();
  }

  /** Logs a batch of first attempts and moves their deliveries and endpoints, in one transaction. */
  private async record(batch: Finished[]): Promise<void> {
    const retryDelayMs = this.settings.retryScheduleMs[0] ?? null;
    const rows = batch.map((f) => {
      const success = f.result.outcome === 'success';
      const status = success ? 'SENT' : persistent.includes(f.result.outcome) || retryDelayMs === null ? 'FAILED' : 'PENDING';
      // The retry is due its delay after the failed attempt ended, as the workflow's own timer starts after an attempt.
      return { ...f, success, status, nextAt: status === 'PENDING' ? new Date(f.attemptedAt.getTime() + f.result.durationMs + retryDelayMs!) : null };
    }).sort((a, b) => Number(a.deliveryId) - Number(b.deliveryId));

    const outcome = await this.db.transaction(async (trx) => {
      const inserted = await trx.raw<{ rows: { delivery_id: string }[] }>(`
        insert into webhook_delivery_attempts (delivery_id, attempt, outcome, http_status, error, attempted_at, duration_ms)
        select v.delivery_id, 1, v.outcome, v.http_status, v.error, v.attempted_at, v.duration_ms
        from unnest(?::bigint[], ?::text[], ?::int[], ?::text[], ?::timestamptz[], ?::int[]) as v(delivery_id, outcome, http_status, error, attempted_at, duration_ms)
        on conflict (delivery_id, attempt) do nothing returning delivery_id`,
      arrays(rows.map((r) => r.deliveryId), rows.map((r) => r.result.outcome), rows.map((r) => r.result.httpStatus), rows.map((r) => r.result.error),
        rows.map((r) => r.attemptedAt), rows.map((r) => r.result.durationMs)));
      const logged = new Set(inserted.rows.map((r) => String(r.delivery_id)));
      const mine = rows.filter((r) => logged.has(r.deliveryId));
      if (mine.length === 0) return { mine, moved: new Map<string, string>(), endpoints: [] as { id: string; consecutive_failures: number; state: string }[] };
      // A delivery skipped while its attempt was under way stays SKIPPED unless the receiver took it (then it was sent).
      const moved = await trx.raw<{ rows: { id: string; status: string }[] }>(`
        update webhook_deliveries d set status = v.status, attempts = 1, last_attempt_at = v.attempted_at, last_http_status = v.http_status,
          held_since = null, next_attempt_at = v.next_at, completed_at = case when v.status = 'PENDING' then null else now() end
        from unnest(?::bigint[], ?::text[], ?::int[], ?::timestamptz[], ?::timestamptz[]) as v(id, status, http_status, attempted_at, next_at)
        where d.id = v.id and (d.status = 'PENDING' or (v.status = 'SENT' and d.status = 'SKIPPED'))
        returning d.id, d.status`,
      arrays(mine.map((r) => r.deliveryId), mine.map((r) => r.status), mine.map((r) => r.result.httpStatus), mine.map((r) => r.attemptedAt), mine.map((r) => r.nextAt)));
      // D14 counts consecutive failed attempts: in the order they finished, a success resets the count.
      const counts = new Map<string, { reset: boolean; n: number }>();
      for (const f of batch) {
        if (!logged.has(f.deliveryId)) continue;
        const c = counts.get(f.endpointId) ?? { reset: false, n: 0 };
        if (f.result.outcome === 'success') counts.set(f.endpointId, { reset: true, n: 0 });
        else counts.set(f.endpointId, { reset: c.reset, n: c.n + 1 });
      }
      const ids = [...counts.keys()].sort((a, b) => Number(a) - Number(b));
      const endpoints = await trx.raw<{ rows: { id: string; consecutive_failures: number; state: string }[] }>(`
        update webhook_endpoints e set consecutive_failures = case when v.reset then v.n else e.consecutive_failures + v.n end
        from unnest(?::bigint[], ?::boolean[], ?::int[]) as v(id, reset, n) where e.id = v.id
        returning e.id, e.consecutive_failures, e.state`,
      arrays(ids, ids.map((id) => counts.get(id)!.reset), ids.map((id) => counts.get(id)!.n)));
      return { mine, moved: new Map(moved.rows.map((r) => [String(r.id), r.status])), endpoints: endpoints.rows };
    });

    const retries: RetryHandOff[] = [];
    const now = Date.now();
    for (const r of outcome.mine) {
      const times = this.recorded.get(r.endpointId) ?? [];
      times.push(now);
      this.recorded.set(r.endpointId, times);
      const status = outcome.moved.get(r.deliveryId);
      if (status === 'SENT') this.totals.sent++;
      if (r.success) continue;
      log.info({ deliveryId: r.deliveryId, endpointId: r.endpointId, eventId: r.eventId, attempt: 1, outcome: r.result.outcome, httpStatus: r.result.httpStatus, status: status ?? 'SKIPPED' }, 'webhook attempt failed');
      if (status === 'PENDING') retries.push({ deliveryId: r.deliveryId, endpointId: r.endpointId, firstAttempt: 1, firstRetryAt: r.nextAt!.getTime() });
      else this.totals.failed++;
    }
    for (const endpoint of outcome.endpoints) {
      if (endpoint.state === 'enabled' && endpoint.consecutive_failures >= PAUSE_AFTER_CONSECUTIVE_FAILURES) this.askActor(String(endpoint.id));
    }
    // Recorded: everything but the retries leaves its lane now; a retry holds its slot until its workflow runs, so a
    // failing endpoint's lane goes only as fast as its hand-overs (and its retry timers start on time).
    this.inFlight -= batch.length;
    const handedOver = new Set(retries.map((r) => r.deliveryId));
    const done = batch.filter((f) => !handedOver.has(f.deliveryId));
    this.release(done.filter((f) => f.result.outcome === 'success').map((f) => ({ deliveryId: f.deliveryId, endpointId: f.endpointId })), { slot: false });
    this.release(done.filter((f) => f.result.outcome !== 'success').map((f) => ({ deliveryId: f.deliveryId, endpointId: f.endpointId })), { slot: true });
    if (retries.length > 0) {
      this.totals.retrying += retries.length;
      this.handingOff += retries.length;
      const work = this.handOver(retries);
      this.handOffs.add(work);
      void work.finally(() => this.handOffs.delete(work));
    }
  }

  /** Signals the endpoint's actor without holding up the recording of other endpoints' attempts (one signal at a time). */
  private askActor(endpointId: string): void {
    if (this.asking.has(endpointId)) return;
    this.asking.add(endpointId);
    const work = this.options.checkEndpoint(endpointId)
      .catch((error) => log.warn({ err: error, endpointId }, 'could not reach the endpoint actor; the next failure asks again'))
      .finally(() => this.asking.delete(endpointId));
    this.handOffs.add(work);
    void work.finally(() => this.handOffs.delete(work));
  }

  /** Runs `fn` when one of HANDOFF_CONCURRENCY start slots is free. */
  private async withStartSlot<T>(fn: () => Promise<T>): Promise<T> {
    while (this.starting >= HANDOFF_CONCURRENCY) await new Promise<void>((resolve) => this.startWaiters.push(resolve));
    this.starting++;
    try {
      return await fn();
    } finally {
      this.starting--;
      this.startWaiters.shift()?.();
    }
  }

  private async handOver(retries: RetryHandOff[]): Promise<void> {
    try {
      const outcomes = await Promise.allSettled(retries.map((retry) => this.withStartSlot(() => this.options.handOff([retry]))));
      const started = outcomes.flatMap((o) => (o.status === 'fulfilled' ? o.value : []));
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) log.warn({ err: failed.reason, deliveries: retries.length - started.length }, 'some failed first attempts could not be handed to their workflows; the dispatcher retries');
      if (started.length > 0) await this.db('webhook_deliveries').whereIn('id', started).whereNull('workflow_started_at').update({ workflow_started_at: this.db.fn.now() });
    } catch (error) {
      // Temporal or Postgres unreachable: the dispatcher starts these workflows later (startPendingDeliveries).
      log.warn({ err: error, deliveries: retries.length }, 'handing failed first attempts to their workflows failed; the dispatcher retries');
    } finally {
      this.handingOff -= retries.length;
      this.release(retries, { slot: true });
    }
  }

  /** Waits for every request under way, records them (as long as Postgres lets it) and their hand-overs. */
  async drain(timeoutMs = 15_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while ((this.sends.size > 0 || this.flushing || this.handOffs.size > 0) && Date.now() < until) {
      await Promise.race([Promise.allSettled([...this.sends, ...this.handOffs, this.flushing ?? Promise.resolve()]), new Promise((r) => setTimeout(r, 200))]);
    }
    // Whatever could not be recorded is given up: those deliveries are still PENDING and are sent again later.
    for (const f of this.finished) claimed.delete(f.deliveryId);
    this.finished = [];
  }
}
