/** Analytics over the real HTTP server: every figure equals the same figure computed here from raw visits, tracking, orders and ad spend; the shop's zone, the 24-month and 6-month limits, scopes and the sync of the new area. */
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { issueKey } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { CANCELLED_STATUS_ID } from '../../src/rollups/orders.js';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { get } from '../helpers/rest.js';
import { shopOf } from '../helpers/shops.js';

const test = appTest({ scopes: ['analytics:read', 'reports:read'] });
type Context = AppContext;

/** Raw figures of a period: orders and revenue from orders, visits from web_visits, tracked orders from order_tracking. */
async function raw(t: ExecutionContext<Context>, code: string, from: string, to: string) {
  const shop = await shopOf(t.context.database.db, 'demo', code);
  const r = await t.context.database.db.raw(`
    with o as (select * from orders where shop_id = :id and status_id <> :c
                 and created_at >= (:from::date)::timestamp at time zone :tz and created_at < ((:to::date) + 1)::timestamp at time zone :tz)
    select (select count(*)::int from o) as orders,
           (select round(coalesce(sum(total_with_vat * eur_rate), 0), 2)::text from o) as revenue,
           (select coalesce(sum(visits), 0)::int from web_visits where shop_id = :id and day between :from::date and :to::date) as visits,
           (select coalesce(sum(visits), 0)::int from web_visits where shop_id = :id and day between :from::date and :to::date
              and source in ('chatgpt', 'perplexity', 'gemini', 'claude', 'copilot')) as ai_visits,
           (select count(*)::int from o join order_tracking ot on ot.shop_id = o.shop_id and ot.order_code = o.code) as tracked,
           (select round(coalesce(sum(o.total_with_vat * o.eur_rate), 0), 2)::text from o join order_tracking ot on ot.shop_id = o.shop_id and ot.order_code = o.code) as tracked_revenue,
           (select count(*)::int from o join order_tracking ot on ot.shop_id = o.shop_id and ot.order_code = o.code where ot.channel = 'ai_assistant') as ai_orders`,
  { id: shop.id, tz: shop.timeZone, from, to, c: CANCELLED_STATUS_ID });
  return r.rows[0];
}

test('When the overview and order coverage are read, then visits, orders, revenue, tracking and the AI share equal the raw rows', async (t) => {
  for (const [market, from, to] of [['sk', '2026-10-01', '2026-10-31'], ['hu', '2026-03-27', '2026-03-30'], ['pl', '2025-12-01', '2026-11-20']] as const) {
    const r = await raw(t, market, from, to);
    const o = await get(t, `/analytics/overview?market=${market}&from=${from}&to=${to}`);
    t.is(o.status, 200, JSON.stringify(o.body));
    t.is(o.body.data.orders, r.orders);
    t.is(o.body.data.revenueWithVat.amount, r.revenue);
    t.is(o.body.data.visits, r.visits);
    t.is(o.body.data.trackedOrders, r.tracked);
    t.is(o.body.data.aiAssistants.visits, r.ai_visits);
    t.is(o.body.data.aiAssistants.orders, r.ai_orders);
    t.true(r.ai_visits > 0, 'AI assistants send visits');
    t.is(o.body.data.conversionRate, Math.round((r.orders / r.visits) * 10_000) / 10_000);
    const c = await get(t, `/analytics/order-coverage?market=${market}&from=${from}&to=${to}`);
    t.is(c.body.data.trackedOrders, r.tracked);
    t.is(c.body.data.untrackedOrders, r.orders - r.tracked);
    t.is(c.body.data.trackedRevenueWithVat.amount, r.tracked_revenue);
    t.true(c.body.data.orderCoverage > 0.7 && c.body.data.orderCoverage < 0.95);
  }
  const month = await get(t, '/analytics/overview?market=sk');
  t.deepEqual(month.body.meta.period, { from: '2026-11-01', to: '2026-11-20', timeZone: 'Europe/Bratislava' });
});

