/**
 * The whole life of one demo order, planned at once: payment, status changes, shipments, documents, a claim and the
 * stock movements it causes, future ones included. The shop's state at any instant is a view of these plans, so the
 * demo platform needs no storage to answer "what changed since".
 */
import { CARRIERS, CLAIM_STATUSES, ORDER_STATUSES, type PaymentKind, type ShopDefinition } from './catalogue.js';
import { withoutVat } from './money.js';
import { createRandom, type Random } from './random.js';
import { DEMO_CLAIM_EMAILS, planClaimDetails, type ClaimDetailsPlan } from './claimDetails.js';
import { shipmentAt, type ShipmentPlan } from './shipments.js';
import { DAY_MS, HOUR_MS, localDateUtc } from './time.js';
import type {
  ClaimResolution, ClaimType, GeneratedClaim, GeneratedDocument, GeneratedOrder, OrderContent,
  GeneratedStockMovement, StatusChange,
} from './types.js';

/** No order changes later than this after its creation; incremental reads look back this far (asserted when planning). */
export const ORDER_HORIZON_MS = 90 * DAY_MS;

const MINUTE_MS = 60_000;
const CLAIM_SHARE = 0.04;
const WITHDRAWAL_REASONS = ['Does not fit', 'Changed my mind', 'Different from the picture', 'Ordered by mistake'];
const COMPLAINT_REASONS = ['Defective on arrival', 'Stopped working', 'Damaged in transport', 'Missing part'];

export interface TimedStatus {
  statusId: number;
  at: number;
}

export interface ClaimPlan {
  code: string;
  type: ClaimType;
  reason: string;
  openedMs: number;
  statusTimeline: TimedStatus[];
  resolution: ClaimResolution;
  /** When the resolution is decided (the claim closes). */
  closedMs: number;
  refundWithVatMinor: number | null;
  items: Array<{ lineNo: number; productCode: string; quantity: number }>;
  returnShipment: { carrierCode: string; trackingNumber: string; createdMs: number; deliveredMs: number };
  /** Process, tags, the customer's request and rating (their own random stream). */
  details: ClaimDetailsPlan;
}

/** What order generation decides; `completePlan` derives the rest. */
export interface BaseOrderPlan extends OrderContent {
  createdMs: number;
  paymentKind: PaymentKind;
  /** Prepayment (card, wallet, transfer); null for cash on delivery and for cancelled orders. */
  prepaidMs: number | null;
  /** The order is cancelled at this instant (only unpaid orders are cancelled). */
  cancelMs: number | null;
  shipments: ShipmentPlan[];
}

export interface OrderPlan extends BaseOrderPlan {
  /** Instant the order counts as paid (prepayment, or delivery for cash on delivery); null = never. */
  paidMs: number | null;
  statusTimeline: TimedStatus[];
  /** Order-level change instants, ascending: creation, status changes, payment, tracking events. */
  changeTimes: number[];
  claim: ClaimPlan | null;
  documents: GeneratedDocument[];
  /** Movements this order causes (sale, goods coming back); receipts are planned per product elsewhere. */
  movements: GeneratedStockMovement[];
  /** The ordered goods are reserved from creation until this instant (dispatch or cancellation). */
  reservedUntilMs: number;
  lastChangeMs: number;
}

const STATUS_NAMES = new Map<number, string>(Object.values(ORDER_STATUSES).map((s) => [s.id, s.name]));
const CLAIM_STATUS_NAMES = new Map<number, string>(Object.values(CLAIM_STATUSES).map((s) => [s.id, s.name]));

