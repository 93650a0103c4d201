/**
 * Bank account numbers (IBANs and national account numbers) are never shown whole and never stored whole (CC2): the
 * sync keeps only the masked form — the country and the last four characters — which is all a person needs to
 * recognise the account; the full number stays with the shop, which makes the payment.
 */

/** `SK4411000000002612345678` → `SK****5678`; a national number without a country gets the shop's country. */
export function maskAccount(account: string, fallbackCountry: string): string {
  const compact = account.replace(/[\s-/]/g, '').toUpperCase();
  const country = /^[A-Z]{2}/.test(compact) ? compact.slice(0, 2) : fallbackCountry.toUpperCase();
  const tail = compact.replace(/[^0-9A-Z]/g, '').slice(-4).padStart(4, '0');
  return `${country}****${tail}`;
}

/** The same rule as the database check (migration 009): what a masked account looks like. */
export const MASKED_ACCOUNT = /^[A-Z]{2}\*{4}[0-9A-Z]{4}$/;
