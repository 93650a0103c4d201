/**
 * Property test of customers performance (fast-check, real Postgres, real HTTP): for random shops, periods (DST
 * changes and month ends included, short ones and whole-history ones) and page sizes, the first two pages (first and
 * last non-cancelled order included) and the totals equal the same figures computed here by plain SQL over raw orders.
 */
import fc from 'fast-check';
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { CANCELLED_STATUS_ID } from '../../src/rollups/orders.js';
import { get } from '../helpers/rest.js';

const test = appTest({ scopes: ['reports:read'] });
type Context = AppContext;
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

interface RawRow { key: string; currency: string; orders: number; revenue: string; lifetime_orders: number; first_at: Date; last_at: Date }

/** Rows per (customer, currency) of the period from raw orders, ranked as the endpoint ranks them, with lifetime orders. */
async function rawRows(t: ExecutionContext<Context>, market: string, from: string, to: string): Promise<RawRow[]> {
  const { rows } = await t.context.database.db.raw(`
    with s as (select s.id, s.time_zone from shops s join accounts a on a.id = s.account_id where a.code = 'demo' and s.code = :market),
    o as (select o.* from orders o, s where o.shop_id = s.id and o.status_id <> :cancelled)
    select trim(o.customer_email_hash) as key, trim(o.currency) as currency, count(*)::int as orders, sum(o.total_with_vat)::text as revenue,
           min(o.created_at) as first_at, max(o.created_at) as last_at,
           (select count(*)::int from o l where l.customer_email_hash = o.customer_email_hash and l.currency = o.currency) as lifetime_orders
    from o, s
    where o.created_at >= (:from::date)::timestamp at time zone s.time_zone and o.created_at < ((:to::date) + 1)::timestamp at time zone s.time_zone
    group by o.customer_email_hash, o.currency
    order by sum(o.total_with_vat) desc, o.customer_email_hash, o.currency`, { market, from, to, cancelled: CANCELLED_STATUS_ID });
  return rows;
}

test('When random shops, periods and page sizes are asked, then customers performance pages and totals equal the raw orders', async (t) => {
  let checks = 0;
  const arb = fc.record({
    market: fc.constantFrom('sk', 'cz', 'hu', 'pl'),
    // Around the demo history (it ends 2026-11-20): some periods start before it and some cover all of it.
    start: fc.oneof(fc.integer({ min: 0, max: 360 }), fc.constantFrom(123, 333, 340)),
    length: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 365 })),
    limit: fc.integer({ min: 1, max: 60 }),
  });
  await fc.assert(fc.asyncProperty(arb, async ({ market, start, length, limit }) => {
    // Day 123 = 2026-03-29 and 333 = 2026-10-25 (DST changes), 340 = 2026-11-01 (a month start).
    const from = addDays('2025-11-26', start);
    const to = addDays(from, length);
    const raw = await rawRows(t, market, from, to);
    const first = await get(t, `/customers/performance?market=${market}&from=${from}&to=${to}&limit=${limit}`);
    if (first.status !== 200) throw new Error(`${first.status} ${JSON.stringify(first.body)}`);
    const data = first.body.data;
    const label = `${market} ${from}..${to} limit ${limit}`;
    const customers = new Set(raw.map((r) => r.key)).size;
    const orders = raw.reduce((n, r) => n + r.orders, 0);
    if (data.totals.customers !== customers || data.totals.ordersCount !== orders) {
      throw new Error(`${label}: totals ${JSON.stringify(data.totals)} vs raw ${customers} customers, ${orders} orders`);
    }
    const byCurrency = new Map<string, bigint>();
    for (const r of raw) byCurrency.set(r.currency, (byCurrency.get(r.currency) ?? 0n) + BigInt(r.revenue.replace('.', '')));
    const want = [...byCurrency].sort(([a], [b]) => a.localeCompare(b)).map(([currency, cents]) => `${currency} ${(Number(cents) / 100).toFixed(2)}`);
    const got = data.totals.revenueByCurrency.map((m: { currency: string; amount: string }) => `${m.currency} ${m.amount}`).sort();
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${label}: revenue ${got} vs raw ${want}`);
    const pages = [data.customers];
    const nextCursor = first.body.meta.nextCursor;
    if (nextCursor) {
      const second = await get(t, `/customers/performance?market=${market}&from=${from}&to=${to}&limit=${limit}&cursor=${encodeURIComponent(nextCursor)}`);
      pages.push(second.body.data.customers);
    }
    const seen = pages.flat().map((c: any) => `${c.customerKey} ${c.currency} ${c.ordersCount} ${c.revenue.amount} ${c.lifetimeOrdersCount} ${c.firstOrderAt} ${c.lastOrderAt}`);
    const expected = raw.slice(0, seen.length)
      .map((r) => `${r.key} ${r.currency} ${r.orders} ${Number(r.revenue).toFixed(2)} ${r.lifetime_orders} ${r.first_at.toISOString()} ${r.last_at.toISOString()}`);
    if (JSON.stringify(seen) !== JSON.stringify(expected)) throw new Error(`${label}: pages differ from the raw ranking\n${seen.slice(0, 5)}\n${expected.slice(0, 5)}`);
    if (seen.length !== Math.min(raw.length, limit * 2)) throw new Error(`${label}: ${seen.length} rows on two pages of ${raw.length}`);
    checks++;
  }), { numRuns: 30, seed: 20261124 });
  t.is(checks, 30);
});
