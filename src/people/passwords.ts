/** Password hashing with Argon2id (@node-rs/argon2, the library's OWASP-level defaults); only the PHC string is stored. */
import { hash, verify } from '@node-rs/argon2';
import { AppError } from '../errors.js';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** Refuses a password outside the length rules (the only rules: length beats composition, NIST SP 800-63B). */
export function checkPasswordRules(password: string, param = 'password'): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw new AppError('INVALID_PARAMETER', `A password has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`, { param, reason: 'length' });
  }
}

export async function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** A hash of a password nobody knows: an unknown e-mail costs the same time as a known one. */
let dummyHash: Promise<string> | null = null;

/** True when `password` matches `stored`; with `stored` null it still spends the time of one verification. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    dummyHash ??= hash('no-such-person-placeholder');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
