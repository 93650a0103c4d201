/** The vendored copy of the specification (docs/spec) is the shared one, whenever the shared one is beside the repository. */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { sharedSpecDir, vendoredSpecDir } from '../helpers/spec.js';

for (const file of ['SPEC.md', 'DECISIONS.md']) {
  test(`When ../shared/spec/${file} exists, then docs/spec/${file} is identical to it`, (t) => {
    const vendored = fs.readFileSync(path.join(vendoredSpecDir, file), 'utf8');
    t.true(vendored.length > 1000, 'the vendored copy is present');
    const shared = path.join(sharedSpecDir, file);
    if (!fs.existsSync(shared)) {
      t.log(`${shared} is not beside this checkout; only the vendored copy is checked`);
      return;
    }
    t.is(vendored, fs.readFileSync(shared, 'utf8'), `copy ${shared} to docs/spec/${file}`);
  });
}
