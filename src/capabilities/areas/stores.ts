/** Shops of the account and the integration status of their web code. */
import { z } from 'zod';
import { listShops } from '../../queries/shops.js';
import { iso } from '../../queries/keyset.js';
import { defineCapability, readOnly } from '../types.js';

const storeSchema = z.object({
  code: z.string().describe('Shop code: the `market` parameter of every per-shop call.'),
  name: z.string(),
  platform: z.string().describe('Shop platform the data is synced from (e.g. `demo`).'),
  currency: z.string().length(3),
  country: z.string().length(2),
  language: z.string(),
  timeZone: z.string().describe('IANA zone in which `from`/`to` of this shop are read.'),
  baseUrl: z.string(),
  sync: z.object({
    lastSyncedAt: z.string().nullable().describe('The instant up to which the shop\'s data was last synced completely.'),
    error: z.string().nullable().describe('Why the latest sync attempt failed (e.g. the platform unreachable); null when the last run completed. The run is retried.'),
    failingSince: z.string().nullable().describe('When the sync started failing; null when it is not failing.'),
  }).describe('The shop\'s sync state.'),
});

/** Lists the account's shops the caller may see, with their codes. */
export const storesList = defineCapability({
  name: 'stores.list',
  summary: 'The client\'s shops with their code.',
  description: 'Returns every shop of the account this credential may see, with the shop code to pass as `market`, platform, currency, country, language, time zone and sync state (last complete sync, and why the latest attempt failed). Call this first to learn the shop codes.',
  path: '/stores',
  scope: 'stores:read',
  mcpTool: 'stores_list',
  kind: 'list',
  market: 'none',
  params: z.object({}).strict(),
  result: storeSchema,
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const shops = await listShops(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes);
    return shops.map((s) => ({ code: s.code, name: s.name, platform: s.platform, currency: s.currency.trim(), country: s.country.trim(), language: s.language, timeZone: s.time_zone, baseUrl: s.base_url,
      sync: { lastSyncedAt: iso(s.last_synced_at), error: s.sync_error, failingSince: iso(s.sync_error_at) },
    }));
  },
});

/** Reports, per shop, whether the web code is installed and coupon-from-link is ready. */
export const storesIntegrationStatus = defineCapability({
  name: 'stores.integrationStatus',
  summary: 'Web code status per shop.',
  description: 'Returns per shop whether the service\'s web code is installed, its version and modules, whether coupon-from-link is ready, and when the shop\'s data was last synced.',
  path: '/stores/integration-status',
  scope: 'stores:read',
  mcpTool: 'stores_integration_status',
  kind: 'list',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    code: z.string(),
    webCode: z.object({ installed: z.boolean(), version: z.string().nullable(), modules: z.array(z.string()) }),
    couponFromLinkReady: z.boolean(),
    lastSyncedAt: z.string().nullable(),
  }),
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const shops = await listShops(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes);
    return shops.map((s) => ({
      code: s.code,
      webCode: { installed: s.web_code_installed, version: s.web_code_version, modules: s.web_code_modules },
      couponFromLinkReady: s.coupon_link_ready,
      lastSyncedAt: iso(s.last_synced_at),
    }));
  },
});
