/**
 * The direct delivery path (issue 15, T4, T10, W3, WR1): the dispatcher's sender makes the first attempt of every
 * delivery as soon as it exists, without a workflow — the common case (a 2xx) costs no workflow. A delivery whose
 * first attempt fails stays PENDING with `next_attempt_at` (the engine's delay after that attempt ended) and is handed
 * to its own `webhook-delivery-<id>` workflow by the dispatcher's upkeep (dispatch.ts), which keeps the schedule with
 * durable timers; the sender still makes each retry when it falls due, under its claim in Postgres (claims.ts), and
 * the workflow records it, or makes it itself when no sender did (WR1). Manual retries (D15) and deliveries held by a
 * pause on the workflow path are their workflows' alone.
 *
 * - Postgres stays the state: a delivery is taken only while it is PENDING with no workflow and no attempt yet, and
 *   no other sender of this process holds it; its attempt is logged and its state moved in one transaction per batch
 *   of finished attempts (unique per delivery and attempt number, so a batch written twice logs nothing twice). A crash
 *   between the POST and that commit leaves the delivery PENDING, and it is sent again (receivers de-duplicate by
 *   `event_id`, SPEC).
 * - What an outcome means (SENT, FAILED at once for 3xx and refused addresses, PENDING with its retry time) is the
 *   engine's (engine.ts), as for the workflow's attempts.
 * - Fairness: every endpoint has its own lane of at most `perEndpointConcurrency` requests under way in this process
 *   (counted process-wide, so two dispatcher runs that overlap share it), and the next deliveries are taken per
 *   endpoint, so a receiver that times out or fails holds only its own lane. While an endpoint's latest attempt failed
 *   its lane narrows to FAILING_LANE, and failing endpoints together hold at most a quarter of the process (T21);
 *   requests stuck at a receiver for over a second stop counting against the process's bound, and their endpoint counts
 *   as failing until they end (T22).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { logger } from '../logger.js';
import { countWebhookAttempt } from '../logSummary.js';
import { verifyDestination, WebhookAddressError, type ResolvedAddress } from './addresses.js';
import { postWebhook, type SendResult } from './http.js';
import { webhooksEnabled } from './plan.js';
import { decryptSecret } from './secrets.js';
import { failureNeedsPauseCheck, nextStep, retryDueAt } from './engine.js';
import { partitionClause, workerName, type Partition } from './partitions.js';
import { claimAttempts, claimLeaseMs, releaseClaims, UNCLAIMED } from './claims.js';
import { RECEIVER_TIMEOUT_MS, type WebhookSettings } from './settings.js';
import { deliveryRequestHeaders } from './signature.js';

/** T5: requests under way to one endpoint at a time (per worker process). */
export const DEFAULT_PER_ENDPOINT_CONCURRENCY = 16;
/** Requests under way in one worker process at a time, over all endpoints. */
export const DEFAULT_MAX_IN_FLIGHT = 512;
/**
 * T21: the lane of an endpoint whose latest attempt failed (an error status, a time-out, a refused connection): it
 * probes with this many requests at once until one succeeds, and all failing endpoints together hold at most
 * FAILING_SHARE of the process's requests, so however many receivers hang, healthy ones keep the rest.
 */
export const FAILING_LANE = 2;
const FAILING_SHARE = 0.25;
/**
 * T22: a request under way longer than this no longer counts against DEFAULT_MAX_IN_FLIGHT (it is an idle socket
 * waiting for a receiver that may never answer), so receivers that all hang at once cannot take every slot of a
 * process from healthy ones for a whole time-out. Requests open in all stay below DEFAULT_MAX_OPEN.
 */
export const DEFAULT_STUCK_AFTER_MS = 1_000;
export const DEFAULT_MAX_OPEN = 4 * DEFAULT_MAX_IN_FLIGHT;
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
/**
 * How long dispatch waits for a busy endpoint's first answers before its rate is known (WS4): no answer takes longer
 * than the receiver time-out, so an endpoint without one by then is slow or dead and holds nobody.
 */
const RATE_UNKNOWN_HOLD_MS = RECEIVER_TIMEOUT_MS;

/** How long an entitlement answer is reused (a plan change reaches first attempts within this time). */
const ENTITLEMENT_TTL_MS = 1_000;
/** How long a looked-up next retry time is trusted (other processes' retries reach it within this time). */
const DUE_LOOKUP_MS = 1_000;
/** An endpoint whose deliveries could not even be prepared (e.g. its secret does not decrypt) waits this long. */
const COOL_DOWN_MS = 5_000;

const log = logger.child({ component: 'webhooks' });

/**
 * Deliveries taken by a sender of this process and not yet recorded. Process-wide, so two dispatcher runs that overlap
 * in one worker (a timed-out run still finishing) never send the same delivery twice.
 */
const claimed = new Set<string>();
/**
 * Per endpoint, requests under way from this process, over all senders: the bound of T5 holds even while a dispatcher
 * run that Temporal gave up on (a missed heartbeat on a loaded machine) still finishes beside its successor.
 */
