/**
 * Which `npm test` runs start Medusa (scripts/test.mjs, decision MH3): all files, or a file argument naming medusa
 * (so this file's name must not).
 */
import test from 'ava';
import { runIncludesMedusa } from '../helpers/medusaServer.js';

test('When npm test runs every file or a medusa file, then Medusa starts; for other files alone it does not', (t) => {
  t.true(runIncludesMedusa([]));
  t.true(runIncludesMedusa(['--verbose']));
  t.true(runIncludesMedusa(['dist/test/integration/medusaHarness.test.js']));
  t.true(runIncludesMedusa(['dist/test/unit/config.test.js', 'dist/test/integration/MedusaSync.test.js']));
  t.false(runIncludesMedusa(['dist/test/unit/config.test.js']));
  t.false(runIncludesMedusa(['dist/test/integration/webhooks.test.js', '--verbose']));
});
