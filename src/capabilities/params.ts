/** Common request parameters (SPEC "Common request parameters"), written once and reused by every capability. */
import { z } from 'zod';

export const LIST_LIMIT = { default: 50, max: 250 } as const;
export const SEARCH_LIMIT = { default: 20, max: 100 } as const;

export const market = z.string().min(1).max(32).describe('Shop code, as returned by GET /stores.');
export const dateParam = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD').meta({ format: 'date' });
export const from = dateParam.describe('First day of the period (inclusive), a calendar date in the shop\'s time zone.');
export const to = dateParam.describe('Last day of the period (inclusive), a calendar date in the shop\'s time zone. Defaults to today when only `from` is given.');
export const limit = z.number().int().describe(`Page size for listings (default ${LIST_LIMIT.default}, 1..${LIST_LIMIT.max}); maximum records for a search (default ${SEARCH_LIMIT.default}, 1..${SEARCH_LIMIT.max}). Out of range is a 400, never clamped.`);
export const cursor = z.string().min(1).max(2048).describe('The `nextCursor` of the previous response; send all other parameters unchanged.');
export const query = z.string().trim().min(1).max(200).describe('Switches the listing to a search ordered by relevance: at most `limit` records, not paginated, not restricted by period.');
export const todayOnly = z.boolean().describe('Only today\'s records (shop time zone). Cannot be combined with `from`/`to`.');

/** The parameters every shop listing takes. */
export const listParams = { market, from: from.optional(), to: to.optional(), limit: limit.optional(), cursor: cursor.optional() };

/**
 * `meta` of a summary that pages its rows itself (e.g. /customers/performance): SPEC's envelope puts `hasMore` and
 * `nextCursor` in `meta`, never in `data`; the runner moves them there from what the handler returns.
 */
export const pageMeta = z.object({
  hasMore: z.boolean().describe('True when a next page exists.'),
  nextCursor: z.string().nullable().describe('Send back as `cursor` with the other parameters unchanged; null at the end.'),
});