const lanes = new Map<string, number>();
/** Requests taken and not yet recorded in this process, over all senders. */
let processInFlight = 0;
/**
 * Per endpoint, whether its latest finished attempt in this process failed (true) or succeeded (false); an endpoint
 * this process has not heard back from yet is judged by its `consecutive_failures` in Postgres.
 */
const failing = new Map<string, boolean>();
/** Per endpoint, requests under way that were taken while it was failing (they count against FAILING_SHARE). */
const failingLanes = new Map<string, number>();
let failingInFlight = 0;
/** Requests whose HTTP exchange is under way in this process: delivery id → when it was taken and for which endpoint (oldest first). */
const underWaySince = new Map<string, { since: number; endpointId: string }>();
/**
 * Endpoints with a request stuck at the receiver, as of the latest look-up (T22). They count as failing (T21): the room
 * their stuck requests free is for other endpoints, not for more requests to a receiver that does not answer.
 */
let stuckEndpoints = new Set<string>();

/** The requests under way longer than `stuckAfterMs` and their endpoints (the map is in the order they were taken). */
function stuckRequests(now: number, stuckAfterMs: number): { count: number; endpoints: Set<string> } {
  let count = 0;
  const endpoints = new Set<string>();
  for (const { since, endpointId } of underWaySince.values()) {
    if (now - since < stuckAfterMs) break;
    count++;
    endpoints.add(endpointId);
  }
  return { count, endpoints };
}

/**
 * Senders that ran out of the process's room (WS8), longest waiting first: a batch recorded by any sender of the process
 * gives room back and wakes the first; a fill that leaves room wakes the next (one at a time: waking all of them for
 * the few slots one batch gives back only made each look at the outbox of its partition and find no room).
 */
const waitingForRoom = new Set<() => void>();

function wakeNextForRoom(): void {
  const [first] = waitingForRoom;
  if (!first) return;
  waitingForRoom.delete(first);
  first();
}

/** Delivery ids this process is working on (the dispatcher leaves them out of its own workflow starts). */
export function claimedDeliveries(): ReadonlySet<string> {
  return claimed;
}

/**
 * Whether the endpoint gets only FAILING_LANE requests at once: a request of it is stuck (T22), or its latest attempt
 * (here, or else in Postgres) failed.
 */
function isFailing(endpointId: string, consecutiveFailures: number): boolean {
  return stuckEndpoints.has(endpointId) || (failing.get(endpointId) ?? consecutiveFailures > 0);
}

/** Requests under way to the endpoint from this process now (for tests and the heartbeat). */
export function requestsUnderWay(endpointId: string): number {
  return lanes.get(endpointId) ?? 0;
}

export interface DirectSenderOptions {
  perEndpointConcurrency?: number;
  maxInFlight?: number;
  /** Asks the endpoint's actor to check its pause limits (D14). */
  checkEndpoint(endpointId: string): Promise<void>;
  /** Called when slots are free again or a batch was recorded. */
  onProgress?: () => void;
  /** The sender's clock (attempt times, entitlement caching; tests move it on); default Date.now. */
  now?: () => number;
  /** T22: after how long a request under way stops counting against `maxInFlight`, and the bound on all open ones. */
  stuckAfterMs?: number;
  maxOpen?: number;
  /** WS1: only the endpoints of this partition (none: all endpoints). */
  partition?: Partition;
}

interface Taken {
  consecutive_failures: number;
  id: string;
  endpoint_id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number;
  url: string;
  secret_encrypted: Buffer;
}

interface Finished {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  attempt: number;
  attemptedAt: Date;
  result: SendResult;
}

/** Bindings of which some are arrays: each array is one Postgres array parameter (`?::bigint[]`, used with unnest). */
function arrays(...values: unknown[]): Knex.RawBinding[] {
  return values as Knex.RawBinding[];
}

/**
 * Deliveries the sender owns: pending, no workflow, not held by the workflow path, not a manual retry. The same
 * predicate as the partial indexes of migrations 013 and 019, so both look-ups below use them.
 */
const OWNED = `d.status = 'PENDING' and d.workflow_started_at is null and d.held_since is null and d.manual_retry_at is null`;
/**
 * WR1: retries the sender makes when due, whether or not the delivery's workflow runs yet (the workflow keeps the
 * schedule and makes the attempt itself when no dispatcher did): pending after a failed attempt, not held, not a manual
 * retry. The predicate of migration 099's index `webhook_deliveries_due_retry`.
 */
const DUE_RETRY = `d.status = 'PENDING' and d.attempts > 0 and d.held_since is null and d.manual_retry_at is null`;

interface AttemptRow extends Finished {
  status: 'SENT' | 'FAILED' | 'PENDING';
  nextAt: Date | null;
  success: boolean;
}

interface Recorded {
  /** Deliveries whose attempt was logged now (not before). */
  logged: Set<string>;
  /** Deliveries moved, with their new status (a delivery SKIPPED meanwhile and not taken by the receiver is absent). */
  moved: Map<string, string>;
  endpoints: Map<string, { consecutive_failures: number; state: string }>;
}

