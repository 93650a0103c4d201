/** Shipment timelines of the demo platform: a planned course of tracking events, viewed as of any instant. */
import type { CarrierDefinition, CountryCode, ShipmentStatus } from './catalogue.js';
import { Random, type RandomState } from './random.js';
import { HOUR_MS, DAY_MS, localWeekday } from './time.js';
import type { GeneratedShipment, GeneratedTrackingEvent, ShipmentOutcome } from './types.js';

export interface ShipmentPlanInput {
  rng: Random;
  carrier: CarrierDefinition;
  trackingNumber: string;
  createdAtMs: number;
  country: CountryCode;
  timeZone: string;
  /** Depot cities on the way, and the recipient's city for the last mile. */
  depots: string[];
  destinationCity: string;
  /** The sender cancels the label before hand-over (a replacement may follow). */
  cancel: boolean;
}

/** The whole planned course of one shipment, future events included; `shipmentAt` shows it as of an instant. */
export interface ShipmentPlan {
  carrierCode: string;
  trackingNumber: string;
  country: CountryCode;
  createdMs: number;
  /** The hand-over scan; null when the carrier never reports one (~3 %). */
  handedOverMs: number | null;
  /** The instant the parcel physically left (hand-over, reported or not); null for a cancelled label. */
  dispatchedMs: number | null;
  outcome: ShipmentOutcome;
  /** Time of the event that settles the outcome (delivery, return, failure, cancellation). */
  settledMs: number;
  events: GeneratedTrackingEvent[];
}

const FAILURE_REASONS = ['Delivery failed: addressee unknown', 'Delivery failed: parcel damaged', 'Delivery failed: refused by recipient'];
const TRANSIT_TEXTS = ['Parcel arrived at depot', 'Parcel in transit', 'Parcel left depot', 'Parcel sorted at hub'];
const SETTLING = new Set<ShipmentStatus>(['DELIVERED', 'RETURNED', 'FAILED', 'CANCELLED']);

/** Plans one shipment's whole course; the draws never depend on "now", so the plan is the same whatever instant it is viewed at. */
export function planShipment(input: ShipmentPlanInput): ShipmentPlan {
  const { rng, carrier, createdAtMs: created } = input;
  const events: GeneratedTrackingEvent[] = [];
  const event = (at: number, status: ShipmentStatus, description: string, location: string | null, isDelivery = false) =>
    events.push({ occurredAt: new Date(Math.round(at)), status, description, location, isDelivery });

  event(created, 'CREATED', 'Shipment data received', null);
  let outcome: ShipmentOutcome;
  let handedOverMs: number | null = null;
  let dispatchedMs: number | null = null;
  if (input.cancel) {
    event(created + rng.int(HOUR_MS, 8 * HOUR_MS), 'CANCELLED', 'Shipment cancelled by sender', null);
    outcome = 'cancelled';
  } else {
    const handOver = created + rng.int(2 * HOUR_MS, 10 * HOUR_MS);
    dispatchedMs = handOver;
    // ~3 % of carriers never report the hand-over scan; such shipments drop out of the delivery-time median.
    if (!rng.chance(0.03)) {
      handedOverMs = handOver;
      event(handOver, 'HANDED_OVER', 'Parcel handed over to the carrier', input.depots[0]);
    }
    let transitHours = Math.min(96, Math.max(18, rng.logNormal(carrier.deliveryMedianHours, carrier.deliverySigma)));
    let attempt = handOver + transitHours * HOUR_MS + rng.int(0, HOUR_MS);
    if (!carrier.deliversOnSunday && localWeekday(input.timeZone, attempt) === 0) attempt += DAY_MS;
    transitHours = (attempt - handOver) / HOUR_MS;
    const outForDelivery = attempt - rng.float(0.5, Math.min(6, transitHours / 3)) * HOUR_MS;
    const transitCount = rng.int(1, 3);
    const transitTimes: number[] = [];
    for (let i = 0; i < transitCount; i++) transitTimes.push(rng.float(handOver + HOUR_MS / 2, outForDelivery - HOUR_MS / 4));
    transitTimes.sort((a, b) => a - b);
    for (const t of transitTimes) event(t, 'IN_TRANSIT', rng.pick(TRANSIT_TEXTS), rng.pick(input.depots));
    event(outForDelivery, 'OUT_FOR_DELIVERY', 'Out for delivery', input.destinationCity);

    const r = rng.next();
    if (r < carrier.failRate) {
      outcome = 'failed';
      event(attempt, 'FAILED', rng.pick(FAILURE_REASONS), input.destinationCity);
    } else if (r < carrier.failRate + carrier.returnRate) {
      outcome = 'returned';
      // Not collected or refused: the parcel travels back after the storage period.
      event(attempt + rng.float(5, 9) * DAY_MS, 'IN_TRANSIT', 'Parcel returning to sender', rng.pick(input.depots));
      event(attempt + rng.float(9, 14) * DAY_MS, 'RETURNED', 'Returned to sender', input.depots[0]);
    } else {
      outcome = 'delivered';
      event(attempt, 'DELIVERED', 'Delivered', input.destinationCity, true);
      // A later duplicate delivery scan (pick-up confirmation); statistics must use the first one.
      if (rng.chance(0.03)) event(attempt + rng.float(2, 30) * HOUR_MS, 'DELIVERED', 'Delivery confirmed', input.destinationCity, true);
    }
  }
  const settled = events.find((e) => SETTLING.has(e.status))!;
  return {
    carrierCode: carrier.code, trackingNumber: input.trackingNumber, country: input.country, createdMs: created,
    handedOverMs, dispatchedMs, outcome, settledMs: settled.occurredAt.getTime(), events,
  };
}

