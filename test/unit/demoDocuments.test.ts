/** The demo platform's documents and catalogue content: amounts that add up, states that only move forward, texts that revise on their own instants. */
import test from 'ava';
import { SHOPS } from '../../src/platforms/demo/catalogue.js';
import { availabilityDictionary, contentCapabilities, productTextsChanged } from '../../src/platforms/demo/content.js';
import { documentAt, documentChangeTimes } from '../../src/platforms/demo/documents.js';
import { OrderTimeline } from '../../src/platforms/demo/generator.js';

const DAY = 86_400_000;
const end = new Date('2026-03-15T10:30:00.000Z');
const RANK = { issued: 0, paid: 1, settled: 2, partially_credited: 2, credited: 3, cancelled: 3 } as const;

for (const code of ['sk', 'hu']) {
  test(`When every document of a ${code} history is viewed at its end, then lines and VAT per rate add up to its totals and states only move forward`, (t) => {
    const shop = SHOPS[code];
    const timeline = new OrderTimeline(77, shop, { orders: 2000, days: 365, endDate: end });
    let documents = 0;
    let withDiscount = 0;
    for (const plan of timeline.plans(-Infinity, end.getTime())) {
      for (const d of plan.documents) {
        if (d.issuedAt.getTime() > end.getTime()) continue;
        documents++;
        const record = documentAt(plan, shop, d, end.getTime() + 200 * DAY);
        const sum = (f: (l: (typeof record.lines)[number]) => number) => record.lines.reduce((a, l) => a + f(l), 0);
        t.is(sum((l) => l.totalWithVatMinor), d.totalWithVatMinor, d.code);
        t.is(sum((l) => l.totalWithoutVatMinor), d.totalWithoutVatMinor, d.code);
        t.is(record.vatBreakdown.reduce((a, v) => a + v.vatMinor, 0), d.totalVatMinor, d.code);
        if (record.lines.some((l) => l.kind === 'discount')) withDiscount++;
        // The state at each change instant never goes back.
        let rank = -1;
        for (const at of [...documentChangeTimes(plan, d)].sort((a, b) => a - b)) {
          const state = documentAt(plan, shop, d, at);
          t.true(RANK[state.lifecycle] >= rank, `${d.code} ${state.lifecycle}`);
          rank = RANK[state.lifecycle];
          t.is(state.valid, state.lifecycle !== 'cancelled');
        }
      }
    }
    t.true(documents > 1500, `${documents} documents`);
    t.true(withDiscount > 20, `${withDiscount} documents with coupon discount lines`);
  });
}

test('When the four demo shops are compared, then their platforms show both dictionary answers and all three reasons', (t) => {
  const caps = ['sk', 'cz', 'hu', 'pl'].map((c) => contentCapabilities(SHOPS[c]));
  t.deepEqual([...new Set(caps.map((c) => c.availabilityManageable))].sort(), [false, true]);
  t.deepEqual(caps.map((c) => c.availabilityReason).filter(Boolean).sort(), ['BEZ_ROZSIRENIA', 'PLATFORMA', 'PROSTREDIE']);
  t.true(caps.every((c) => c.availabilityManageable === (c.availabilityReason === null)));
  t.deepEqual(availabilityDictionary(SHOPS.pl).map((a) => a.name), ['Dostępny', 'Do 3 dni', 'Na zamówienie', 'Przedsprzedaż', 'Wyprzedane']);
});

test('When product texts are read for consecutive windows, then each revision appears once, in the window of its instant', (t) => {
  const shop = SHOPS.cz;
  const timeline = new OrderTimeline(77, shop, { orders: 500, days: 365, endDate: end });
  const model = timeline.model;
  const all = productTextsChanged(77, shop, model, null, end.getTime());
  t.is(all.length, model.products.length, 'a first read has every product');
  const windows = [0, 30, 60, 90].map((d) => end.getTime() + d * DAY);
  const seen: string[] = [];
  for (let i = 1; i < windows.length; i++) {
    for (const p of productTextsChanged(77, shop, model, windows[i - 1], windows[i])) {
      t.true(p.updatedAt.getTime() > windows[i - 1] && p.updatedAt.getTime() <= windows[i]);
      seen.push(`${p.code}|${p.updatedAt.toISOString()}`);
    }
  }
  t.is(new Set(seen).size, seen.length);
  t.true(seen.length > 50, `${seen.length} revisions in 90 days`);
  t.deepEqual(productTextsChanged(77, shop, model, windows[0], windows[3]).map((p) => p.code).sort(),
    [...new Set(seen.map((s) => s.split('|')[0]))].sort(), 'one long window has each product revised in it once');
});
