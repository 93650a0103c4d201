/** The account: plan and entitlements, and diagnostics of the connection in use. */
import { z } from 'zod';
import { allScopes, type Scope } from '../../auth/scopes.js';
import { getAccessKeyInfo, getAccountWithPlan, getConnectionInfo, getEntitlements, getFeatureUsage } from '../../queries/account.js';
import { listShops } from '../../queries/shops.js';
import { iso } from '../../queries/keyset.js';
import { defineCapability, readOnly } from '../types.js';
import type { Caller } from '../context.js';
import type { Db } from '../../db/knex.js';

/** Returns the plan, its features and limits with current usage. */
export const accountEntitlements = defineCapability({
  name: 'account.entitlements',
  summary: 'Plan, features, limits with current usage.',
  description: 'Returns the account\'s plan and, per feature (REST API, MCP, outbound webhooks, ...), whether it is enabled, its limit (null = unlimited or per agreement) and current usage. Use it to explain why something is unavailable.',
  path: '/account/entitlements',
  scope: 'account:read',
  mcpTool: 'account_entitlements',
  kind: 'summary',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    account: z.object({ code: z.string(), name: z.string() }),
    plan: z.object({ code: z.enum(['trial', 'beginner', 'start', 'growth', 'pro', 'custom']), name: z.string() }),
    features: z.array(z.object({ feature: z.string(), enabled: z.boolean(), limit: z.number().int().nullable(), usage: z.number().int().nullable() })),
  }),
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const account = await getAccountWithPlan(ctx.db, ctx.caller.account.id);
    // One after another: `ctx.db` may be a transaction (one connection), which takes one query at a time.
    const features = await getEntitlements(ctx.db, ctx.caller.account.id);
    const usage = await getFeatureUsage(ctx.db, ctx.caller.account.id);
    return {
      account: { code: account.code, name: account.name },
      plan: { code: account.plan_code, name: account.plan_name },
      features: features.map((f) => ({ ...f, usage: usage[f.feature] ?? null })),
    };
  },
});

/** Scope areas, for "granted and missing permissions per area". */
function areaOf(scope: Scope): string {
  return scope.split(':')[0];
}

/** The credential of the call: an access key, or the OAuth connection whose token it is (who consented, when). */
async function describeCredential(db: Db, caller: Caller) {
  if (caller.credentialType === 'oauth') {
    const connection = await getConnectionInfo(db, caller.credentialId);
    return {
      type: 'oauth_connection' as const, id: connection.id as string, name: connection.client_name as string, clientId: connection.client_id as string,
      interfaces: ['mcp' as const], grantedBy: connection.granted_by as string, grantedAt: (connection.created_at as Date).toISOString(), expiresAt: null,
    };
  }
  const key = await getAccessKeyInfo(db, caller.credentialId);
  return {
    type: 'access_key' as const, id: key.id, name: key.name, clientId: null, interfaces: key.interfaces, grantedBy: key.created_by,
    grantedAt: key.created_at.toISOString(), expiresAt: iso(key.expires_at),
  };
}

/** Diagnoses this connection: credential, who granted it, scopes granted and missing per area, shops, AI write mode. */
export const accountConnection = defineCapability({
  name: 'account.connection',
  summary: 'Diagnostics of this connection.',
  description: 'Returns what this credential is — an access key, or the connection behind an OAuth access token (which is accepted here besides MCP): its type and name, who granted access and when, granted and missing permissions per area, the shops it covers, and the AI write mode. Use it to find out why a call is refused.',
  path: '/account/connection',
  scope: 'stores:read',
  mcpTool: null,
  kind: 'summary',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    credential: z.object({
      type: z.enum(['access_key', 'oauth_connection']).describe('An access key, or the connection (consent) behind an OAuth access token.'),
      id: z.string(),
      name: z.string().describe('The key\'s name, or the application\'s (OAuth client\'s) name.'),
      clientId: z.string().nullable().describe('OAuth: the client id (an https address for a metadata-document client); null for a key.'),
      interfaces: z.array(z.enum(['rest', 'mcp'])),
      grantedBy: z.string(),
      grantedAt: z.string(),
      expiresAt: z.string().nullable(),
    }),
    account: z.object({ code: z.string(), name: z.string(), plan: z.string() }),
    permissions: z.array(z.object({ area: z.string(), granted: z.array(z.string()), missing: z.array(z.string()) })),
    shops: z.object({ all: z.boolean().describe('True: every shop, including future ones.'), codes: z.array(z.string()) }),
    aiWriteMode: z.enum(['read_only', 'proposals', 'autonomous']).describe('D13: the write mode chosen when the key was issued or on the consent screen.'),
  }),
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const [account, shops] = await Promise.all([
      getAccountWithPlan(ctx.db, ctx.caller.account.id),
      listShops(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes),
    ]);
    const areas = [...new Set(allScopes.map(areaOf))].sort();
    return {
      credential: await describeCredential(ctx.db, ctx.caller),
      account: { code: account.code, name: account.name, plan: account.plan_code },
      permissions: areas.map((area) => ({
        area,
        granted: allScopes.filter((s) => areaOf(s) === area && ctx.caller.scopes.has(s)),
        missing: allScopes.filter((s) => areaOf(s) === area && !ctx.caller.scopes.has(s)),
      })),
      shops: { all: ctx.caller.shopCodes === null, codes: shops.map((s) => s.code) },
      aiWriteMode: ctx.caller.writeMode,
    };
  },
});
