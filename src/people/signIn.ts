/** Checking a password at sign-in, with a lockout against guessing: 5 wrong passwords in a row lock for 15 minutes. */
import type { Db } from '../db/knex.js';
import { verifyPassword } from './passwords.js';

export const LOCKOUT_AFTER = 5;
export const LOCKOUT_MS = 15 * 60_000;

export type PasswordCheck =
  | { ok: true; personId: string; totpEnabled: boolean }
  | { ok: false; reason: 'invalid' | 'locked'; lockedUntil?: Date };

/**
 * Checks e-mail and password. An unknown e-mail, a disabled person and a wrong password answer alike ('invalid');
 * a locked person is told so even with the right password, so guessing learns nothing during the lock.
 */
export async function checkPassword(db: Db, email: string, password: string, now: Date): Promise<PasswordCheck> {
  const row = await db('people').where({ email: email.trim().toLowerCase() }).whereNull('disabled_at').first();
  if (!row) {
    await verifyPassword(null, password);
    return { ok: false, reason: 'invalid' };
  }
  if (row.locked_until && row.locked_until > now) return { ok: false, reason: 'locked', lockedUntil: row.locked_until };
  if (!(await verifyPassword(row.password_hash, password))) {
    // One statement, so concurrent guesses each count.
    const [updated] = await db('people').where({ id: row.id }).update({
      failed_sign_ins: db.raw('failed_sign_ins + 1'),
      locked_until: db.raw(`case when failed_sign_ins + 1 >= ? then ?::timestamptz else null end`, [LOCKOUT_AFTER, new Date(now.getTime() + LOCKOUT_MS)]),
    }).returning(['failed_sign_ins', 'locked_until']);
    if (updated.locked_until) {
      await db('people').where({ id: row.id }).update({ failed_sign_ins: 0 });
      return { ok: false, reason: 'locked', lockedUntil: updated.locked_until };
    }
    return { ok: false, reason: 'invalid' };
  }
  await db('people').where({ id: row.id }).update({ failed_sign_ins: 0, locked_until: null });
  return { ok: true, personId: row.id, totpEnabled: row.totp_enabled_at !== null };
}