test('When channels are read, then AI assistants are recognised by referrer and each channel\'s tracked orders equal the raw tracking', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'cz');
  const res = await get(t, '/analytics/channels?market=cz&from=2026-09-01&to=2026-09-30');
  t.is(res.status, 200);
  const ai = res.body.data.channels.find((c: any) => c.channel === 'ai_assistant');
  t.truthy(ai);
  t.true(ai.aiAssistant);
  t.deepEqual(ai.sources.map((s: any) => s.source).sort(), ['chatgpt', 'claude', 'copilot', 'gemini', 'perplexity']);
  const leftovers = await db('web_visits').where({ shop_id: shop.id }).whereIn('source', ['chatgpt.com', 'claude.ai']).count({ n: '*' });
  t.is(Number(leftovers[0].n), 0, 'no AI referral stays filed under referral');
  const rawChannels = await db.raw(`
    select ot.channel, count(*)::int as orders from orders o join order_tracking ot on ot.shop_id = o.shop_id and ot.order_code = o.code
    where o.shop_id = ? and o.status_id <> ? and o.created_at >= '2026-09-01'::timestamp at time zone 'Europe/Prague' and o.created_at < '2026-10-01'::timestamp at time zone 'Europe/Prague'
    group by ot.channel`, [shop.id, CANCELLED_STATUS_ID]);
  for (const r of rawChannels.rows) t.is(res.body.data.channels.find((c: any) => c.channel === r.channel)?.orders, r.orders, r.channel);
  const r = await raw(t, 'cz', '2026-09-01', '2026-09-30');
  t.is(res.body.data.untracked.orders, r.orders - r.tracked);
  for (let i = 1; i < res.body.data.channels.length; i++) t.true(Number(res.body.data.channels[i - 1].revenueWithVat.amount) >= Number(res.body.data.channels[i].revenueWithVat.amount));
});

test('When the heatmap is read over a DST change, then orders are counted by weekday and hour in the shop\'s zone', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const res = await get(t, '/analytics/order-heatmap?market=sk&from=2026-03-23&to=2026-04-05');
  t.is(res.status, 200);
  t.is(res.body.data.timeZone, 'Europe/Bratislava');
  t.is(res.body.data.cells.length, 168);
  const rawCells = await t.context.database.db.raw(`
    select extract(isodow from created_at at time zone 'Europe/Bratislava')::int as w, extract(hour from created_at at time zone 'Europe/Bratislava')::int as h, count(*)::int as n
    from orders where shop_id = ? and status_id <> ? and created_at >= '2026-03-23'::timestamp at time zone 'Europe/Bratislava' and created_at < '2026-04-06'::timestamp at time zone 'Europe/Bratislava'
    group by 1, 2`, [shop.id, CANCELLED_STATUS_ID]);
  const names = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
  const expected = new Map<string, number>(rawCells.rows.map((r: any) => [`${names[r.w - 1]}|${r.h}`, r.n]));
  for (const c of res.body.data.cells) t.is(c.orders, expected.get(`${c.weekday}|${c.hour}`) ?? 0, `${c.weekday} ${c.hour}`);
  const byHour = res.body.data.byHour.map((h: any) => h.orders);
  t.is(res.body.data.strongestHour, byHour.indexOf(Math.max(...byHour)));
  t.is(res.body.data.orders, rawCells.rows.reduce((n: number, r: any) => n + r.n, 0));
});

