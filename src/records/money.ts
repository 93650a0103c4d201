/** Integer minor-unit money helpers (D4: never floating point in storage). Pure, no I/O. */

/** The price without VAT of a price with VAT, rounded to the minor unit (exact rational arithmetic, half up). */
export function withoutVat(withVatMinor: number, vatRate: number): number {
  return Math.round((withVatMinor * 100) / (100 + vatRate));
}

/** Formats minor units as the decimal string Postgres NUMERIC and the API expect, e.g. 123450 -> "1234.50". */
export function formatMinor(minor: number): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const cents = abs % 100;
  return `${sign}${(abs - cents) / 100}.${cents < 10 ? '0' : ''}${cents}`;
}
