/**
 * The claim of a delivery's next attempt (WR1): a retry can be made by two parties — the partition dispatcher, which
 * polls due rows and makes it on time while it runs, and the delivery's workflow, whose durable timer is the guarantee
 * when no dispatcher does. Whoever makes attempt n first takes its claim by compare-and-set on the delivery's row
 * (PENDING, exactly n − 1 attempts made, no live claim of n by another party), so attempt n is sent once; the attempt
 * log's uniqueness per (delivery, attempt) stays the second guard. A claim lapses after the receiver time-out plus
 * CLAIM_MARGIN_MS, so a party that died while sending cannot hold the delivery for ever (the other makes it then).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';

/** Beyond the receiver time-out, what an attempt may take besides its request: DNS, signing, recording in Postgres. */
export const CLAIM_MARGIN_MS = 20_000;

/** The party the delivery's workflow claims as: one workflow per delivery, so it may take its own claim again. */
export const WORKFLOW_CLAIMANT = 'workflow';

/** How long a claim holds (ms): the receiver time-out plus CLAIM_MARGIN_MS. */
export function claimLeaseMs(timeoutMs: number): number {
  return timeoutMs + CLAIM_MARGIN_MS;
}

/**
 * SQL: the delivery `d` has no live claim on its next attempt. Claims are timed by Postgres's clock, the one clock every
 * process shares (a claim taken in one process is judged in another).
 */
export const UNCLAIMED = `not (d.claimed_attempt is not distinct from d.attempts + 1 and coalesce(d.claimed_until > clock_timestamp(), false))`;

export interface ClaimRequest {
  deliveryId: string;
  /** The attempt number to be made: the delivery's attempts so far + 1. */
  attempt: number;
}

/**
 * Claims each requested attempt that no other party holds; returns the delivery ids claimed. `claimant` is
 * WORKFLOW_CLAIMANT or the dispatcher's worker; the dispatcher claims only deliveries it owns (not held, no manual retry:
 * those are their workflows' alone).
 */
export async function claimAttempts(db: Db | Knex.Transaction, requests: readonly ClaimRequest[], claimant: string, leaseMs: number): Promise<Set<string>> {
  if (requests.length === 0) return new Set();
  const sorted = [...requests].sort((a, b) => Number(a.deliveryId) - Number(b.deliveryId));
  const senderOnly = claimant === WORKFLOW_CLAIMANT ? '' : 'and d.held_since is null and d.manual_retry_at is null';
  const result = await db.raw<{ rows: { id: string }[] }>(`
    update webhook_deliveries d set claimed_attempt = v.attempt, claimed_until = clock_timestamp() + make_interval(secs => ?), claimed_by = ?
    from unnest(?::bigint[], ?::int[]) as v(id, attempt)
    where d.id = v.id and d.status = 'PENDING' and d.attempts = v.attempt - 1 ${senderOnly}
      and not (d.claimed_attempt is not distinct from v.attempt and coalesce(d.claimed_until > clock_timestamp(), false) and d.claimed_by is distinct from ?)
    returning d.id`,
  [leaseMs / 1000, claimant, sorted.map((r) => r.deliveryId), sorted.map((r) => r.attempt), claimant === WORKFLOW_CLAIMANT ? WORKFLOW_CLAIMANT : null] as Knex.RawBinding[]);
  return new Set(result.rows.map((r) => String(r.id)));
}

/** The live claim on attempt `attempt` of a delivery held by another party than `claimant`: who, and for how much longer. */
export async function claimedByOther(db: Db, deliveryId: string, attempt: number, claimant: string): Promise<{ by: string; leftMs: number } | null> {
  const row = await db('webhook_deliveries').where({ id: deliveryId, claimed_attempt: attempt }).whereNot('claimed_by', claimant)
    .where('claimed_until', '>', db.raw('clock_timestamp()'))
    .first('claimed_by', db.raw('extract(epoch from claimed_until - clock_timestamp()) * 1000 as left_ms'));
  return row ? { by: String(row.claimed_by), leftMs: Math.max(1, Math.ceil(Number(row.left_ms))) } : null;
}

/** Gives back claims whose attempts were not made after all (the sender could not prepare them). */
export async function releaseClaims(db: Db, requests: readonly ClaimRequest[], claimant: string): Promise<void> {
  if (requests.length === 0) return;
  await db.raw(`
    update webhook_deliveries d set claimed_until = null
    from unnest(?::bigint[], ?::int[]) as v(id, attempt)
    where d.id = v.id and d.claimed_attempt = v.attempt and d.claimed_by = ?`,
  [requests.map((r) => r.deliveryId), requests.map((r) => r.attempt), claimant] as Knex.RawBinding[]);
}
