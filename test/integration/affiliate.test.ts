/**
 * The affiliate programme over the real HTTP server and a real Postgres: conversions and commissions checked against
 * figures computed here from the raw orders, clicks and campaign rules; the attribution window edge; commission states
 * after a cancellation; bank, tax and contact data scans; tracked links; shop and tenant isolation.
 */
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { issueKey } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { knexRunner } from '../../src/affiliate/sql.js';
import { attributeOrders, refreshCommissionStates, settleShopAffiliate } from '../../src/affiliate/attribution.js';
import { ORDER_STATUSES } from '../../src/platforms/demo/catalogue.js';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { get } from '../helpers/rest.js';
import { shopOf } from '../helpers/shops.js';
import { rowForInsert } from '../helpers/db.js';
import { roundDecimal } from '../helpers/oracles.js';

const test = appTest({ scopes: ['affiliate:read'] });
type Context = AppContext;
const DAY_MS = 86_400_000;


/** Every record of a listing, page by page. */
async function walk(t: ExecutionContext<Context>, path: string, key?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await get(t, `${path}${sep}limit=250${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
    t.is(res.status, 200, JSON.stringify(res.body));
    out.push(...res.body.data);
    cursor = res.body.meta.nextCursor;
  } while (cursor);
  return out;
}

const cents = (amount: string): number => Math.round(Number(amount) * 100);

interface Expected { partnerId: string; source: 'click' | 'coupon'; campaignId: string; base: number; commission: number; state: string; reason: string }

/** Conversions of a shop as the rules define them, computed from raw rows (plain selects, the arithmetic here). */
async function expectedConversions(t: ExecutionContext<Context>, shopId: string): Promise<Map<string, Expected>> {
  const db = t.context.database.db;
  const orders = await db('orders').where({ shop_id: shopId }).select('id', 'code', 'created_at', 'coupon_code', 'status_id');
  const items = await db('order_items as i').join('orders as o', 'o.id', 'i.order_id').where('o.shop_id', shopId).select('i.order_id', 'i.quantity', 'i.unit_price_without_vat');
  const codes = new Map((await db('affiliate_discount_codes').where({ shop_id: shopId }).select('code', 'partner_id')).map((r) => [r.code, String(r.partner_id)]));
  const campaigns = new Map((await db('affiliate_campaigns').where({ shop_id: shopId }).select('*')).map((c) => [String(c.id), c]));
  const defaultCampaign = [...campaigns.values()].filter((c) => c.is_default).sort((a, b) => Number(a.id) - Number(b.id))[0];
  const clicks = await db('affiliate_clicks').where({ shop_id: shopId }).select('id', 'partner_id', 'campaign_id', 'visitor_id', 'clicked_at');
  const visitors = new Map((await db('affiliate_order_visitors').where({ shop_id: shopId }).select('order_code', 'visitor_id')).map((r) => [r.order_code, r.visitor_id]));
  const refunded = new Set((await db('claims').where({ shop_id: shopId, type: 'withdrawal', resolution: 'refund' }).select('order_code')).map((r) => r.order_code));
  const programme = await db('affiliate_programmes as p').join('shops as s', 's.account_id', 'p.account_id').where('s.id', shopId).first('p.return_period_days');
  const baseOf = new Map<string, number>();
  for (const it of items) baseOf.set(String(it.order_id), (baseOf.get(String(it.order_id)) ?? 0) + Math.round(Number(it.quantity)) * cents(it.unit_price_without_vat));

  const out = new Map<string, Expected>();
  for (const o of orders) {
    let partnerId: string | undefined;
    let campaign: any;
    let source: 'click' | 'coupon';
    if (o.coupon_code && codes.has(o.coupon_code)) {
      partnerId = codes.get(o.coupon_code);
      campaign = defaultCampaign;
      source = 'coupon';
    } else {
      const visitor = visitors.get(o.code);
      const created = o.created_at.getTime();
      const candidates = clicks.filter((c) => c.visitor_id === visitor && c.clicked_at.getTime() <= created
        && c.clicked_at.getTime() >= created - campaigns.get(String(c.campaign_id)).attribution_window_days * DAY_MS)
        .sort((a, b) => b.clicked_at.getTime() - a.clicked_at.getTime() || Number(b.id) - Number(a.id));
      if (!candidates.length) continue;
      partnerId = String(candidates[0].partner_id);
      campaign = campaigns.get(String(candidates[0].campaign_id));
      source = 'click';
    }
    const base = baseOf.get(String(o.id)) ?? 0;
    const commission = campaign.reward_type === 'percent' ? Math.round((base * cents(campaign.reward_percent)) / 10_000) : cents(campaign.reward_amount);
    const returnEnds = o.created_at.getTime() + programme.return_period_days * DAY_MS;
    let state = 'approved';
    let reason = 'approved_automatically';
    if (o.status_id === ORDER_STATUSES.cancelled.id) [state, reason] = ['rejected', 'order_cancelled'];
    else if (o.status_id === ORDER_STATUSES.returned.id || refunded.has(o.code)) [state, reason] = ['rejected', 'order_returned'];
    else if (TEST_NOW.getTime() < returnEnds) [state, reason] = ['pending', 'return_period'];
    else if (campaign.approval === 'manual') [state, reason] = ['pending', 'awaiting_manual_approval'];
    out.set(o.code, { partnerId: partnerId!, source, campaignId: String(campaign.id), base, commission, state, reason });
  }
  return out;
}

test('When conversions are read, then each equals the attribution, commission base, commission and state computed from the orders and campaign rules', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const expected = await expectedConversions(t, shop.id);
  const actual = await walk(t, '/affiliate/conversions?market=sk');
  t.true(expected.size > 50, `enough conversions to mean something (${expected.size})`);
  t.is(actual.length, expected.size);
  t.true(actual.some((c) => c.source === 'click') && actual.some((c) => c.source === 'coupon'), 'both sources occur');
  const states = new Set<string>();
  for (const c of actual) {
    const e = expected.get(c.orderCode);
    t.truthy(e, `conversion of ${c.orderCode} is expected`);
    if (!e) continue;
    t.is(c.partnerId, e.partnerId, c.orderCode);
    t.is(c.source, e.source, c.orderCode);
    t.is(c.campaignId, e.campaignId, c.orderCode);
    t.is(cents(c.commissionBase.amount), e.base, `${c.orderCode} base`);
    t.is(cents(c.commission.amount), e.commission, `${c.orderCode} commission`);
    if (c.commissionState === 'paid') {
      // Paid means it was approved and its payout has been paid.
      t.is(e.state, 'approved', c.orderCode);
      t.is(c.payout.state, 'paid');
    } else {
      t.is(c.commissionState, e.state, `${c.orderCode} state`);
      t.is(c.stateReason, e.reason, `${c.orderCode} reason`);
    }
    states.add(c.commissionState === 'paid' ? 'paid' : e.reason);
  }
  for (const s of ['paid', 'return_period', 'awaiting_manual_approval', 'order_cancelled', 'order_returned']) t.true(states.has(s), `state ${s} occurs`);
});

/** A decimal string as an integer of `places` decimals (exact; the columns have at most 3 decimals). */
function scaled(decimal: string, places: number): bigint {
  const negative = decimal.startsWith('-');
  const [whole, fraction = ''] = decimal.replace('-', '').split('.');
  const value = BigInt(whole + (fraction + '0'.repeat(places)).slice(0, places));
  return negative ? -value : value;
}

/** An integer of `places` decimals as a decimal string. */
function decimalOf(value: bigint, places: number): string {
  const digits = (value < 0n ? -value : value).toString().padStart(places + 1, '0');
  return `${value < 0n ? '-' : ''}${digits.slice(0, -places)}.${digits.slice(-places)}`;
}

/**
 * Runs the attribution again, in a transaction that is rolled back, for a shop whose conversions were deleted first
 * (the loaded database's conversions were made before the test ran); `prepare` changes rows in the same transaction.
 * Returns the conversions the attribution inserted.
 */
async function reattributed(t: ExecutionContext<Context>, shopId: string, prepare: (trx: any) => Promise<string[] | undefined>): Promise<any[]> {
  let rows: any[] = [];
  await t.context.database.db.transaction(async (trx) => {
    const codes = await prepare(trx);
    const stale = trx('affiliate_conversions').where({ shop_id: shopId });
    await (codes ? stale.whereIn('order_code', codes) : stale).del();
    await attributeOrders(knexRunner(trx), shopId, TEST_NOW, codes);
    const fresh = trx('affiliate_conversions as cv').join('affiliate_campaigns as c', 'c.id', 'cv.campaign_id').where('cv.shop_id', shopId)
      .select('cv.order_id', 'cv.order_code', 'cv.commission_base', 'cv.commission', 'c.reward_type', 'c.reward_percent', 'c.reward_amount');
    rows = await (codes ? fresh.whereIn('cv.order_code', codes) : fresh);
    await trx.rollback();
  });
  return rows;
}

test.serial('When a shop\'s orders are attributed, then each commission base is the goods without VAT and each percent commission is base × percent / 100 rounded to cents (A4)', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'sk');
  const items = await db('order_items as i').join('orders as o', 'o.id', 'i.order_id').where('o.shop_id', shop.id)
    .select('i.order_id', 'i.quantity', 'i.unit_price_without_vat', 'i.unit_price_with_vat');
  // Base: sum of quantity (3 decimals) × unit price without VAT (2 decimals), exact, then rounded to cents.
  const exact = new Map<string, bigint>();
  for (const i of items) exact.set(String(i.order_id), (exact.get(String(i.order_id)) ?? 0n) + scaled(i.quantity, 3) * scaled(i.unit_price_without_vat, 2));
  const conversions = await reattributed(t, shop.id, async () => undefined);
  const percent = conversions.filter((c) => c.reward_type === 'percent');
  t.true(percent.length > 50, `enough percent commissions to mean something (${percent.length})`);
  let fractional = 0;
  for (const c of conversions) {
    const base = roundDecimal(decimalOf(exact.get(String(c.order_id)) ?? 0n, 5), 2);
    t.is(Number(c.commission_base), base, `${c.order_code} base`);
    if (c.reward_type !== 'percent') continue;
    // base (2 decimals) × percent (2 decimals) / 100: 6 decimals exact, rounded half away from zero to 2.
    const commission = roundDecimal(decimalOf(scaled(c.commission_base, 2) * scaled(c.reward_percent, 2), 6), 2);
    t.is(Number(c.commission), commission, `${c.order_code} commission`);
    if (!Number.isInteger(commission)) fractional += 1;
  }
  t.true(fractional > 10, `commissions with cents occur (${fractional})`);
  t.true(items.some((i) => i.unit_price_with_vat !== i.unit_price_without_vat), 'prices with and without VAT differ');
});

test.serial('When an order\'s goods are 123.45 without VAT after a discount and the campaign pays 10 %, then the base is 123.45 and the commission 12.35', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'sk');
  const code = await db('affiliate_discount_codes').where({ shop_id: shop.id }).orderBy('code').first('code', 'partner_id');
  const order = await db('orders').where({ shop_id: shop.id }).orderBy('id').first('id', 'code');
  const rows = await reattributed(t, shop.id, async (trx) => {
    // A partner's code puts the order under the shop's default campaign; its goods are set here (shipping is on the order, not a line).
    await trx('orders').where({ id: order.id }).update({ coupon_code: code.code });
    await trx('affiliate_campaigns').where({ shop_id: shop.id, is_default: true }).update({ reward_type: 'percent', reward_percent: 10, reward_amount: null });
    await trx('order_items').where({ order_id: order.id }).del();
    const line = { order_id: order.id, vat_rate: 23 };
    await trx('order_items').insert([
      { ...line, line_no: 1, kind: 'product', name: 'Two of a kind', quantity: 2, unit_price_without_vat: '60.00', unit_price_with_vat: '73.80' },
      { ...line, line_no: 2, kind: 'product', name: 'One more', quantity: 1, unit_price_without_vat: '13.45', unit_price_with_vat: '16.54' },
      { ...line, line_no: 3, kind: 'discount', name: 'Discount', quantity: 1, unit_price_without_vat: '-10.00', unit_price_with_vat: '-12.30' },
    ]);
    return [order.code];
  });
  t.is(rows.length, 1);
  t.like(rows[0], { commission_base: '123.45', commission: '12.35', reward_percent: '10.00' });
});

test('When one conversion is read, then it equals its row in the listing; another shop\'s id is not found', async (t) => {
  const list = await get(t, '/affiliate/conversions?market=sk&limit=1');
  const one = await get(t, `/affiliate/conversions/${list.body.data[0].conversionId}?market=sk`);
  t.is(one.status, 200);
  t.deepEqual(one.body.data, list.body.data[0]);
  const other = await get(t, `/affiliate/conversions/${list.body.data[0].conversionId}?market=cz`);
  t.is(other.status, 404);
  t.is(other.body.error.code, 'NOT_FOUND');
});

test.serial('When a click lies exactly at the end of the attribution window, then it attributes the order; one millisecond earlier it does not', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'cz');
  const campaign = await db('affiliate_campaigns').where({ shop_id: shop.id, is_default: true }).first('id', 'attribution_window_days');
  const partner = await db('affiliate_partners').where({ account_id: shop.accountId, state: 'approved' }).orderBy('id').first('id');
  const free = await db('orders as o').where('o.shop_id', shop.id).whereNull('o.coupon_code')
    .whereNotExists(db('affiliate_order_visitors as v').whereRaw('v.shop_id = o.shop_id and v.order_code = o.code'))
    .orderBy('o.created_at', 'desc').limit(2).select('o.code', 'o.created_at');
  const windowMs = campaign.attribution_window_days * DAY_MS;
  const [inside, outside] = free;
  for (const [order, gapMs, visitor] of [[inside, windowMs, 'edge-inside'], [outside, windowMs + 1, 'edge-outside']] as const) {
    await db('affiliate_clicks').insert({ shop_id: shop.id, partner_id: partner.id, campaign_id: campaign.id, visitor_id: visitor, clicked_at: new Date(order.created_at.getTime() - gapMs), target_type: 'home' });
    await db('affiliate_order_visitors').insert({ shop_id: shop.id, order_code: order.code, visitor_id: visitor, recorded_at: order.created_at });
  }
  await db.transaction((trx) => settleShopAffiliate(knexRunner(trx), shop, TEST_NOW, [inside.code, outside.code]));
  const conversions = await walk(t, `/affiliate/conversions?market=cz&partnerId=${partner.id}&source=click`);
  const attributed = conversions.find((c) => c.orderCode === inside.code);
  t.truthy(attributed, 'the click exactly at the window edge attributes');
  t.is(attributed.partnerId, String(partner.id));
  t.false(conversions.some((c) => c.orderCode === outside.code), 'a click 1 ms before the window does not');
});

test.serial('When an order carries a partner\'s code and its shopper also followed another partner\'s link, then the code wins', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'cz');
  const campaign = await db('affiliate_campaigns').where({ shop_id: shop.id, is_default: true }).first('id');
  const code = await db('affiliate_discount_codes').where({ shop_id: shop.id }).orderBy('code').first('code', 'partner_id');
  const clicker = await db('affiliate_partners').where({ account_id: shop.accountId, state: 'approved' }).whereNot('id', code.partner_id).orderBy('id').first('id');
  const order = await db('orders as o').where('o.shop_id', shop.id).whereNull('o.coupon_code')
    .whereNotExists(db('affiliate_order_visitors as v').whereRaw('v.shop_id = o.shop_id and v.order_code = o.code'))
    .orderBy('o.created_at', 'desc').offset(10).first('o.code', 'o.created_at');
  await db('orders').where({ shop_id: shop.id, code: order.code }).update({ coupon_code: code.code });
  // The click is an hour before the order, well inside the window: only the rule "partner code first" decides.
  await db('affiliate_clicks').insert({ shop_id: shop.id, partner_id: clicker.id, campaign_id: campaign.id, visitor_id: 'code-and-click', clicked_at: new Date(order.created_at.getTime() - 3_600_000), target_type: 'home' });
  await db('affiliate_order_visitors').insert({ shop_id: shop.id, order_code: order.code, visitor_id: 'code-and-click', recorded_at: order.created_at });
  await db.transaction((trx) => settleShopAffiliate(knexRunner(trx), shop, TEST_NOW, [order.code]));
  const conversion = (await walk(t, '/affiliate/conversions?market=cz')).find((c) => c.orderCode === order.code);
  t.like(conversion, { partnerId: String(code.partner_id), source: 'coupon', couponCode: code.code });
});

test('When the 14-day return period ends, then a commission is pending until the last millisecond and approved at the end (A4)', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'sk');
  const programme = await db('affiliate_programmes').where({ account_id: shop.accountId }).first('return_period_days');
  t.is(programme.return_period_days, 14);
  const conversion = await db('affiliate_conversions as cv').join('affiliate_campaigns as c', 'c.id', 'cv.campaign_id')
    .where({ 'cv.shop_id': shop.id, 'cv.commission_state': 'pending', 'cv.state_reason': 'return_period', 'c.approval': 'automatic' })
    .whereNull('cv.payout_id').whereNull('cv.manual_decision').orderBy('cv.id').first('cv.id', 'cv.order_code', 'cv.ordered_at');
  t.truthy(conversion, 'a commission in its return period on an automatically approved campaign');
  const ends = conversion.ordered_at.getTime() + 14 * DAY_MS;
  const stateAt = async (ms: number) => {
    let row: { commission_state: string; state_reason: string; approved_at: Date | null } | undefined;
    // Each instant in its own transaction, rolled back: the shared demo data stays as loaded.
    await db.transaction(async (trx) => {
      await refreshCommissionStates(knexRunner(trx), shop.id, new Date(ms), [conversion.order_code]);
      row = await trx('affiliate_conversions').where({ id: conversion.id }).first('commission_state', 'state_reason', 'approved_at');
      await trx.rollback();
    }).catch(() => undefined);
    return row!;
  };
  t.like(await stateAt(ends - 1), { commission_state: 'pending', state_reason: 'return_period', approved_at: null });
  const approved = await stateAt(ends);
  t.like(approved, { commission_state: 'approved', state_reason: 'approved_automatically' });
  t.is(approved.approved_at?.getTime(), ends);
});

test.serial('When an order with a conversion is cancelled in the shop, then its commission is rejected with the reason and the order status', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'cz');
  const conversion = await db('affiliate_conversions').where({ shop_id: shop.id, commission_state: 'pending', state_reason: 'return_period' }).orderBy('id').first('id', 'order_id');
  const before = await get(t, `/affiliate/conversions/${conversion.id}?market=cz`);
  t.is(before.body.data.commissionState, 'pending');
  // As the orders sync stores a status change, then the affiliate step of the same batch runs.
  await db.transaction(async (trx) => {
    const order = await trx('orders').where({ id: conversion.order_id }).update({ status_id: ORDER_STATUSES.cancelled.id, status_name: ORDER_STATUSES.cancelled.name }).returning('code');
    await settleShopAffiliate(knexRunner(trx), shop, TEST_NOW, [order[0].code]);
  });
  const after = await get(t, `/affiliate/conversions/${conversion.id}?market=cz`);
  t.is(after.body.data.commissionState, 'rejected');
  t.is(after.body.data.stateReason, 'order_cancelled');
  t.deepEqual(after.body.data.orderStatus, { id: ORDER_STATUSES.cancelled.id, name: ORDER_STATUSES.cancelled.name });
});

test('When the summary is read, then its figures equal those computed from the listings of the same period', async (t) => {
  const from = '2026-09-01';
  const to = '2026-10-31';
  const res = await get(t, `/affiliate/summary?market=sk&from=${from}&to=${to}`);
  t.is(res.status, 200);
  t.deepEqual(res.body.meta.period, { from, to, timeZone: 'Europe/Bratislava' });
  const conversions = await walk(t, `/affiliate/conversions?market=sk&from=${from}&to=${to}`);
  const s = res.body.data;
  t.is(s.conversions.total, conversions.length);
  t.is(s.conversions.bySource.coupon, conversions.filter((c) => c.source === 'coupon').length);
  for (const state of ['pending', 'approved', 'paid', 'rejected']) {
    const sum = conversions.filter((c) => c.commissionState === state).reduce((a, c) => a + cents(c.commission.amount), 0);
    t.is(cents(s.commissions[state].amount), sum, state);
  }
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const clicks = await db('affiliate_clicks').where({ shop_id: shop.id }).select('clicked_at');
  const inPeriod = clicks.filter((c) => {
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: shop.timeZone }).format(c.clicked_at);
    return day >= from && day <= to;
  });
  t.is(s.clicks, inPeriod.length);
  t.is(s.partners.total, 14);
  const stats = await get(t, `/affiliate/statistics?market=sk&from=${from}&to=${to}`);
  t.is(stats.status, 200);
  t.is(stats.body.data.timeline.length, 61);
  t.is(stats.body.data.timeline.reduce((a: number, d: any) => a + d.clicks, 0), s.clicks);
  t.is(stats.body.data.timeline.reduce((a: number, d: any) => a + d.conversions, 0), s.conversions.total);
});

test('When partners are read, then there are twelve indexed partners whose codes are the demo coupon book\'s, with performance and no contact without personal data', async (t) => {
  const partners = await walk(t, '/affiliate/partners?market=sk');
  t.is(partners.length, 14);
  t.true(partners.every((p) => !('contact' in p)), 'no contact without personal-data:read');
  const codes = await get(t, '/affiliate/discount-codes?market=sk');
  t.true(codes.body.data.length >= 10);
  for (const c of codes.body.data) {
    const partner = partners.find((p) => p.partnerId === c.partnerId);
    t.true(c.code.startsWith(partner.handle), `${c.code} is ${partner.handle}'s`);
    t.true(partner.discountCodes.includes(c.code));
  }
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const db = t.context.database.db;
  for (const p of partners) {
    const n = await db('affiliate_conversions').where({ shop_id: shop.id, partner_id: p.partnerId }).count<{ n: string }[]>({ n: '*' });
    t.is(p.performance.conversions, Number(n[0].n), p.handle);
  }
  const withPersonal = await issueKey(db, { scopes: ['affiliate:read', 'personal-data:read'] });
  const full = await get(t, `/affiliate/partners/${partners[0].partnerId}?market=sk`, withPersonal);
  t.truthy(full.body.data.contact.email);
  t.true(full.body.data.availableCampaigns.length >= 1);
});

