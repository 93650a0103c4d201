/** Sales per product over the real HTTP server: figures equal those computed here in exact integer arithmetic from raw documents, order lines and claims. */
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { issueKey } from '../helpers/server.js';
import { get } from '../helpers/rest.js';

const test = appTest({ scopes: ['reports:read', 'purchase-prices:read'] });
type Context = AppContext;

/** A decimal string as an integer scaled by 10^places. */
function scaled(decimal: string, places: number): bigint {
  const negative = decimal.startsWith('-');
  const [whole, fraction = ''] = decimal.replace('-', '').split('.');
  const v = BigInt(whole) * 10n ** BigInt(places) + BigInt((fraction + '0'.repeat(places)).slice(0, places));
  return negative ? -v : v;
}

/** An integer scaled by 10^11 (quantity 3 + price 2 + rate 6 places) rounded half away from zero to cents. */
function cents11(v: bigint): string {
  const negative = v < 0n;
  const abs = negative ? -v : v;
  const c = (abs + 5n * 10n ** 8n) / 10n ** 9n;
  return `${negative && c > 0n ? '-' : ''}${c / 100n}.${String(c % 100n).padStart(2, '0')}`;
}

interface Expected { revenue: bigint; quantity: bigint; cost: bigint; lines: number; costed: number }

async function expected(t: ExecutionContext<Context>, market: string, from: string, to: string) {
  const db = t.context.database.db;
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': market }).first('s.id', 's.time_zone');
  const docs = await db.raw(`select type, order_code, total_with_vat::text as total, coalesce(tax_date, (issued_at at time zone ?)::date)::text as bday
    from documents where shop_id = ? and type in ('invoice', 'credit_note')`, [shop.time_zone, shop.id]);
  const inPeriod = docs.rows.filter((d: any) => d.bday >= from && d.bday <= to);
  const byProduct = new Map<string, Expected>();
  for (const d of inPeriod) {
    const order = await db('orders').where({ shop_id: shop.id, code: d.order_code }).first('id', 'total_with_vat', 'eur_rate');
    const items = await db('order_items').where({ order_id: order.id, kind: 'product' }).select('line_no', 'product_code', 'quantity', 'unit_price_without_vat', 'purchase_price_without_vat');
    let taken: Array<{ item: any; quantity: string; sign: bigint }>;
    if (d.type === 'invoice') taken = items.map((i: any) => ({ item: i, quantity: i.quantity, sign: 1n }));
    else if (scaled(d.total, 2) === -scaled(order.total_with_vat, 2)) taken = items.map((i: any) => ({ item: i, quantity: i.quantity, sign: -1n }));
    else {
      const claim = await db('claims').where({ shop_id: shop.id, order_code: d.order_code, resolution: 'refund' }).first('items');
      taken = (claim?.items ?? []).map((c: any) => ({ item: items.find((i: any) => i.line_no === c.lineNo), quantity: String(c.quantity), sign: -1n }));
    }
    for (const { item, quantity, sign } of taken) {
      const e = byProduct.get(item.product_code) ?? { revenue: 0n, quantity: 0n, cost: 0n, lines: 0, costed: 0 };
      const q = sign * scaled(quantity, 3);
      e.quantity += q;
      e.revenue += q * scaled(item.unit_price_without_vat, 2) * scaled(order.eur_rate, 6);
      if (item.purchase_price_without_vat !== null) {
        e.cost += q * scaled(item.purchase_price_without_vat, 2) * scaled(order.eur_rate, 6);
        e.costed++;
      }
      e.lines++;
      byProduct.set(item.product_code, e);
    }
  }
  return byProduct;
}

