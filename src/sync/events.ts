/** Collects the events of one sync batch and writes them to the outbox in the batch's transaction, oldest first. */
import type { Knex } from 'knex';
import { recordEvent } from '../events/outbox.js';
import type { SyncShop } from './shops.js';

interface PendingEvent {
  type: string;
  resourceId: string;
  data: Record<string, unknown>;
  occurredAt: Date;
}

export class EventSink {
  private readonly pending: PendingEvent[] = [];

  /** Changes at or before `eventsFromMs` are history (a backfill or the loaded demo data): stored, never announced. */
  constructor(private readonly trx: Knex.Transaction, private readonly shop: SyncShop, private readonly eventsFromMs: number) {}

  /** Queues an event of a change that happened in the shop at `occurredAt`. */
  emit(type: string, resourceId: string, data: Record<string, unknown>, occurredAt: Date): void {
    if (occurredAt.getTime() <= this.eventsFromMs) return;
    this.pending.push({ type, resourceId, data, occurredAt });
  }

  /** True when a change at `at` is news (after the history this run must not announce). */
  isNews(at: Date): boolean {
    return at.getTime() > this.eventsFromMs;
  }

  /** Writes the queued events in order of occurrence (stable for equal instants); returns how many. */
  async flush(): Promise<number> {
    const events = this.pending.map((e, i) => ({ e, i })).sort((a, b) => a.e.occurredAt.getTime() - b.e.occurredAt.getTime() || a.i - b.i);
    for (const { e } of events) {
      await recordEvent(this.trx, {
        accountId: this.shop.accountId, shop: { id: this.shop.id, code: this.shop.code }, type: e.type, resource: { id: e.resourceId },
        data: e.data, occurredAt: e.occurredAt,
      });
    }
    const count = events.length;
    this.pending.length = 0;
    return count;
  }
}
