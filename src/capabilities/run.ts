/**
 * Runs one capability for one caller, the same way for REST and MCP: scope → params → shop → period → cursor
 * → handler → projection. Returns business data and list metadata; the edges wrap them in their envelopes.
 */
import { z } from 'zod';
import { AppError } from '../errors.js';
import { findShopByCode } from '../queries/shops.js';
import type { CapabilityContext, Caller } from './context.js';
import { cursorFingerprint, decodeCursor, encodeCursor } from './cursor.js';
import { isSearchCall, limitBounds } from './jsonSchema.js';
import { resolvePeriod, type Period } from './period.js';
import { projectFields } from './projection.js';
import type { Capability, PageRequest, PageResult } from './types.js';
import type { Db } from '../db/knex.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { TemporalAccess } from '../temporal/access.js';
import { inSpan } from '../tracing/spans.js';

export interface RunDeps {
  db: Db;
  cursorSecret: string;
  now: () => Date;
  /** The shop platforms' adapters, for write capabilities (absent where only reads are served). */
  platforms?: PlatformRegistry;
  /** Temporal, for capabilities that start or signal workflows (proposals). */
  temporal?: TemporalAccess;
}

export interface ListMeta {
  count: number;
  hasMore: boolean;
  nextCursor: string | null;
}

export interface CapabilityOutput {
  data: unknown;
  /** Present for lists (also for searches, whose hasMore is always false). */
  list?: ListMeta;
  period?: Period;
  market?: string;
  /** Extra meta fields of a list (the capability's `meta` schema). */
  meta?: Record<string, unknown>;
}

/** Whether the capability returns a list (a listing or a search). */
export function isListKind(capability: Capability): boolean {
  return capability.kind === 'list' || capability.kind === 'search';
}

/**
 * True when the caller's scopes allow the capability at all; a `write` also needs an AI write mode other than
 * `read_only` (D13, P41), so for such a caller the tool does not exist.
 */
export function callerMayUse(capability: Capability, caller: Caller): boolean {
  if (capability.kind === 'write' && caller.writeMode === 'read_only') return false;
  return caller.scopes.has(capability.scope);
}

/** Turns a zod failure into the error of D3 with the offending parameter. */
export function paramsError(error: z.ZodError, rawParams: Record<string, unknown>): AppError {
  const issue = error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const param = issue.keys[0];
    return new AppError('UNKNOWN_PARAMETER', `Unknown parameter \`${param}\`.`, { param });
  }
  const param = issue.path.map(String).join('.') || undefined;
  if (param === 'limit' && (issue.code === 'too_big' || issue.code === 'too_small')) {
    return new AppError('LIMIT_OUT_OF_RANGE', issue.message, { param });
  }
  // An absent parameter is missing whatever its schema would have checked (a type, an enum's values).
  if (issue.path.length === 1 && rawParams[String(issue.path[0])] === undefined) {
    return new AppError('MISSING_PARAMETER', `Parameter \`${param}\` is required.`, { param });
  }
  return new AppError('INVALID_PARAMETER', `Parameter \`${param}\` is invalid: ${issue.message}.`, { param, reason: issue.message });
}

/**
 * A NUL character is never a valid value and Postgres cannot even compare text with one (it would be a 500):
 * reject it here, for every parameter of every capability, over both surfaces.
 */
function rejectNulCharacters(rawParams: Record<string, unknown>): void {
  const hasNul = (value: unknown): boolean =>
    typeof value === 'string' ? value.includes('\u0000') : Array.isArray(value) ? value.some(hasNul) : false;
  for (const [param, value] of Object.entries(rawParams)) {
    if (!hasNul(value)) continue;
    // A cursor is the service's own opaque token: one with a NUL in it is simply not one of ours (the rule every
    // operation lists for cursors), not a parameter the schema could have refused.
    if (param === 'cursor') throw new AppError('INVALID_CURSOR', 'The cursor is malformed: it contains a NUL character.', { param });
    throw new AppError('INVALID_PARAMETER', `Parameter \`${param}\` is invalid: it contains a NUL character.`, { param, reason: 'contains a NUL character' });
  }
}

function checkLimit(capability: Capability, limit: number | undefined, isSearch: boolean): number {
  const bounds = limitBounds(capability, isSearch);
  if (limit === undefined) return bounds.default;
  if (limit < 1 || limit > bounds.max) {
    throw new AppError('LIMIT_OUT_OF_RANGE', `\`limit\` must be between 1 and ${bounds.max}${isSearch ? ' for a search' : ''}; got ${limit}.`, { param: 'limit', min: 1, max: bounds.max });
  }
  return limit;
}

type CommonParams = { market?: string; from?: string; to?: string; todayOnly?: boolean; limit?: number; cursor?: string; query?: string };

