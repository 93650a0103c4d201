/** Coupons: the shop's whole (small) set each run; changed coupons are updated, new ones inserted, removed ones deleted. No events (SPEC names none). */
import type { Knex } from 'knex';
import type { AreaRecords } from '../../platforms/types.js';
import { couponRow, type Row } from '../rows.js';
import type { SyncShop } from '../shops.js';

/** One value as text, so a stored row (Dates, NUMERIC strings, arrays) and a fresh one compare equal when they are. */
function canonical(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `{${value.join(',')}}`;
  return value === null || value === undefined ? '' : String(value);
}

function differs(stored: Record<string, unknown>, fresh: Row): boolean {
  return Object.entries(fresh).some(([column, value]) => canonical(stored[column]) !== canonical(value));
}

export async function applyCoupons(trx: Knex.Transaction, shop: SyncShop, records: Array<AreaRecords['coupons']>): Promise<number> {
  let written = 0;
  const coupons = records.flatMap((r) => (r.kind === 'coupon' ? [couponRow(shop.id, r.coupon)] : []));
  if (coupons.length) {
    const stored = new Map<string, Record<string, unknown>>(
      (await trx('coupons').where({ shop_id: shop.id }).whereIn('code', coupons.map((c) => c.code as string)).select('*'))
        .map((row: Record<string, unknown>) => [row.code as string, row]),
    );
    for (const row of coupons) {
      const existing = stored.get(row.code as string);
      if (!existing) {
        await trx('coupons').insert(row);
        written++;
      } else if (differs(existing, row)) {
        const { shop_id: _s, code: _c, ...changes } = row;
        await trx('coupons').where({ id: existing.id }).update(changes);
        written++;
      }
    }
  }
  for (const record of records) {
    // A coupon the shop no longer has is removed from the records: asking for it is then "not found" (SPEC "Errors").
    if (record.kind === 'present') written += await trx('coupons').where({ shop_id: shop.id }).whereNotIn('code', record.codes).delete();
  }
  return written;
}

/** A coupon the service itself removed in the shop (coupons_remove): its record goes at once, as the next sync would do. */
export async function applyCouponRemoval(trx: Knex.Transaction, shop: SyncShop, code: string): Promise<number> {
  return trx('coupons').where({ shop_id: shop.id, code }).delete();
}
