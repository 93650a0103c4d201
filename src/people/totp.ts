/**
 * The optional second factor (D27): TOTP (RFC 6238, otplib) with one-time recovery codes. The secret is stored
 * encrypted under SECRETS_KEY (as webhook secrets are) and a time step is accepted once only, so a code seen over a
 * shoulder cannot be replayed; recovery codes are stored as SHA-256 and each works once.
 */
import crypto from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { decryptSecret, encryptSecret } from '../webhooks/secrets.js';

export const RECOVERY_CODES = 10;
const ISSUER = 'Store operations';

/** The additional data of the ciphertext names the person, so a stored secret cannot be moved to another row. */
const secretOwner = (personId: string) => `person:${personId}`;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest();
const normaliseRecovery = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');

/** Starts (or restarts) enrolment: stores a new, not yet enabled secret and returns what the authenticator app needs. */
export async function startTotpEnrolment(db: Db, secretsKey: Buffer, personId: string): Promise<{ secret: string; uri: string }> {
  const row = await db('people').where({ id: personId }).first('email', 'totp_enabled_at');
  if (!row) throw new AppError('NOT_FOUND', 'No such person.');
  if (row.totp_enabled_at) throw new AppError('STATE_CONFLICT', 'The second factor is on already; turn it off first to enrol again.', { state: 'enabled' });
  const secret = generateSecret();
  await db('people').where({ id: personId }).update({ totp_secret: encryptSecret(secretsKey, secretOwner(personId), secret), totp_last_step: null });
  return { secret, uri: generateURI({ issuer: ISSUER, label: row.email, secret }) };
}

/** Checks a TOTP code against the stored secret and records its time step; false for a wrong or replayed code. */
async function acceptTotp(db: Db, secretsKey: Buffer, personId: string, code: string, now: Date): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  const row = await db('people').where({ id: personId }).first('totp_secret', 'totp_last_step');
  if (!row?.totp_secret) return false;
  const secret = decryptSecret(secretsKey, secretOwner(personId), row.totp_secret);
  const last = row.totp_last_step === null ? undefined : Number(row.totp_last_step);
  const result = await verify({ secret, token: code, epoch: Math.floor(now.getTime() / 1000), epochTolerance: 30, afterTimeStep: last });
  if (!result.valid) return false;
  // The matched time step: the current one moved by the drift the code showed.
  const step = Math.floor(now.getTime() / 30_000) + result.delta;
  // Guarded update: of two concurrent uses of one code only one wins.
  const updated = await db('people').where({ id: personId }).andWhere((q) => q.whereNull('totp_last_step').orWhere('totp_last_step', '<', step)).update({ totp_last_step: step });
  return updated === 1;
}

/** Confirms enrolment with a first code; returns the recovery codes, shown once. */
export async function confirmTotpEnrolment(db: Db, secretsKey: Buffer, personId: string, code: string, now: Date): Promise<{ recoveryCodes: string[] }> {
  const row = await db('people').where({ id: personId }).first('totp_secret', 'totp_enabled_at');
  if (!row?.totp_secret || row.totp_enabled_at) throw new AppError('STATE_CONFLICT', 'Start the enrolment first.', { state: row?.totp_enabled_at ? 'enabled' : 'not_started' });
  if (!(await acceptTotp(db, secretsKey, personId, code.trim(), now))) throw new AppError('INVALID_PARAMETER', 'That code is not right; check the time on your phone and try the next code.', { param: 'code', reason: 'mismatch' });
  const recoveryCodes = Array.from({ length: RECOVERY_CODES }, () => {
    const raw = crypto.randomBytes(8).toString('hex');
    return `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8, 12)}-${raw.slice(12)}`;
  });
  await db('people').where({ id: personId }).update({ totp_enabled_at: now, recovery_code_hashes: recoveryCodes.map((c) => sha256(normaliseRecovery(c))) });
  return { recoveryCodes };
}

/** Checks the second factor at sign-in: a current TOTP code, or an unused recovery code (then used up). */
export async function verifySecondFactor(db: Db, secretsKey: Buffer, personId: string, code: string, now: Date): Promise<boolean> {
  const text = code.trim();
  if (/^\d{6}$/.test(text)) return acceptTotp(db, secretsKey, personId, text, now);
  const hash = sha256(normaliseRecovery(text));
  // Removes the code in the same statement that finds it: a recovery code works exactly once.
  const used = await db('people').where({ id: personId }).whereRaw('? = any(recovery_code_hashes)', [hash])
    .update({ recovery_code_hashes: db.raw('array_remove(recovery_code_hashes, ?)', [hash]) });
  return used === 1;
}

/** Turns the second factor off; needs a current code, so a session left open does not suffice. */
export async function disableTotp(db: Db, secretsKey: Buffer, personId: string, code: string, now: Date): Promise<void> {
  if (!(await verifySecondFactor(db, secretsKey, personId, code, now))) throw new AppError('INVALID_PARAMETER', 'That code is not right.', { param: 'code', reason: 'mismatch' });
  await db('people').where({ id: personId }).update({ totp_secret: null, totp_enabled_at: null, totp_last_step: null, recovery_code_hashes: [] });
}
