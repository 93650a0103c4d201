/**
 * MCP tools generated from the capability registry: name, title, description for an assistant, input and output
 * schemas, annotations, and the result envelope (structuredContent + text). Nothing here is written per tool.
 *
 * Result shape (structuredContent), one rule for every tool:
 * - list and search tools: `{ market?, period?, count, hasMore, nextCursor, items: [...] }` — `items` is REST's `data`,
 *   the other fields are REST's `meta` without `requestId`.
 * - get and summary tools: `{ market?, period?, data: {...} }` — `data` is REST's `data`.
 * The business data sits under its own key, so a record field named `market`, `period` or `items` can never collide
 * with the envelope. `market` is present for per-shop tools, `period` whenever a period applied (as in REST).
 */
import { z } from 'zod';
import { LIST_LIMIT, SEARCH_LIMIT } from '../../src/capabilities/params.js';
import { capabilities } from '../../src/capabilities/registry.js';
import { isListKind, type CapabilityOutput } from '../../src/capabilities/run.js';
import type { Capability } from '../../src/capabilities/types.js';
import type { AppError } from '../../src/errors.js';

type JsonSchema = Record<string, unknown>;

/** The Standard Schema shape the MCP SDK accepts for `inputSchema`/`outputSchema` (validate + JSON Schema). */
export interface RegistrySchema {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => { value: unknown };
    readonly jsonSchema: { readonly input: (options: unknown) => JsonSchema; readonly output: (options: unknown) => JsonSchema };
  };
}

/**
 * Advertises a JSON Schema to the SDK without letting the SDK validate with it. Arguments are validated by
 * runCapability (so a bad argument is a tool result with INVALID_PARAMETER & co., exactly as over REST), and results
 * are produced from the same zod schemas the REST contract test checks.
 */
function advertised(schema: JsonSchema): RegistrySchema {
  return {
    '~standard': {
      version: 1,
      vendor: 'store-ops-registry',
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => schema, output: () => schema },
    },
  };
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // `$schema` is dropped: MCP defaults to 2020-12, and older validators (AJV draft-07 in SDK 1.x) reject the URI.
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return rest;
}

const periodSchema = z.object({
  from: z.string().describe('First day, YYYY-MM-DD, inclusive.'),
  to: z.string().describe('Last day, YYYY-MM-DD, inclusive.'),
  timeZone: z.string().describe('IANA time zone the dates are read in.'),
}).describe('The period used (present whenever a period applied).');

/** The zod schema of a tool's structuredContent. */
export function structuredSchema(capability: Capability): z.ZodObject {
  const envelope: Record<string, z.ZodType> = {};
  if (capability.market === 'required') envelope.market = z.string().describe('The shop code the result is about.');
  if (capability.period) envelope.period = periodSchema.optional();
  if (capability.meta) Object.assign(envelope, capability.meta.shape);
  if (isListKind(capability)) {
    envelope.count = z.number().int().describe('Records in this result.');
    envelope.hasMore = z.boolean().describe('True when a next page exists: call again with `cursor` = `nextCursor` and all other arguments unchanged.');
    envelope.nextCursor = z.string().nullable().describe('Send back as `cursor`; null when there is no next page.');
    envelope.items = z.array(capability.result).describe('The records (REST `data`).');
  } else {
    envelope.data = capability.result.describe(capability.summary);
  }
  return z.object(envelope).strict();
}

/** A listing that pages by cursor (it takes `cursor`); other listings return everything at once. */
export function isPaginated(capability: Capability): boolean {
  return isListKind(capability) && 'cursor' in capability.params.shape;
}

function titleOf(tool: string): string {
  const words = tool.split('_');
  return [words[0][0].toUpperCase() + words[0].slice(1), ...words.slice(1)].join(' ');
}

