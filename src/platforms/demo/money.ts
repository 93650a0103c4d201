/** Integer minor-unit money helpers for the demo data (D4: never floating point in storage). */
import { WHOLE_UNIT_CURRENCIES, type Currency } from './catalogue.js';

/** The price without VAT of a price with VAT, rounded to the minor unit (exact rational arithmetic, half up). */
export function withoutVat(withVatMinor: number, vatRate: number): number {
  return Math.round((withVatMinor * 100) / (100 + vatRate));
}

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

/** Formats minor units as the decimal string Postgres NUMERIC and the API expect, e.g. 123450 -> "1234.50". */
export function formatMinor(minor: number): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const cents = abs % 100;
  return `${sign}${(abs - cents) / 100}.${cents < 10 ? '0' : ''}${cents}`;
}
