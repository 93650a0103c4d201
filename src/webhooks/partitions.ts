/**
 * Scale-out of the webhook dispatcher (issue 27 point 2, WS1–WS5): endpoints are split into partitions by
 * `endpoint_id % partitions`; each partition has its own dispatcher workflow and heartbeating activity, which Temporal
 * places on any worker of the task queue. An endpoint lives in exactly one partition, and a partition runs in one
 * process at a time, so everything the sender keeps per endpoint (order, the lane of 16) holds over all processes.
 *
 * Spreading: every worker process announces itself in `webhook_dispatcher_workers` (every second); a process serves
 * at most its fair share, ceil(partitions / live workers). A dispatcher run that lands on a process already at its
 * share hands the partition back at once (the workflow schedules it again, and Temporal offers it to another worker),
 * and a process above its share (a worker joined) hands back its highest partitions after draining them. A worker
 * that dies stops announcing itself (gone after PRESENCE_TTL_MS) and its partitions' heartbeats time out, so the
 * others take them over.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { Worker } from '@temporalio/worker';
import pg from 'pg';
import type { Db } from '../db/knex.js';
import { logger } from '../logger.js';
import { connectionOf } from './wakeups.js';

/** Partitions per task queue unless WEBHOOK_PARTITIONS says otherwise. */
export const DEFAULT_WEBHOOK_PARTITIONS = 8;
/** The most partitions WEBHOOK_PARTITIONS accepts (each is a workflow and a long-running activity). */
export const MAX_WEBHOOK_PARTITIONS = 256;
/** How often a worker process announces itself. */
export const PRESENCE_INTERVAL_MS = 1_000;
/** A worker not heard from for this long counts as gone (several missed announcements, not one slow query). */
export const PRESENCE_TTL_MS = 5_000;

const log = logger.child({ component: 'webhooks' });

/** Which part of the endpoints a dispatcher run serves. */
export interface Partition {
  /** 0 … partitions − 1. */
  index: number;
  partitions: number;
}

/** The SQL condition "the endpoint column `column` belongs to `partition`" with its bindings (none when unpartitioned). */
export function partitionClause(column: string, partition: Partition | undefined): { sql: string; bindings: number[] } {
  if (!partition || partition.partitions <= 1) return { sql: 'true', bindings: [] };
  return { sql: `(${column} % ?) = ?`, bindings: [partition.partitions, partition.index] };
}

/** The partition an endpoint belongs to (the same rule as `partitionClause`). */
export function partitionOf(endpointId: string | number, partitions: number): number {
  return Number(BigInt(endpointId) % BigInt(partitions));
}

/** This process's name among the workers (host, pid and a random part: a restarted container may reuse the pid). */
export const workerName = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;

/** Per task queue, the partitions this process serves now. */
const served = new Map<string, Set<number>>();

/** Records that this process serves the partition; returns the release. */
export function serve(taskQueue: string, index: number): () => void {
  const set = served.get(taskQueue) ?? new Set<number>();
  set.add(index);
  served.set(taskQueue, set);
  return () => {
    set.delete(index);
  };
}

/** The partitions of `taskQueue` this process serves now (for tests and logs). */
export function servedPartitions(taskQueue: string): number[] {
  return [...(served.get(taskQueue) ?? [])].sort((a, b) => a - b);
}

/** How many worker processes of `taskQueue` announced themselves within PRESENCE_TTL_MS (at least 1: this one). */
export async function liveWorkers(db: Db, taskQueue: string): Promise<number> {
  const row = await db('webhook_dispatcher_workers').where('task_queue', taskQueue)
    .where('seen_at', '>', db.raw(`now() - make_interval(secs => ?)`, [PRESENCE_TTL_MS / 1000])).count<{ count: string }[]>('* as count').first();
  return Math.max(1, Number(row?.count ?? 0));
}

/** A process's fair share of the partitions: ceil(partitions / live workers). */
export function fairShare(partitions: number, workers: number): number {
  return Math.ceil(partitions / Math.max(1, workers));
}

/**
 * Whether the run of `index` should leave this process: it serves more than its share, and `index` is among the
 * highest it serves (the lowest ones stay, so two processes never hand back the same surplus back and forth).
 */
export function shouldHandOver(index: number, mine: readonly number[], share: number): boolean {
  const sorted = [...mine].sort((a, b) => a - b);
  return sorted.indexOf(index) >= share;
}

/**
 * Announces this worker process in `webhook_dispatcher_workers` every PRESENCE_INTERVAL_MS while `worker` runs, and
 * removes the row when it stops (a killed process's row simply ages out). Old rows of gone workers are deleted now and
 * then. Postgres unreachable: tried again at the next tick (the others then see this worker as gone, which only moves
 * partitions, never doubles them).
 */
export function announceWorker(db: Db, taskQueue: string, worker: Pick<Worker, 'getState'>): void {
  let ticks = 0;
  const timer = setInterval(() => {
    const state = worker.getState();
    if (state === 'INITIALIZED') return;
    if (state !== 'RUNNING') {
      clearInterval(timer);
      void db('webhook_dispatcher_workers').where({ task_queue: taskQueue, worker: workerName }).delete().catch(() => {});
      return;
    }
    ticks++;
    void (async () => {
      await db('webhook_dispatcher_workers').insert({ task_queue: taskQueue, worker: workerName, seen_at: db.fn.now() })
        .onConflict(['task_queue', 'worker']).merge(['seen_at']);
      if (ticks % 60 === 0) await db('webhook_dispatcher_workers').where('seen_at', '<', db.raw(`now() - interval '1 hour'`)).delete();
    })().catch((error: unknown) => log.debug({ err: error }, 'could not announce the worker; trying again'));
  }, PRESENCE_INTERVAL_MS);
  timer.unref();
}

/** A partition's lease: held on a connection of its own while a dispatcher run serves the partition. */
export interface PartitionLease {
  /** Set when the connection is gone (the lease with it): the run must stop sending. */
  readonly lost: boolean;
  release(): Promise<void>;
}

/**
 * Takes the partition's lease (a session advisory lock on a connection of its own), waiting while another run holds
 * it. Temporal may start a partition's next run while the previous one still sends (its heartbeats were late on a
 * loaded machine, WS7); the lease makes the new run wait until the old one has drained and let go, or its process
 * died (Postgres drops a dead connection's locks). `waiting` is called every 250 ms while it waits (heartbeats,
 * cancellation); it returns false to give up.
 */
export async function takePartitionLease(db: Db, taskQueue: string, partition: Partition, waiting: () => boolean): Promise<PartitionLease | null> {
  const client = new pg.Client(connectionOf(db) as pg.ClientConfig);
  let lost = false;
  client.on('error', () => {
    lost = true;
  });
  client.on('end', () => {
    lost = true;
  });
  await client.connect();
  try {
    for (;;) {
      const { rows: [row] } = await client.query<{ taken: boolean }>('select pg_try_advisory_lock(hashtext($1), $2) as taken', [`webhook-partition:${taskQueue}`, partition.index]);
      if (row.taken) break;
      if (!waiting()) {
        await client.end();
        return null;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  return {
    get lost() {
      return lost;
    },
    // Closing the connection lets go of the lock.
    release: () => client.end().catch(() => {}),
  };
}
