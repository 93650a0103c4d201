/** The demo generator (D20, D21, D22): deterministic, internally consistent, realistic formats. */
import { createHash } from 'node:crypto';
import test from 'ava';
import { SHOPS } from '../../src/platforms/demo/catalogue.js';
import { ean13CheckDigit, generateCatalogue, generateOrders, type GeneratedOrder } from '../../src/platforms/demo/generator.js';
import { withoutVat } from '../../src/platforms/demo/money.js';
import { createRandom } from '../../src/platforms/demo/random.js';

const endDate = new Date('2026-03-15T10:30:00.000Z');
const options = { orders: 600, days: 365, endDate };

function ordersOf(seed: number, shopCode: string, opts = options): GeneratedOrder[] {
  return [...generateOrders(seed, SHOPS[shopCode], opts)];
}

test('When the same seed is used twice, then the data is byte-identical', (t) => {
  for (const code of ['sk', 'hu']) {
    const a = JSON.stringify({ c: generateCatalogue(7, SHOPS[code], options), o: ordersOf(7, code) });
    const b = JSON.stringify({ c: generateCatalogue(7, SHOPS[code], options), o: ordersOf(7, code) });
    t.is(a, b);
  }
});

test('When the seed differs, then the data differs', (t) => {
  t.not(JSON.stringify(ordersOf(7, 'sk').slice(0, 20)), JSON.stringify(ordersOf(8, 'sk').slice(0, 20)));
  t.not(JSON.stringify(generateCatalogue(7, SHOPS.sk, options)), JSON.stringify(generateCatalogue(8, SHOPS.sk, options)));
});