/** The order status at an instant, from the shipments that exist by then (as a shop back-end derives it). */
function orderStatusAt(plan: BaseOrderPlan, t: number): number {
  const early = t >= plan.createdMs + 12 * HOUR_MS ? ORDER_STATUSES.processing.id : ORDER_STATUSES.new.id;
  if (plan.cancelMs !== null) return t >= plan.cancelMs ? ORDER_STATUSES.cancelled.id : early;
  let lastIndex = -1;
  for (let i = 0; i < plan.shipments.length; i++) if (plan.shipments[i].createdMs <= t) lastIndex = i;
  if (lastIndex < 0) return early;
  const last = plan.shipments[lastIndex];
  if (last.settledMs <= t) {
    if (last.outcome === 'delivered') return ORDER_STATUSES.delivered.id;
    if (last.outcome === 'returned' || last.outcome === 'failed') return ORDER_STATUSES.returned.id;
    // A cancelled label with a replacement to follow leaves the order in processing.
    return lastIndex < plan.shipments.length - 1 ? ORDER_STATUSES.processing.id : ORDER_STATUSES.cancelled.id;
  }
  const handedOver = last.handedOverMs !== null && last.handedOverMs <= t;
  const moving = last.events.length > 1 && last.events[1].occurredAt.getTime() <= t;
  return handedOver || moving ? ORDER_STATUSES.shipped.id : ORDER_STATUSES.processing.id;
}

/** Sorts ascending and drops duplicates, in place. */
function sortedUnique(values: number[]): number[] {
  values.sort((a, b) => a - b);
  let n = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i] !== values[n - 1]) values[n++] = values[i];
  values.length = n;
  return values;
}

/** Collapses a list of (status, instant) samples into the changes. */
function changesOf(samples: TimedStatus[]): TimedStatus[] {
  const out: TimedStatus[] = [];
  for (const s of samples) if (!out.length || out[out.length - 1].statusId !== s.statusId) out.push(s);
  return out;
}

const localDate = (timeZone: string, ms: number) => new Date(localDateUtc(timeZone, ms)).toISOString().slice(0, 10);

/** The shipment that carries the goods: the one that was not cancelled (at most one per order). */
function finalShipment(plan: BaseOrderPlan): ShipmentPlan | null {
  return plan.shipments.find((s) => s.outcome !== 'cancelled') ?? null;
}

/** A return tracking number in the carrier's format; return shipments live in claims, so it need not follow the outbound sequence. */
function returnTrackingNumber(rng: Random, carrierCode: string): string {
  const { prefix, digits, suffix } = CARRIERS[carrierCode].tracking;
  return `${prefix}${String(rng.int(1, 9))}${rng.digits(digits - 1)}${suffix}`;
}

function planClaim(rng: Random, shop: ShopDefinition, plan: BaseOrderPlan, deliveredMs: number): Omit<ClaimPlan, 'details'> | null {
  if (!rng.chance(CLAIM_SHARE)) return null;
  const type: ClaimType = rng.chance(0.6) ? 'withdrawal' : 'complaint';
  const openedMs = Math.round(deliveredMs + (type === 'withdrawal' ? rng.float(0.5, 13.5) : rng.float(2, 30)) * DAY_MS);
  const lines = type === 'withdrawal'
    ? plan.items.filter((_, i) => i === 0 || rng.chance(0.5))
    : [rng.pick(plan.items)];
  const items = lines.map((l) => ({ lineNo: l.lineNo, productCode: l.productCode, quantity: type === 'withdrawal' ? l.quantity : 1 }));
  const awaitingMs = Math.round(openedMs + rng.float(1, 30) * HOUR_MS);
  const returnCarrier = rng.pick([...new Set(shop.shippingMethods.map((m) => m.carrier))]);
  const returnCreatedMs = Math.round(awaitingMs + rng.float(0.5, 3) * DAY_MS);
  const receivedMs = Math.round(returnCreatedMs + rng.float(20, 96) * HOUR_MS);
  const timeline: TimedStatus[] = [
    { statusId: CLAIM_STATUSES.new.id, at: openedMs },
    { statusId: CLAIM_STATUSES.awaitingGoods.id, at: awaitingMs },
    { statusId: CLAIM_STATUSES.goodsReceived.id, at: receivedMs },
  ];
  let resolution: ClaimResolution;
  let closedMs: number;
  if (type === 'withdrawal') {
    resolution = rng.chance(0.95) ? 'refund' : 'rejected';
    closedMs = Math.round(receivedMs + rng.float(2, 120) * HOUR_MS);
  } else {
    const assessedMs = Math.round(receivedMs + rng.float(1, 48) * HOUR_MS);
    timeline.push({ statusId: CLAIM_STATUSES.inAssessment.id, at: assessedMs });
    const r = rng.next();
    resolution = r < 0.4 ? 'refund' : r < 0.75 ? 'repair' : 'rejected';
    closedMs = Math.round(assessedMs + rng.float(1, 10) * DAY_MS);
  }
  timeline.push({ statusId: resolution === 'rejected' ? CLAIM_STATUSES.rejected.id : CLAIM_STATUSES.resolved.id, at: closedMs });
  let refund: number | null = null;
  if (resolution === 'refund') {
    refund = 0;
    for (const item of items) refund += plan.items.find((l) => l.lineNo === item.lineNo)!.unitPriceWithVatMinor * item.quantity;
  }
  return {
    code: `R${plan.code}`, type, reason: rng.pick(type === 'withdrawal' ? WITHDRAWAL_REASONS : COMPLAINT_REASONS), openedMs,
    statusTimeline: timeline, resolution, closedMs, refundWithVatMinor: refund, items,
    returnShipment: { carrierCode: returnCarrier, trackingNumber: returnTrackingNumber(rng, returnCarrier), createdMs: returnCreatedMs, deliveredMs: receivedMs },
  };
}

