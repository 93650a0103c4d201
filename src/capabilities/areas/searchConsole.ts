/** Search console: status of the shop's property and its rows (search-console:read), SEO summaries (analytics:read). */
import { z } from 'zod';
import { searchConsoleRows, searchConsoleStatus, seoSummary } from '../../queries/searchConsole.js';
import { listParams, market, from, to, SEARCH_LIMIT } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const device = z.enum(['desktop', 'mobile', 'tablet']);

/** Connection, property, permission, sync state and archive range of the shop's search-console property. */
export const searchConsoleStatusCapability = defineCapability({
  name: 'searchConsole.status',
  summary: 'Search console: connection, property, permission, sync state, archive range.',
  description: 'Returns the search-console connection of the shop `market`: the property, whether access is granted or lost, when that changed, the last (successful) sync with the recent runs and their errors, and the range of stored rows (`archive`: first and last day, last final day, days and rows). Fresh data reaches yesterday; final data lags about three days.',
  path: '/search-console/status',
  scope: 'search-console:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  params: z.object({ market }).strict(),
  result: z.object({
    connection: z.enum(['connected', 'access_lost', 'not_connected']),
    property: z.string().nullable().describe('E.g. `sc-domain:example.sk`.'),
    permission: z.enum(['granted', 'lost', 'none']),
    statusChangedAt: timestamp.nullable(),
    sync: z.object({
      lastSyncAt: timestamp.nullable(),
      lastSuccessfulSyncAt: timestamp.nullable(),
      syncVersion: z.number().int().nullable(),
      storedThrough: timestamp.nullable().describe('The service has stored everything the platform reported up to this instant.'),
      recentRuns: z.array(z.object({
        ranAt: timestamp, status: z.enum(['completed', 'failed']), dataState: z.string(), daysUpserted: z.number().int(), error: z.string().nullable(),
        errorCode: z.string().nullable(), retryAt: timestamp.nullable(),
      })).describe('The last five runs, newest first.'),
    }),
    archive: z.object({
      from: z.string().nullable(), to: z.string().nullable(), finalThrough: z.string().nullable().describe('Last day whose rows are final.'),
      days: z.number().int(), rows: z.number().int(),
    }),
  }),
  annotations: readOnly,
  handler: ({ ctx }) => searchConsoleStatus(ctx.db, ctx.shop!.id),
});

/** Search-console rows of a period by cursor, each with a content hash. */
export const searchConsoleQueryCapability = defineCapability({
  name: 'searchConsole.query',
  summary: 'Search-console rows by day, query, page, country and device, with paging and a content hash.',
  description: 'Returns the stored search-console rows of the shop `market` (one per day, query, page, country and device) for the period (default: the last 30 days; at most 366), newest day first, in pages: send `nextCursor` back as `cursor` with the other parameters unchanged. Filter on `searchQuery`, `page`, `country` (ISO alpha-3, e.g. `svk`) or `device`. `dataState` is `fresh` (may still change) or `final`; `contentHash` (SHA-256 of key, figures and state) changes exactly when a row is revised. For summaries by query or page use /analytics/seo.',
  path: '/search-console/query',
  scope: 'search-console:read',
  mcpTool: null,
  kind: 'list',
  market: 'required',
  period: { default: 'last30days' },
  params: z.object({
    ...listParams,
    searchQuery: z.string().min(1).max(200).optional().describe('Only rows of this search query (exact).'),
    page: z.string().min(1).max(500).optional().describe('Only rows of this page URL (exact).'),
    country: z.string().regex(/^[a-zA-Z]{3}$/, 'an ISO 3166-1 alpha-3 code').optional().describe('Only rows of this country, ISO alpha-3.'),
    device: device.optional(),
  }).strict(),
  result: z.object({
    day: z.string(), query: z.string(), page: z.string(), country: z.string(), device, clicks: z.number().int(), impressions: z.number().int(),
    ctr: z.number().nullable().describe('clicks / impressions, 4 decimals.'), position: z.number().describe('Average position.'),
    dataState: z.enum(['fresh', 'final']), contentHash: z.string().describe('SHA-256 (hex) of the row\'s key, figures and data state.'),
  }),
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => searchConsoleRows(ctx.db, ctx.shop!.id, period!, params, page),
});

/** Search-console clicks, impressions, CTR and position by query or by page. */
export const analyticsSeoCapability = defineCapability({
  name: 'analytics.seo',
  summary: 'Search-console clicks, impressions, CTR and position by query or page.',
  description: `Answers "which searches bring visitors" and "what is the CTR of a query": per search query (\`by=query\`, default) or page (\`by=page\`), the clicks, impressions, CTR and impression-weighted average position of the period (default: the current month in the shop's time zone; at most 366 days), most clicks first, at most \`limit\` (default ${SEARCH_LIMIT.default}, 1..${SEARCH_LIMIT.max}), with totals over all of them. Recent days are \`fresh\` data that may still be revised; \`finalDataThrough\` says up to which day the figures are final.`,
  path: '/analytics/seo',
  scope: 'analytics:read',
  mcpTool: 'analytics_seo',
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object({
    market, from: from.optional(), to: to.optional(),
    by: z.enum(['query', 'page']).optional().describe('Group by search query (default) or by page.'),
    limit: z.number().int().min(1).max(SEARCH_LIMIT.max).optional().describe(`Most rows returned (default ${SEARCH_LIMIT.default}, 1..${SEARCH_LIMIT.max}).`),
  }).strict(),
  result: z.object({
    by: z.enum(['query', 'page']),
    rows: z.array(z.object({
      query: z.string().optional().describe('With by=query.'), page: z.string().optional().describe('With by=page.'),
      clicks: z.number().int(), impressions: z.number().int(), ctr: z.number().nullable(), position: z.number().nullable(),
    })),
    totals: z.object({
      queries: z.number().int().optional(), pages: z.number().int().optional(), clicks: z.number().int(), impressions: z.number().int(),
      ctr: z.number().nullable(), position: z.number().nullable(),
    }).describe('Over every query (or page) of the period, not only the rows returned.'),
    dataThrough: z.string().nullable(),
    finalDataThrough: z.string().nullable(),
  }),
  annotations: readOnly,
  handler: ({ params, ctx, period }) => seoSummary(ctx.db, ctx.shop!.id, period!, params.by ?? 'query', params.limit ?? SEARCH_LIMIT.default),
});
