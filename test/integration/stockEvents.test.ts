/**
 * `inventory.stock_changed` names the item twice only when the platform has one identifier (issue 23.6): `item_id` is
 * the platform's inventory item (Medusa's `iitem_…`) and `sku` its SKU; a platform that keys stock by product code
 * (the demo) has no other id, so both are that code. Applied through the sync's own stock step into the real outbox.
 */
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { applyStock } from '../../src/sync/apply/stock.js';
import { EventSink } from '../../src/sync/events.js';
import { findSyncShop } from '../../src/sync/shops.js';

interface Context { database: TestDatabase }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context = { database: await createTestDatabase() };
});

test.after.always(async (t) => {
  await t.context.database?.drop();
});

test('When a stock level of an item with its own platform id changes, then the event carries that id as item_id and the SKU as sku; without one, the code as both', async (t) => {
  const db = t.context.database.db;
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const at = new Date();
  const level = { source: 'balance' as const, quantity: 5, physical: 6, reserved: 1, available: 5, updatedAt: at };
  await db.transaction(async (trx) => {
    const sink = new EventSink(trx, shop, 0);
    await applyStock(trx, shop, [
      { kind: 'item', item: { code: 'FX-MUG-L', sku: 'FX-MUG-L', itemId: 'iitem_01FXMUGL', ...level }, announce: 'adjustment' },
      { kind: 'item', item: { code: 'FX-PLAIN-1', sku: 'FX-PLAIN-1', ...level }, announce: 'adjustment' },
    ], sink);
    await sink.flush();
  });
  const events = await db('outbox_events').where({ shop_id: shop.id, event_type: 'inventory.stock_changed' }).whereIn('resource_id', ['FX-MUG-L', 'FX-PLAIN-1'])
    .orderBy('resource_id').select('resource_id', 'data');
  t.deepEqual(events.map((e) => [e.resource_id, e.data]), [
    ['FX-MUG-L', { item_id: 'iitem_01FXMUGL', sku: 'FX-MUG-L', kind: 'adjustment' }],
    ['FX-PLAIN-1', { item_id: 'FX-PLAIN-1', sku: 'FX-PLAIN-1', kind: 'adjustment' }],
  ]);
});