test('When every affiliate read is scanned, then no bank account, tax id or (without personal data) partner contact appears anywhere', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const secrets = await db('affiliate_partners').where({ account_id: shop.accountId }).select('bank_iban', 'bank_account_holder', 'tax_id', 'vat_id', 'email', 'phone');
  const partner = await db('affiliate_partners').where({ account_id: shop.accountId, state: 'approved' }).orderBy('id').first('id');
  const conversion = await db('affiliate_conversions').where({ shop_id: shop.id }).first('id');
  const campaign = await db('affiliate_campaigns').where({ shop_id: shop.id }).first('id');
  const paths = [
    '/affiliate/settings', '/affiliate/portal', '/affiliate/partners?market=sk&limit=250', `/affiliate/partners/${partner.id}?market=sk`,
    '/affiliate/campaigns?market=sk', `/affiliate/campaigns/${campaign.id}?market=sk`, '/affiliate/conversions?market=sk&limit=250',
    `/affiliate/conversions/${conversion.id}?market=sk`, '/affiliate/discount-codes?market=sk', '/affiliate/code-requests?market=sk',
    '/affiliate/payouts?market=sk&limit=250', '/affiliate/summary?market=sk', '/affiliate/statistics?market=sk',
    `/affiliate/links/generate?market=sk&partnerId=${partner.id}&target=home`,
  ];
  const withPersonal = await issueKey(db, { scopes: ['affiliate:read', 'personal-data:read'] });
  const ibanLike = /\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b/;
  for (const path of paths) {
    for (const [key, personal] of [[t.context.key, false], [withPersonal, true]] as const) {
      const res = await get(t, path, key);
      t.is(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
      const text = JSON.stringify(res.body);
      t.false(ibanLike.test(text), `${path}: nothing IBAN-like`);
      for (const s of secrets) {
        for (const value of [s.bank_iban, s.tax_id, s.vat_id]) t.false(text.includes(value), `${path}: bank/tax value leaked`);
        if (!personal) for (const value of [s.email, s.phone]) t.false(text.includes(value), `${path}: contact leaked without personal data`);
      }
      t.false(/iban|taxId|vatId|bankAccount/i.test(text), `${path}: no bank/tax field names`);
    }
  }
});