/** Per pool: batches waiting for the statement under way to end; they go together in the next one. */
const recorders = new Map<Db, { waiting: { rows: AttemptRow[]; resolve: (r: Recorded) => void; reject: (e: unknown) => void }[]; running: boolean }>();

/**
 * WS8: records finished attempts of every sender of the process, one statement at a time per pool: batches finished
 * while one is written go together in the next (group commit), so partitions served by one process share round trips
 * and commits. A failed statement fails every batch in it; each sender keeps its results and writes them again.
 */
function recordAttempts(db: Db, rows: AttemptRow[]): Promise<Recorded> {
  let recorder = recorders.get(db);
  if (!recorder) {
    recorder = { waiting: [], running: false };
    recorders.set(db, recorder);
  }
  const r = recorder;
  const done = new Promise<Recorded>((resolve, reject) => r.waiting.push({ rows, resolve, reject }));
  if (!r.running) {
    r.running = true;
    void (async () => {
      while (r.waiting.length > 0) {
        const group = r.waiting.splice(0);
        try {
          const recorded = await recordStatement(db, group.flatMap((g) => g.rows));
          for (const g of group) g.resolve(recorded);
        } catch (error) {
          for (const g of group) g.reject(error);
        }
      }
      r.running = false;
      recorders.delete(db);
    })();
  }
  return done;
}

/**
 * Logs attempts and moves their deliveries and endpoints in one statement (one round trip, one commit; its parts commit
 * together). Only attempts logged now (unique per delivery and attempt) move anything: a batch written twice changes
 * nothing twice. `rows` are in the order the attempts finished: D14's count follows it.
 */
async function recordStatement(db: Db, finished: AttemptRow[]): Promise<Recorded> {
  const rows = finished.map((f, seq) => ({ ...f, seq })).sort((a, b) => Number(a.deliveryId) - Number(b.deliveryId));
  const result = await db.raw<{ rows: { kind: 'logged' | 'moved' | 'endpoint'; id: string; status: string | null; failures: number | null }[] }>(`

      with v as (
        select * from unnest(?::bigint[], ?::int[], ?::text[], ?::int[], ?::text[], ?::timestamptz[], ?::int[], ?::text[], ?::timestamptz[], ?::bigint[], ?::int[])
          as v(delivery_id, attempt, outcome, http_status, error, attempted_at, duration_ms, status, next_at, endpoint_id, seq)
      ), logged as (
        insert into webhook_delivery_attempts (delivery_id, attempt, outcome, http_status, error, attempted_at, duration_ms)
        select delivery_id, attempt, outcome, http_status, error, attempted_at, duration_ms from v order by delivery_id
        on conflict (delivery_id, attempt) do nothing returning delivery_id, attempt
      ), mine as (
        select v.* from v join logged l on l.delivery_id = v.delivery_id and l.attempt = v.attempt
      ), moved as (
        -- A delivery skipped while its attempt was under way stays SKIPPED unless the receiver took it (then it was sent).
        update webhook_deliveries d set status = v.status, attempts = v.attempt, last_attempt_at = v.attempted_at, last_http_status = v.http_status,
          held_since = null, next_attempt_at = v.next_at, completed_at = case when v.status = 'PENDING' then null else now() end
        from mine v
        where d.id = v.delivery_id and d.attempts < v.attempt and (d.status = 'PENDING' or (v.status = 'SENT' and d.status = 'SKIPPED'))
        returning d.id, d.status
      ), counts as (
        -- D14 counts consecutive failed attempts: in the order they finished, a success resets the count.
        select m.endpoint_id, bool_or(m.outcome = 'success') as reset,
          count(*) filter (where m.outcome <> 'success' and m.seq > coalesce(s.last_success, -1))::int as n
        from mine m left join (select endpoint_id, max(seq) as last_success from mine where outcome = 'success' group by endpoint_id) s on s.endpoint_id = m.endpoint_id
        group by m.endpoint_id
      ), endpoints as (
        update webhook_endpoints e set consecutive_failures = case when c.reset then c.n else e.consecutive_failures + c.n end
        from counts c where e.id = c.endpoint_id
        returning e.id, e.consecutive_failures, e.state
      )
      select 'logged' as kind, delivery_id as id, null::text as status, null::int as failures from logged
      union all select 'moved', id, status, null from moved
      union all select 'endpoint', id, state, consecutive_failures from endpoints`,
  arrays(rows.map((r) => r.deliveryId), rows.map((r) => r.attempt), rows.map((r) => r.result.outcome), rows.map((r) => r.result.httpStatus), rows.map((r) => r.result.error),
    rows.map((r) => r.attemptedAt), rows.map((r) => r.result.durationMs), rows.map((r) => r.status), rows.map((r) => r.nextAt), rows.map((r) => r.endpointId), rows.map((r) => r.seq)));
  const recorded: Recorded = { logged: new Set(), moved: new Map(), endpoints: new Map() };
  for (const r of result.rows) {
    if (r.kind === 'logged') recorded.logged.add(String(r.id));
    else if (r.kind === 'moved') recorded.moved.set(String(r.id), r.status!);
    else recorded.endpoints.set(String(r.id), { consecutive_failures: Number(r.failures), state: r.status! });
  }
  return recorded;
}