/** Period, pagination, scope and shape notes generated from the capability's metadata, appended to its description. */
function usageNotes(capability: Capability): string[] {
  const notes: string[] = [];
  if (capability.market === 'required') notes.push('Data of one shop: pass its code as `market` (codes come from stores_list); a shop outside this credential is refused with SHOP_FORBIDDEN.');
  const period = capability.period;
  if (period) {
    const defaults = { all: 'all records, whatever their date', last30days: 'the last 30 days including today', currentMonth: 'the current calendar month' } as const;
    notes.push(period.required
      ? 'Period: `from` and `to` (YYYY-MM-DD, inclusive, shop time zone) are required; at most 366 days.'
      : `Period: \`from\`/\`to\` (YYYY-MM-DD, inclusive, shop time zone), at most 366 days; without them ${defaults[period.default]}.${period.todayOnly ? ' `todayOnly: true` limits to today and cannot be combined with `from`/`to`.' : ''} The period used is returned in \`period\`.`);
  }
  if (capability.kind === 'list' && !isPaginated(capability)) {
    notes.push('Not paginated: one call returns every record (`hasMore` is false, `nextCursor` null).');
  } else if (capability.kind === 'list') {
    notes.push(`Paginated: at most \`limit\` records per call (default ${LIST_LIMIT.default}, 1..${LIST_LIMIT.max}). While \`hasMore\` is true, call again with \`cursor\` set to \`nextCursor\` and every other argument unchanged; do not infer the end from the count.`);
  }
  if (capability.kind === 'search' || capability.searchParam) {
    notes.push(`${capability.searchParam ? `With \`${capability.searchParam}\`` : 'Search'}: at most \`limit\` records (default ${SEARCH_LIMIT.default}, 1..${SEARCH_LIMIT.max}) ordered by relevance, not paginated (\`hasMore\` is false), not restricted by period.`);
  }
  const extra = capability.fieldScopes ? Object.entries(capability.fieldScopes) : [];
  if (extra.length > 0) {
    const byScope = new Map<string, string[]>();
    for (const [field, scope] of extra) byScope.set(scope, [...(byScope.get(scope) ?? []), `\`${field}\``]);
    notes.push(`Fields absent (not null) without their scope: ${[...byScope].map(([scope, fields]) => `${fields.join(', ')} need \`${scope}\``).join('; ')}.`);
  }
  notes.push(`Needs scope \`${capability.scope}\`. Result: ${isListKind(capability) ? '`items` plus `count`, `hasMore`, `nextCursor`' : '`data`'}${capability.market === 'required' ? ', `market`' : ''}${capability.period ? ', `period`' : ''}. Errors come back as a tool error whose text is {"error":{"code","message","details"}}, the same codes as the REST API.`);
  return notes;
}

export interface ToolDefinition {
  name: string;
  capability: Capability;
  title: string;
  description: string;
  inputSchema: RegistrySchema;
  outputSchema: RegistrySchema;
  /** The JSON Schemas as advertised (also used by the docs script and tests). */
  inputJsonSchema: JsonSchema;
  outputJsonSchema: JsonSchema;
  annotations: Capability['annotations'] & { title: string };
}

function defineTool(capability: Capability): ToolDefinition {
  const name = capability.mcpTool as string;
  const title = titleOf(name);
  const inputJsonSchema = toJsonSchema(capability.params, 'input');
  const outputJsonSchema = toJsonSchema(structuredSchema(capability), 'output');
  return {
    name,
    capability,
    title,
    description: [capability.description, ...usageNotes(capability)].join('\n\n'),
    inputSchema: advertised(inputJsonSchema),
    outputSchema: advertised(outputJsonSchema),
    inputJsonSchema,
    outputJsonSchema,
    annotations: { title, ...capability.annotations },
  };
}

/** Every tool of the registry, sorted by name (the order tools/list keeps). Built once. */
export const toolDefinitions: readonly ToolDefinition[] = capabilities
  .filter((c) => c.mcpTool !== null)
  .map(defineTool)
  .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** The structuredContent of a successful call, from the runner's output. */
export function structuredContent(capability: Capability, output: CapabilityOutput): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (output.market !== undefined) content.market = output.market;
  if (output.period) content.period = output.period;
  if (output.meta) Object.assign(content, output.meta);
  if (isListKind(capability) && output.list) {
    content.count = output.list.count;
    content.hasMore = output.list.hasMore;
    content.nextCursor = output.list.nextCursor;
    content.items = output.data;
  } else {
    content.data = output.data;
  }
  return content;
}

/** Above this size the text rendering of a list shows fewer records (structuredContent always has all). */
export const TEXT_BUDGET = 100_000;

/**
 * The text block next to structuredContent: its JSON, as MCP asks for clients that read only text. A list page
 * whose JSON exceeds the budget (a page of 250 large orders) shows its first records and says so, with the `limit`
 * that would fit; the JSON stays valid either way.
 */
export function textRendering(content: Record<string, unknown>, full = JSON.stringify(content)): string {
  if (full.length <= TEXT_BUDGET || !Array.isArray(content.items)) return full;
  const items = content.items as unknown[];
  const { items: _all, ...head } = content;
  let used = JSON.stringify(head).length + 200;
  let shown = 0;
  while (shown < items.length) {
    const size = JSON.stringify(items[shown]).length + 1;
    if (used + size > TEXT_BUDGET) break;
    used += size;
    shown++;
  }
  const textNote = `Size limit: this text shows the first ${shown} of the ${items.length} records of this page; structuredContent has all of them. `
    + `If you can read only this text, repeat the call with limit ${Math.max(1, shown)}: nextCursor continues after record ${items.length}, not after record ${shown}.`;
  return JSON.stringify({ ...head, textNote, items: items.slice(0, shown) });
}

/** The D3 error object as a tool result with `isError: true` (no structuredContent: outputSchema describes success). */
export function errorResult(error: AppError, requestId: string): { isError: true; content: Array<{ type: 'text'; text: string }>; _meta: Record<string, unknown> } {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify({ error: error.toJSON(), meta: { requestId } }) }],
    _meta: { requestId },
  };
}