test('When products of a period are read, then quantity, revenue and cost per product equal the raw documents, lines and claims', async (t) => {
  for (const [market, from, to] of [['sk', '2026-08-01', '2026-10-31'], ['cz', '2026-03-29', '2026-03-29']] as const) {
    const rows: any[] = [];
    let cursor: string | null = null;
    let totals: any = null;
    do {
      const res = await get(t, `/sales/product-performance?market=${market}&from=${from}&to=${to}&limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      t.is(res.status, 200, JSON.stringify(res.body));
      rows.push(...res.body.data.products);
      totals ??= res.body.data.totals;
      cursor = res.body.meta.nextCursor;
    } while (cursor);
    const want = await expected(t, market, from, to);
    t.is(rows.length, want.size, `${market}: one row per product`);
    t.is(totals.products, want.size);
    t.is(totals.unmappedLines, 0, 'every demo line matches the catalogue');
    for (const r of rows) {
      const e = want.get(r.productCode)!;
      t.truthy(e, r.productCode);
      t.is(r.revenueWithoutVat.amount, cents11(e.revenue * 1000n / 1000n), `${r.productCode} revenue`);
      t.is(scaled(r.quantity, 3), e.quantity);
      t.is(r.lines, e.lines);
      if (e.costed === e.lines) t.is(r.purchaseCostWithoutVat.amount, cents11(e.cost), `${r.productCode} cost`);
      else t.is(r.purchaseCostWithoutVat, null, 'a product with an unpriced line has no cost');
    }
    for (let i = 1; i < rows.length; i++) t.true(Number(rows[i - 1].revenueWithoutVat.amount) >= Number(rows[i].revenueWithoutVat.amount));
    // The totals' margin is over the products with a known cost only (N9): each product's revenue and cost rounded to
    // cents as its row shows them, summed over the products whose every line is priced.
    const costed = [...want.values()].filter((e) => e.costed === e.lines);
    const sumCents = (values: string[]) => values.reduce((n, v) => n + scaled(v, 2), 0n);
    const costedRevenue = sumCents(costed.map((e) => cents11(e.revenue)));
    const cost = sumCents(costed.map((e) => cents11(e.cost)));
    t.is(totals.productsWithoutCost, want.size - costed.length);
    if (market === 'sk') t.true(want.size - costed.length > 0, 'sk has products with an unpriced line in the period');
    t.is(scaled(totals.costedRevenueWithoutVat.amount, 2), costedRevenue, `${market}: costed revenue over priced products only`);
    t.is(scaled(totals.purchaseCostWithoutVat.amount, 2), cost, `${market}: cost`);
    t.is(scaled(totals.marginWithoutVat.amount, 2), costedRevenue - cost, `${market}: margin`);
    t.is(scaled(totals.revenueWithoutVat.amount, 2), sumCents([...want.values()].map((e) => cents11(e.revenue))), `${market}: revenue of every product`);
  }
});

test('When a credit note takes goods back, then the product\'s quantity and revenue go down by the credited lines', async (t) => {
  const db = t.context.database.db;
  const credit = await db.raw(`
    select coalesce(d.tax_date, (d.issued_at at time zone 'Europe/Bratislava')::date)::text as day
    from documents d join shops s on s.id = d.shop_id join accounts a on a.id = s.account_id
    where a.code = 'demo' and s.code = 'sk' and d.type = 'credit_note' order by d.issued_at desc limit 1`);
  const day = credit.rows[0].day;
  const res = await get(t, `/sales/product-performance?market=sk&from=${day}&to=${day}&limit=250`);
  t.true(res.body.data.products.some((p: any) => p.creditedLines > 0));
  const want = await expected(t, 'sk', day, day);
  for (const p of res.body.data.products) t.is(p.revenueWithoutVat.amount, cents11(want.get(p.productCode)!.revenue));
});

test('When the period is missing or the key lacks purchase-prices:read, then a 400 or the cost fields are absent', async (t) => {
  const missing = await get(t, '/sales/product-performance?market=sk');
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'MISSING_PARAMETER');
  t.is(missing.body.error.details.param, 'from');
  const key = await issueKey(t.context.database.db, { scopes: ['reports:read'] });
  const res = await get(t, '/sales/product-performance?market=sk&from=2026-10-01&to=2026-10-31&limit=5', key);
  t.is(res.status, 200);
  for (const p of res.body.data.products) for (const f of ['purchaseCostWithoutVat', 'marginWithoutVat', 'marginPercent']) t.false(f in p);
  for (const f of ['purchaseCostWithoutVat', 'marginWithoutVat', 'marginPercent', 'costedRevenueWithoutVat', 'productsWithoutCost']) t.false(f in res.body.data.totals);
  t.is(typeof res.body.data.unmappedLines, 'number');
});