test.serial('When a tracked link is generated, then it goes through the portal redirect to the target and stores nothing; bad targets are clear errors', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const partner = await db('affiliate_partners').where({ account_id: shop.accountId, state: 'approved' }).orderBy('id').first('id', 'handle');
  const product = await db('products').where({ shop_id: shop.id }).orderBy('id').first('code');
  const clicksBefore = await db('affiliate_clicks').count<{ n: string }[]>({ n: '*' });
  const res = await get(t, `/affiliate/links/generate?market=sk&partnerId=${partner.id}&target=product&productCode=${encodeURIComponent(product.code)}`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const url = new URL(res.body.data.url);
  t.is(url.pathname, `/r/${partner.handle.toLowerCase()}`);
  t.is(url.searchParams.get('to'), res.body.data.target.url);
  t.true(res.body.data.target.url.endsWith(`/product/${encodeURIComponent(product.code)}`));
  t.is(url.searchParams.get('c'), res.body.data.campaignId);
  t.deepEqual(await db('affiliate_clicks').count<{ n: string }[]>({ n: '*' }), clicksBefore, 'nothing stored');

  const missing = await get(t, `/affiliate/links/generate?market=sk&partnerId=${partner.id}&target=product`);
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'MISSING_PARAMETER');
  const unknown = await get(t, `/affiliate/links/generate?market=sk&partnerId=${partner.id}&target=product&productCode=NOPE-0`);
  t.is(unknown.status, 404);
  // A product only another shop of the account sells is not this shop's: 404, though the code exists.
  const cz = await shopOf(db, 'demo', 'cz');
  const czRow = await db('products').where({ shop_id: cz.id }).orderBy('id').first();
  const [czOnly] = await db('products').insert({ ...rowForInsert(czRow, ['id']), code: 'G16-CZ-ONLY' }).returning('id');
  try {
    const elsewhere = await get(t, `/affiliate/links/generate?market=sk&partnerId=${partner.id}&target=product&productCode=G16-CZ-ONLY`);
    t.is(elsewhere.status, 404, JSON.stringify(elsewhere.body));
    t.is(elsewhere.body.error.code, 'NOT_FOUND');
  } finally {
    await db('products').where({ id: czOnly.id }).delete();
  }
  const badTarget = await get(t, `/affiliate/links/generate?market=sk&partnerId=${partner.id}&target=blog`);
  t.is(badTarget.status, 400);
  const waiting = await db('affiliate_partners').where({ account_id: shop.accountId, state: 'waiting' }).first('id');
  const conflict = await get(t, `/affiliate/links/generate?market=sk&partnerId=${waiting.id}&target=home`);
  t.is(conflict.status, 409);
  t.is(conflict.body.error.code, 'STATE_CONFLICT');
});

