/**
 * Makes a tool's JSON Schemas small enough for a model's context (issue 26.1) without loosening an input bound:
 * repeated subschemas become `$defs`, nullable unions become `type: [t, "null"]`, the parameters every tool shares
 * are described once in the server's instructions, and output schemas keep only what validates structuredContent
 * (the field descriptions live in /openapi.json; clients validate with output schemas, models rarely see them).
 */
import type { JsonSchema } from '../../src/capabilities/jsonSchema.js';

/** Parameters whose meaning the server's `instructions` state once; their bounds stay in every schema. */
export const SHARED_PARAMS = ['market', 'from', 'to', 'limit', 'cursor', 'todayOnly', 'query'] as const;

/** Keywords whose value is data, not a subschema. */
const DATA_KEYWORDS = new Set(['required', 'enum', 'const', 'default', 'examples', 'description', 'pattern', 'format', 'type']);

function mapSchema(schema: unknown, visit: (node: JsonSchema) => JsonSchema): unknown {
  if (Array.isArray(schema)) return schema.map((item) => mapSchema(item, visit));
  if (!schema || typeof schema !== 'object') return schema;
  const node: JsonSchema = {};
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    if (DATA_KEYWORDS.has(key)) node[key] = value;
    else if (key === 'properties' || key === '$defs') node[key] = Object.fromEntries(Object.entries(value as JsonSchema).map(([name, sub]) => [name, mapSchema(sub, visit)]));
    else node[key] = mapSchema(value, visit);
  }
  return visit(node);
}

/** `anyOf: [{type: t, ...}, {type: "null"}]` → `{type: [t, "null"], ...}` (the same set of values, fewer bytes). */
export function mergeNullable(schema: JsonSchema): JsonSchema {
  return mapSchema(schema, (node) => {
    const options = node.anyOf as JsonSchema[] | undefined;
    if (!Array.isArray(options) || options.length !== 2) return node;
    const [value, nullOption] = options;
    if (Object.keys(nullOption).length !== 1 || nullOption.type !== 'null' || typeof value.type !== 'string' || 'const' in value) return node;
    const { anyOf: _options, ...rest } = node;
    const merged: JsonSchema = { ...value, ...rest, type: [value.type, 'null'] };
    if (Array.isArray(value.enum)) merged.enum = [...(value.enum as unknown[]), null];
    return merged;
  }) as JsonSchema;
}

/** Without the given keywords wherever they are schema keywords (not inside `properties` names or data). */
function without(schema: JsonSchema, drop: (key: string, value: unknown) => boolean): JsonSchema {
  return mapSchema(schema, (node) => Object.fromEntries(Object.entries(node).filter(([key, value]) => !drop(key, value)))) as JsonSchema;
}

const OUTPUT_ONLY_DETAIL = new Set(['description', 'pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems', 'multipleOf', 'exclusiveMinimum', 'exclusiveMaximum', 'title']);

/**
 * An output schema reduced to what validates the result: types, properties, required fields, enums. Field
 * meanings, units and formats are in /openapi.json and the tool description; `additionalProperties: false` is left
 * to the REST contract tests, which hold the service to its zod schemas.
 */
export function outputForValidation(schema: JsonSchema): JsonSchema {
  const { description: _top, ...rest } = schema;
  // Output enums are documentation (the values are listed in /openapi.json); the type still validates.
  const reduced = without(rest, (key, value) => (OUTPUT_ONLY_DETAIL.has(key) && typeof value !== 'object') || (key === 'additionalProperties' && value === false) || key === 'enum');
  // `properties` already constrains objects only; the service never puts a non-object where one is declared.
  // The root keeps `type: object` (MCP requires it of an outputSchema).
  const untyped = mapSchema(reduced, (node) => {
    if (node.type !== 'object' || !node.properties) return node;
    const { type: _object, ...others } = node;
    return others;
  }) as JsonSchema;
  return { type: 'object', ...hoistRepeated(mergeNullable(untyped), true) };
}

