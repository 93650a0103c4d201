/** The people of an account (D27): create, list, change, disable. The CLI and the application both call these. */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { listShops } from '../queries/shops.js';
import { checkPasswordRules, hashPassword, verifyPassword } from './passwords.js';
import { effectivePermissions, isPermission, isRole, type Permission, type Person, type Role } from './model.js';

export interface NewPerson {
  accountId: string;
  email: string;
  name?: string;
  password: string;
  role: Role;
  permissions?: readonly string[];
  /** null = all shops (also future ones). */
  shops: readonly string[] | null;
}

export interface PersonSummary {
  id: string;
  email: string;
  name: string;
  role: Role;
  permissions: Permission[];
  shops: string[] | 'all';
  secondFactor: boolean;
  locked: boolean;
  disabled: boolean;
  createdAt: string;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function normaliseEmail(email: string): string {
  const value = email.trim().toLowerCase();
  if (!EMAIL.test(value) || value.length > 254) throw new AppError('INVALID_PARAMETER', 'That is not an e-mail address.', { param: 'email', reason: 'format' });
  return value;
}

function checkedPermissions(list: readonly string[]): Permission[] {
  const bad = list.filter((p) => !isPermission(p));
  if (bad.length > 0) throw new AppError('INVALID_PARAMETER', `Unknown permission(s): ${bad.join(', ')}.`, { param: 'permissions', reason: 'unknown' });
  return [...new Set(list)] as Permission[];
}

async function checkedShops(db: Db, accountId: string, shops: readonly string[] | null): Promise<string[] | null> {
  if (shops === null) return null;
  const list = [...new Set(shops.map((s) => s.trim()).filter(Boolean))];
  const known = new Set((await listShops(db, accountId, null)).map((s) => s.code));
  const unknown = list.filter((c) => !known.has(c));
  if (list.length === 0 || unknown.length > 0) throw new AppError('INVALID_PARAMETER', `Unknown shop(s): ${unknown.join(', ') || '(none given)'}. Known: ${[...known].join(', ')}.`, { param: 'shops', reason: 'unknown shop' });
  return list;
}

export async function createPerson(db: Db, input: NewPerson): Promise<{ id: string }> {
  if (!isRole(input.role)) throw new AppError('INVALID_PARAMETER', 'The role is owner, admin or member.', { param: 'role', reason: 'enum' });
  const email = normaliseEmail(input.email);
  checkPasswordRules(input.password);
  const perms = checkedPermissions(input.permissions ?? []);
  const shops = await checkedShops(db, input.accountId, input.shops);
  const id = `psn_${crypto.randomBytes(12).toString('base64url')}`;
  const exists = await db('people').where({ email }).first('id');
  if (exists) throw new AppError('STATE_CONFLICT', `A person with the e-mail ${email} exists already.`, { param: 'email', state: 'exists' });
  await db('people').insert({
    id, account_id: input.accountId, email, name: (input.name ?? '').trim().slice(0, 200), password_hash: await hashPassword(input.password),
    role: input.role, permissions: perms, all_shops: shops === null, shop_codes: shops ?? [],
  });
  return { id };
}

interface PersonRow {
  id: string; email: string; name: string; role: Role; permissions: string[]; all_shops: boolean; shop_codes: string[];
  totp_enabled_at: Date | null; locked_until: Date | null; disabled_at: Date | null; created_at: Date;
}

function summary(row: PersonRow, now: Date): PersonSummary {
  return {
    id: row.id, email: row.email, name: row.name, role: row.role, permissions: [...effectivePermissions(row.role, row.permissions)],
    shops: row.all_shops ? 'all' : row.shop_codes, secondFactor: row.totp_enabled_at !== null,
    locked: row.locked_until !== null && row.locked_until > now, disabled: row.disabled_at !== null, createdAt: row.created_at.toISOString(),
  };
}

/** People of an account, oldest first; never a hash or a secret. */
export async function listPeople(db: Db, accountId: string, now = new Date()): Promise<PersonSummary[]> {
  const rows = await db('people').where({ account_id: accountId }).orderBy('created_at');
  return rows.map((r) => summary(r, now));
}

export async function findPersonIdByEmail(db: Db, accountId: string, email: string): Promise<string | null> {
  const row = await db('people').where({ account_id: accountId, email: normaliseEmail(email) }).first('id');
  return row?.id ?? null;
}

export interface PersonChange {
  name?: string;
  role?: Role;
  permissions?: readonly string[];
  shops?: readonly string[] | null;
  password?: string;
  /** Lifts a sign-in lockout. */
  unlock?: boolean;
  /** The person making the change, when it is one (the People page); the CLI's operator is not limited. */
  grantedBy?: Person;
}

/** U13: nobody grants beyond their own shops: neither "all shops" (null) nor a shop they do not see. */
export function assertGrantableShops(granter: Pick<Person, 'shopCodes'>, shops: readonly string[] | null): void {
  if (granter.shopCodes === null) return;
  if (shops === null) throw new AppError('INSUFFICIENT_SCOPE', 'You cannot grant all shops: you see only some.', { param: 'shops' });
  const outside = shops.filter((c) => !granter.shopCodes!.has(c));
  if (outside.length > 0) throw new AppError('INSUFFICIENT_SCOPE', `You cannot grant shops you do not see: ${outside.join(', ')}.`, { param: 'shops' });
}

/** Changes a person; a new password or narrower rights end their sessions, so nothing older outlives the change. */
export async function updatePerson(db: Db, accountId: string, id: string, change: PersonChange): Promise<PersonSummary> {
  const row = await db('people').where({ account_id: accountId, id }).first();
  if (!row) throw new AppError('NOT_FOUND', `No person ${id} in this account.`);
  const patch: Record<string, unknown> = {};
  if (change.name !== undefined) patch.name = change.name.trim().slice(0, 200);
  if (change.role !== undefined) {
    if (!isRole(change.role)) throw new AppError('INVALID_PARAMETER', 'The role is owner, admin or member.', { param: 'role', reason: 'enum' });
    patch.role = change.role;
  }
  if (change.permissions !== undefined) patch.permissions = checkedPermissions(change.permissions);
  if (change.shops !== undefined) {
    if (change.grantedBy) assertGrantableShops(change.grantedBy, change.shops);
    const shops = await checkedShops(db, accountId, change.shops);
    patch.all_shops = shops === null;
    patch.shop_codes = shops ?? [];
  }
  if (change.password !== undefined) {
    checkPasswordRules(change.password);
    patch.password_hash = await hashPassword(change.password);
    patch.password_changed_at = new Date();
  }
  if (change.unlock) Object.assign(patch, { failed_sign_ins: 0, locked_until: null, failed_second_factors: 0, second_factor_locked_until: null });
  if (Object.keys(patch).length > 0) {
    await db.transaction(async (trx) => {
      await trx('people').where({ id }).update(patch);
      if (patch.password_hash || patch.role || patch.permissions || patch.all_shops !== undefined) await trx('app_sessions').where({ person_id: id }).orWhere({ pending_person_id: id }).delete();
    });
  }
  return summary(await db('people').where({ id }).first(), new Date());
}

/**
 * Disables a person: their sessions end, their connections are revoked; the keys they issued stay listed for the owner
 * but stop working at once (authenticateKey checks the issuing person at every request, D27).
 */
export async function disablePerson(db: Db, accountId: string, id: string): Promise<PersonSummary> {
  const row = await db('people').where({ account_id: accountId, id }).first();
  if (!row) throw new AppError('NOT_FOUND', `No person ${id} in this account.`);
  await db.transaction(async (trx) => {
    await trx('people').where({ id }).whereNull('disabled_at').update({ disabled_at: new Date() });
    await trx('app_sessions').where({ person_id: id }).orWhere({ pending_person_id: id }).delete();
    await trx('oauth_connections').where({ person_id: id }).whereNull('revoked_at').update({ revoked_at: new Date() });
  });
  return summary(await db('people').where({ id }).first(), new Date());
}

/** The person as the rules see them, or null when unknown or disabled. */
export async function loadPerson(db: Db, id: string): Promise<Person | null> {
  const row = await db('people as p').join('accounts as a', 'a.id', 'p.account_id')
    .select('p.*', 'a.code as account_code', 'a.name as account_name', 'a.time_zone as account_time_zone').where('p.id', id).whereNull('p.disabled_at').first();
  if (!row) return null;
  return {
    id: row.id, accountId: String(row.account_id), accountCode: row.account_code, accountName: row.account_name, accountTimeZone: row.account_time_zone, email: row.email, name: row.name,
    role: row.role, permissions: effectivePermissions(row.role, row.permissions), shopCodes: row.all_shops ? null : new Set(row.shop_codes as string[]),
    totpEnabled: row.totp_enabled_at !== null,
  };
}

/** A person changes their own password: the current one must match; every other session of theirs ends. */
export async function changeOwnPassword(db: Db, personId: string, current: string, next: string): Promise<void> {
  const row = await db('people').where({ id: personId }).first('password_hash', 'account_id');
  if (!row || !(await verifyPassword(row.password_hash, current))) throw new AppError('INVALID_PARAMETER', 'The current password is not right.', { param: 'currentPassword', reason: 'mismatch' });
  await updatePerson(db, String(row.account_id), personId, { password: next });
}

/**
 * An owner turns another person's second factor off (a lost phone): the TOTP secret and recovery codes are removed and
 * the person's sessions end, so their next sign-in is with the password only and they set up a new factor.
 */
export async function resetSecondFactor(db: Db, accountId: string, id: string): Promise<PersonSummary> {
  const row = await db('people').where({ account_id: accountId, id }).first();
  if (!row) throw new AppError('NOT_FOUND', `No person ${id} in this account.`);
  await db.transaction(async (trx) => {
    await trx('people').where({ id }).update({ totp_secret: null, totp_enabled_at: null, totp_last_step: null, recovery_code_hashes: [] });
    await trx('app_sessions').where({ person_id: id }).orWhere({ pending_person_id: id }).delete();
  });
  return summary(await db('people').where({ id }).first(), new Date());
}
