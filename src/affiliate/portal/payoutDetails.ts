/**
 * Payout details a partner enters on the portal (issue 24 point 2): bank account (IBAN and holder) and tax id. Kept
 * only as AES-256-GCM under SECRETS_KEY bound to the partner's row (the webhook-secret format, so `secrets re-encrypt`
 * rotates them with SECRETS_KEY_PREVIOUS), shown back to the partner masked, and never selected by any REST or MCP
 * read (A6). Only a future payment step would decrypt them in full.
 */
import type { Db } from '../../db/knex.js';
import { AppError } from '../../errors.js';
import { needsReencryption, openBound, sealBound, type SecretKeys } from '../../webhooks/secrets.js';

export interface PayoutDetails {
  iban: string;
  accountHolder: string;
  taxId: string;
}

const aad = (partnerId: string) => Buffer.from(`affiliate_payout_details:${partnerId}`, 'utf8');

/** ISO 13616: country, check digits, then the national part; the mod-97 check catches a mistyped digit. */
function validIban(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const digits = (iban.slice(4) + iban.slice(0, 4)).replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const d of digits) rest = (rest * 10 + Number(d)) % 97;
  return rest === 1;
}

/** Normalises and checks what the partner typed; each refusal names its field. */
export function checkPayoutDetails(input: PayoutDetails): PayoutDetails {
  const iban = input.iban.replace(/\s+/g, '').toUpperCase();
  if (!validIban(iban)) throw new AppError('INVALID_PARAMETER', 'That is not a valid IBAN (check the digits).', { param: 'iban' });
  const accountHolder = input.accountHolder.trim();
  if (accountHolder.length < 2 || accountHolder.length > 140) throw new AppError('INVALID_PARAMETER', 'The account holder has 2 to 140 characters.', { param: 'accountHolder' });
  const taxId = input.taxId.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z0-9-]{4,20}$/.test(taxId)) throw new AppError('INVALID_PARAMETER', 'A tax id has 4 to 20 letters, digits or `-`.', { param: 'taxId' });
  return { iban, accountHolder, taxId };
}

/** Stores (replaces) the partner's payout details, encrypted. */
export async function savePayoutDetails(db: Db, keys: SecretKeys, accountId: string, partnerId: string, input: PayoutDetails, now: Date): Promise<void> {
  const details = checkPayoutDetails(input);
  const sealed = sealBound(keys.current, aad(partnerId), JSON.stringify(details));
  await db('affiliate_payout_details').insert({ partner_id: partnerId, account_id: accountId, details_encrypted: sealed, updated_at: now })
    .onConflict('partner_id').merge(['details_encrypted', 'updated_at']);
}

/** Everything but the last four characters hidden. */
const mask = (value: string) => `${'•'.repeat(Math.max(0, Math.min(value.length - 4, 8)))}${value.slice(-4)}`;

/** The partner's payout details as shown back to them: IBAN and tax id masked; null when none entered. */
export async function maskedPayoutDetails(db: Db, keys: SecretKeys, accountId: string, partnerId: string): Promise<{ iban: string; accountHolder: string; taxId: string; updatedAt: Date } | null> {
  const row = await db('affiliate_payout_details').where({ partner_id: partnerId, account_id: accountId }).first('details_encrypted', 'updated_at');
  if (!row) return null;
  const details = JSON.parse(openBound(keys, aad(partnerId), row.details_encrypted)) as PayoutDetails;
  return { iban: `${details.iban.slice(0, 2)}${mask(details.iban.slice(2))}`, accountHolder: details.accountHolder, taxId: mask(details.taxId), updatedAt: row.updated_at };
}

/** Rotation's last step (with webhook secrets and shop credentials): re-encrypts every row not under the current key. */
export async function reencryptPayoutDetails(db: Db, keys: SecretKeys): Promise<{ reencrypted: number; partners: number }> {
  return db.transaction(async (trx) => {
    const rows: { partner_id: string; details_encrypted: Buffer }[] = await trx('affiliate_payout_details').select('partner_id', 'details_encrypted').orderBy('partner_id').forUpdate();
    let reencrypted = 0;
    for (const row of rows) {
      if (!needsReencryption(keys.current, row.details_encrypted)) continue;
      const partnerId = String(row.partner_id);
      const plain = openBound(keys, aad(partnerId), row.details_encrypted);
      await trx('affiliate_payout_details').where({ partner_id: row.partner_id }).update({ details_encrypted: sealBound(keys.current, aad(partnerId), plain) });
      reencrypted++;
    }
    return { reencrypted, partners: rows.length };
  });
}
