/** People of an account (D27): roles, permissions and the shops they may see. */
import type { Scope } from '../auth/scopes.js';

export const roles = ['owner', 'admin', 'member'] as const;
export type Role = (typeof roles)[number];

export const permissions = [
  'purchase-prices', 'personal-data', 'reports', 'webhooks:read', 'webhooks:manage', 'automations:edit', 'keys:manage', 'proposals:approve',
  // Commission approval, payouts and the partner queue in the application (issue 24); never a scope of a key.
  'affiliate:manage',
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
 * Scopes whose data needs a permission (D27): a person lacking it can neither see that data in the application nor
 * pass it on in a key or a consent. Scopes not listed here are open to every person of the account.
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
};

export function hasPermission(person: Pick<Person, 'permissions'>, permission: Permission): boolean {
  return person.permissions.has(permission);
}

export function effectivePermissions(role: Role, stored: readonly string[]): Set<Permission> {
  if (role === 'owner') return new Set(permissions);
  return new Set(stored.filter(isPermission));
}
