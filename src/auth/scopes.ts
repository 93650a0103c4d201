/** The scope model shared by access keys and (later) OAuth: every scope of SPEC.md "Authentication". */

export const allScopes = [
  'account:read', 'affiliate:read', 'affiliate:write', 'analytics:read', 'automations:read', 'automations:write',
  'availabilities:draft', 'category-content:read', 'chatbot:read', 'chatbot-conversations:read', 'claims:read',
  'claims-settings:read', 'coupons:read', 'coupons:write', 'coupons:delete', 'customers:read', 'inventory:read',
  'invoices:read', 'orders:read', 'personal-data:read', 'product-content:read', 'products:read', 'purchase-prices:read',
  'purchasing:read', 'reports:read', 'search-console:read', 'shipping:read', 'stores:read', 'webhooks:read',
] as const;

export type Scope = (typeof allScopes)[number];

/** Sensitive scopes: marked and unchecked by default on a consent screen (SPEC "Authentication"). */
export const sensitiveScopes: readonly Scope[] = ['reports:read', 'purchase-prices:read', 'personal-data:read', 'purchasing:read', 'automations:write', 'availabilities:draft'];

/** Write scopes: their tools change the shop or the service (S1); unchecked by default wherever scopes are chosen. */
export const writeScopes: readonly Scope[] = ['coupons:write', 'coupons:delete', 'affiliate:write', 'automations:write', 'availabilities:draft'];

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}

export const allInterfaces = ['rest', 'mcp'] as const;
export type Interface = (typeof allInterfaces)[number];

/** AI write mode of a key or connection (D13): no write tools, writes become proposals a person approves, or approved-by-policy writes at once. */
export const writeModes = ['read_only', 'proposals', 'autonomous'] as const;
export type WriteMode = (typeof writeModes)[number];

export function isWriteMode(value: string): value is WriteMode {
  return (writeModes as readonly string[]).includes(value);
}
