/** Integer minor-unit money helpers for the demo data (D4: never floating point in storage). */
export { formatMinor, withoutVat } from '../../records/money.js';
import { WHOLE_UNIT_CURRENCIES, type Currency } from './catalogue.js';

/** Rounds a minor amount the way the shop prices: whole units for CZK and HUF, cents otherwise. */
export function roundForCurrency(currency: Currency, minor: number): number {
  return WHOLE_UNIT_CURRENCIES.has(currency) ? Math.round(minor / 100) * 100 : Math.round(minor);
}

/** A "charm" shelf price (x.99, x9 CZK, x90 HUF) near the given amount in major units, returned in minor units. */
export function shelfPrice(currency: Currency, major: number): number {
  if (currency === 'HUF') return Math.max(99, Math.round(major / 100) * 100 - 10) * 100;
  if (currency === 'CZK') return Math.max(9, Math.round(major / 10) * 10 - 1) * 100;
  return Math.max(99, Math.round(major) * 100 - 1);
}

