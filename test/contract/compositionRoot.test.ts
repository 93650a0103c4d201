/** One composition root (issue 29): only src/entry/ and src/config/ read the configuration or connect to Temporal. */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/config/projectRoot.js';

const SCANNED = ['src', 'api', 'activities', 'workflows'];
const ALLOWED = ['src/entry/', 'src/config/'];
/** Files outside the root that may connect anyway, each with its reason. */
const EXCEPTIONS: Record<string, string> = {
  // Waits until the Temporal dev server it just started answers; it keeps no connection (the root does not exist yet).
  'src/infra/temporalDevServer.ts': 'Connection.connect(',
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** Where `needle` occurs outside the root (and the named exceptions). */
function offenders(needle: string): string[] {
  return SCANNED.flatMap(sourceFiles)
    .filter((file) => !ALLOWED.some((prefix) => file.startsWith(prefix)) && EXCEPTIONS[file] !== needle)
    .filter((file) => fs.readFileSync(path.join(projectRoot, file), 'utf8').includes(needle));
}

test('When the sources are searched, then no module outside src/entry/ and src/config/ calls loadConfig()', (t) => {
  t.deepEqual(offenders('loadConfig('), []);
});

test('When the sources are searched, then no module outside src/entry/ opens a Temporal connection of its own', (t) => {
  // Matches NativeConnection.connect( too: the worker's connection is the root's as well.
  t.deepEqual(offenders('Connection.connect('), []);
});

test('When the search runs, then it does see the sources (the root itself calls both)', (t) => {
  const compose = fs.readFileSync(path.join(projectRoot, 'src/entry/compose.ts'), 'utf8');
  t.true(compose.includes('Connection.connect('));
  t.true(compose.includes('loadConfig('));
  t.true(SCANNED.flatMap(sourceFiles).length > 100);
});
