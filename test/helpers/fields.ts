/** Where a field of an answer is: the field-scope checks of mcpRest and the scope matrix read answers with it. */

/** True when the field at `segments` (dots, `[]` for arrays) exists in `value`: in any element of an array step. */
export function fieldPresent(value: unknown, segments: string[]): boolean {
  if (value === null || typeof value !== 'object' || segments.length === 0) return false;
  const [head, ...rest] = segments;
  const name = head.replace('[]', '');
  const record = value as Record<string, unknown>;
  if (!(name in record)) return false;
  if (rest.length === 0) return true;
  const child = record[name];
  return head.endsWith('[]') ? Array.isArray(child) && child.some((c) => fieldPresent(c, rest)) : fieldPresent(child, rest);
}