/** The shipment as the carrier reports it at `atMs`: later events have not happened yet (null before it exists). */
export function shipmentAt(plan: ShipmentPlan, atMs: number): GeneratedShipment | null {
  if (plan.createdMs > atMs) return null;
  const events = plan.events.filter((e) => e.occurredAt.getTime() <= atMs);
  const last = events[events.length - 1];
  const firstDelivery = events.find((e) => e.isDelivery);
  return {
    carrierCode: plan.carrierCode,
    trackingNumber: plan.trackingNumber,
    country: plan.country,
    status: last.status,
    outcome: plan.settledMs <= atMs ? plan.outcome : 'in_transit',
    createdAt: new Date(plan.createdMs),
    updatedAt: last.occurredAt,
    handedOverAt: plan.handedOverMs !== null && plan.handedOverMs <= atMs ? new Date(plan.handedOverMs) : null,
    deliveredAt: firstDelivery ? firstDelivery.occurredAt : null,
    events,
  };
}

export interface TrackingState {
  rng: RandomState;
  carriers: Array<[string, { head: string; next: number }]>;
}

/** Tracking numbers unique per carrier: a fixed random head plus a strictly increasing, jittered tail. */
export class TrackingNumbers {
  private readonly state = new Map<string, { head: string; next: number }>();

  constructor(private readonly rng: Random) {}

  /** A copy of the numbering state, to resume the sequence later. */
  snapshot(): TrackingState {
    return { rng: this.rng.getState(), carriers: [...this.state].map(([code, s]) => [code, { ...s }]) };
  }

  /** Numbering that continues from a snapshot. */
  static fromSnapshot(snapshot: TrackingState): TrackingNumbers {
    const numbers = new TrackingNumbers(Random.fromState(snapshot.rng));
    for (const [code, s] of snapshot.carriers) numbers.state.set(code, { ...s });
    return numbers;
  }

  /** The next tracking number of a carrier in the carrier's format. */
  next(carrier: CarrierDefinition): string {
    const { prefix, digits, suffix } = carrier.tracking;
    let s = this.state.get(carrier.code);
    if (!s) {
      const headLength = Math.max(0, digits - 9);
      const head = headLength ? String(this.rng.int(1, 9)) + this.rng.digits(headLength - 1) : '';
      s = { head, next: this.rng.int(100_000_000, 300_000_000) };
      this.state.set(carrier.code, s);
    }
    // Steps of 7 with jitter below 7 keep numbers unique while not looking sequential.
    const tail = s.next + this.rng.int(0, 6);
    s.next += 7;
    return `${prefix}${s.head}${String(tail).padStart(9, "0")}${suffix}`;
  }
}