/** The sender of one dispatcher run: first attempts and due retries of enabled endpoints (WR1). */
export class DirectSender {
  private readonly perEndpoint: number;
  private readonly maxInFlight: number;
  private readonly stuckAfterMs: number;
  private readonly maxOpen: number;
  private readonly now: () => number;
  /** This run's share of the lanes, so a drained run gives back exactly what it took. */
  private readonly mine = new Map<string, number>();
  private readonly coolUntil = new Map<string, number>();
  private readonly entitled = new Map<string, { ok: boolean; at: number }>();
  private inFlight = 0;
  private finished: Finished[] = [];
  private flushing: Promise<void> | null = null;
  private flushFailures = 0;
  private readonly sends = new Set<Promise<void>>();
  private readonly signals = new Set<Promise<void>>();
  private readonly asking = new Set<string>();
  /** Totals for the dispatcher's heartbeat and log. */
  readonly totals = { sent: 0, failed: 0, retrying: 0 };
  /** Set when the run drained: nothing more is recorded through its connections. */
  private closed = false;
  /**
   * WS8: while a fill runs, the endpoints it left out because their lanes were full (their freed slots must wake the
   * dispatcher); null between fills. `suppressed`: a wake-up was left out meanwhile; `leftover`: the fill read
   * deliveries it did not take.
   */
  private filling: Set<string> | null = null;
  private suppressed = false;
  private leftover = false;
  /** Whether the latest fill lost claims of due retries to their workflows (room it meant for them is left). */
  lostClaims = false;
  /** The next retry's due time as last looked up (and moved earlier by retries recorded since). */
  private due: { at: number | null; lookedUpAt: number } | null = null;

  constructor(private readonly db: Db, private readonly settings: WebhookSettings, private readonly options: DirectSenderOptions) {
    this.perEndpoint = options.perEndpointConcurrency ?? DEFAULT_PER_ENDPOINT_CONCURRENCY;
    this.maxInFlight = options.maxInFlight ?? settings.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.stuckAfterMs = options.stuckAfterMs ?? settings.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
    this.maxOpen = options.maxOpen ?? Math.max(this.maxInFlight, DEFAULT_MAX_OPEN);
    this.now = options.now ?? Date.now;
  }

  /** Requests under way or waiting to be recorded. */
  get active(): number {
    return this.inFlight;
  }

  /**
   * Takes the next deliveries — per endpoint its due retries (longest due first, each under its claim), then those
   * waiting for their first attempt (oldest first), as many as its lane has room for — and starts sending them.
   * Returns how many it started.
   */
  async fill(): Promise<number> {
    this.lostClaims = false;
    this.suppressed = false;
    this.leftover = false;
    try {
      return await this.takeNext();
    } finally {
      this.filling = null;
      // A lane freed slots while this fill could no longer see them, and it left deliveries it had read: look again.
      if (this.suppressed && this.leftover) this.options.onProgress?.();
      if (this.processRoom(0) > 0) wakeNextForRoom();
    }
  }

