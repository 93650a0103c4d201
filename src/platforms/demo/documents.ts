/**
 * Accounting documents of a demo order as the shop shows them at an instant. The issued content (lines, VAT per rate,
 * buyer, amounts) follows from the order and never changes; the state moves with payment, the invoice that settles a
 * proforma, credit notes and cancellation. Nothing here draws random numbers, so every existing stream stays as it was.
 */
import crypto from 'node:crypto';
import type { ShopDefinition } from './catalogue.js';
import { withoutVat } from './money.js';
import { localDateUtc } from './time.js';
import type { OrderPlan } from './timeline.js';
import type { DocumentLifecycle, GeneratedDocument, GeneratedDocumentLine, GeneratedDocumentRecord, GeneratedVatRateLine } from './types.js';

/** The demo platform's own names of document states (what its back office shows); `lifecycle` is the neutral form. */
const SOURCE_STATES: Record<DocumentLifecycle, string> = {
  issued: 'vystavena',
  paid: 'uhradena',
  settled: 'vyuctovana',
  partially_credited: 'ciastocne_dobropisovana',
  credited: 'dobropisovana',
  cancelled: 'stornovana',
};

/** About one document in 40 was imported from an outside accounting system and has no printable form in the shop. */
function hasPdf(shopCode: string, code: string): boolean {
  return crypto.createHash('sha256').update(`pdf|${shopCode}|${code}`).digest()[0] >= 7;
}

const localDate = (timeZone: string, ms: number) => new Date(localDateUtc(timeZone, ms)).toISOString().slice(0, 10);

/** The order's lines as an invoice prints them: goods, shipping (when charged), then the coupon's discount lines. */
function orderLines(plan: OrderPlan, shop: ShopDefinition): GeneratedDocumentLine[] {
  const lines: GeneratedDocumentLine[] = plan.items.map((it) => {
    const total = it.unitPriceWithVatMinor * it.quantity;
    return {
      lineNo: 0, kind: 'product', productCode: it.productCode, name: it.name, quantity: it.quantity,
      unitPriceWithVatMinor: it.unitPriceWithVatMinor, totalWithVatMinor: total, totalWithoutVatMinor: withoutVat(total, it.vatRate), vatRate: it.vatRate,
    };
  });
  if (plan.shippingWithVatMinor > 0) {
    const rate = shop.vatRates[0];
    lines.push({
      lineNo: 0, kind: 'shipping', productCode: null, name: plan.shippingMethod, quantity: 1, unitPriceWithVatMinor: plan.shippingWithVatMinor,
      totalWithVatMinor: plan.shippingWithVatMinor, totalWithoutVatMinor: withoutVat(plan.shippingWithVatMinor, rate), vatRate: rate,
    });
  }
  for (const d of plan.discounts) {
    lines.push({
      lineNo: 0, kind: 'discount', productCode: null, name: d.name, quantity: 1, unitPriceWithVatMinor: d.amountWithVatMinor,
      totalWithVatMinor: d.amountWithVatMinor, totalWithoutVatMinor: d.amountWithoutVatMinor, vatRate: d.vatRate,
    });
  }
  return lines.map((l, i) => ({ ...l, lineNo: i + 1 }));
}

/** A credit note's lines: the refunded claim items, or the whole order negated when the parcel came back. */
function creditLines(plan: OrderPlan, shop: ShopDefinition): GeneratedDocumentLine[] {
  if (plan.claim?.resolution === 'refund') {
    return plan.claim.items.map((c, i) => {
      const line = plan.items.find((l) => l.lineNo === c.lineNo)!;
      const total = line.unitPriceWithVatMinor * c.quantity;
      return {
        lineNo: i + 1, kind: 'product' as const, productCode: line.productCode, name: line.name, quantity: -c.quantity,
        unitPriceWithVatMinor: line.unitPriceWithVatMinor, totalWithVatMinor: -total, totalWithoutVatMinor: -withoutVat(total, line.vatRate), vatRate: line.vatRate,
      };
    });
  }
  return orderLines(plan, shop).map((l) => ({ ...l, quantity: -l.quantity, totalWithVatMinor: -l.totalWithVatMinor, totalWithoutVatMinor: -l.totalWithoutVatMinor }));
}

