/** Pure parts of proposals: the final state per kind from the item outcomes, the word diff the Approvals page shows, field order. */
import test from 'ava';
import { wordDiff } from '../../src/proposals/diff.js';
import { finalStatus, isFinal, orderedFields, STATUSES } from '../../src/proposals/model.js';

const written = { status: 'written' as const, warnings: [] };
const warned = { status: 'written' as const, warnings: ['markup removed'] };
const failed = { status: 'failed' as const, warnings: [] };

test('When items are written, then each kind ends in a state SPEC names for it', (t) => {
  t.is(finalStatus('availabilities', [written, written]), 'executed');
  t.is(finalStatus('availabilities', [written, failed]), 'partial');
  t.is(finalStatus('availabilities', [failed, failed]), 'failed');
  t.is(finalStatus('product_texts', [written]), 'written');
  t.is(finalStatus('product_texts', [written, warned]), 'written_with_warnings');
  t.is(finalStatus('product_texts', [written, failed]), 'written_with_warnings');
  t.is(finalStatus('category_texts', [written, failed]), 'written');
  t.is(finalStatus('claims_settings', [written]), 'written');
  for (const [kind, states] of Object.entries(STATUSES)) {
    t.true(states.includes('expired') && states.includes('rejected'), kind);
    t.false(isFinal(states[0]), `${kind} starts open`);
  }
});

test('When two texts differ, then the diff keeps the common words and shows a changed phrase as one removal and one addition', (t) => {
  t.deepEqual(wordDiff('<p>Ahoj svet, krásny deň</p>', '<p>Ahoj svet, pekný deň</p>'), [
    { op: 'same', text: '<p>Ahoj svet, ' }, { op: 'del', text: 'krásny' }, { op: 'ins', text: 'pekný' }, { op: 'same', text: ' deň</p>' },
  ]);
  t.deepEqual(wordDiff('old title here', 'new heading now'), [{ op: 'del', text: 'old title here' }, { op: 'ins', text: 'new heading now' }]);
  t.deepEqual(wordDiff('', 'added'), [{ op: 'ins', text: 'added' }]);
  t.deepEqual(wordDiff('same', 'same'), [{ op: 'same', text: 'same' }]);
});

test('When fields come from jsonb, then they are put back in the order reads list them', (t) => {
  t.deepEqual(orderedFields(['metaTitle', 'description', 'metaDescription', 'shortDescription']), ['description', 'shortDescription', 'metaTitle', 'metaDescription']);
});