function document(plan: BaseOrderPlan, shop: ShopDefinition, type: GeneratedDocument['type'], issuedMs: number, amounts: { withVat: number; withoutVat: number }, dueDays: number | null, relatedCode: string | null): GeneratedDocument {
  const prefix = type === 'invoice' ? 'FA' : type === 'proforma' ? 'ZF' : 'DB';
  return {
    type, code: `${prefix}${plan.code}`, orderCode: plan.code, issuedAt: new Date(issuedMs),
    taxDate: type === 'proforma' ? null : localDate(shop.timeZone, issuedMs),
    dueDate: dueDays === null ? null : localDate(shop.timeZone, issuedMs + dueDays * DAY_MS),
    currency: plan.currency, totalWithVatMinor: amounts.withVat, totalWithoutVatMinor: amounts.withoutVat,
    totalVatMinor: amounts.withVat - amounts.withoutVat, variableSymbol: plan.variableSymbol, customerEmailHash: plan.customerEmailHash, relatedCode,
  };
}

/** Derives payment, status history, claim, documents and stock movements of an order; all times are fixed here. */
export function completePlan(seed: number, shop: ShopDefinition, base: BaseOrderPlan): OrderPlan {
  const rng = createRandom(seed, 'after-sales', shop.code, base.code);
  const final = finalShipment(base);
  const delivered = final && final.outcome === 'delivered' ? final.events.find((e) => e.isDelivery)!.occurredAt.getTime() : null;
  // Cash on delivery is paid when the parcel is delivered.
  const paidMs = base.paymentKind === 'cod' ? delivered : base.prepaidMs;

  const points = [base.createdMs, base.createdMs + 12 * HOUR_MS];
  if (base.cancelMs !== null) points.push(base.cancelMs);
  for (const s of base.shipments) for (const e of s.events) points.push(e.occurredAt.getTime());
  points.sort((a, b) => a - b);
  const statusTimeline = changesOf(points.map((at) => ({ statusId: orderStatusAt(base, at), at })));
  const times = statusTimeline.map((s) => s.at);
  if (paidMs !== null) times.push(paidMs);
  for (const s of base.shipments) for (const e of s.events) times.push(e.occurredAt.getTime());
  const changeTimes = sortedUnique(times);

  const planned = delivered !== null ? planClaim(rng, shop, base, delivered) : null;
  const claim: ClaimPlan | null = planned ? { ...planned, details: planClaimDetails(seed, shop, base, planned) } : null;
  const documents: GeneratedDocument[] = [];
  const full = { withVat: base.totalWithVatMinor, withoutVat: base.totalWithoutVatMinor };
  const negative = (a: { withVat: number; withoutVat: number }) => ({ withVat: -a.withVat, withoutVat: -a.withoutVat });
  if (base.paymentKind === 'transfer') documents.push(document(base, shop, 'proforma', base.createdMs + rng.int(MINUTE_MS, 5 * MINUTE_MS), full, 7, null));
  let invoiceMs: number | null = null;
  if (base.prepaidMs !== null) invoiceMs = base.prepaidMs + rng.int(MINUTE_MS, 20 * MINUTE_MS);
  else if (base.paymentKind === 'cod' && final) invoiceMs = final.createdMs + rng.int(5 * MINUTE_MS, 60 * MINUTE_MS);
  if (invoiceMs !== null) documents.push(document(base, shop, 'invoice', invoiceMs, full, base.paymentKind === 'cod' ? 14 : 0, null));

  const movements: GeneratedStockMovement[] = [];
  const movement = (id: string, productCode: string, kind: GeneratedStockMovement['kind'], quantity: number, at: number, claimCode: string | null = null) =>
    movements.push({ id, productCode, kind, quantity, occurredAt: new Date(at), orderCode: base.code, claimCode });
  if (final) {
    // Goods leave the stock when the parcel is packed (the label is created).
    for (const it of base.items) movement(`S-${base.code}-${it.lineNo}`, it.productCode, 'sale', -it.quantity, final.createdMs);
    if (final.outcome === 'returned' || final.outcome === 'failed') {
      const backMs = final.settledMs + rng.int(2 * HOUR_MS, 48 * HOUR_MS);
      for (const it of base.items) movement(`R-${base.code}-${it.lineNo}`, it.productCode, 'return', it.quantity, backMs);
      if (invoiceMs !== null) documents.push(document(base, shop, 'credit_note', backMs + rng.int(HOUR_MS, 24 * HOUR_MS), negative(full), 0, `FA${base.code}`));
    }
  }
  if (claim) {
    if (claim.resolution === 'refund') {
      const lines = claim.items.map((c) => {
        const line = base.items.find((l) => l.lineNo === c.lineNo)!;
        return { withVat: line.unitPriceWithVatMinor * c.quantity, withoutVat: withoutVat(line.unitPriceWithVatMinor * c.quantity, line.vatRate) };
      });
      const sum = lines.reduce((a, l) => ({ withVat: a.withVat + l.withVat, withoutVat: a.withoutVat + l.withoutVat }), { withVat: 0, withoutVat: 0 });
      if (invoiceMs !== null) documents.push(document(base, shop, 'credit_note', claim.closedMs + rng.int(5 * MINUTE_MS, 60 * MINUTE_MS), negative(sum), 0, `FA${base.code}`));
      // Withdrawn goods go back on the shelf; defective ones do not.
      if (claim.type === 'withdrawal') {
        for (const c of claim.items) movement(`C-${claim.code}-${c.lineNo}`, c.productCode, 'return', c.quantity, claim.returnShipment.deliveredMs, claim.code);
      }
    }
  }
  documents.sort((a, b) => a.issuedAt.getTime() - b.issuedAt.getTime());

  const labelCancelled = base.shipments.length > 0 && !final ? base.shipments[base.shipments.length - 1].settledMs : null;
  const reservedUntilMs = final ? final.createdMs : base.cancelMs ?? labelCancelled ?? base.createdMs;

  let lastChangeMs = Math.max(changeTimes[changeTimes.length - 1], claim ? claim.closedMs : 0);
  for (const d of documents) lastChangeMs = Math.max(lastChangeMs, d.issuedAt.getTime());
  for (const m of movements) lastChangeMs = Math.max(lastChangeMs, m.occurredAt.getTime());
  if (lastChangeMs - base.createdMs > ORDER_HORIZON_MS) throw new Error(`Order ${base.code} changes beyond the planning horizon`);
  // Extended in place: spreading ~25 properties into a fresh object per order costs more than all the planning above.
  return Object.assign(base, { paidMs, statusTimeline, changeTimes, claim, documents, movements, reservedUntilMs, lastChangeMs });
}

