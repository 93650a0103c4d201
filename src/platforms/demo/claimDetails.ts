/**
 * What a demo claim carries beyond its statuses and goods: the claims-module process it runs in, tags, what the
 * customer asks for (a refund to a bank account, the original payment or a coupon; an exchange; a repair), the
 * customer's rating when it closes, and the e-mails the shop sends on each status. Drawn from its own random stream
 * (`claim-details`), so every draw the generator made before this existed is what it was.
 */
import { CLAIM_STATUSES, type CountryCode, type PaymentKind, type ShopDefinition } from './catalogue.js';
import { createRandom, type Random } from './random.js';
import { DAY_MS } from './time.js';
import type { ClaimType } from './types.js';

/** The demo shops' claim processes (ids as the claims module numbers them); deadlines are the legal ones. */
export const DEMO_CLAIM_PROCESSES = [
  {
    id: 1, name: 'Withdrawal from the purchase', type: 'withdrawal' as const, deadlineDays: 14,
    steps: ['Request received', 'Goods on their way back', 'Goods checked', 'Money refunded'],
    statusIds: [CLAIM_STATUSES.new.id, CLAIM_STATUSES.awaitingGoods.id, CLAIM_STATUSES.goodsReceived.id, CLAIM_STATUSES.resolved.id, CLAIM_STATUSES.rejected.id],
  },
  {
    id: 2, name: 'Complaint (warranty claim)', type: 'complaint' as const, deadlineDays: 30,
    steps: ['Complaint received', 'Goods on their way back', 'Goods received', 'Assessment', 'Decision'],
    statusIds: Object.values(CLAIM_STATUSES).map((s) => s.id),
  },
];

/** Tags staff put on claims. */
export const DEMO_CLAIM_TAGS = [
  { id: 'priority', name: 'Priority', color: '#d9534f' },
  { id: 'damaged-packaging', name: 'Damaged packaging', color: '#f0ad4e' },
  { id: 'repeat-customer', name: 'Repeat customer', color: '#5bc0de' },
  { id: 'photos-attached', name: 'Photos attached', color: '#5cb85c' },
  { id: 'carrier-damage', name: 'Carrier damage', color: '#777777' },
];

/** Automatic e-mails per claim status (the inspection status sends none). */
export const DEMO_CLAIM_EMAILS = [
  { id: 'claim-received', statusId: CLAIM_STATUSES.new.id, subject: 'We have received your claim {claim_code}' },
  { id: 'send-goods', statusId: CLAIM_STATUSES.awaitingGoods.id, subject: 'Claim {claim_code}: how to send the goods back' },
  { id: 'goods-received', statusId: CLAIM_STATUSES.goodsReceived.id, subject: 'Claim {claim_code}: the goods have arrived' },
  { id: 'claim-resolved', statusId: CLAIM_STATUSES.resolved.id, subject: 'Claim {claim_code} is resolved' },
  { id: 'claim-rejected', statusId: CLAIM_STATUSES.rejected.id, subject: 'Claim {claim_code} was rejected' },
];

export type ClaimRequestType = 'refund' | 'exchange' | 'repair';
export type RefundTarget = 'bank_account' | 'original_payment' | 'coupon';

export interface ClaimDetailsPlan {
  processId: number;
  deadlineMs: number;
  tags: string[];
  requestType: ClaimRequestType;
  /** Where a refund goes; null when the customer asks for an exchange or a repair. */
  refundTo: RefundTarget | null;
  /** The customer's IBAN, in full, as the shop holds it; the service stores only its masked form. */
  bankAccount: string | null;
  /** Given with the closing of the claim (not every customer rates). */
  rating: { score: number; comment: string | null } | null;
}

const IBAN_LENGTH: Record<CountryCode, number> = { SK: 24, CZ: 24, HU: 28, PL: 28 };

/** A syntactically valid IBAN of the country (ISO 13616 check digits over a random BBAN). */
export function demoIban(rng: Random, country: CountryCode): string {
  const bban = rng.digits(IBAN_LENGTH[country] - 4);
  const numeric = bban + [...country].map((ch) => String(ch.charCodeAt(0) - 55)).join('') + '00';
  let rest = 0;
  for (const digit of numeric) rest = (rest * 10 + Number(digit)) % 97;
  return `${country}${String(98 - rest).padStart(2, '0')}${bban}`;
}

const GOOD_COMMENTS = ['Quick and smooth, thank you.', 'Money back within days.', null, null];
const BAD_COMMENTS = ['Took far too long.', 'I do not agree with the decision.', null];

export function planClaimDetails(
  seed: number, shop: ShopDefinition,
  order: { code: string; paymentKind: PaymentKind; customer: { country: string } },
  claim: { code: string; type: ClaimType; openedMs: number; resolution: 'refund' | 'repair' | 'rejected' },
): ClaimDetailsPlan {
  const rng = createRandom(seed, 'claim-details', shop.code, claim.code);
  const process = DEMO_CLAIM_PROCESSES.find((p) => p.type === claim.type)!;
  const tags = DEMO_CLAIM_TAGS.filter((tag) => rng.chance(tag.id === 'priority' ? 0.1 : tag.id === 'carrier-damage' && claim.type === 'withdrawal' ? 0 : 0.15)).map((tag) => tag.id);
  const requestType: ClaimRequestType = claim.type === 'withdrawal' ? 'refund' : rng.weighted(['refund', 'repair', 'exchange'] as const, [0.5, 0.3, 0.2]);
  let refundTo: RefundTarget | null = null;
  if (requestType === 'refund') {
    // Card and wallet payments go back the same way; cash on delivery and transfers need an account (some take a coupon).
    const paidOnline = order.paymentKind === 'card' || order.paymentKind === 'wallet';
    refundTo = rng.chance(0.08) ? 'coupon' : paidOnline ? 'original_payment' : 'bank_account';
  }
  const bankAccount = refundTo === 'bank_account' ? demoIban(rng, order.customer.country as CountryCode) : null;
  let rating: ClaimDetailsPlan['rating'] = null;
  if (rng.chance(0.55)) {
    const score = claim.resolution === 'rejected' ? rng.weighted([1, 2, 3], [0.5, 0.3, 0.2]) : rng.weighted([3, 4, 5], [0.15, 0.35, 0.5]);
    rating = { score, comment: rng.pick(score >= 4 ? GOOD_COMMENTS : BAD_COMMENTS) };
  }
  return { processId: process.id, deadlineMs: claim.openedMs + process.deadlineDays * DAY_MS, tags, requestType, refundTo, bankAccount, rating };
}