test('When code requests are read, then pending ones come first, each group newest first and the later id first at the same instant', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'sk');
  const partner = await db('affiliate_partners').where({ account_id: shop.accountId, state: 'approved' }).orderBy('id').first('id');
  const at = (days: number) => new Date(TEST_NOW.getTime() - days * DAY_MS);
  // A decided request newer than every pending one: "newest first" alone would put it first.
  const insert = (code: string, state: string, requestedAt: Date) => db('affiliate_code_requests')
    .insert({ shop_id: shop.id, partner_id: partner.id, requested_code: code, state, requested_at: requestedAt, reason: state === 'rejected' ? 'test' : null, decided_at: state === 'pending' ? null : requestedAt })
    .returning('id').then(([r]) => String(r.id));
  const olderPending = await insert('ORDERF-OLD', 'pending', at(10));
  const tieFirst = await insert('ORDERF-TIE1', 'pending', at(5));
  const tieSecond = await insert('ORDERF-TIE2', 'pending', at(5));
  const newestDecided = await insert('ORDERF-DONE', 'rejected', at(0));
  const res = await get(t, '/affiliate/code-requests?market=sk');
  t.is(res.status, 200);
  const ids: string[] = res.body.data.map((r: any) => r.requestId);
  const rows = await db('affiliate_code_requests').where({ shop_id: shop.id }).select('id', 'state', 'requested_at');
  const expected = rows.sort((a, b) => Number(b.state === 'pending') - Number(a.state === 'pending')
    || b.requested_at.getTime() - a.requested_at.getTime() || Number(b.id) - Number(a.id)).map((r) => String(r.id));
  t.deepEqual(ids, expected);
  t.true(ids.indexOf(tieSecond) < ids.indexOf(tieFirst), 'the later id first at the same instant');
  t.true(ids.indexOf(tieFirst) < ids.indexOf(olderPending), 'the newer pending request first');
  t.true(ids.indexOf(olderPending) < ids.indexOf(newestDecided), 'every pending request before the newest decided one');
  t.is(res.body.data.find((r: any) => r.requestId === newestDecided).state, 'rejected');
});

