/**
 * The payout minimum (A5; 50 EUR in the demo programme) on both sides: a partner whose approved commissions of the
 * month sum to exactly 50.00 EUR gets a payout draft, one at 49.99 EUR waits for a later month; a suspended partner's
 * 60.00 EUR is not drawn up (only approved partners are paid). An approved payout is paid 7 days after it was drawn
 * up, not a second earlier.
 */
import anyTest, { type TestFn } from 'ava';
import { drawUpShopPayouts } from '../../src/affiliate/staff/payouts.js';
import { settlePayouts } from '../../src/affiliate/attribution.js';
import { knexRunner } from '../../src/affiliate/sql.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TEST_NOW } from '../helpers/constants.js';
import { shopOf } from '../helpers/shops.js';

interface Context { database: TestDatabase }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context = { database: await createTestDatabase() };
});
test.after.always(async (t) => {
  await t.context.database?.drop();
});

test('When a partner\'s month sums to exactly the 50 EUR minimum, then a draft is drawn up; at 49.99 EUR it waits; a suspended partner\'s 60 EUR waits too', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'sk');
  t.is(Number((await db('affiliate_programmes').where({ account_id: shop.accountId }).first('payout_minimum_eur')).payout_minimum_eur), 50);
  const partners: string[] = [];
  for (const [handle, state] of [['MINIMUM_AT', 'approved'], ['MINIMUM_UNDER', 'approved'], ['SUSPENDED_OVER', 'suspended'], ['APPROVED_LAST_MS', 'approved'], ['APPROVED_AT_NEXT_MONTH', 'approved']]) {
    const [row] = await db('affiliate_partners').insert({
      account_id: shop.accountId, handle, state, state_changed_at: TEST_NOW, kind: 'blogger', language: 'sk', registered_at: TEST_NOW,
    }).returning('id');
    partners.push(String(row.id));
  }
  // Two approved, unpaid commissions of euro orders (rate 1) become the new partners' only ones.
  const taken = await db('affiliate_conversions as cv').join('orders as o', 'o.id', 'cv.order_id')
    .where({ 'cv.shop_id': shop.id, 'cv.commission_state': 'approved', 'cv.currency': 'EUR' }).whereNull('cv.payout_id').where('o.eur_rate', 1)
    .where('cv.approved_at', '<', '2026-12-01').orderBy('cv.id').limit(5).pluck('cv.id');
  t.is(taken.length, 5);
  await db('affiliate_conversions').where({ id: taken[0] }).update({ partner_id: partners[0], commission: '50.00' });
  await db('affiliate_conversions').where({ id: taken[1] }).update({ partner_id: partners[1], commission: '49.99' });
  // Only approved partners are paid (A5): a suspended partner's approved commissions above the minimum wait.
  await db('affiliate_conversions').where({ id: taken[2] }).update({ partner_id: partners[2], commission: '60.00' });
  // November's run takes what was approved before 1 December began (AP2-4): the last millisecond of November is in,
  // 00:00:00.000 UTC on 1 December is December's.
  await db('affiliate_conversions').where({ id: taken[3] }).update({ partner_id: partners[3], commission: '60.00', approved_at: new Date('2026-11-30T23:59:59.999Z') });
  await db('affiliate_conversions').where({ id: taken[4] }).update({ partner_id: partners[4], commission: '60.00', approved_at: new Date('2026-12-01T00:00:00.000Z') });

  await drawUpShopPayouts(db, shop.id, '2026-11', TEST_NOW, 'test');
  const payouts = await db('affiliate_payouts').whereIn('partner_id', partners).orderBy('partner_id').select('partner_id', 'amount', 'state');
  t.deepEqual(payouts.map((p) => [String(p.partner_id), Number(p.amount), p.state]), [[partners[0], 50, 'requested'], [partners[3], 60, 'requested']]);
});

test.serial('When an approved payout is 7 days old, then it is paid with paid_at 7 days after it was drawn up; a second earlier it is still approved (A5)', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'cz');
  const [partner] = await db('affiliate_partners').insert({
    account_id: shop.accountId, handle: 'PAID_AFTER_SEVEN', state: 'approved', state_changed_at: TEST_NOW, kind: 'blogger', language: 'sk', registered_at: TEST_NOW,
  }).returning('id');
  const drawnUp = new Date('2026-10-05T00:00:00.000Z');
  const [payout] = await db('affiliate_payouts').insert({
    account_id: shop.accountId, shop_id: shop.id, partner_id: partner.id, currency: 'CZK', amount: '1500.00', conversions: 0, state: 'approved',
    period_from: '2026-09-01', period_to: '2026-09-30', created_at: drawnUp,
  }).returning('id');
  const sevenDays = 7 * 86_400_000;
  await settlePayouts(knexRunner(db), { id: shop.id, accountId: shop.accountId }, new Date(drawnUp.getTime() + sevenDays - 1000));
  const before = await db('affiliate_payouts').where({ id: payout.id }).first('state', 'paid_at');
  t.deepEqual([before.state, before.paid_at], ['approved', null]);
  await settlePayouts(knexRunner(db), { id: shop.id, accountId: shop.accountId }, new Date(drawnUp.getTime() + sevenDays));
  const after = await db('affiliate_payouts').where({ id: payout.id }).first('state', 'paid_at');
  t.is(after.state, 'paid');
  t.is(new Date(after.paid_at).toISOString(), '2026-10-12T00:00:00.000Z');
});

test('When a CZK shop\'s partner has 100 CZK of commissions, then it waits: the minimum is 50 EUR at the orders\' rates, not 50 in the shop\'s currency; 2000 CZK is drawn up (A5)', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'cz');
  const partners: string[] = [];
  for (const handle of ['CZK_UNDER_MINIMUM', 'CZK_OVER_MINIMUM']) {
    const [row] = await db('affiliate_partners').insert({
      account_id: shop.accountId, handle, state: 'approved', state_changed_at: TEST_NOW, kind: 'blogger', language: 'cs', registered_at: TEST_NOW,
    }).returning('id');
    partners.push(String(row.id));
  }
  const taken = await db('affiliate_conversions as cv').join('orders as o', 'o.id', 'cv.order_id')
    .where({ 'cv.shop_id': shop.id, 'cv.commission_state': 'approved', 'cv.currency': 'CZK' }).whereNull('cv.payout_id')
    .where('cv.approved_at', '<', '2026-12-01').orderBy('cv.id').limit(2).select('cv.id', 'o.eur_rate');
  t.is(taken.length, 2);
  // From the raw rates: 100 CZK is well under 50 EUR, 2000 CZK over it.
  t.true(100 * Number(taken[0].eur_rate) < 50, `rate ${taken[0].eur_rate}`);
  t.true(2000 * Number(taken[1].eur_rate) >= 50, `rate ${taken[1].eur_rate}`);
  await db('affiliate_conversions').where({ id: taken[0].id }).update({ partner_id: partners[0], commission: '100.00' });
  await db('affiliate_conversions').where({ id: taken[1].id }).update({ partner_id: partners[1], commission: '2000.00' });

  await drawUpShopPayouts(db, shop.id, '2026-11', TEST_NOW, 'test');
  const payouts = await db('affiliate_payouts').whereIn('partner_id', partners).orderBy('partner_id').select('partner_id', 'currency', 'amount', 'state');
  t.deepEqual(payouts.map((p) => [String(p.partner_id), p.currency, Number(p.amount), p.state]), [[partners[1], 'CZK', 2000, 'requested']]);
});
