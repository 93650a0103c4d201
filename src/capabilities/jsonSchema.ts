/**
 * JSON Schemas of a capability, derived from the same zod schemas and rules the runner validates with, for
 * /openapi.json and the MCP tool list alike (one source of truth: a bound the runner enforces is declared here).
 */
import { z } from 'zod';
import { LIST_LIMIT, SEARCH_LIMIT } from './params.js';
import type { Capability, ParamRule } from './types.js';

export type JsonSchema = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12, without `$schema` (MCP defaults to 2020-12; old validators reject the URI). */
export function zodJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return rest;
}

/** Whether a call of this capability is a search (kind `search`, or a listing given its search parameter). */
export function isSearchCall(capability: Capability, params: Record<string, unknown>): boolean {
  return capability.kind === 'search' || (capability.searchParam !== undefined && params[capability.searchParam] !== undefined);
}

/** The `limit` a call accepts: a search 1..100 (default 20), anything else paged 1..250 (default 50). */
export function limitBounds(capability: Capability, searching: boolean): { default: number; max: number } {
  return searching || capability.kind === 'search' ? SEARCH_LIMIT : LIST_LIMIT;
}

export type { ParamRule } from './types.js';

/** The parameter rules of a capability that its schema cannot express, in the order the runner checks them. */
export function rulesNotInSchema(capability: Capability): ParamRule[] {
  const shape = capability.params.shape as Record<string, unknown>;
  const rules: ParamRule[] = [];
  if (capability.searchParam && 'limit' in shape) {
    rules.push({ code: 'LIMIT_OUT_OF_RANGE', rule: `With \`${capability.searchParam}\`, \`limit\` is at most ${SEARCH_LIMIT.max} (a search), not ${LIST_LIMIT.max}.` });
  }
  if (capability.searchParam) {
    rules.push({ code: 'INVALID_PARAMETER_COMBINATION', rule: `\`${capability.searchParam}\` cannot be combined with \`cursor\`, \`from\` or \`to\`.` });
  }
  const period = capability.period;
  if (period) {
    if (period.todayOnly) rules.push({ code: 'INVALID_PARAMETER_COMBINATION', rule: '`todayOnly` cannot be combined with `from` or `to`.' });
    if (!period.required) rules.push({ code: 'MISSING_PARAMETER', rule: '`to` needs `from`.' });
    rules.push({ code: 'PERIOD_REVERSED', rule: '`from` must not be after `to` (or today, when `to` is absent).' });
    rules.push({ code: 'PERIOD_TOO_LONG', rule: 'The period spans at most 366 days.' });
    rules.push({ code: 'INVALID_PARAMETER', rule: '`from` and `to` must be real calendar dates (not 2026-02-30).' });
  }
  rules.push(...(capability.paramRules ?? []));
  if ('cursor' in shape) {
    rules.push({ code: 'INVALID_CURSOR', rule: '`cursor` must be a `nextCursor` this service issued.' });
    rules.push({ code: 'CURSOR_MISMATCH', rule: '`cursor` must be sent with the other parameters of the call that returned it, unchanged.' });
  }
  return rules;
}

/**
 * The parameters' JSON Schema as the runner enforces them: the zod schema plus what the runner adds — `limit`'s
 * range and default per kind (zod only says "an integer"), and `from`/`to` required where the period is.
 */
export function paramsJsonSchema(capability: Capability): JsonSchema {
  const schema = zodJsonSchema(capability.params, 'input') as JsonSchema & { properties?: Record<string, JsonSchema>; required?: string[] };
  const properties = { ...(schema.properties ?? {}) };
  // A bare `limit` gets the runner's bounds; a capability that bounds its own (analytics_seo) keeps them.
  if (properties.limit && (properties.limit.maximum === undefined || properties.limit.maximum === Number.MAX_SAFE_INTEGER)) {
    const bounds = limitBounds(capability, false);
    const { minimum: _min, maximum: _max, ...rest } = properties.limit;
    properties.limit = { ...rest, minimum: 1, maximum: bounds.max, default: bounds.default };
  }
  const required = new Set(schema.required ?? []);
  if (capability.period?.required) {
    for (const name of ['from', 'to']) if (properties[name]) required.add(name);
  }
  const result: JsonSchema = { ...schema, properties };
  if (required.size > 0) result.required = [...required];
  return result;
}
