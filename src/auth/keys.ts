/** Access keys (D10): `sk_` + 32 random bytes in base62, only a SHA-256 stored, shown once at creation. */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';
import { AccessKey } from '../db/models.js';
import { AppError } from '../errors.js';
import type { Caller } from '../capabilities/context.js';
import { effectivePermissions } from '../people/model.js';
import { preparedRows } from '../db/prepared.js';
import { narrowToPerson } from '../people/rights.js';
import { allScopes, isScope, type Interface, type Scope, type WriteMode } from './scopes.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(Math.ceil((bytes.length * 8) / Math.log2(62)), '0');
}

const KEY_PATTERN = /^sk_[0-9A-Za-z]{43}$/;

export function hashKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key).digest();
}

export interface NewKey {
  accountId: string;
  name: string;
  scopes: Scope[];
  interfaces: Interface[];
  /** null = all shops, including future ones. */
  shopCodes: string[] | null;
  expiresAt: Date | null;
  createdBy: string;
  /** D13; default `proposals`. */
  writeMode?: WriteMode;
  /** The person who issued it in the application (D27); absent for the operator command line. */
  personId?: string;
}

/** Creates a key and returns its id and the key itself, which is never retrievable again. */
export async function createAccessKey(db: Db, input: NewKey): Promise<{ id: string; key: string }> {
  const key = `sk_${base62(crypto.randomBytes(32))}`;
  const id = `key_${base62(crypto.randomBytes(12))}`;
  await AccessKey.query(db).insert({
    id,
    account_id: input.accountId,
    name: input.name,
    key_hash: hashKey(key),
    key_hint: `${key.slice(0, 7)}…${key.slice(-4)}`,
    interfaces: input.interfaces,
    scopes: input.scopes,
    all_shops: input.shopCodes === null,
    shop_codes: input.shopCodes ?? [],
    created_by: input.createdBy,
    expires_at: input.expiresAt,
    write_mode: input.writeMode ?? 'proposals',
    person_id: input.personId ?? null,
  });
  return { id, key };
}

export interface KeySummary {
  id: string;
  name: string;
  hint: string;
  interfaces: string[];
  scopes: string[];
  shops: string[] | 'all';
  writeMode: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** True when the person who issued it is disabled: the key no longer works (D27, AP1). */
  issuerDisabled: boolean;
}

/** Keys of an account, newest first, never with their hash. */
export async function listAccessKeys(db: Db, accountId: string, opts: { personId?: string } = {}): Promise<KeySummary[]> {
  const query = AccessKey.query(db).where({ account_id: accountId }).orderBy('created_at', 'desc');
  if (opts.personId) query.where({ person_id: opts.personId });
  const rows = await query;
  const personIds = [...new Set(rows.map((r) => r.person_id).filter((id): id is string => Boolean(id)))];
  const disabled = new Set(personIds.length === 0 ? [] : (await db('people').whereIn('id', personIds).whereNotNull('disabled_at').select('id')).map((p) => p.id as string));
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return rows.map((r) => ({
    id: r.id, name: r.name, hint: r.key_hint, interfaces: r.interfaces, scopes: r.scopes,
    shops: r.all_shops ? 'all' : r.shop_codes, writeMode: r.write_mode, createdBy: r.created_by, createdAt: r.created_at.toISOString(),
    expiresAt: iso(r.expires_at), lastUsedAt: iso(r.last_used_at), revokedAt: iso(r.revoked_at), issuerDisabled: r.person_id ? disabled.has(r.person_id) : false,
  }));
}

/** Revokes a key of the account; false when there is no such key. Revoking twice keeps the first time. */
export async function revokeAccessKey(db: Db, accountId: string, id: string): Promise<boolean> {
  const found = await AccessKey.query(db).findOne({ account_id: accountId, id });
  if (!found) return false;
  await AccessKey.query(db).where({ id }).whereNull('revoked_at').patch({ revoked_at: new Date() });
  return true;
}

/**
 * The key, its account, the issuing person's current rights (D27) and, when the request names a shop, that shop: one
 * prepared statement, one round trip, read fresh on every request (a revoked key, a disabled person or a removed shop
 * fails the very next request).
 */
