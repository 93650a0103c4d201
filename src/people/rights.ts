/** What a person may pass on (D27): a key or a consent never carries a scope, shop or field right the person lacks. */
import { allScopes, writeModes, type Scope, type WriteMode } from '../auth/scopes.js';
import { AppError } from '../errors.js';
import { scopePermission, writeModePermission, type Person } from './model.js';

/** The scopes this person may grant, in the catalogue's order. */
export function grantableScopes(person: Pick<Person, 'permissions'>): Scope[] {
  return allScopes.filter((scope) => {
    const needed = scopePermission[scope];
    return !needed || needed.some((p) => person.permissions.has(p));
  });
}

/** The AI write modes this person may grant (S1): `autonomous` only with the right to approve proposals. */
export function grantableWriteModes(person: Pick<Person, 'permissions'>): WriteMode[] {
  return writeModes.filter((mode) => {
    const needed = writeModePermission[mode];
    return !needed || person.permissions.has(needed);
  });
}

/** The strongest mode this person may grant that is not stronger than `mode`: `autonomous` falls back to `proposals`. */
export function narrowWriteMode(person: Pick<Person, 'permissions'>, mode: WriteMode): WriteMode {
  const allowed = grantableWriteModes(person);
  if (allowed.includes(mode)) return mode;
  return writeModes.slice(0, writeModes.indexOf(mode)).reverse().find((m) => allowed.includes(m)) ?? 'read_only';
}

/** Throws INVALID_PARAMETER (`reason: beyond_rights`) when the person may not hand `mode` to an assistant. */
export function assertWriteModeWithinRights(person: Pick<Person, 'permissions'>, mode: WriteMode): void {
  if (grantableWriteModes(person).includes(mode)) return;
  throw new AppError('INVALID_PARAMETER', `You cannot grant the AI write mode ${mode}: it writes without approval, and you may not approve proposals yourself.`, { param: 'writeMode', reason: 'beyond_rights', requiredPermission: writeModePermission[mode] });
}

/** The shops this person may grant: null = all (also future ones), else their list. */
export function grantableShops(person: Pick<Person, 'shopCodes'>): ReadonlySet<string> | null {
  return person.shopCodes;
}

/**
 * Throws INVALID_PARAMETER (`reason: beyond_rights`) when `scopes` or `shops` reach beyond the person's rights.
 * `shops` null = all shops, which only a person who sees all shops can grant.
 */
export function assertWithinRights(person: Pick<Person, 'permissions' | 'shopCodes'>, scopes: readonly string[], shops: readonly string[] | null): void {
  const allowed = new Set<string>(grantableScopes(person));
  const beyond = scopes.filter((s) => !allowed.has(s));
  if (beyond.length > 0) {
    throw new AppError('INVALID_PARAMETER', `You cannot grant ${beyond.join(', ')}: you do not have the right to that data yourself.`, { param: 'scopes', reason: 'beyond_rights', scopes: beyond });
  }
  if (person.shopCodes === null) return;
  if (shops === null) {
    throw new AppError('INVALID_PARAMETER', 'You cannot grant all shops: you see only some of them.', { param: 'shops', reason: 'beyond_rights' });
  }
  const outside = shops.filter((s) => !person.shopCodes!.has(s));
  if (outside.length > 0) {
    throw new AppError('INVALID_PARAMETER', `You cannot grant shop(s) ${outside.join(', ')}: you may not see them.`, { param: 'shops', reason: 'beyond_rights', shops: outside });
  }
}

/**
 * What a credential the person issued is worth today (D27, checked at every request): its scopes narrowed to those the
 * person may still grant, its shops to those the person may still see, its AI write mode to one the person may still
 * grant (S1: `autonomous` becomes `proposals`). A person who lost a permission or a shop never
 * keeps it through a key or a connection made earlier.
 */
export function narrowToPerson<S extends string>(person: Pick<Person, 'permissions' | 'shopCodes'>, scopes: Iterable<S>, shopCodes: ReadonlySet<string> | null, writeMode: WriteMode): { scopes: Set<S>; shopCodes: Set<string> | null; writeMode: WriteMode } {
  const allowed = new Set<string>(grantableScopes(person));
  const narrowed = new Set([...scopes].filter((s) => allowed.has(s)));
  const mode = narrowWriteMode(person, writeMode);
  if (!person.shopCodes) return { scopes: narrowed, shopCodes: shopCodes ? new Set(shopCodes) : null, writeMode: mode };
  return { scopes: narrowed, shopCodes: new Set([...(shopCodes ?? person.shopCodes)].filter((c) => person.shopCodes!.has(c))), writeMode: mode };
}
