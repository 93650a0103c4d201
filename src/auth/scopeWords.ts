/**
 * Every scope in words a shop owner understands, grouped by area: what the consent screen and the key form show.
 * One entry per scope of src/auth/scopes.ts (a unit test keeps the two equal).
 */
import { allScopes, sensitiveScopes, writeScopes, type Scope } from './scopes.js';

export const scopeWords: Record<Scope, { area: string; words: string }> = {
  'account:read': { area: 'Account', words: 'See the account, its plan and who is connected' },
  'stores:read': { area: 'Account', words: 'See the shops, their currencies and settings' },
  'orders:read': { area: 'Sales', words: 'Read orders (without customer names and addresses)' },
  'invoices:read': { area: 'Sales', words: 'Read invoices, credit notes and proformas' },
  'customers:read': { area: 'Sales', words: 'Read the customer directory (without personal data)' },
  'coupons:read': { area: 'Sales', words: 'Read coupons and discount codes' },
  'coupons:write': { area: 'Sales', words: 'Create and change coupons (with a preview first)' },
  'coupons:delete': { area: 'Sales', words: 'Delete coupons (with a preview first)' },
  'personal-data:read': { area: 'Sensitive data', words: 'See customers\' names, e-mails, phones and addresses' },
  'reports:read': { area: 'Sensitive data', words: 'See revenue, average order and lifetime value' },
  'purchase-prices:read': { area: 'Sensitive data', words: 'See purchase prices, profit and margins' },
  'purchasing:read': { area: 'Sensitive data', words: 'See suppliers and purchasing' },
  'products:read': { area: 'Catalogue', words: 'Read products and categories' },
  'product-content:read': { area: 'Catalogue', words: 'Read product texts (and propose changes for approval)' },
  'category-content:read': { area: 'Catalogue', words: 'Read category texts (and propose changes for approval)' },
  'inventory:read': { area: 'Catalogue', words: 'Read stock levels' },
  'availabilities:draft': { area: 'Catalogue', words: 'Propose changes to the availability dictionary (a person approves)' },
  'shipping:read': { area: 'Shipping and claims', words: 'Read shipments, carriers and delivery statistics' },
  'claims:read': { area: 'Shipping and claims', words: 'Read claims and returns' },
  'claims-settings:read': { area: 'Shipping and claims', words: 'Read claim settings (and propose changes for approval)' },
  'analytics:read': { area: 'Marketing', words: 'Read visits, channels and conversion' },
  'search-console:read': { area: 'Marketing', words: 'Read search queries and clicks' },
  'affiliate:read': { area: 'Marketing', words: 'Read the affiliate programme' },
  'affiliate:write': { area: 'Marketing', words: 'Manage the affiliate programme (partners, campaigns, texts)' },
  'chatbot:read': { area: 'Marketing', words: 'Read chatbot settings and statistics' },
  'chatbot-conversations:read': { area: 'Sensitive data', words: 'Read chatbot conversations with customers' },
  'automations:read': { area: 'Automations', words: 'Read automations' },
  'automations:write': { area: 'Automations', words: 'Write automation drafts (never enabled without you)' },
  'webhooks:read': { area: 'Account', words: 'See webhook endpoints and their delivery log' },
};

export interface ScopeChoice {
  scope: Scope;
  words: string;
  sensitive: boolean;
  /** A write scope (S1): unchecked by default like a sensitive one. */
  write: boolean;
}

/** The given scopes grouped by area, areas in first-appearance order of the catalogue. */
export function scopesByArea(scopes: readonly Scope[]): { area: string; scopes: ScopeChoice[] }[] {
  const wanted = new Set(scopes);
  const groups = new Map<string, ScopeChoice[]>();
  for (const scope of Object.keys(scopeWords) as Scope[]) {
    if (!wanted.has(scope)) continue;
    const { area, words } = scopeWords[scope];
    groups.set(area, [...(groups.get(area) ?? []), { scope, words, sensitive: sensitiveScopes.includes(scope), write: writeScopes.includes(scope) }]);
  }
  return [...groups].map(([area, list]) => ({ area, scopes: list }));
}

export const scopeWordsComplete = (): boolean => allScopes.every((s) => s in scopeWords) && Object.keys(scopeWords).length === allScopes.length;
