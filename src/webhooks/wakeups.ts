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

/** One subscriber of a shared listening connection: its own flags, so each dispatcher run wakes and reads alone. */
interface Subscriber {
  notify(outbox: boolean): void;
}

/**
 * One listening connection per database and process, shared by every dispatcher run of the process (WS1: a process may
 * serve several partitions; one connection each would multiply Postgres connections by the partition count).
 */
interface Hub {
  subscribers: Set<Subscriber>;
  connected(): boolean;
  close(): Promise<void>;
}

const hubs = new Map<string, Hub>();

function hubFor(db: Db): Hub {
  const config = connectionOf(db);
  const key = typeof config === 'string' ? config : JSON.stringify(config);
  const existing = hubs.get(key);
  if (existing) return existing;
  const subscribers = new Set<Subscriber>();
  let client: pg.Client | null = null;
  let closed = false;
  let retryMs = 250;
  const broadcast = (outbox: boolean) => {
    for (const s of subscribers) s.notify(outbox);
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new pg.Client(config as pg.ClientConfig);
    c.on('notification', (message) => broadcast(message.payload === 'outbox_events'));
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
      broadcast(true);
    } catch {
      void c.end().catch(() => {});
      retryMs = Math.min(retryMs * 2, 5_000);
      if (!closed) setTimeout(() => void connect(), retryMs).unref();
    }
  };
  void connect();
  const hub: Hub = {
    subscribers,
    connected: () => client !== null,
    async close() {
      closed = true;
      hubs.delete(key);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
  hubs.set(key, hub);
  return hub;
}

export function listenForWork(db: Db): WorkSignal {
  let pending = false;
  // True until the first LISTEN is in place: events may have been written before anyone listened.
  let outboxNews = true;
  let waiter: (() => void) | null = null;
  const hub = hubFor(db);

  const poke = () => {
    pending = true;
    const wake = waiter;
    waiter = null;
    wake?.();
  };
  const subscriber: Subscriber = {
    notify(outbox) {
      if (outbox) outboxNews = true;
      poke();
    },
  };
  hub.subscribers.add(subscriber);

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
      const news = outboxNews || !hub.connected();
      outboxNews = false;
      return news;
    },
    async close() {
      poke();
      hub.subscribers.delete(subscriber);
      // The last run of the process closes the connection.
      if (hub.subscribers.size === 0) await hub.close();
    },
  };
}