test('When another tenant or a key of another shop asks, then partners and campaigns are not found or forbidden', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const partner = await db('affiliate_partners').where({ account_id: shop.accountId }).orderBy('id').first('id');
  const acme = await issueKey(db, { account: 'acme', scopes: ['affiliate:read'] });
  const res = await get(t, `/affiliate/partners/${partner.id}?market=sk`, acme);
  t.is(res.status, 404);
  const czOnly = await issueKey(db, { scopes: ['affiliate:read'], shops: ['cz'] });
  t.is((await get(t, '/affiliate/campaigns?market=sk', czOnly)).status, 403);
  const portals = await get(t, '/affiliate/portal', czOnly);
  t.deepEqual(portals.body.data.portals.map((p: any) => p.market), ['cz']);
  const noScope = await issueKey(db, { scopes: ['orders:read'] });
  t.is((await get(t, '/affiliate/summary?market=sk', noScope)).status, 403);
});

test.serial('When new orders sync, then each one with a partner\'s code becomes that partner\'s conversion in the same batch, and older commissions move on with the clock', async (t) => {
  const db = t.context.database.db;
  const shop = (await findSyncShop(db, 'demo', 'pl'))!;
  const before = await db('affiliate_conversions').where({ shop_id: shop.id }).select('id', 'order_code', 'commission_state', 'state_reason', 'ordered_at');
  const until = new Date(TEST_NOW.getTime() + 20 * DAY_MS);
  await syncArea(db, new DemoPlatform({ db }), shop, 'orders', until, { batchSize: 40 });
  const fresh = await db('orders').where({ shop_id: shop.id }).where('created_at', '>', TEST_NOW).select('code', 'coupon_code', 'created_at');
  const codes = new Map((await db('affiliate_discount_codes').where({ shop_id: shop.id }).select('code', 'partner_id')).map((r) => [r.code, String(r.partner_id)]));
  const withCode = fresh.filter((o) => o.coupon_code && codes.has(o.coupon_code));
  t.true(fresh.length > 50, `orders kept arriving (${fresh.length})`);
  t.true(withCode.length > 0, 'some new orders carry a partner code');
  const conversions = await walk(t, '/affiliate/conversions?market=pl&source=coupon&from=2026-11-20&to=2026-12-31');
  for (const o of withCode) {
    const c = conversions.find((x) => x.orderCode === o.code);
    t.truthy(c, `${o.code} with ${o.coupon_code} is a conversion`);
    t.is(c?.partnerId, codes.get(o.coupon_code));
    t.is(c?.couponCode, o.coupon_code);
  }
  // A conversion still in its return period at the load is approved once the period is over at the sync's end.
  const waited = before.find((c) => c.state_reason === 'return_period' && c.ordered_at.getTime() + 14 * DAY_MS < until.getTime() && c.ordered_at.getTime() + 14 * DAY_MS > TEST_NOW.getTime());
  t.truthy(waited, 'a conversion whose return period ends within the synced window');
  const now = await get(t, `/affiliate/conversions/${waited!.id}?market=pl`);
  t.not(now.body.data.stateReason, 'return_period');
});

test('When the demo programme is loaded, then no partner registered or changed state after the history\'s end', async (t) => {
  const db = t.context.database.db;
  const late = await db('affiliate_partners').where('registered_at', '>', TEST_NOW).orWhere('state_changed_at', '>', TEST_NOW).select('handle', 'registered_at', 'state_changed_at');
  t.deepEqual(late, []);
  t.true((await db('affiliate_partners').where({ state: 'waiting' }).count({ n: '*' }))[0].n as unknown as number > 0, 'the waiting partner exists');
});
