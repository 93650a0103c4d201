/**
 * App of the four propose tools: the proposal as a card (kind, shop, status, expiry, note) and per item and field the
 * change against the current value; texts as a word diff (deleted words struck through, inserted words marked), other
 * values as before → after. HTML texts are compared as the words a reader sees: parsed inertly, never rendered.
 */
(function () {
  'use strict';
  const { start, el } = window.storeOpsView;
  const KINDS = { product_texts: 'Product texts', category_texts: 'Category texts', availabilities: 'Availability dictionary', claims_settings: 'Claims settings' };
  /** Above this many word pairs the diff is not computed word by word: the old text is shown deleted, the new inserted. */
  const DIFF_CELLS_MAX = 4_000_000;

  function wordsOf(value) {
    // DOMParser builds an inert document: no script runs, nothing is fetched.
    const text = /[<&]/.test(value) ? new DOMParser().parseFromString(value, 'text/html').body.textContent || '' : value;
    return text.split(/\s+/).filter(Boolean);
  }

  /** Longest common subsequence of words: [{op: 'same'|'del'|'ins', word}] in reading order. */
  function wordDiff(before, after) {
    const a = wordsOf(before), b = wordsOf(after);
    if (a.length * b.length > DIFF_CELLS_MAX) return [...a.map((word) => ({ op: 'del', word })), ...b.map((word) => ({ op: 'ins', word }))];
    const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lengths[i][j] = a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    const ops = [];
    let i = 0, j = 0;
    while (i < a.length && j < b.length) {
      if (a[i] === b[j]) { ops.push({ op: 'same', word: a[i] }); i++; j++; }
      else if (lengths[i + 1][j] >= lengths[i][j + 1]) ops.push({ op: 'del', word: a[i++] });
      else ops.push({ op: 'ins', word: b[j++] });
    }
    while (i < a.length) ops.push({ op: 'del', word: a[i++] });
    while (j < b.length) ops.push({ op: 'ins', word: b[j++] });
    return ops;
  }

  function shown(value) {
    return value === null ? '(empty)' : typeof value === 'string' ? value : JSON.stringify(value);
  }

  function change(field) {
    const texts = typeof field.before === 'string' || typeof field.after === 'string';
    let body;
    if (texts && (field.before === null || typeof field.before === 'string') && (field.after === null || typeof field.after === 'string')) {
      const ops = wordDiff(field.before || '', field.after || '');
      body = el('p', { class: 'diff' }, ops.flatMap((o, k) => [k > 0 ? ' ' : null, o.op === 'same' ? o.word : el(o.op, {}, o.word)]));
      if (ops.length === 0) body = el('p', { class: 'diff note' }, '(empty)');
    } else {
      body = el('p', { class: 'diff' }, [el('del', {}, shown(field.before)), ' → ', el('ins', {}, shown(field.after))]);
    }
    return el('div', { class: 'field', 'data-field': field.field }, [el('h3', {}, field.field), body]);
  }

  function draw(content) {
    const draft = content.data;
    const decided = draft.decision ? ` · ${draft.decision.decision === 'approve' ? 'approved' : 'rejected'} by ${draft.decision.by}` : '';
    return el('article', { class: 'card', 'data-status': draft.status }, [
      el('h1', {}, `${KINDS[draft.kind] || draft.kind} · ${draft.market}`),
      el('p', { class: 'sub' }, [el('span', { class: 'badge' }, draft.status), ` ${draft.draftId} · ${draft.writeMode === 'autonomous' ? 'written without approval (autonomous mode)' : `waits for a person until ${draft.expiresAt.slice(0, 16).replace('T', ' ')} UTC`}${decided}`]),
      draft.note ? el('p', { class: 'note-text' }, `“${draft.note}”`) : null,
      ...draft.items.map((item) => el('section', { class: 'item', 'data-item': item.id }, [
        el('h2', {}, [item.name || item.id, item.name ? el('span', { class: 'note' }, ` ${item.id}`) : null, item.status !== 'pending' ? el('span', { class: 'badge' }, item.status) : null]),
        ...item.preview.map(change),
        item.result && item.result.warnings.length > 0 ? el('p', { class: 'note' }, item.result.warnings.join(' · ')) : null,
        item.result && item.result.error ? el('p', { class: 'error' }, `${item.result.error.code}: ${item.result.error.message}`) : null,
      ])),
    ]);
  }

  start('proposal-preview', draw);
})();
