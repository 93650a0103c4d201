/**
 * REST query strings are text; the capability schemas are typed (they serve MCP's JSON too). This converts a query
 * string value to the JSON type its schema declares, so one schema validates both surfaces.
 */
import { z } from 'zod';
import type { Capability } from '../../src/capabilities/types.js';

type JsonType = 'integer' | 'number' | 'boolean' | 'string' | 'array' | 'object' | undefined;

const typeCache = new WeakMap<Capability, Map<string, JsonType>>();

function declaredTypes(capability: Capability): Map<string, JsonType> {
  let types = typeCache.get(capability);
  if (!types) {
    const schema = z.toJSONSchema(capability.params, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, { type?: JsonType }> };
    types = new Map(Object.entries(schema.properties ?? {}).map(([name, prop]) => [name, prop.type]));
    typeCache.set(capability, types);
  }
  return types;
}

function convert(value: string, type: JsonType): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if (type === 'array') return value === '' ? [] : value.split(',');
  // Anything else stays text, so the schema reports it as the wrong type with the parameter's name.
  return value;
}

/** Query and path parameters as the capability's schema expects them. */
export function restParams(capability: Capability, query: Record<string, unknown>, pathParams: Record<string, string>): Record<string, unknown> {
  const types = declaredTypes(capability);
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    params[name] = typeof value === 'string' ? convert(value, types.get(name)) : value;
  }
  return { ...params, ...pathParams };
}