const toHistory = (timeline: TimedStatus[], atMs: number): StatusChange[] =>
  timeline.filter((s) => s.at <= atMs).map((s) => ({ statusId: s.statusId, at: new Date(s.at) }));

/** The order as the shop shows it at `atMs`; null before it exists. */
export function orderAt(plan: OrderPlan, atMs: number): GeneratedOrder | null {
  if (plan.createdMs > atMs) return null;
  const statusHistory = toHistory(plan.statusTimeline, atMs);
  const current = statusHistory[statusHistory.length - 1];
  let updatedMs = plan.createdMs;
  for (const t of plan.changeTimes) if (t <= atMs) updatedMs = t;
  const paid = plan.paidMs !== null && plan.paidMs <= atMs;
  return {
    code: plan.code,
    createdAt: new Date(plan.createdMs),
    updatedAt: new Date(updatedMs),
    statusId: current.statusId,
    statusName: STATUS_NAMES.get(current.statusId)!,
    statusChangedAt: current.at,
    statusHistory,
    paid,
    paidAt: paid ? new Date(plan.paidMs!) : null,
    currency: plan.currency,
    totalWithVatMinor: plan.totalWithVatMinor,
    totalWithoutVatMinor: plan.totalWithoutVatMinor,
    totalVatMinor: plan.totalVatMinor,
    shippingWithVatMinor: plan.shippingWithVatMinor,
    eurRate: plan.eurRate,
    paymentMethod: plan.paymentMethod,
    shippingMethod: plan.shippingMethod,
    variableSymbol: plan.variableSymbol,
    customerEmailHash: plan.customerEmailHash,
    customer: plan.customer,
    items: plan.items,
    couponCode: plan.couponCode,
    discounts: plan.discounts,
    shipments: plan.shipments.map((s) => shipmentAt(s, atMs)).filter((s) => s !== null),
  };
}