test('When monthly analytics is asked for more than 24 months, then 400; 24 months give 24 rows equal to the raw orders', async (t) => {
  const long = await get(t, '/analytics/monthly?market=sk&fromMonth=2024-10&toMonth=2026-10');
  t.is(long.status, 400);
  t.is(long.body.error.code, 'PERIOD_TOO_LONG');
  const reversed = await get(t, '/analytics/monthly?market=sk&fromMonth=2026-10&toMonth=2026-01');
  t.is(reversed.body.error.code, 'PERIOD_REVERSED');
  t.is((await get(t, '/analytics/monthly?market=sk&fromMonth=2026-13')).status, 400);
  const res = await get(t, '/analytics/monthly?market=sk&fromMonth=2024-12&toMonth=2026-11');
  t.is(res.status, 200);
  t.is(res.body.data.months.length, 24);
  t.deepEqual(res.body.data.period, { from: '2024-12-01', to: '2026-11-30' });
  for (const m of res.body.data.months.filter((x: any) => x.month >= '2026-01')) {
    const last = new Date(Date.UTC(Number(m.month.slice(0, 4)), Number(m.month.slice(5)), 0)).toISOString().slice(0, 10);
    const r = await raw(t, 'sk', `${m.month}-01`, last);
    t.is(m.orders, r.orders, m.month);
    t.is(m.revenueWithVat.amount, r.revenue, m.month);
    t.is(m.visits, r.visits, m.month);
  }
  t.is(res.body.data.months[0].orders, 0, 'before the history: zeros, not missing');
  const dflt = await get(t, '/analytics/monthly?market=sk');
  t.is(dflt.body.data.months.length, 12);
  t.is(dflt.body.data.months[11].month, '2026-11');
});

test('When advertising is read, then two platforms with at least six months of spend, figures equal the raw rows, and earlier than six months is a 400', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'hu');
  const months = await db.raw(`select count(distinct date_trunc('month', day))::int as n, count(distinct platform)::int as p from ad_spend_daily where shop_id = ?`, [shop.id]);
  t.true(months.rows[0].n >= 6);
  t.is(months.rows[0].p, 2);
  t.is((await get(t, '/analytics/advertising?market=hu&from=2026-05-19&to=2026-06-01')).status, 400);
  const res = await get(t, '/analytics/advertising?market=hu&from=2026-05-20&to=2026-11-19');
  t.is(res.status, 200, JSON.stringify(res.body));
  const spend = await db.raw(`select round(sum(spend * eur_rate), 2)::text as spend, round(sum(conversion_value * eur_rate), 2)::text as value
    from ad_spend_daily where shop_id = ? and day between '2026-05-20' and '2026-11-19'`, [shop.id]);
  t.is(res.body.data.spend.amount, spend.rows[0].spend);
  t.deepEqual(res.body.data.platforms.map((p: any) => p.platform), ['google_ads', 'meta_ads']);
  const r = await raw(t, 'hu', '2026-05-20', '2026-11-19');
  t.is(res.body.data.revenueWithVat.amount, r.revenue);
  t.is(res.body.data.mer, Math.round((Number(r.revenue) / Number(spend.rows[0].spend)) * 100) / 100);
  t.true(res.body.data.spendShareOfRevenue > 0.03 && res.body.data.spendShareOfRevenue < 0.2);
  t.is(res.body.data.comparison.from, '2025-11-17', 'the same number of days just before');
  t.true(res.body.data.clicksInWebAnalytics > 0);
});

test('When a period is compared with the previous year or period, then both sides equal their own raw figures', async (t) => {
  const res = await get(t, '/analytics/comparison?market=pl&from=2026-10-01&to=2026-10-31&compareTo=previous_period');
  t.is(res.status, 200);
  t.deepEqual([res.body.data.previous.from, res.body.data.previous.to], ['2026-08-31', '2026-09-30']);
  const prev = await raw(t, 'pl', '2026-08-31', '2026-09-30');
  const cur = await raw(t, 'pl', '2026-10-01', '2026-10-31');
  t.is(res.body.data.previous.orders, prev.orders);
  t.is(res.body.data.current.revenueWithVat.amount, cur.revenue);
  t.is(res.body.data.changePercent.orders, Math.round(((cur.orders - prev.orders) / prev.orders) * 10_000) / 100);
  const year = await get(t, '/analytics/comparison?market=pl&from=2026-11-01&to=2026-11-20&compareTo=previous_year');
  t.deepEqual([year.body.data.previous.from, year.body.data.previous.to], ['2025-11-01', '2025-11-20']);
  t.is((await get(t, '/analytics/comparison?market=pl&compareTo=last_week')).status, 400);
});

