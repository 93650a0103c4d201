/** Coupons of the demo shops and their use in orders: discount lines that lower the totals, rules of each coupon kept. */
import test from 'ava';
import { SHOPS } from '../../src/platforms/demo/catalogue.js';
import { CouponBook, DEMO_PARTNER_CODES } from '../../src/platforms/demo/coupons.js';
import { buildCatalogueModel } from '../../src/platforms/demo/generateCatalogue.js';
import { OrderTimeline } from '../../src/platforms/demo/generator.js';
import { withoutVat } from '../../src/platforms/demo/money.js';
import { DAY_MS } from '../../src/platforms/demo/time.js';

const endDate = new Date('2026-03-15T10:30:00.000Z');
const options = { orders: 4000, days: 365, endDate };

for (const code of ['sk', 'hu']) {
  test(`When ${code} orders are generated, then some carry a coupon whose discount lines are exactly what lowers the totals`, (t) => {
    const shop = SHOPS[code];
    const timeline = new OrderTimeline(11, shop, options);
    const plans = [...timeline.plans(-Infinity, endDate.getTime())];
    const withCoupon = plans.filter((p) => p.couponCode !== null);
    const share = withCoupon.length / plans.length;
    t.true(share > 0.05 && share < 0.2, `coupon share ${share}`);
    const kinds = new Set<string>();
    for (const p of plans) {
      const goodsWith = p.items.reduce((s, it) => s + it.unitPriceWithVatMinor * it.quantity, 0);
      const goodsWithout = p.items.reduce((s, it) => s + withoutVat(it.unitPriceWithVatMinor * it.quantity, it.vatRate), 0);
      const discountWith = p.discounts.reduce((s, d) => s + d.amountWithVatMinor, 0);
      const discountWithout = p.discounts.reduce((s, d) => s + d.amountWithoutVatMinor, 0);
      t.is(p.totalWithVatMinor, goodsWith + p.shippingWithVatMinor + discountWith, p.code);
      t.is(p.totalWithoutVatMinor, goodsWithout + withoutVat(p.shippingWithVatMinor, shop.vatRates[0]) + discountWithout, p.code);
      t.is(p.couponCode === null, p.discounts.length === 0);
      for (const d of p.discounts) {
        t.true(d.couponCode === p.couponCode);
        t.true(d.amountWithVatMinor < 0 && d.amountWithoutVatMinor <= 0);
        t.true(shop.vatRates.includes(d.vatRate));
      }
      t.true(p.totalWithVatMinor >= 0);
      if (p.couponCode) {
        const coupon = timeline.coupons.couponsAt(p.createdMs).find((c) => c.code === p.couponCode);
        t.truthy(coupon, `${p.couponCode} exists when ${p.code} is created`);
        if (!coupon) continue;
        kinds.add(coupon.partnerIndex !== null ? 'partner' : coupon.discount.type);
        t.true(coupon.validFrom === null || coupon.validFrom.getTime() <= p.createdMs);
        t.true(coupon.validUntil === null || p.createdMs < coupon.validUntil.getTime());
        t.true(coupon.enabled);
      }
    }
    t.true(kinds.has('partner') && kinds.has('percent') && kinds.has('free_shipping'), [...kinds].join(','));
    // Usage limits hold over the whole history.
    const uses = new Map<string, number>();
    for (const p of withCoupon) uses.set(p.couponCode!, (uses.get(p.couponCode!) ?? 0) + 1);
    for (const c of timeline.coupons.couponsAt(endDate.getTime())) {
      if (c.usageLimit !== null) t.true((uses.get(c.code) ?? 0) <= c.usageLimit, c.code);
    }
  });
}

test('When the coupon book is read at two instants, then it only grows, switched-off campaigns show as enabled before the switch, and partner codes are the fixed set', (t) => {
  const shop = SHOPS.cz;
  const model = buildCatalogueModel(5, shop, options);
  const book = new CouponBook(5, shop, model);
  const early = book.couponsAt(endDate.getTime() - 200 * DAY_MS);
  const late = book.couponsAt(endDate.getTime() + 60 * DAY_MS);
  t.true(late.length > early.length);
  for (const c of early) t.truthy(late.find((l) => l.code === c.code));
  t.is(new Set(late.map((c) => c.code)).size, late.length, 'codes are unique');
  const switchedOff = late.find((c) => c.disabledAt !== null && c.disabledAt.getTime() <= endDate.getTime() + 60 * DAY_MS);
  t.truthy(switchedOff);
  const before = book.couponsAt(switchedOff!.disabledAt!.getTime() - 1).find((c) => c.code === switchedOff!.code)!;
  t.true(before.enabled);
  t.false(switchedOff!.enabled);
  const partners = book.couponsAt(endDate.getTime() + 400 * DAY_MS).filter((c) => c.partnerIndex !== null);
  t.is(partners.length, DEMO_PARTNER_CODES);
  // Same seed, same book.
  t.deepEqual(new CouponBook(5, shop, buildCatalogueModel(5, shop, options)).couponsAt(endDate.getTime()), book.couponsAt(endDate.getTime()));
});