  private async takeNext(): Promise<number> {
    // Requests stuck at a receiver that does not answer do not count (T22), up to the bound on open requests.
    const stuck = stuckRequests(Date.now(), this.stuckAfterMs);
    stuckEndpoints = stuck.endpoints;
    const room = this.processRoom(stuck.count);
    if (room <= 0) {
      this.waitForRoom();
      return 0;
    }
    const now = this.now();
    // Endpoints whose lane is full are not even looked up (a failing or stuck one's lane is FAILING_LANE wide, T21).
    // (An endpoint not heard from yet is judged by Postgres once looked up: here it counts as not failing.)
    const full = [...lanes].filter(([id, n]) => n >= this.widthOf(id, 0)).map(([id]) => id);
    this.filling = new Set(full);
    for (const [id, until] of this.coolUntil) if (until > now) full.push(id); else this.coolUntil.delete(id);
    const taken = [...claimed];
    const columns = 'd.id, d.endpoint_id, d.event_id, d.event_type, d.body, d.attempts';
    const inPartition = partitionClause('e.id', this.options.partition);
    const result = await this.db.raw<{ rows: Taken[] }>(`
      select d.id, d.endpoint_id, e.account_id, d.event_id, d.event_type, d.body, d.attempts, e.url, e.secret_encrypted, e.consecutive_failures
      from webhook_endpoints e
      cross join lateral (
        (select ${columns} from webhook_deliveries d
          where d.endpoint_id = e.id and ${DUE_RETRY} and d.next_attempt_at <= ? and ${UNCLAIMED}
            and not (d.id = any(?::bigint[]))
          order by d.next_attempt_at limit ?)
        union all
        (select ${columns} from webhook_deliveries d
          where d.endpoint_id = e.id and ${OWNED} and d.attempts = 0
            and not (d.id = any(?::bigint[]))
          order by d.id limit ?)
      ) d
      where e.state = 'enabled' and e.deleted_at is null and not (e.id = any(?::bigint[])) and ${inPartition.sql}`,
    arrays(new Date(now), taken, this.perEndpoint, taken, this.perEndpoint, full, ...inPartition.bindings));
    if (result.rows.length === 0) return 0;

    // Per endpoint what its lane has room for (retries first: their time is promised), then round-robin over
    // endpoints within the process-wide room.
    const byEndpoint = new Map<string, Taken[]>();
    const rows = result.rows.filter((row) => row.attempts > 0).concat(result.rows.filter((row) => row.attempts === 0));
    for (const row of rows) {
      // Taken meanwhile by an overlapping run in this process.
      if (claimed.has(String(row.id))) continue;
      const id = String(row.endpoint_id);
      const list = byEndpoint.get(id) ?? [];
      if (list.length < this.widthOf(id, row.consecutive_failures) - (lanes.get(id) ?? 0)) list.push(row);
      byEndpoint.set(id, list);
    }
    const accounts = [...new Set(result.rows.map((r) => String(r.account_id)))];
    const allowed = new Set<string>();
    for (const account of accounts) if (await this.isEntitled(account, now)) allowed.add(account);
    const queues = [...byEndpoint.values()].filter((list) => list.length > 0 && allowed.has(String(list[0].account_id)));
    const picked: Taken[][] = queues.map(() => []);
    let left = room;
    let failingLeft = this.failingRoom();
    const failingQueue = queues.map((list) => isFailing(String(list[0].endpoint_id), list[0].consecutive_failures));
    for (let i = 0; left > 0; i++) {
      let any = false;
      queues.forEach((list, lane) => {
        if (left > 0 && i < list.length && (!failingQueue[lane] || failingLeft > 0)) {
          picked[lane].push(list[i]);
          left--;
          if (failingQueue[lane]) failingLeft--;
          any = true;
        }
      });
      if (!any) break;
    }
    if (left === 0 && queues.some((list, lane) => picked[lane].length < list.length)) this.waitForRoom();
    // WR1: a due retry is made here only with its claim (its workflow may be making it right now, or have made it).
    const retries = picked.flat().filter((row) => row.attempts > 0 && !claimed.has(String(row.id)));
    const won = await claimAttempts(this.db, retries.map((row) => ({ deliveryId: String(row.id), attempt: row.attempts + 1 })), workerName, claimLeaseMs(this.settings.timeoutMs));
    this.lostClaims = won.size < retries.length;
    for (const [lane, batch] of picked.entries()) picked[lane] = batch.filter((row) => row.attempts === 0 || won.has(String(row.id)));
    let started = 0;
    const unused: Taken[] = [];
    for (const batch of picked) {
      if (batch.length === 0) continue;
      const lane = String(batch[0].endpoint_id);
      // The lane may have filled while this look-up ran (an overlapping run), and the process's room too: the other
      // partitions this process serves take from it while this look-up runs (WS5's bound is the process's, not each
      // run's). Take only what still fits.
      const whileFailing = isFailing(lane, batch[0].consecutive_failures);
      const fitting = Math.min(this.widthOf(lane, batch[0].consecutive_failures) - (lanes.get(lane) ?? 0),
        this.processRoom(stuckRequests(Date.now(), this.stuckAfterMs).count), whileFailing ? this.failingRoom() : Infinity);
      const fits = batch.slice(0, Math.max(0, fitting)).filter((row) => !claimed.has(String(row.id)));
      if (fits.length < batch.length && fitting < batch.length) this.waitForRoom();
      unused.push(...batch.filter((row) => row.attempts > 0 && won.has(String(row.id)) && !fits.includes(row)));
      if (fits.length === 0) continue;
      const takenAt = Date.now();
      for (const row of fits) {
        claimed.add(String(row.id));
        underWaySince.set(String(row.id), { since: takenAt, endpointId: lane });
      }
      this.takeSlots(lane, fits.length, whileFailing);
      started += fits.length;
      this.track(this.sendLane(fits));
    }
    // From here on a freed slot is not seen by this fill: it wakes the dispatcher again (freeSlot).
    this.filling = null;
    this.leftover = result.rows.filter((row) => allowed.has(String(row.account_id))).length > started;
    // Retries claimed but left out go back at once (else their workflows would wait for the claims to lapse).
    if (unused.length > 0) await releaseClaims(this.db, unused.map((row) => ({ deliveryId: String(row.id), attempt: row.attempts + 1 })), workerName);
    return started;
  }

