/**
 * SPEC.md as the tests read it: the copy vendored under docs/spec/, so the suite passes on a checkout that has no
 * ../shared beside it (CI's clean clone); test/unit/specCopy.test.ts keeps the copy equal to ../shared when present.
 */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/config/projectRoot.js';

export const vendoredSpecDir = path.join(projectRoot, 'docs', 'spec');
export const sharedSpecDir = path.join(projectRoot, '..', 'shared', 'spec');

/** The text of SPEC.md (vendored copy). */
export function readSpec(): string {
  return fs.readFileSync(path.join(vendoredSpecDir, 'SPEC.md'), 'utf8');
}
