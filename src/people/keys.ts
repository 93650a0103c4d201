/** Access keys as a person issues them in the application: bounded by the person's own rights and shops (D27). */
import { createAccessKey, listAccessKeys, revokeAccessKey, type KeySummary } from '../auth/keys.js';
import { allInterfaces, isScope, isWriteMode, type Interface, type Scope, type WriteMode } from '../auth/scopes.js';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { listShops } from '../queries/shops.js';
import { hasPermission, type Person } from './model.js';
import { assertWithinRights, assertWriteModeWithinRights } from './rights.js';

export interface KeyRequest {
  name: string;
  interfaces: readonly string[];
  scopes: readonly string[];
  /** null = all shops (also future ones). */
  shops: readonly string[] | null;
  /** Days until expiry; null = no expiry. */
  expiresInDays: number | null;
  writeMode: string;
}

export const KEY_EXPIRY_DAYS = [7, 30, 90, 365] as const;

export function assertMayManageKeys(person: Person): void {
  if (!hasPermission(person, 'keys:manage')) throw new AppError('INSUFFICIENT_SCOPE', 'You need the keys:manage permission to issue or revoke access keys.', { requiredPermission: 'keys:manage' });
}

/** Issues a key for the person's account; returns the key, which is never shown again. */
export async function issueKeyAsPerson(db: Db, person: Person, request: KeyRequest, now: Date): Promise<{ id: string; key: string; expiresAt: Date | null }> {
  assertMayManageKeys(person);
  const name = request.name.trim();
  if (name.length < 1 || name.length > 100) throw new AppError('INVALID_PARAMETER', 'The name has 1 to 100 characters.', { param: 'name', reason: 'length' });
  const interfaces = [...new Set(request.interfaces)];
  if (interfaces.length === 0 || interfaces.some((i) => !(allInterfaces as readonly string[]).includes(i))) throw new AppError('INVALID_PARAMETER', 'Pick REST, MCP or both.', { param: 'interfaces', reason: 'enum' });
  const scopes = [...new Set(request.scopes)];
  if (scopes.length === 0) throw new AppError('INVALID_PARAMETER', 'Pick at least one permission.', { param: 'scopes', reason: 'empty' });
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new AppError('INVALID_PARAMETER', `Unknown scope(s): ${unknown.join(', ')}.`, { param: 'scopes', reason: 'unknown' });
  let shops: string[] | null = null;
  if (request.shops !== null) {
    shops = [...new Set(request.shops)];
    if (shops.length === 0) throw new AppError('INVALID_PARAMETER', 'Pick all shops or at least one shop.', { param: 'shops', reason: 'empty' });
    const known = new Set((await listShops(db, person.accountId, null)).map((s) => s.code));
    const bad = shops.filter((s) => !known.has(s));
    if (bad.length > 0) throw new AppError('INVALID_PARAMETER', `Unknown shop(s): ${bad.join(', ')}.`, { param: 'shops', reason: 'unknown shop' });
  }
  assertWithinRights(person, scopes, shops);
  if (request.expiresInDays !== null && !(KEY_EXPIRY_DAYS as readonly number[]).includes(request.expiresInDays)) {
    throw new AppError('INVALID_PARAMETER', `Expiry is one of ${KEY_EXPIRY_DAYS.join(', ')} days or none.`, { param: 'expiresInDays', reason: 'enum' });
  }
  if (!isWriteMode(request.writeMode)) throw new AppError('INVALID_PARAMETER', 'The AI write mode is read_only, proposals or autonomous.', { param: 'writeMode', reason: 'enum' });
  assertWriteModeWithinRights(person, request.writeMode);
  const expiresAt = request.expiresInDays === null ? null : new Date(now.getTime() + request.expiresInDays * 86_400_000);
  const created = await createAccessKey(db, {
    accountId: person.accountId, name, scopes: scopes as Scope[], interfaces: interfaces as Interface[], shopCodes: shops, expiresAt,
    createdBy: person.email, writeMode: request.writeMode as WriteMode, personId: person.id,
  });
  return { ...created, expiresAt };
}

/** The keys a person sees: the owner every key of the account, anyone else the keys they issued. */
export async function keysOfPerson(db: Db, person: Person): Promise<KeySummary[]> {
  return listAccessKeys(db, person.accountId, person.role === 'owner' ? {} : { personId: person.id });
}

export async function revokeKeyAsPerson(db: Db, person: Person, keyId: string): Promise<void> {
  assertMayManageKeys(person);
  const visible = (await keysOfPerson(db, person)).some((k) => k.id === keyId);
  if (!visible || !(await revokeAccessKey(db, person.accountId, keyId))) throw new AppError('NOT_FOUND', 'No such access key.');
}