  /**
   * When the next retry of an enabled endpoint falls due after now (epoch ms by the sender's clock), or null when none
   * waits (WR1): the dispatcher sleeps until then at the latest, so a retry is made on time without polling. Looked up
   * at most every DUE_LOOKUP_MS; retries recorded by this sender meanwhile move it earlier without a look-up.
   */
  async nextDueAt(): Promise<number | null> {
    const now = this.now();
    if (this.due && now - this.due.lookedUpAt < DUE_LOOKUP_MS && (this.due.at === null || this.due.at > now)) return this.due.at;
    const inPartition = partitionClause('e.id', this.options.partition);
    const result = await this.db.raw<{ rows: { at: Date | null }[] }>(`
      select min(n.next_attempt_at) as at from webhook_endpoints e
      cross join lateral (
        select d.next_attempt_at from webhook_deliveries d
        where d.endpoint_id = e.id and ${DUE_RETRY} and d.next_attempt_at > ?
        order by d.next_attempt_at limit 1
      ) n
      where e.state = 'enabled' and e.deleted_at is null and ${inPartition.sql}`, arrays(new Date(now), ...inPartition.bindings));
    const at = result.rows[0]?.at;
    this.due = { at: at ? new Date(at).getTime() : null, lookedUpAt: now };
    return this.due.at;
  }

  /**
   * The accounts whose outbox events wait (T7): those with an endpoint that has more than DISPATCH_AHEAD deliveries
   * waiting for their first attempt and is taking them fast enough to be through them within DRAIN_HORIZON_MS. The
   * rate is read from Postgres (deliveries completed in the last RATE_WINDOW_MS), not from this process: with
   * partitions (WS4) the endpoint may be served by another worker than the one dispatching the outbox.
   */
  async accountsToHold(): Promise<string[]> {
    const backlog = await this.db('webhook_deliveries').select('endpoint_id', 'account_id')
      .count<{ endpoint_id: string; account_id: string; count: string; waiting_ms: string }[]>('* as count')
      .select(this.db.raw('extract(epoch from now() - min(created_at)) * 1000 as waiting_ms'))
      .where({ status: 'PENDING', attempts: 0 }).whereNull('workflow_started_at').whereNull('held_since').whereNull('manual_retry_at')
      .groupBy('endpoint_id', 'account_id').havingRaw('count(*) > ?', [DISPATCH_AHEAD]);
    if (backlog.length === 0) return [];
    // Deliveries of the endpoint finished (recorded) within the window: what it drains, by the partial index on
    // completed_at, whichever process served it.
    const rates = await this.db.raw<{ rows: { endpoint_id: string; attempts: string; covered_ms: string }[] }>(`
      select endpoint_id, count(*) as attempts, extract(epoch from now() - min(completed_at)) * 1000 as covered_ms
      from webhook_deliveries
      where status <> 'PENDING' and completed_at > now() - make_interval(secs => ?) and endpoint_id = any(?::bigint[])
      group by endpoint_id`, arrays(RATE_WINDOW_MS / 1000, backlog.map((row) => row.endpoint_id)));
    // Over the time the window actually covers, so a burst's first quarter second already shows its rate.
    const rateOf = new Map(rates.rows.map((r) => [String(r.endpoint_id), Number(r.attempts) / (Math.max(250, Number(r.covered_ms)) / 1000)]));
    return [...new Set(backlog.filter((row) => {
      const rate = rateOf.get(String(row.endpoint_id)) ?? 0;
      // Before an endpoint's first answers there is no rate yet: wait for it, but only briefly (it may never answer).
      if (rate === 0) return Number(row.waiting_ms) < RATE_UNKNOWN_HOLD_MS;
      return rate * (DRAIN_HORIZON_MS / 1000) >= Number(row.count);
    }).map((row) => String(row.account_id)))];
  }

  private async isEntitled(accountId: string, now: number): Promise<boolean> {
    const cached = this.entitled.get(accountId);
    if (cached && Math.abs(now - cached.at) < ENTITLEMENT_TTL_MS) return cached.ok;
    const ok = await webhooksEnabled(this.db, accountId);
    this.entitled.set(accountId, { ok, at: now });
    return ok;
  }

  private track(work: Promise<void>): void {
    this.sends.add(work);
    void work.finally(() => this.sends.delete(work));
  }

  /**
   * How many more requests this process may start now: its bound, where requests stuck at a receiver do not count (T22),
   * within the bound on all open requests.
   */
  private processRoom(stuckCount: number): number {
    return Math.min(this.maxInFlight - processInFlight + stuckCount, this.maxOpen - processInFlight);
  }

  /** How many more requests failing endpoints together may start now (T21). */
  private failingRoom(): number {
    return Math.floor(this.maxInFlight * FAILING_SHARE) - failingInFlight;
  }

  /** Asks to be woken when a recorded batch gives the process's room back. */
  private waitForRoom(): void {
    if (this.options.onProgress) waitingForRoom.add(this.options.onProgress);
  }

  /** How many requests the endpoint may have under way: its lane, or FAILING_LANE while its attempts fail (T21). */
  private widthOf(endpointId: string, consecutiveFailures: number): number {
    return isFailing(endpointId, consecutiveFailures) ? Math.min(FAILING_LANE, this.perEndpoint) : this.perEndpoint;
  }

