/** A word-level diff of two texts for people (the Approvals page): kept, removed and added runs, markup tags as words. */
export interface DiffSegment {
  op: 'same' | 'del' | 'ins';
  text: string;
}

const tokens = (text: string) => text.split(/(\s+|<[^>]*>)/).filter((t) => t !== '');

/** Longest-common-subsequence diff; above ~4 million cells it shows the whole texts as removed and added. */
export function wordDiff(before: string, after: string): DiffSegment[] {
  const a = tokens(before);
  const b = tokens(after);
  if (a.length * b.length > 4_000_000) return [...(before ? [{ op: 'del' as const, text: before }] : []), ...(after ? [{ op: 'ins' as const, text: after }] : [])];
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: DiffSegment[] = [];
  const push = (op: DiffSegment['op'], text: string) => {
    const last = out[out.length - 1];
    if (last && last.op === op) last.text += text;
    else out.push({ op, text });
  };
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { push('same', a[i]); i++; j++; } else if (lcs[i + 1][j] >= lcs[i][j + 1]) push('del', a[i++]);
    else push('ins', b[j++]);
  }
  while (i < n) push('del', a[i++]);
  while (j < m) push('ins', b[j++]);
  return out;
}