/** First sentence (or clause before " — ") of a parameter description, the rest is the tool description's job. */
function shortDescription(text: string): string {
  const cut = text.search(/(?<!e\.g|i\.e|etc|vs)\.\s|\s—\s|;\s|\s\(/);
  const first = cut > 0 && cut < text.length - 1 ? `${text.slice(0, cut)}.` : text;
  if (first.length <= PARAM_DESCRIPTION_MAX) return first;
  return `${first.slice(0, first.lastIndexOf(' ', PARAM_DESCRIPTION_MAX - 1))}…`;
}

/** A parameter description's longest form in a tool list (the full text is in /openapi.json and the registry). */
const PARAM_DESCRIPTION_MAX = 60;

/**
 * An input schema as a model is shown it: every bound kept; the shared parameters without their description;
 * other parameters' descriptions to their first sentence (`top`: only the top-level parameters keep one; `none`: no
 * descriptions, for the few write tools whose structure alone nears the per-tool budget); a date's or date-time's
 * regex left to its `format` (the same rule).
 */
export function inputForModel(schema: JsonSchema, detail: 'all' | 'top' | 'none' = 'top'): JsonSchema {
  const properties = { ...(schema.properties as Record<string, JsonSchema> | undefined ?? {}) };
  const described = new Map<string, string>();
  for (const [name, property] of Object.entries(properties)) {
    const shared = (SHARED_PARAMS as readonly string[]).includes(name);
    if (typeof property.description === 'string' && !shared && detail !== 'none') described.set(name, shortDescription(property.description));
  }
  // Descriptions go before hoisting, so that equal structures under different descriptions share one `$defs` entry.
  const bare = mapSchema({ ...schema, properties }, (node) => {
    const { description: _description, ...result } = node;
    if ((result.format === 'date-time' || result.format === 'date') && typeof result.pattern === 'string') delete result.pattern;
    // `const` already fixes the value, so its `type` says nothing more.
    if ('const' in result && typeof result.type === 'string') delete result.type;
    if (detail === 'all' && typeof node.description === 'string') result.description = shortDescription(node.description);
    return result;
  }) as JsonSchema & { properties: Record<string, JsonSchema> };
  const compact = { ...bare, properties: Object.fromEntries(Object.entries(bare.properties).map(([name, property]) => [name, described.has(name) ? { ...property, description: described.get(name) } : property])) };
  // Without descriptions (the largest write tools) every equivalent rewrite that saves bytes applies too.
  return detail === 'none' ? hoistRepeated(tightened(mergeNullable(compact)), true) : hoistRepeated(mergeNullable(compact));
}

/**
 * Equivalent, shorter forms for the tools that need them (issue 26.1): a closed object whose properties are all
 * required says `maxProperties: n` instead of `additionalProperties: false` (the same set of objects), and a `oneOf`
 * of objects states `type: object` and the `required` names its branches share once, outside the branches.
 */
export function tightened(schema: JsonSchema): JsonSchema {
  return mapSchema(schema, (node) => {
    const result = { ...node };
    const names = result.properties ? Object.keys(result.properties as JsonSchema) : [];
    const required = Array.isArray(result.required) ? result.required as string[] : [];
    if (result.additionalProperties === false && !('patternProperties' in result) && names.length > 0 && names.every((name) => required.includes(name)) && required.length === names.length) {
      delete result.additionalProperties;
      result.maxProperties = names.length;
    }
    const branches = result.oneOf as JsonSchema[] | undefined;
    if (Array.isArray(branches) && branches.length > 1 && result.type === undefined && branches.every((branch) => branch.type === 'object')) {
      const shared = branches.map((branch) => (Array.isArray(branch.required) ? branch.required as string[] : []))
        .reduce((common, names) => common.filter((name) => names.includes(name)));
      const { oneOf: _branches, ...outer } = result;
      return {
        ...outer,
        type: 'object',
        ...(shared.length > 0 ? { required: [...new Set([...required, ...shared])] } : {}),
        oneOf: branches.map(({ type: _object, ...branch }) => {
          const own = ((branch.required as string[] | undefined) ?? []).filter((name) => !shared.includes(name));
          const { required: _required, ...rest } = branch;
          return own.length > 0 ? { ...rest, required: own } : rest;
        }),
      };
    }
    return result;
  }) as JsonSchema;
}

/**
 * Moves every subschema that occurs more than once (and is worth it) into `$defs`, named after the property it
 * first appears under; the rest refers to it with `$ref`. Nested repetition is handled from the largest down.
 */
export function hoistRepeated(root: JsonSchema, shortNames = false): JsonSchema {
  const seen = new Map<string, { count: number; name: string; schema: JsonSchema }>();
  const collect = (schema: unknown, name: string, isRoot: boolean): void => {
    if (Array.isArray(schema)) {
      for (const item of schema) collect(item, name, false);
      return;
    }
    if (!schema || typeof schema !== 'object') return;
    const node = schema as JsonSchema;
    if (!isRoot) {
      const key = JSON.stringify(node);
      const entry = seen.get(key) ?? { count: 0, name, schema: node };
      entry.count++;
      seen.set(key, entry);
    }
    for (const [keyword, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(keyword)) continue;
      if (keyword === 'properties' || keyword === '$defs') for (const [property, sub] of Object.entries(value as JsonSchema)) collect(sub, property, false);
      else collect(value, name, false);
    }
  };
  collect(root, 'root', true);
  const names = new Map<string, string>();
  const used = new Set<string>(Object.keys((root.$defs as JsonSchema | undefined) ?? {}));
  const candidates = [...seen].filter(([, entry]) => entry.count > 1).sort((a, b) => b[0].length - a[0].length);
  for (const [key, entry] of candidates) {
    const nameLength = shortNames ? 3 : entry.name.length;
    const refLength = `{"$ref":"#/$defs/"}`.length + nameLength;
    if ((key.length - refLength) * entry.count - (key.length + nameLength + 4) <= 0) continue;
    // Output schemas are read by validators, not people: their definitions get short names.
    const base = shortNames ? 'd' : entry.name.replace(/[^A-Za-z0-9_]/g, '_');
    let name = shortNames ? `d${names.size}` : base;
    for (let n = 2; used.has(name); n++) name = `${base}${n}`;
    used.add(name);
    names.set(key, name);
  }
  if (names.size === 0) return root;
  const replace = (schema: unknown, isDefinition: boolean): unknown => {
    if (Array.isArray(schema)) return schema.map((item) => replace(item, false));
    if (!schema || typeof schema !== 'object') return schema;
    const node = schema as JsonSchema;
    const name = names.get(JSON.stringify(node));
    if (!isDefinition && name) return { $ref: `#/$defs/${name}` };
    const result: JsonSchema = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(keyword)) result[keyword] = value;
      else if (keyword === 'properties' || keyword === '$defs') result[keyword] = Object.fromEntries(Object.entries(value as JsonSchema).map(([property, sub]) => [property, replace(sub, false)]));
      else result[keyword] = replace(value, false);
    }
    return result;
  };
  const definitions: JsonSchema = { ...((root.$defs as JsonSchema | undefined) ?? {}) };
  for (const [key, name] of names) definitions[name] = replace(JSON.parse(key), true);
  const { $defs: _existing, ...body } = replace(root, true) as JsonSchema;
  return { ...body, $defs: definitions };
}
