/** Claims (withdrawals and complaints) with their return shipment: created, each status change, and closing. */
import type { Knex } from 'knex';
import { refreshCreditNotesOfOrders } from '../../rollups/products.js';
import { CLAIM_STATUSES } from '../../records/statuses.js';
import type { PlatformClaim } from '../../platforms/types.js';
import type { EventSink } from '../events.js';
import { claimRow } from '../rows.js';
import type { SyncShop } from '../shops.js';

interface StoredClaim {
  id: string;
  code: string;
  status_id: number;
  status_changed_at: Date;
  closed_at: Date | null;
  updated_at: Date;
}

const closing = new Set<number>(Object.values(CLAIM_STATUSES).filter((s) => s.closes).map((s) => s.id));

function claimEvents(sink: EventSink, c: PlatformClaim, afterMs: number, wasClosed: boolean): void {
  const ref = { claim_code: c.code, order_code: c.orderCode };
  for (let i = 1; i < c.statusHistory.length; i++) {
    const change = c.statusHistory[i];
    if (change.at.getTime() <= afterMs) continue;
    sink.emit('claim.status_changed', c.code, { ...ref, status_id: change.statusId }, change.at);
  }
  if (!wasClosed && c.closedAt && closing.has(c.statusId)) sink.emit('claim.closed', c.code, ref, c.closedAt);
}

export async function applyClaims(trx: Knex.Transaction, shop: SyncShop, claims: PlatformClaim[], sink: EventSink): Promise<number> {
  const stored = new Map<string, StoredClaim>(
    (await trx('claims').where({ shop_id: shop.id }).whereIn('code', claims.map((c) => c.code))
      .select('id', 'code', 'status_id', 'status_changed_at', 'closed_at', 'updated_at') as StoredClaim[]).map((r) => [r.code, r]),
  );
  let written = 0;
  for (const c of claims) {
    const s = stored.get(c.code);
    if (!s) {
      await trx('claims').insert(claimRow(shop.id, c));
      sink.emit('claim.created', c.code, { claim_code: c.code, order_code: c.orderCode }, c.openedAt);
      claimEvents(sink, c, c.openedAt.getTime(), false);
      written++;
      continue;
    }
    if (s.updated_at.getTime() === c.updatedAt.getTime() && s.status_id === c.statusId) continue;
    claimEvents(sink, c, s.status_changed_at.getTime(), s.closed_at !== null);
    const { shop_id: _s, code: _c, order_code: _o, type: _t, opened_at: _op, ...changes } = claimRow(shop.id, c);
    await trx('claims').where({ id: s.id }).update(changes);
    written++;
  }
  // A refund's credit note takes back the claim's lines: recompute the days of those credit notes.
  if (written) await refreshCreditNotesOfOrders(trx, shop.id, claims.map((c) => c.orderCode));
  return written;
}
