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
  return grouped(out);
}

/**
 * Reads better as "removed phrase, added phrase": a change interrupted only by kept whitespace is one change, and
 * the removed and added words of a change come as one run each.
 */
function grouped(segments: DiffSegment[]): DiffSegment[] {
  const out: DiffSegment[] = [];
  let del = '';
  let ins = '';
  const flush = () => {
    if (del) out.push({ op: 'del', text: del });
    if (ins) out.push({ op: 'ins', text: ins });
    del = '';
    ins = '';
  };
  segments.forEach((s, k) => {
    const inChange = del !== '' || ins !== '';
    const nextChanges = k + 1 < segments.length && segments[k + 1].op !== 'same';
    if (s.op === 'del') del += s.text;
    else if (s.op === 'ins') ins += s.text;
    else if (inChange && nextChanges && /^\s+$/.test(s.text)) {
      del += s.text;
      ins += s.text;
    } else {
      flush();
      out.push(s);
    }
  });
  flush();
  return out;
}
