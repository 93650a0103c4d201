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
import { paramsJsonSchema, zodJsonSchema, type JsonSchema } from '../../src/capabilities/jsonSchema.js';
import { capabilities } from '../../src/capabilities/registry.js';
import { isListKind, type CapabilityOutput } from '../../src/capabilities/run.js';
import type { Capability } from '../../src/capabilities/types.js';
import type { AppError } from '../../src/errors.js';
import { inputForModel, outputForValidation } from './compactSchema.js';


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

/** A tool description's budget (bytes) before its one-line usage note; rules every tool shares are in `instructions`. */
export const DESCRIPTION_BUDGET = 140;

/** Most bytes a model is shown of one tool (name, description, inputSchema as compact JSON), issue 26.1. */
export const TOOL_BUDGET = 1_500;

/**
 * Sentences of the capability's description that restate a rule the server's instructions already give once
 * (paging, search limits, period bounds, the `meta.period` echo); a model is shown them once, not per tool.
 */
const SHARED_RULE = /nextCursor|in pages|[Pp]aginated|by cursor|366 days|meta\.period|`period` states|not paginated|at most `limit`/;

/** The capability's description cut to whole sentences within the budget, keeping those that name other tools. */
export function condensedDescription(description: string, budget = DESCRIPTION_BUDGET): string {
  let text = description.replace(/\s+/g, ' ').trim();
  // Parenthesised details go first when the text is over budget (they are in /openapi.json), then shared rules.
  if (text.length > budget) text = text.replace(/ \((?:[^()]|\([^()]*\))*\)/g, '');
  text = text.replace(/,? in pages(:[^.]*)?(?=[.,;])/g, '');
  const sentences = text.split(/(?<=[.!?])\s+(?=[A-Z`"(])/);
  const [whole, ...rest] = sentences;
  // An overlong first sentence ends at its last clause boundary within the budget.
  const boundary = whole.length > budget ? Math.max(whole.lastIndexOf(', ', budget), whole.lastIndexOf(': ', budget), whole.lastIndexOf(' — ', budget), whole.lastIndexOf('; ', budget)) : -1;
  const first = boundary > budget / 3 ? `${whole.slice(0, boundary)}.` : whole;
  const kept = [first];
  let used = first.length;
  const namesTool = (sentence: string) => /\b[a-z]+_[a-z_]+\b/.test(sentence);
  for (const sentence of rest) {
    if (SHARED_RULE.test(sentence)) continue;
    if (used + sentence.length + 1 <= budget || (namesTool(sentence) && used + sentence.length + 1 <= budget + 120)) {
      kept.push(sentence);
      used += sentence.length + 1;
    }
  }
  return kept.join(' ');
}

const PERIOD_DEFAULT = { all: 'all records', last30days: 'last 30 days', currentMonth: 'current month' } as const;

/** One line: scope, shop, period default, paging, extra-scope fields (the rules behind them are in the instructions). */
function usageLine(capability: Capability): string {
  const parts = [`Scope ${capability.scope}`];
  if (capability.market === 'required') parts.push('per shop');
  const period = capability.period;
  if (period) parts.push(period.required ? 'period required' : `period default ${PERIOD_DEFAULT[period.default]}${period.todayOnly ? ', or todayOnly' : ''}`);
  if (capability.kind === 'list') parts.push(isPaginated(capability) ? 'paged' : 'complete list');
  if (capability.kind === 'search' || capability.searchParam) parts.push(capability.searchParam ? `search with ${capability.searchParam}` : 'search');
  const byScope = new Map<string, string[]>();
  for (const [field, scope] of Object.entries(capability.fieldScopes ?? {})) byScope.set(scope, [...(byScope.get(scope) ?? []), field.split('.').pop()!.replace('[]', '')]);
  for (const [scope, fields] of byScope) {
    const unique = [...new Set(fields)];
    parts.push(scope === 'personal-data:read' ? `${scope} adds personal data` : `${scope} adds ${unique.slice(0, 3).join(', ')}${unique.length > 3 ? ', …' : ''}`);
  }
  return `${parts.join('; ')}.`;
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
  annotations: Capability['annotations'];
}

function defineTool(capability: Capability): ToolDefinition {
  const name = capability.mcpTool as string;
  const title = titleOf(name);
  const params = paramsJsonSchema(capability);
  const usage = usageLine(capability);
  const modelVisible = (input: JsonSchema, text: string) => JSON.stringify({ name, description: text, inputSchema: input }).length;
  // The per-tool budget is kept by dropping parameter descriptions (the tool description names the key ones) and
  // then by a shorter description; the few large write tools are the ones that need it.
  let inputJsonSchema = inputForModel(params, 'top');
  if (modelVisible(inputJsonSchema, `${condensedDescription(capability.description)}\n${usage}`) > TOOL_BUDGET) inputJsonSchema = inputForModel(params, 'none');
  const room = TOOL_BUDGET - modelVisible(inputJsonSchema, usage) - 8;
  const description = `${condensedDescription(capability.description, Math.min(DESCRIPTION_BUDGET, room))}\n${usage}`;
  const outputJsonSchema = outputForValidation(zodJsonSchema(structuredSchema(capability), 'output'));
  return {
    name,
    capability,
    title,
    description,
    inputSchema: advertised(inputJsonSchema),
    outputSchema: advertised(outputJsonSchema),
    inputJsonSchema,
    outputJsonSchema,
    annotations: capability.annotations,
  };
}

let built: { list: readonly ToolDefinition[]; byName: ReadonlyMap<string, ToolDefinition> } | null = null;

/**
 * The tools, built on first use rather than at import: turning 91 zod schemas into compact JSON Schemas costs about
 * 0.2 s of CPU, which every process that loads the API (the CLI, workers, each test file) paid before (decision Q16).
 */
function builtTools(): NonNullable<typeof built> {
  if (!built) {
    const list = capabilities
      .filter((c) => c.mcpTool !== null)
      .map(defineTool)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    built = { list, byName: new Map(list.map((tool) => [tool.name, tool])) };
  }
  return built;
}

/** Every tool of the registry, sorted by name (the order tools/list keeps). */
export function toolDefinitions(): readonly ToolDefinition[] {
  return builtTools().list;
}

/** The tool of that name, if there is one. */
export function toolNamed(name: string): ToolDefinition | undefined {
  return builtTools().byName.get(name);
}

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