  private takeSlots(endpointId: string, n: number, whileFailing: boolean): void {
    if (whileFailing) {
      failingLanes.set(endpointId, (failingLanes.get(endpointId) ?? 0) + n);
      failingInFlight += n;
    }
    lanes.set(endpointId, (lanes.get(endpointId) ?? 0) + n);
    this.mine.set(endpointId, (this.mine.get(endpointId) ?? 0) + n);
    this.inFlight += n;
    processInFlight += n;
  }

  /**
   * One request of the endpoint's lane is over (answered, failed or never sent). The dispatcher is woken when half the
   * lane is free (or all of it), so a lane is refilled in groups rather than with a query per finished request.
   */
  private freeSlot(endpointId: string): void {
    // A run that drained gave its slots back already.
    if (!this.mine.get(endpointId)) return;
    this.releaseFailingSlots(endpointId, 1);
    const left = (lanes.get(endpointId) ?? 1) - 1;
    if (left > 0) lanes.set(endpointId, left); else lanes.delete(endpointId);
    const mine = (this.mine.get(endpointId) ?? 1) - 1;
    if (mine > 0) this.mine.set(endpointId, mine); else this.mine.delete(endpointId);
    if (left === 0 || left === Math.floor(this.perEndpoint / 2)) {
      // WS8: a fill under way that included this endpoint sees the freed slots when its rows come back (the lanes are
      // read then): waking the dispatcher again would only make it look at full lanes.
      if (this.filling && !this.filling.has(endpointId)) this.suppressed = true;
      // No room in the process (the slot counts until its attempt is recorded): the record wakes it in turn.
      else if (this.processRoom(stuckRequests(Date.now(), this.stuckAfterMs).count) <= 0) this.waitForRoom();
      else this.options.onProgress?.();
    }
  }

  /** Slots taken while the endpoint was failing go back to the failing share first. */
  private releaseFailingSlots(endpointId: string, n: number): void {
    const held = failingLanes.get(endpointId) ?? 0;
    const back = Math.min(held, n);
    if (back === 0) return;
    if (held - back > 0) failingLanes.set(endpointId, held - back); else failingLanes.delete(endpointId);
    failingInFlight -= back;
  }