/** VAT per rate over the lines, highest rate first. */
export function vatBreakdown(lines: GeneratedDocumentLine[]): GeneratedVatRateLine[] {
  const byRate = new Map<number, GeneratedVatRateLine>();
  for (const l of lines) {
    const r = byRate.get(l.vatRate) ?? { vatRate: l.vatRate, baseMinor: 0, vatMinor: 0, totalMinor: 0 };
    r.baseMinor += l.totalWithoutVatMinor;
    r.totalMinor += l.totalWithVatMinor;
    r.vatMinor = r.totalMinor - r.baseMinor;
    byRate.set(l.vatRate, r);
  }
  return [...byRate.values()].sort((a, b) => b.vatRate - a.vatRate);
}

/** Instants at which a document changes what the shop shows: issue, payment, settlement, credit notes, cancellation. */
export function documentChangeTimes(plan: OrderPlan, doc: GeneratedDocument): number[] {
  const issued = doc.issuedAt.getTime();
  const times = [issued];
  if (doc.type === 'invoice') {
    if (plan.paidMs !== null) times.push(Math.max(issued, plan.paidMs));
    for (const d of plan.documents) if (d.type === 'credit_note' && d.relatedCode === doc.code) times.push(d.issuedAt.getTime());
  } else if (doc.type === 'proforma') {
    if (plan.prepaidMs !== null) times.push(Math.max(issued, plan.prepaidMs));
    for (const d of plan.documents) if (d.type === 'invoice') times.push(Math.max(issued, d.issuedAt.getTime()));
    if (plan.cancelMs !== null) times.push(Math.max(issued, plan.cancelMs));
  }
  return times;
}

function lifecycleAt(plan: OrderPlan, doc: GeneratedDocument, atMs: number): DocumentLifecycle {
  if (doc.type === 'credit_note') return 'issued';
  if (doc.type === 'proforma') {
    if (plan.cancelMs !== null && plan.cancelMs <= atMs) return 'cancelled';
    if (plan.documents.some((d) => d.type === 'invoice' && d.issuedAt.getTime() <= atMs)) return 'settled';
    return plan.prepaidMs !== null && plan.prepaidMs <= atMs ? 'paid' : 'issued';
  }
  const credited = plan.documents
    .filter((d) => d.type === 'credit_note' && d.relatedCode === doc.code && d.issuedAt.getTime() <= atMs)
    .reduce((sum, d) => sum - d.totalWithVatMinor, 0);
  if (credited > 0) return credited >= doc.totalWithVatMinor ? 'credited' : 'partially_credited';
  return plan.paidMs !== null && plan.paidMs <= atMs ? 'paid' : 'issued';
}

/** The document as the shop shows it at `atMs` (which must not be before its issue). */
export function documentAt(plan: OrderPlan, shop: ShopDefinition, doc: GeneratedDocument, atMs: number): GeneratedDocumentRecord {
  const lines = doc.type === 'credit_note' ? creditLines(plan, shop) : orderLines(plan, shop);
  const lifecycle = lifecycleAt(plan, doc, atMs);
  let updatedMs = doc.issuedAt.getTime();
  for (const t of documentChangeTimes(plan, doc)) if (t <= atMs && t > updatedMs) updatedMs = t;
  return {
    ...doc,
    issueDate: localDate(shop.timeZone, doc.issuedAt.getTime()),
    paymentMethod: plan.paymentMethod,
    lines,
    vatBreakdown: vatBreakdown(lines),
    customer: plan.customer,
    lifecycle,
    sourceState: SOURCE_STATES[lifecycle],
    valid: lifecycle !== 'cancelled',
    updatedAt: new Date(updatedMs),
    pdfAvailable: hasPdf(shop.code, doc.code),
  };
}
