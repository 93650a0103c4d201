/** Money on the wire (D4): a decimal string and a currency; stored as NUMERIC, never floating point. */
import { z } from 'zod';

export const moneySchema = z.object({
  amount: z.string().regex(/^-?\d+(\.\d+)?$/).describe('Decimal string in the currency\'s minor digits, e.g. "1234.50".'),
  currency: z.string().length(3).describe('ISO 4217 code.'),
}).describe('An amount of money (D4).');

export type Money = z.infer<typeof moneySchema>;

/** Builds a Money from a NUMERIC value as Postgres returns it (a string). */
export function money(amount: string | number, currency: string): Money {
  return { amount: typeof amount === 'number' ? amount.toFixed(2) : amount, currency: currency.trim() };
}