  /** Sends one endpoint's deliveries of this round: the address is resolved and verified once for the round. */
  private async sendLane(batch: Taken[]): Promise<void> {
    const endpointId = String(batch[0].endpoint_id);
    let destination: { url: URL; hostname: string; addresses: ResolvedAddress[] } | null = null;
    let refusal: SendResult | null = null;
    let secret = '';
    const startedAt = Date.now();
    try {
      destination = await verifyDestination(batch[0].url, this.settings, this.settings.resolve);
      secret = decryptSecret({ current: this.settings.secretsKey, previous: this.settings.previousSecretsKey }, endpointId, batch[0].secret_encrypted);
    } catch (error) {
      if (!(error instanceof WebhookAddressError)) {
        // Not the receiver's fault and not an attempt: leave the deliveries pending and look again later.
        log.error({ err: error, endpointId }, 'webhook deliveries could not be prepared; trying again later');
        this.coolUntil.set(endpointId, this.now() + COOL_DOWN_MS);
        // The retries' claims go back: their workflows may make them meanwhile (WR1).
        await releaseClaims(this.db, batch.filter((row) => row.attempts > 0).map((row) => ({ deliveryId: String(row.id), attempt: row.attempts + 1 })), workerName)
          .catch((err: unknown) => log.warn({ err, endpointId }, 'could not release retry claims; they lapse'));
        for (const row of batch) {
          claimed.delete(String(row.id));
          underWaySince.delete(String(row.id));
          this.freeSlot(endpointId);
        }
        this.inFlight -= batch.length;
        processInFlight -= batch.length;
        this.options.onProgress?.();
        return;
      }
      // A temporary DNS failure is retried like a connection error; any other address refusal is persistent.
      refusal = { outcome: error.retryable ? 'connection_error' : 'address_rejected', httpStatus: null, error: error.message, durationMs: Date.now() - startedAt };
    }
    await Promise.all(batch.map(async (row) => {
      const attemptedAt = new Date(this.now());
      let result: SendResult;
      if (refusal || !destination) {
        result = refusal!;
      } else {
        const headers = deliveryRequestHeaders({
          eventType: row.event_type, eventId: row.event_id, deliveryId: String(row.id), secret, body: row.body, timestamp: Math.floor(Date.now() / 1000),
        });
        result = await postWebhook({ url: destination.url, hostname: destination.hostname, addresses: destination.addresses, headers, body: row.body, timeoutMs: this.settings.timeoutMs });
      }
      this.finished.push({ deliveryId: String(row.id), endpointId, eventId: row.event_id, attempt: row.attempts + 1, attemptedAt, result });
      // The lane's width follows the latest answer: a failure narrows it to FAILING_LANE, a success opens it again.
      failing.set(endpointId, result.outcome !== 'success');
      // The request is over: its slot is free (the bound counts requests under way); the claim lasts until recorded.
      underWaySince.delete(String(row.id));
      this.freeSlot(endpointId);
      this.scheduleFlush();
    }));
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    if (this.closed) {
      // Finished after the run drained (its connections are gone): given up like the rest, sent again later.
      for (const f of this.finished) claimed.delete(f.deliveryId);
      this.inFlight -= this.finished.length;
      processInFlight -= this.finished.length;
      this.finished = [];
      return;
    }
    this.flushing = (async () => {
      try {
        while (this.finished.length > 0 && !this.closed) {
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
        // Results left when the run closed meanwhile: released by the closed branch above.
        if (this.closed && this.finished.length > 0) this.scheduleFlush();
      }
    })();
  }

  /** The status an attempt leaves its delivery in, and when the next attempt is due (the workflow's rules, P24–P29). */
  private decide(f: Finished): { success: boolean; status: 'SENT' | 'FAILED' | 'PENDING'; nextAt: Date | null } {
    const step = nextStep({ outcome: f.result.outcome, attempt: f.attempt, retryScheduleMs: this.settings.retryScheduleMs, manualRetry: false });
    const nextAt = step.status === 'PENDING' ? retryDueAt(f.attemptedAt, f.result.durationMs, step.retryDelayMs) : null;
    return { success: step.status === 'SENT', status: step.status, nextAt };
  }

  /**
   * Logs a batch of attempts and moves their deliveries and endpoints (WS8: in one statement, shared with the other
   * senders of the process whose batches are ready at the same time; see recordAttempts).
   */
  private async record(batch: Finished[]): Promise<void> {
    const rows = batch.map((f) => ({ ...f, ...this.decide(f) }));
    const { logged, moved, endpoints: touched } = await recordAttempts(this.db, rows);
    const mine = new Set(batch.map((f) => f.endpointId));
    const endpoints = [...touched].filter(([id]) => mine.has(id)).map(([id, e]) => ({ id, ...e }));
    const outcome = { mine: rows.filter((r) => logged.has(r.deliveryId)), moved, endpoints };

    for (const r of outcome.mine) {
      countWebhookAttempt(r.success);
      const status = outcome.moved.get(r.deliveryId);
      if (status === 'SENT') this.totals.sent++;
      if (r.success) continue;
      log.info({ deliveryId: r.deliveryId, endpointId: r.endpointId, eventId: r.eventId, attempt: r.attempt, outcome: r.result.outcome, httpStatus: r.result.httpStatus, status: status ?? 'SKIPPED' }, 'webhook attempt failed');
      if (status === 'PENDING') {
        this.totals.retrying++;
        const at = r.nextAt!.getTime();
        if (this.due && (this.due.at === null || at < this.due.at)) this.due.at = at;
      } else {
        this.totals.failed++;
      }
    }
    for (const endpoint of outcome.endpoints) {
      if (failureNeedsPauseCheck(endpoint.state, endpoint.consecutive_failures)) this.checkEndpoint(String(endpoint.id));
    }
    for (const f of batch) claimed.delete(f.deliveryId);
    this.inFlight -= batch.length;
    processInFlight -= batch.length;
    // The room given back wakes the senders that ran out of it; a retry scheduled here may fall due before the
    // dispatcher's sleep ends. Otherwise nobody needs waking: the lanes' slots were freed as their requests ended.
    const retrying = outcome.mine.some((r) => moved.get(r.deliveryId) === 'PENDING');
    if (retrying) this.options.onProgress?.();
    wakeNextForRoom();
  }

  /**
   * Signals the endpoint's actor to check its limits (D14) without holding up anything else (one signal per endpoint at
   * a time; Temporal unreachable: the next failure, or the next dispatch over the limit, asks again).
   */
  checkEndpoint(endpointId: string): void {
    if (this.asking.has(endpointId)) return;
    this.asking.add(endpointId);
    const work = this.options.checkEndpoint(endpointId)
      .catch((error) => log.warn({ err: error, endpointId }, 'could not reach the endpoint actor; the next failure asks again'))
      .finally(() => this.asking.delete(endpointId));
    this.signals.add(work);
    void work.finally(() => this.signals.delete(work));
  }

  /** Waits for every request under way and records them (as long as Postgres lets it), and for the actors' signals. */
  async drain(timeoutMs = 15_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while ((this.sends.size > 0 || this.flushing || this.signals.size > 0) && Date.now() < until) {
      await Promise.race([Promise.allSettled([...this.sends, ...this.signals, this.flushing ?? Promise.resolve()]), new Promise((r) => setTimeout(r, 200))]);
    }
    // Whatever could not be recorded is given up: those deliveries are still PENDING and are sent again later.
    this.closed = true;
    for (const f of this.finished) claimed.delete(f.deliveryId);
    this.inFlight -= this.finished.length;
    processInFlight -= this.finished.length;
    this.finished = [];
    // Requests still under way after the time-out (should not happen: they end within the receiver time-out) give their
    // slots back, so a successor run is not starved by a run that is gone.
    for (const [endpointId, n] of this.mine) {
      this.releaseFailingSlots(endpointId, n);
      const left = (lanes.get(endpointId) ?? 0) - n;
      if (left > 0) lanes.set(endpointId, left); else lanes.delete(endpointId);
    }
    this.mine.clear();
  }
}