test('When scopes or tenants differ, then analytics:read reaches only its tools and another tenant sees its own figures', async (t) => {
  const db = t.context.database.db;
  const analyticsOnly = await issueKey(db, { scopes: ['analytics:read'] });
  t.is((await get(t, '/analytics/overview?market=sk', analyticsOnly)).status, 200);
  t.is((await get(t, '/analytics/channels?market=sk', analyticsOnly)).status, 200);
  for (const path of ['comparison', 'monthly', 'order-heatmap', 'revenue-sources', 'advertising']) {
    t.is((await get(t, `/analytics/${path}?market=sk`, analyticsOnly)).status, 403, path);
  }
  const acme = await issueKey(db, { account: 'acme', scopes: ['analytics:read'] });
  const a = await get(t, '/analytics/overview?market=sk&from=2026-10-01&to=2026-10-31', acme);
  const d = await get(t, '/analytics/overview?market=sk&from=2026-10-01&to=2026-10-31');
  t.not(a.body.data.orders, d.body.data.orders);
  t.is((await get(t, '/analytics/overview?market=hu', acme)).status, 404);
  const sources = await get(t, '/analytics/revenue-sources?market=sk&from=2026-10-01&to=2026-10-31');
  const shares = sources.body.data.channels.reduce((n: number, c: any) => n + Number(c.revenueWithVat.amount), 0) + Number(sources.body.data.untracked.revenueWithVat.amount);
  t.is(Math.round(shares * 100), Math.round(Number(sources.body.data.revenueWithVat.amount) * 100), 'channels + untracked = revenue');
});

test('When the sync reads new days of web analytics, then visits, tracking and channel rollups arrive once and equal a rebuild', async (t) => {
  const db = t.context.database.db;
  const shop = (await findSyncShop(db, 'acme', 'cz'))!;
  const until = new Date(TEST_NOW.getTime() + 3 * 86_400_000);
  const platform = new DemoPlatform({ db, wallClock: () => until });
  await syncArea(db, platform, shop, 'orders', until, { batchSize: 30 });
  const first = await syncArea(db, platform, shop, 'web_analytics', until, { batchSize: 30 });
  t.true(first.written > 0);
  const days = await db('web_visits').where({ shop_id: shop.id }).where('day', '>=', '2026-11-20').distinct('day');
  t.true(days.length >= 3, 'the new days were reported');
  const rolled = await db.raw(`select day::text, channel, source, visits, orders_count, revenue_with_vat_eur::text as revenue from channel_daily_rollups where shop_id = ? order by 1, 2, 3`, [shop.id]);
  const { refreshChannelDays } = await import('../../src/rollups/channels.js');
  const { knexRunner } = await import('../../src/rollups/orders.js');
  await db.transaction((trx) => refreshChannelDays(knexRunner(trx), shop.id, null));
  const rebuilt = await db.raw(`select day::text, channel, source, visits, orders_count, revenue_with_vat_eur::text as revenue from channel_daily_rollups where shop_id = ? order by 1, 2, 3`, [shop.id]);
  t.deepEqual(rolled.rows, rebuilt.rows);
  const tracked = await db('order_tracking').where({ shop_id: shop.id }).count({ n: '*' });
  const again = await syncArea(db, platform, shop, 'web_analytics', until, { batchSize: 30 });
  t.is(again.records, 0, 'nothing twice');
  t.deepEqual(await db('order_tracking').where({ shop_id: shop.id }).count({ n: '*' }), tracked);
});