const KEY_SQL = `select k.id, k.account_id, k.interfaces, k.scopes, k.all_shops, k.shop_codes, k.revoked_at, k.expires_at,
  k.last_used_at, k.write_mode, k.person_id, a.code as account_code, a.time_zone as account_time_zone,
  p.id as p_id, p.account_id as p_account_id, p.role as p_role, p.permissions as p_permissions, p.all_shops as p_all_shops,
  p.shop_codes as p_shop_codes, s.id as s_id, s.code as s_code, s.name as s_name, s.currency as s_currency, s.time_zone as s_time_zone
  from access_keys k
  join accounts a on a.id = k.account_id
  left join people p on p.id = k.person_id and p.disabled_at is null
  left join shops s on s.account_id = k.account_id and s.code = $2::text and s.removed_at is null
  where k.key_hash = $1`;

/**
 * Resolves a bearer token to a caller for one interface, or throws the 401 of D10. `market`, when the request names a
 * shop, is looked up in the same statement and handed to the runner as `caller.requestShop` (this request only).
 */
export async function authenticateKey(db: Db, token: string, iface: Interface, now: Date, market?: string): Promise<Caller> {
  if (!KEY_PATTERN.test(token)) throw new AppError('INVALID_CREDENTIALS', 'The access key is not valid.');
  const lookup = typeof market === 'string' && market.length > 0 && !market.includes('\u0000') ? market : null;
  const [row] = await preparedRows<Record<string, any>>(db, 'auth_access_key_v1', KEY_SQL, [hashKey(token), lookup]);
  if (!row) throw new AppError('INVALID_CREDENTIALS', 'The access key is not valid.');
  if (row.revoked_at) throw new AppError('CREDENTIALS_REVOKED', 'The access key was revoked.');
  if (row.expires_at && row.expires_at <= now) throw new AppError('CREDENTIALS_EXPIRED', `The access key expired at ${row.expires_at.toISOString()}.`);
  if (!row.interfaces.includes(iface)) {
    const other = iface === 'rest' ? 'MCP' : 'REST';
    throw new AppError('INTERFACE_NOT_ALLOWED', `This access key was issued for ${other} only; issue a key for ${iface.toUpperCase()}.`, { interface: iface });
  }
  // D27 at every request: a key a person issued is worth at most what that person may see today; a disabled person's
  // keys stop working. Keys of the operator command line (no person) stand for the owner.
  let scopes = new Set((row.scopes as string[]).filter(isScope));
  let shopCodes: Set<string> | null = row.all_shops ? null : new Set(row.shop_codes as string[]);
  let writeMode = row.write_mode as WriteMode;
  if (row.person_id) {
    if (!row.p_id || String(row.p_account_id) !== String(row.account_id)) throw new AppError('CREDENTIALS_REVOKED', 'The person who issued this access key can no longer sign in; ask the account owner for a new key.');
    const person = { permissions: effectivePermissions(row.p_role, row.p_permissions), shopCodes: row.p_all_shops ? null : new Set(row.p_shop_codes as string[]) };
    ({ scopes, shopCodes, writeMode } = narrowToPerson(person, scopes, shopCodes, writeMode));
  }
  // Recording use is best effort and at most once a minute per key, so reads stay reads: the row just read says
  // whether a minute has passed, so most requests send no write at all.
  if (!row.last_used_at || row.last_used_at < new Date(now.getTime() - 60_000)) {
    void db('access_keys').where({ id: row.id }).andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(now.getTime() - 60_000)))
      .update({ last_used_at: now }).catch(() => undefined);
  }
  const caller: Caller = {
    account: { id: String(row.account_id), code: row.account_code, timeZone: row.account_time_zone },
    scopes,
    shopCodes,
    credentialId: row.id,
    interface: iface,
    writeMode,
  };
  if (lookup !== null) {
    caller.requestShop = { code: lookup, shop: row.s_id == null ? null : { id: String(row.s_id), code: row.s_code, name: row.s_name, currency: row.s_currency, timeZone: row.s_time_zone } };
  }
  return caller;
}

/** Parses a `--scopes` value: `all` or a comma list of known scopes. */
export function parseScopes(text: string): Scope[] {
  if (text === 'all') return [...allScopes];
  const scopes = text.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0 || scopes.length === 0) throw new Error(`Unknown scope(s): ${unknown.join(', ') || '(none given)'}. Known: ${allScopes.join(', ')}`);
  return scopes as Scope[];
}