/** The order's claim as the shop shows it at `atMs`; null when there is none (yet). */
export function claimAt(plan: OrderPlan, atMs: number): GeneratedClaim | null {
  const c = plan.claim;
  if (!c || c.openedMs > atMs) return null;
  const statusHistory = toHistory(c.statusTimeline, atMs);
  const current = statusHistory[statusHistory.length - 1];
  const closed = c.closedMs <= atMs;
  const rs = c.returnShipment;
  const returnShipment = rs.createdMs <= atMs
    ? { carrierCode: rs.carrierCode, trackingNumber: rs.trackingNumber, status: rs.deliveredMs <= atMs ? 'DELIVERED' as const : 'CREATED' as const, createdAt: new Date(rs.createdMs), deliveredAt: rs.deliveredMs <= atMs ? new Date(rs.deliveredMs) : null }
    : null;
  const updatedMs = Math.max(current.at.getTime(), returnShipment ? (returnShipment.deliveredAt ?? returnShipment.createdAt).getTime() : 0);
  const d = c.details;
  // The shop's automatic e-mail goes out with the status change it belongs to.
  const emails = statusHistory.flatMap((change) => DEMO_CLAIM_EMAILS.filter((e) => e.statusId === change.statusId)
    .map((e) => ({ templateId: e.id, subject: e.subject.replace('{claim_code}', c.code), sentAt: change.at })));
  return {
    code: c.code, orderCode: plan.code, type: c.type, reason: c.reason, openedAt: new Date(c.openedMs), updatedAt: new Date(updatedMs),
    statusId: current.statusId, statusName: CLAIM_STATUS_NAMES.get(current.statusId)!, statusChangedAt: current.at, statusHistory,
    closedAt: closed ? new Date(c.closedMs) : null, resolution: closed ? c.resolution : null, currency: plan.currency,
    refundWithVatMinor: closed ? c.refundWithVatMinor : null, items: c.items, returnShipment, customerEmailHash: plan.customerEmailHash,
    processId: d.processId, deadline: new Date(d.deadlineMs), tags: d.tags,
    customerRequest: { type: d.requestType, refundTo: d.refundTo, bankAccount: d.bankAccount },
    rating: closed && d.rating ? d.rating.score : null, ratingComment: closed && d.rating ? d.rating.comment : null, emails,
  };
}

/** True when any instant of `times` lies in (sinceMs, untilMs]. */
export function anyIn(times: Iterable<number>, sinceMs: number, untilMs: number): boolean {
  for (const t of times) if (t > sinceMs && t <= untilMs) return true;
  return false;
}

/** Instants at which the order's claim changes (opening, statuses, return shipment). */
export function claimChangeTimes(plan: OrderPlan): number[] {
  const c = plan.claim;
  if (!c) return [];
  return [...c.statusTimeline.map((s) => s.at), c.returnShipment.createdMs, c.returnShipment.deliveredMs];
}

/** Instants at which the order changes what stock shows: reservation, release, movements. */
export function stockChangeTimes(plan: OrderPlan): number[] {
  return [plan.createdMs, plan.reservedUntilMs, ...plan.movements.map((m) => m.occurredAt.getTime())];
}
