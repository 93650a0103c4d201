/**
 * Wake-ups of the webhook dispatcher: a LISTEN on `webhook_work` (NOTIFY comes from triggers, migration 013) on a
 * connection of its own, reconnected with back-off when Postgres goes away. Polling stays as the safety net: a wait
 * ends at the notification or after `maxWaitMs`, whichever comes first, so a lost notification (connection down,
 * Postgres restarting) delays work by at most that long.
 */
import pg from 'pg';
import type { Db } from '../db/knex.js';
import { logger } from '../logger.js';

export const WEBHOOK_WORK_CHANNEL = 'webhook_work';

const log = logger.child({ component: 'webhooks' });

export interface WorkSignal {
  /** Resolves at the next notification (or `poke`), or after `maxWaitMs`. */
  wait(maxWaitMs: number): Promise<void>;
  /** Whether new outbox events were notified since the last call (or the connection was (re)made); clears it. */
  takeOutboxNews(): boolean;
  /** Wakes a waiter from inside the process (e.g. a delivery finished and freed a slot). */
  poke(): void;
  close(): Promise<void>;
}

/** The connection settings of a knex instance, for connections made outside its pool. */
export function connectionOf(db: Db): string | pg.ClientConfig {
  return (db.client as { config: { connection: string | pg.ClientConfig } }).config.connection;
}

export function listenForWork(db: Db): WorkSignal {
  let pending = false;
  // True until the first LISTEN is in place: events may have been written before anyone listened.
  let outboxNews = true;
  let waiter: (() => void) | null = null;
  let client: pg.Client | null = null;
  let closed = false;
  let retryMs = 250;

  const poke = () => {
    pending = true;
    const wake = waiter;
    waiter = null;
    wake?.();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client(connectionOf(db) as pg.ClientConfig);
    c.on('notification', (message) => {
      if (message.payload === 'outbox_events') outboxNews = true;
      poke();
    });
    c.on('error', (error) => {
      // Postgres went away (restart, network): reconnect; polling covers the gap.
      log.warn({ err: error }, 'webhook wake-up connection lost; polling until it is back');
      void c.end().catch(() => {});
      if (client === c) {
        client = null;
        setTimeout(() => void connect(), retryMs).unref();
      }
    });
    try {
      await c.connect();
      await c.query(`listen ${WEBHOOK_WORK_CHANNEL}`);
      if (closed) {
        await c.end();
        return;
      }
      client = c;
      retryMs = 250;
      // Work may have arrived while no one listened.
      outboxNews = true;
      poke();
    } catch {
      void c.end().catch(() => {});
      retryMs = Math.min(retryMs * 2, 5_000);
      if (!closed) setTimeout(() => void connect(), retryMs).unref();
    }
  };
  void connect();

  return {
    wait(maxWaitMs) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiter = null;
          resolve();
        }, maxWaitMs);
        waiter = () => {
          clearTimeout(timer);
          pending = false;
          resolve();
        };
      });
    },
    poke,
    takeOutboxNews() {
      // Without a listening connection every round must look at the outbox itself.
      const news = outboxNews || client === null;
      outboxNews = false;
      return news;
    },
    async close() {
      closed = true;
      poke();
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
