/**
 * Monthly company costs of a demo shop (salaries, rent, software...), booked on the 1st of each month at 06:00 local
 * time, sized to the shop's order volume. A pure function of (seed, shop, month) on its own random stream
 * (`company-costs`), so no existing draw changes.
 */
import { WHOLE_UNIT_CURRENCIES, type ShopDefinition } from './catalogue.js';
import { createRandom } from './random.js';
import { HOUR_MS, localDateUtc, localMidnightInstant } from './time.js';
import type { CompanyCost as GeneratedCompanyCost } from '../../records/types.js';
export type { GeneratedCompanyCost };

/** Cost categories and their share of the monthly cost base. */
const CATEGORIES: Array<[string, number]> = [
  ['salaries', 0.46], ['rent', 0.18], ['software', 0.08], ['accounting', 0.06], ['marketing_agency', 0.14], ['other', 0.08],
];
/** Monthly costs are about this share of a month's revenue (an average order of about 55 EUR). */
const COST_BASE_EUR_PER_ORDER = 55 * 0.2;

/** When the costs of a month are booked: its first day, 06:00 in the shop's zone. */
function bookedAtOf(shop: ShopDefinition, year: number, month: number): number {
  return localMidnightInstant(shop.timeZone, Date.UTC(year, month, 1)) + 6 * HOUR_MS;
}

function monthCosts(seed: number, shop: ShopDefinition, year: number, month: number, ordersPerDay: number, eurRate: number): GeneratedCompanyCost[] {
  const rng = createRandom(seed, 'company-costs', shop.code, year, month);
  const baseEur = ordersPerDay * 30.4 * COST_BASE_EUR_PER_ORDER;
  const bookedAt = new Date(bookedAtOf(shop, year, month));
  const monthText = `${year}-${String(month + 1).padStart(2, '0')}-01`;
  return CATEGORIES.map(([category, share]) => {
    const amount = (baseEur * share * rng.float(0.85, 1.15)) / shop.eurRate;
    const amountMinor = WHOLE_UNIT_CURRENCIES.has(shop.currency) ? Math.round(amount) * 100 : Math.round(amount * 100);
    return { month: monthText, category, currency: shop.currency, amountMinor, eurRate, bookedAt };
  });
}

/**
 * Costs booked in (sinceMs, untilMs], oldest month first; `sinceMs` null means every month from the one containing
 * `earliestMs`. `rateAt` gives the EUR rate at an instant (the order timeline's daily rate).
 */
export function companyCostsBetween(
  seed: number, shop: ShopDefinition, sinceMs: number | null, untilMs: number, earliestMs: number, ordersPerDay: number, rateAt: (ms: number) => number,
): GeneratedCompanyCost[] {
  const first = new Date(localDateUtc(shop.timeZone, earliestMs));
  const out: GeneratedCompanyCost[] = [];
  for (let y = first.getUTCFullYear(), m = first.getUTCMonth(); ; m === 11 ? (y++, m = 0) : m++) {
    const at = bookedAtOf(shop, y, m);
    if (at > untilMs) break;
    if (sinceMs !== null && at <= sinceMs) continue;
    out.push(...monthCosts(seed, shop, y, m, ordersPerDay, shop.currency === 'EUR' ? 1 : rateAt(at)));
  }
  return out;
}
