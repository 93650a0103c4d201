/** People of an account (D27): roles, permissions and the shops they may see. */
import type { Scope, WriteMode } from '../auth/scopes.js';

export const roles = ['owner', 'admin', 'member'] as const;
export type Role = (typeof roles)[number];

export const permissions = [
  'purchase-prices', 'personal-data', 'reports', 'webhooks:read', 'webhooks:manage', 'automations:edit', 'keys:manage', 'proposals:approve',
  // S1: writes an assistant makes at once (no approval step) need the person's own right to make them.
  'coupons:manage', 'affiliate:manage',
  // UT1: a person's own edits of product and category texts in the application (card, bulk edit, import, category).
  'texts:edit',
] as const;
export type Permission = (typeof permissions)[number];

export function isRole(value: string): value is Role {
  return (roles as readonly string[]).includes(value);
}

export function isPermission(value: string): value is Permission {
  return (permissions as readonly string[]).includes(value);
}

/** A signed-in person as every rule sees them; never carries the password hash or the TOTP secret. */
export interface Person {
  id: string;
  accountId: string;
  accountCode: string;
  accountName: string;
  /** The account's IANA time zone: the application shows dates and times in it. */
  accountTimeZone: string;
  email: string;
  name: string;
  role: Role;
  /** Effective permissions: the owner has all of them. */
  permissions: ReadonlySet<Permission>;
  /** null = every shop of the account, including future ones. */
  shopCodes: ReadonlySet<string> | null;
  totpEnabled: boolean;
}

/**
 * Scopes whose data or writes need a permission (D27, S1): a person lacking it can neither see that data in the
 * application nor pass it on in a key or a consent. Every write scope and every sensitive scope is listed (a unit test
 * keeps it so); scopes not listed here are reads open to every person of the account.
 */
export const scopePermission: Partial<Record<Scope, readonly Permission[]>> = {
  'purchase-prices:read': ['purchase-prices'],
  // Suppliers and purchasing are purchase data.
  'purchasing:read': ['purchase-prices'],
  'personal-data:read': ['personal-data'],
  // Chat transcripts are written by customers: personal data.
  'chatbot-conversations:read': ['personal-data'],
  'reports:read': ['reports'],
  'webhooks:read': ['webhooks:read', 'webhooks:manage'],
  'automations:write': ['automations:edit'],
  // Writes that reach the shop at once (with a preview, but no person's approval): only who may make them.
  'coupons:write': ['coupons:manage'],
  'coupons:delete': ['coupons:manage'],
  'affiliate:write': ['affiliate:manage'],
  // Availability drafts become proposals: who lets an assistant draft them must be able to approve them.
  'availabilities:draft': ['proposals:approve'],
};

/**
 * AI write modes that need a permission (S1): `autonomous` writes texts to the shop without a person's approval, so
 * only a person who may approve proposals can hand it to an assistant (SPEC: writes only after a person approves).
 */
export const writeModePermission: Partial<Record<WriteMode, Permission>> = {
  autonomous: 'proposals:approve',
};

export function hasPermission(person: Pick<Person, 'permissions'>, permission: Permission): boolean {
  return person.permissions.has(permission);
}

export function effectivePermissions(role: Role, stored: readonly string[]): Set<Permission> {
  if (role === 'owner') return new Set(permissions);
  return new Set(stored.filter(isPermission));
}
