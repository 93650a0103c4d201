/** Stock of several items and stock movements over the real HTTP server and Postgres, checked against raw rows. */
import { appTest } from '../helpers/app.js';
import { issueKey } from '../helpers/server.js';
import { get, assertError } from '../helpers/rest.js';
import { shopId } from '../helpers/shops.js';

const test = appTest({ scopes: ['inventory:read'] });


test('When several codes are asked, then found items come in the order asked and missing ones are listed as not found', async (t) => {
  const db = t.context.database.db;
  const items = await db('stock_items').where({ shop_id: await shopId(t.context.database.db, 'demo', 'sk') }).orderBy('code').limit(3).select('code', 'quantity', 'available');
  const plCode = (await db('stock_items').where({ shop_id: await shopId(t.context.database.db, 'demo', 'pl') }).first('code')).code;
  const codes = [items[2].code, 'NOPE-1', items[0].code, plCode, items[2].code, items[1].code];
  const res = await get(t, `/inventory/availability?market=sk&codes=${codes.map(encodeURIComponent).join(',')}`);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.data.items.map((i: any) => i.code), [items[2].code, items[0].code, items[1].code]);
  t.deepEqual(res.body.data.notFound, ['NOPE-1', plCode], 'another shop\'s item is not found here');
  t.is(res.body.data.items[1].quantity, items[0].quantity);
  t.is(res.body.meta.market, 'sk');
  const none = await get(t, '/inventory/availability?market=sk&codes=X1,X2');
  t.deepEqual(none.body.data, { items: [], notFound: ['X1', 'X2'] });

  const many = Array.from({ length: 101 }, (_, i) => `C${i}`).join(',');
  assertError(t, await get(t, `/inventory/availability?market=sk&codes=${many}`), 400, 'INVALID_PARAMETER');
  t.is((await get(t, `/inventory/availability?market=sk&codes=${many.split(',').slice(0, 100).join(',')}`)).status, 200, '100 codes are allowed');
  assertError(t, await get(t, '/inventory/availability?market=sk&codes=A,,B'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/inventory/availability?market=sk'), 400, 'MISSING_PARAMETER');
  assertError(t, await get(t, `/inventory/availability?market=sk&codes=${'x'.repeat(129)}`), 400, 'INVALID_PARAMETER');
  const czOnly = await issueKey(db, { scopes: ['inventory:read'], shops: ['cz'] });
  assertError(t, await get(t, '/inventory/availability?market=sk&codes=A', czOnly), 403, 'SHOP_FORBIDDEN');
  const noScope = await issueKey(db, { scopes: ['orders:read'] });
  assertError(t, await get(t, '/inventory/availability?market=sk&codes=A', noScope), 403, 'INSUFFICIENT_SCOPE');
});

test('When movements are listed, then they come newest first across pages, each once, with origin derived from order and claim', async (t) => {
  const seen = new Set<string>();
  let cursor: string | null = null;
  let previous: string | null = null;
  for (let page = 0; page < 3; page++) {
    const res = await get(t, `/inventory/movements?market=cz&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    for (const m of res.body.data) {
      t.false(seen.has(m.movementId));
      seen.add(m.movementId);
      if (previous) t.true(previous >= m.occurredAt);
      previous = m.occurredAt;
      t.is(m.origin, m.claimCode ? 'claim' : m.orderCode ? 'order' : 'purchase');
      if (m.kind === 'sale') t.true(Number(m.quantity) < 0);
    }
    cursor = res.body.meta.nextCursor;
  }
  t.is(seen.size, 300);
});

test('When movements are filtered, then every filter and the period agree with the raw rows', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(t.context.database.db, 'demo', 'sk');
  const count = async (q: any) => Number((await q.count({ count: '*' }))[0].count);
  const order = await db('stock_movements').where({ shop_id: sk }).whereNotNull('order_code').orderBy('occurred_at', 'desc').first('order_code');
  const byOrder = await get(t, `/inventory/movements?market=sk&orderCode=${order.order_code}`);
  t.is(byOrder.body.data.length, await count(db('stock_movements').where({ shop_id: sk, order_code: order.order_code })));
  t.true(byOrder.body.data.every((m: any) => m.orderCode === order.order_code));

  const item = await db('stock_movements').where({ shop_id: sk, kind: 'receipt' }).first('item_code');
  const receipts = await get(t, `/inventory/movements?market=sk&code=${item.item_code}&kind=receipt&limit=250`);
  t.is(receipts.body.data.length, await count(db('stock_movements').where({ shop_id: sk, item_code: item.item_code, kind: 'receipt' })));
  t.true(receipts.body.data.every((m: any) => m.origin === 'purchase' && Number(m.quantity) > 0));

  const claims = await get(t, '/inventory/movements?market=sk&origin=claim&limit=250');
  t.is(claims.body.data.length, await count(db('stock_movements').where({ shop_id: sk }).whereNotNull('claim_code')));
  t.true(claims.body.data.length > 0);

  // A claim's returned goods carry the order's number too: `origin=order` is the order's own movements without them.
  const returned = await db('stock_movements').where({ shop_id: sk }).whereNotNull('claim_code').whereNotNull('order_code').orderBy('id').first('movement_id', 'order_code');
  t.truthy(returned, 'a claim movement that names its order');
  const ofOrder = await db('stock_movements').where({ shop_id: sk, order_code: returned.order_code }).select('movement_id', 'claim_code');
  const byOrigin = async (origin: string) => (await get(t, `/inventory/movements?market=sk&origin=${origin}&orderCode=${returned.order_code}&limit=250`)).body.data.map((m: any) => m.movementId).sort();
  t.deepEqual(await byOrigin('order'), ofOrder.filter((m) => m.claim_code === null).map((m) => m.movement_id).sort());
  t.true(ofOrder.some((m) => m.claim_code === null), 'the order has movements of its own');
  t.deepEqual(await byOrigin('claim'), ofOrder.filter((m) => m.claim_code !== null).map((m) => m.movement_id).sort());
  t.deepEqual(await byOrigin('purchase'), []);
  const receiptItem = await db('stock_movements').where({ shop_id: sk }).whereNull('order_code').whereNull('claim_code').first('item_code');
  const purchases = await get(t, `/inventory/movements?market=sk&origin=purchase&code=${receiptItem.item_code}&limit=250`);
  t.deepEqual(purchases.body.data.map((m: any) => m.movementId).sort(),
    (await db('stock_movements').where({ shop_id: sk, item_code: receiptItem.item_code }).whereNull('order_code').whereNull('claim_code').select('movement_id')).map((m) => m.movement_id).sort());

  const period = await get(t, '/inventory/movements?market=sk&kind=sale&from=2026-11-01&to=2026-11-07&limit=250');
  t.deepEqual(period.body.meta.period, { from: '2026-11-01', to: '2026-11-07', timeZone: 'Europe/Bratislava' });
  const raw = await count(db('stock_movements').where({ shop_id: sk, kind: 'sale' })
    .whereRaw(`occurred_at >= '2026-11-01'::timestamp at time zone 'Europe/Bratislava' and occurred_at < '2026-11-08'::timestamp at time zone 'Europe/Bratislava'`));
  t.is(period.body.data.length + (period.body.meta.hasMore ? 1 : 0) > 0, raw > 0);
  if (!period.body.meta.hasMore) t.is(period.body.data.length, raw);

  assertError(t, await get(t, '/inventory/movements?market=sk&kind=theft'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/inventory/movements?market=sk&origin=gift'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/inventory/movements?market=sk&from=2026-11-07&to=2026-11-01'), 400, 'PERIOD_REVERSED');
  assertError(t, await get(t, '/inventory/movements?market=sk&limit=0'), 400, 'LIMIT_OUT_OF_RANGE');
  assertError(t, await get(t, '/inventory/movements?market=sk&colour=red'), 400, 'UNKNOWN_PARAMETER');
  const cursor = (await get(t, '/inventory/movements?market=sk&limit=1')).body.meta.nextCursor;
  assertError(t, await get(t, `/inventory/movements?market=sk&kind=sale&limit=1&cursor=${encodeURIComponent(cursor)}`), 400, 'CURSOR_MISMATCH');
});
