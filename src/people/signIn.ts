/**
 * Checking a password and a second-factor code at sign-in, with lockouts against guessing: 5 wrong passwords in a row
 * lock the e-mail address for 15 minutes, 5 wrong second-factor codes in a row lock the person's second step for 15
 * minutes (S4). An address that belongs to nobody locks exactly like a known one, and every answer costs one password
 * hash, so neither the answers nor their timing tell which addresses exist.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { verifyPassword } from './passwords.js';
import { verifySecondFactor } from './totp.js';

export const LOCKOUT_AFTER = 5;
export const LOCKOUT_MS = 15 * 60_000;

export type PasswordCheck =
  | { ok: true; personId: string; totpEnabled: boolean }
  | { ok: false; reason: 'invalid' | 'locked'; lockedUntil?: Date };

const normalise = (email: string) => email.trim().toLowerCase();

/**
 * Whose passwords are checked: the application's people (default) or one account's partners on its partner portals
 * (issue 24). Same hashing, lockout and unknown-address counting; the rows and the counters' keys are kept apart.
 */
export interface SignInDirectory {
  table: 'people' | 'affiliate_partner_logins';
  idColumn: 'id' | 'partner_id';
  /** Rows that may sign in (people: not disabled; partners: of this account). */
  scope: (q: Knex.QueryBuilder) => Knex.QueryBuilder;
  /** What an unknown address is counted under (hashed), so a partner's guesses never lock a person's address. */
  unknownAddressKey: (email: string) => string;
}

export const PEOPLE_DIRECTORY: SignInDirectory = { table: 'people', idColumn: 'id', scope: (q) => q.whereNull('disabled_at'), unknownAddressKey: (email) => email };

/** The partners of one account, as a partner portal signs them in. */
export function partnerDirectory(accountId: string): SignInDirectory {
  return { table: 'affiliate_partner_logins', idColumn: 'partner_id', scope: (q) => q.where({ account_id: accountId }), unknownAddressKey: (email) => `partner:${accountId}:${email}` };
}

/**
 * Checks e-mail and password. An unknown e-mail, a disabled person and a wrong password answer alike ('invalid');
 * a locked address is told so even with the right password, so guessing learns nothing during the lock.
 */
export async function checkPassword(db: Db, email: string, password: string, now: Date, directory: SignInDirectory = PEOPLE_DIRECTORY): Promise<PasswordCheck> {
  const row = await directory.scope(db(directory.table).where({ email: normalise(email) })).first();
  // The hash work happens on every path (unknown, locked, wrong, right): the time taken says nothing either.
  const matches = await verifyPassword(row?.password_hash ?? null, password);
  if (!row) return failUnknownAddress(db, directory.unknownAddressKey(normalise(email)), now);
  const id = { [directory.idColumn]: row[directory.idColumn] };
  if (row.locked_until && row.locked_until > now) return { ok: false, reason: 'locked', lockedUntil: row.locked_until };
  if (!matches) {
    // One statement, so concurrent guesses each count.
    const [updated] = await db(directory.table).where(id).update({
      failed_sign_ins: db.raw('failed_sign_ins + 1'),
      locked_until: db.raw(`case when failed_sign_ins + 1 >= ? then ?::timestamptz else null end`, [LOCKOUT_AFTER, new Date(now.getTime() + LOCKOUT_MS)]),
    }).returning(['failed_sign_ins', 'locked_until']);
    if (updated.locked_until) {
      await db(directory.table).where(id).update({ failed_sign_ins: 0 });
      return { ok: false, reason: 'locked', lockedUntil: updated.locked_until };
    }
    return { ok: false, reason: 'invalid' };
  }
  await db(directory.table).where(id).update({ failed_sign_ins: 0, locked_until: null });
  return { ok: true, personId: String(row[directory.idColumn]), totpEnabled: (row.totp_enabled_at ?? null) !== null };
}

/** A wrong password for an address of nobody: counted and locked like a person's, under the address's SHA-256. */
async function failUnknownAddress(db: Db, addressKey: string, now: Date): Promise<PasswordCheck> {
  const emailHash = crypto.createHash('sha256').update(addressKey).digest();
  const lockUntil = new Date(now.getTime() + LOCKOUT_MS);
  const [row] = await db.raw<{ rows: { failures: number; locked_until: Date | null; was_locked: boolean }[] }>(`
    insert into sign_in_unknown_failures as f (email_hash, failures, locked_until, updated_at) values (?, 1, null, ?)
    on conflict (email_hash) do update set
      failures = case when f.locked_until > ? then f.failures when f.failures + 1 >= ? then 0 else f.failures + 1 end,
      locked_until = case when f.locked_until > ? then f.locked_until when f.failures + 1 >= ? then ?::timestamptz else null end,
      updated_at = excluded.updated_at
    returning failures, locked_until`, [emailHash, now, now, LOCKOUT_AFTER, now, LOCKOUT_AFTER, lockUntil]).then((r) => r.rows);
  if (row.locked_until && row.locked_until > now) return { ok: false, reason: 'locked', lockedUntil: row.locked_until };
  return { ok: false, reason: 'invalid' };
}

export type SecondFactorCheck = { ok: true } | { ok: false; reason: 'invalid' | 'locked'; lockedUntil?: Date };

/** Checks the second step of sign-in; the person's wrong codes are counted, and 5 in a row lock it for 15 minutes. */
export async function checkSecondFactor(db: Db, secretsKey: Buffer, personId: string, code: string, now: Date): Promise<SecondFactorCheck> {
  const row = await db('people').where({ id: personId }).first('second_factor_locked_until');
  if (row?.second_factor_locked_until && row.second_factor_locked_until > now) return { ok: false, reason: 'locked', lockedUntil: row.second_factor_locked_until };
  if (await verifySecondFactor(db, secretsKey, personId, code, now)) {
    await db('people').where({ id: personId }).update({ failed_second_factors: 0, second_factor_locked_until: null });
    return { ok: true };
  }
  const [updated] = await db('people').where({ id: personId }).update({
    failed_second_factors: db.raw('case when failed_second_factors + 1 >= ? then 0 else failed_second_factors + 1 end', [LOCKOUT_AFTER]),
    second_factor_locked_until: db.raw('case when failed_second_factors + 1 >= ? then ?::timestamptz else null end', [LOCKOUT_AFTER, new Date(now.getTime() + LOCKOUT_MS)]),
  }).returning(['second_factor_locked_until']);
  if (updated?.second_factor_locked_until) return { ok: false, reason: 'locked', lockedUntil: updated.second_factor_locked_until };
  return { ok: false, reason: 'invalid' };
}

/** Removes counters of unknown addresses whose lock ended or that saw no failure for a lock's length. */
export async function purgeUnknownAddressFailures(db: Db, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - LOCKOUT_MS);
  return db('sign_in_unknown_failures').where('updated_at', '<', cutoff).andWhere((q) => q.whereNull('locked_until').orWhere('locked_until', '<', now)).delete();
}