/** Executes a capability for a caller and returns its business data, projected to the caller's scopes. */
export function runCapability(capability: Capability, rawParams: Record<string, unknown>, caller: Caller, requestId: string, deps: RunDeps): Promise<CapabilityOutput> {
  // With tracing, one span per capability run between the request's span and its SQL and workflow starts (OT7).
  return inSpan(`capability ${capability.name}`, { 'store_ops.capability': capability.name }, () => execute(capability, rawParams, caller, requestId, deps));
}

async function execute(capability: Capability, rawParams: Record<string, unknown>, caller: Caller, requestId: string, deps: RunDeps): Promise<CapabilityOutput> {
  if (capability.kind === 'write' && caller.writeMode === 'read_only') {
    throw new AppError('WRITE_MODE_READ_ONLY', 'This credential\'s AI write mode is `read_only`: it has no write tools.', { writeMode: caller.writeMode });
  }
  if (!callerMayUse(capability, caller)) {
    throw new AppError('INSUFFICIENT_SCOPE', `This call needs the scope \`${capability.scope}\`.`, { requiredScope: capability.scope });
  }
  rejectNulCharacters(rawParams);
  const parsed = capability.params.safeParse(rawParams);
  const refused = capability.refusedParams?.names.filter((name) => rawParams[name] !== undefined) ?? [];
  if (refused.length > 0) throw capability.refusedParams!.error(refused);
  if (!parsed.success) throw paramsError(parsed.error, rawParams);
  const params = parsed.data as CommonParams & Record<string, unknown>;

  const searching = isSearchCall(capability, params);
  if (searching && capability.searchParam) {
    const clash = (['cursor', 'from', 'to'] as const).filter((p) => params[p] !== undefined);
    if (clash.length > 0) {
      throw new AppError('INVALID_PARAMETER_COMBINATION', `\`query\` switches to a search, which is not paginated and not restricted by period; it cannot be combined with ${clash.map((p) => `\`${p}\``).join(', ')}.`, { params: ['query', ...clash] });
    }
  }

  const ctx: CapabilityContext = { db: deps.db, caller, requestId, now: deps.now, shop: null, cursorSecret: deps.cursorSecret, platforms: deps.platforms, temporal: deps.temporal };
  if (capability.market === 'required') {
    const code = params.market as string;
    if (caller.shopCodes && !caller.shopCodes.has(code)) {
      throw new AppError('SHOP_FORBIDDEN', `This credential may not read shop \`${code}\`.`, { param: 'market', market: code });
    }
    const shop = caller.requestShop?.code === code ? caller.requestShop.shop : await findShopByCode(deps.db, caller.account.id, code);
    if (!shop) throw new AppError('SHOP_NOT_FOUND', `The account has no shop \`${code}\`; codes come from GET /stores.`, { param: 'market', market: code });
    ctx.shop = shop;
  }

  const timeZone = ctx.shop?.timeZone ?? caller.account.timeZone;
  const page: PageRequest = { limit: isListKind(capability) ? checkLimit(capability, params.limit, searching) : 0, after: null };
  let period: Period | null = null;
  if (capability.period && !searching) period = resolvePeriod(params, capability.period, timeZone, deps.now());

  // The cursor is bound to everything but itself and the page size.
  const { cursor, limit: _limit, ...boundParams } = params;
  const fingerprint = cursorFingerprint({ capability: capability.name, account: caller.account.id, shopId: ctx.shop?.id, ...boundParams });
  if (cursor !== undefined) {
    const decoded = decodeCursor(cursor, fingerprint, deps.cursorSecret);
    page.after = decoded.position;
    // A defaulted period (or todayOnly) is taken from the cursor, so a walk stays on one period across midnight.
    if (params.from === undefined) period = decoded.period;
  }

  const result = await capability.handler({ params, ctx, period, page });
  const output: CapabilityOutput = { data: result };
  if (period) output.period = period;
  if (ctx.shop) output.market = ctx.shop.code;
  if (isListKind(capability)) {
    const list = (Array.isArray(result) ? { items: result, hasMore: false, last: null } : result) as PageResult<unknown>;
    const nextCursor = list.hasMore && list.last ? encodeCursor(list.last, period, fingerprint, deps.cursorSecret) : null;
    output.data = projectFields(list.items, capability.fieldScopes, caller.scopes);
    output.list = { count: list.items.length, hasMore: list.hasMore && nextCursor !== null, nextCursor };
    if (list.meta) output.meta = list.meta;
  } else {
    let data = result as Record<string, unknown>;
    if (capability.meta && data && typeof data === 'object' && !Array.isArray(data)) {
      // A summary's meta fields (its own paging) go to `meta`, never `data` (SPEC's envelope).
      const metaFields = Object.keys(capability.meta.shape);
      output.meta = Object.fromEntries(metaFields.map((field) => [field, data[field]]));
      data = Object.fromEntries(Object.entries(data).filter(([field]) => !metaFields.includes(field)));
    }
    output.data = projectFields(data, capability.fieldScopes, caller.scopes);
  }
  return output;
}
