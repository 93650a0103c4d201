/**
 * Scope projection: a field the caller has no scope for is removed (absent, never null or zero).
 * Paths use dots for objects and `[]` for every element of an array: `items[].purchasePriceWithoutVat`.
 */
import type { Scope } from '../auth/scopes.js';

export type FieldScopes = Record<string, Scope>;

function removePath(value: unknown, segments: string[]): void {
  if (value === null || typeof value !== 'object' || segments.length === 0) return;
  const [head, ...rest] = segments;
  const isArrayStep = head.endsWith('[]');
  const name = isArrayStep ? head.slice(0, -2) : head;
  const record = value as Record<string, unknown>;
  if (rest.length === 0 && !isArrayStep) {
    delete record[name];
    return;
  }
  const child = record[name];
  if (isArrayStep) {
    if (Array.isArray(child)) for (const element of child) removePath(element, rest);
  } else {
    removePath(child, rest);
  }
}

/** Removes, in place, every field whose scope the caller lacks; returns the same value. */
export function projectFields<T>(data: T, fieldScopes: FieldScopes | undefined, scopes: ReadonlySet<Scope>): T {
  if (!fieldScopes) return data;
  const missing = Object.entries(fieldScopes).filter(([, scope]) => !scopes.has(scope)).map(([path]) => path.split('.'));
  if (missing.length === 0) return data;
  const records = Array.isArray(data) ? data : [data];
  for (const record of records) for (const path of missing) removePath(record, path);
  return data;
}