test('When the PRNG is seeded, then its helpers stay in range and repeat', (t) => {
  const a = createRandom(1, 'x');
  const b = createRandom(1, 'x');
  for (let i = 0; i < 1000; i++) {
    const v = a.int(3, 9);
    t.true(v >= 3 && v <= 9);
    t.is(v, b.int(3, 9));
  }
  t.regex(createRandom(5).uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('When products are generated, then EANs have valid check digits, codes are unique and prices are in the shop rates', (t) => {
  for (const shop of Object.values(SHOPS)) {
    const { products, categories, carriers } = generateCatalogue(3, shop, options);
    t.true(products.length >= 250 && products.length <= 300);
    t.is(categories.length, 20);
    t.true(categories.some((c) => c.parentGuid !== null));
    t.is(new Set(products.map((p) => p.code)).size, products.length);
    t.is(new Set(products.map((p) => p.ean)).size, products.length);
    for (const p of products) {
      t.regex(p.ean, /^\d{13}$/);
      t.is(Number(p.ean[12]), ean13CheckDigit(p.ean.slice(0, 12)));
      t.true(shop.vatRates.includes(p.vatRate));
      t.is(p.currency, shop.currency);
      if (p.purchasePriceMinor !== null) t.true(p.purchasePriceMinor < withoutVat(p.priceWithVatMinor, p.vatRate));
    }
    t.true(products.some((p) => p.purchasePriceMinor === null));
    t.true(carriers.length >= 3 && carriers.length <= 4);
  }
  // A known GS1 example: 400638133393 -> check digit 1.
  t.is(ean13CheckDigit('400638133393'), 1);
});

test('When orders are generated, then totals equal the lines plus shipping plus the coupon\'s discount lines, with VAT per line', (t) => {
  for (const code of Object.keys(SHOPS)) {
    for (const o of ordersOf(11, code)) {
      let withVat = o.shippingWithVatMinor;
      let withoutVatSum = withoutVat(o.shippingWithVatMinor, SHOPS[code].vatRates[0]);
      t.true(o.items.length >= 1 && o.items.length <= 5);
      for (const it of o.items) {
        withVat += it.unitPriceWithVatMinor * it.quantity;
        withoutVatSum += withoutVat(it.unitPriceWithVatMinor * it.quantity, it.vatRate);
        t.is(it.unitPriceWithoutVatMinor, withoutVat(it.unitPriceWithVatMinor, it.vatRate));
      }
      for (const d of o.discounts) {
        withVat += d.amountWithVatMinor;
        withoutVatSum += d.amountWithoutVatMinor;
      }
      t.is(o.totalWithVatMinor, withVat);
      t.is(o.totalWithoutVatMinor, withoutVatSum);
      t.is(o.totalVatMinor, o.totalWithVatMinor - o.totalWithoutVatMinor);
    }
  }
});

test('When orders are generated, then codes are unique and variable symbols have at most 10 digits', (t) => {
  const orders = ordersOf(11, 'cz');
  t.is(new Set(orders.map((o) => o.code)).size, orders.length);
  for (const o of orders) t.regex(o.variableSymbol, /^\d{1,10}$/);
});

test('When orders are generated, then every timestamp is ordered and none lies after the end date', (t) => {
  const end = endDate.getTime();
  let previous = 0;
  for (const o of ordersOf(13, 'pl')) {
    const created = o.createdAt.getTime();
    t.true(created >= previous, 'orders stream in time order');
    previous = created;
    t.true(created <= end && o.updatedAt.getTime() <= end && o.updatedAt.getTime() >= created);
    if (o.paidAt) t.true(o.paidAt.getTime() >= created && o.paidAt.getTime() <= end);
    for (const s of o.shipments) {
      t.true(s.createdAt.getTime() > created);
      const times = s.events.map((e) => e.occurredAt.getTime());
      t.deepEqual(times, [...times].sort((a, b) => a - b));
      t.true(times.every((x) => x <= end));
      t.is(s.events[0].status, 'CREATED');
      t.is(s.status, s.events[s.events.length - 1].status);
      if (s.handedOverAt) t.true(s.handedOverAt.getTime() > s.createdAt.getTime());
      const firstDelivery = s.events.find((e) => e.isDelivery);
      t.is(s.deliveredAt?.getTime() ?? null, firstDelivery ? firstDelivery.occurredAt.getTime() : null);
      if (s.deliveredAt && s.handedOverAt) {
        const hours = (s.deliveredAt.getTime() - s.handedOverAt.getTime()) / 3_600_000;
        t.true(hours >= 12 && hours <= 5 * 24 + 1, `delivery took ${hours} h`);
      }
    }
  }
});

test('When a customer hash is computed, then it is the SHA-256 of the trimmed lower-cased e-mail (D22)', (t) => {
  const orders = ordersOf(17, 'sk');
  for (const o of orders.slice(0, 50)) {
    t.is(o.customerEmailHash, createHash('sha256').update(o.customer.email.trim().toLowerCase()).digest('hex'));
    t.regex(o.customerEmailHash, /^[0-9a-f]{64}$/);
  }
  const distinct = new Set(orders.map((o) => o.customerEmailHash)).size;
  // About 30 % of orders come from returning customers.
  t.true(distinct < orders.length * 0.8 && distinct > orders.length * 0.6, `${distinct} customers for ${orders.length} orders`);
});

test('When the outcome mix is looked at, then most shipments are delivered and carriers differ', (t) => {
  const orders = ordersOf(19, 'sk', { ...options, orders: 3000 });
  const outcomes: Record<string, number> = {};
  const shipments = orders.flatMap((o) => o.shipments);
  for (const s of shipments) outcomes[s.outcome] = (outcomes[s.outcome] ?? 0) + 1;
  t.true(outcomes.delivered / shipments.length > 0.8);
  for (const k of ['returned', 'failed', 'cancelled']) t.true((outcomes[k] ?? 0) > 0, k);
  t.true(new Set(shipments.map((s) => s.carrierCode)).size >= 3);
  t.true(shipments.some((s) => s.events.filter((e) => e.isDelivery).length > 1), 'some shipments have a second delivery scan');
  const trackingKeys = shipments.map((s) => `${s.carrierCode}:${s.trackingNumber}`);
  t.is(new Set(trackingKeys).size, trackingKeys.length);
});
