#!/usr/bin/env node
// The mutation habit as a command (issue 22 point 7): `npm run test:mutation -- <module>|all [--only <id>] [--no-baseline] [--fresh-template] [--with-matrices]`.
// Seeds the realistic bugs of test/mutation/mutations.json for <module> into the compiled code (dist/) one at a time,
// runs the test files that must catch each, and prints what survived. StrykerJS could not drive this suite in
// reasonable time on two cores (every mutant would need a tsc build, and each test file a migrated, demo-loaded
// database), so this small runner works on the project's own list: it runs under scripts/test.mjs (TEST_COMMAND),
// which prepares Postgres, Temporal and the template database ONCE, and then runs ava once per mutation.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const say = (msg) => console.error(`[mutation] ${msg}`);

/**
 * `--with-matrices`: the registry- and route-driven matrix files, added to every mutation's own files. They are
 * generic (every capability, every page), so a bug of any area meets them in `npm test` as well; an area's file list
 * chosen by name would leave them out.
 */
const MATRIX_FILES = [
  'dist/test/contract/isolation.test.js',
  'dist/test/contract/shadowTenant.test.js',
  'dist/test/contract/scopeMatrix.test.js',
  'dist/test/contract/periodMatrix.test.js',
  'dist/test/contract/filterMatrix.test.js',
  'dist/test/contract/boundsMatrix.test.js',
  'dist/test/integration/applicationPermissions.test.js',
  'dist/test/integration/applicationRecords.test.js',
  'dist/test/contract/stateMatrix.test.js',
  'dist/test/contract/contrastMatrix.test.js',
];

if (!process.env.TEST_TEMPLATE_DB) {
  // Called directly: run again under the test orchestrator, which prepares the services and calls us back.
  const child = spawn(process.execPath, [join(root, 'scripts/test.mjs'), ...process.argv.slice(2)], {
    stdio: 'inherit', env: { ...process.env, TEST_COMMAND: fileURLToPath(import.meta.url) },
  });
  child.once('exit', (code) => process.exit(code ?? 1));
} else {
  process.exit(await run(process.argv.slice(2)));
}

/** Runs ava over `files`; resolves with its exit code (0 = every test passed). */
function ava(files, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(join(root, 'node_modules/.bin/ava'), ['--fail-fast', ...files], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => { output += c; });
    child.stderr.on('data', (c) => { output += c; });
    child.once('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

/**
 * `--fresh-template`: the template database built again by the MUTATED code (in a child process, so nothing is cached),
 * as `npm test` builds it with a bug in the source. Without it, a bug in the demo load or in what the load runs (the
 * affiliate attribution, settlement, seeders) is invisible: every test file copies rows the unmutated code wrote.
 * Resolves with the template's name; the workflow bundle is dropped too, so workers bundle the mutated workflows.
 */
function freshTemplate() {
  const setup = pathToFileURL(join(root, 'dist/test/helpers/globalSetup.js')).href;
  // `unit` as the argument list: no browser for this template (the run's own browser stays in the environment).
  const script = `const m = await import(${JSON.stringify(setup)}); const extra = await m.prepare(); console.log('TEMPLATE=' + extra.TEST_TEMPLATE_DB); process.exit(0);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, 'unit'], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (c) => { output += c; });
    child.once('exit', (code) => {
      const name = output.match(/TEMPLATE=(\w+)/)?.[1];
      if (code === 0 && name) resolve(name);
      else reject(new Error(`the template could not be built with the mutation (exit ${code})`));
    });
  });
}

async function dropDatabase(name) {
  const admin = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

async function run(args) {
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null;
  const baseline = !args.includes('--no-baseline');
  const fresh = args.includes('--fresh-template');
  const withMatrices = args.includes('--with-matrices');
  const module = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--only');
  const list = JSON.parse(readFileSync(join(root, 'test/mutation/mutations.json'), 'utf8'));
  const modules = [...new Set(list.mutations.map((m) => m.module))];
  if (!module || (module !== 'all' && !modules.includes(module))) {
    say(`usage: npm run test:mutation -- <module>|all [--only <id>] [--no-baseline] [--fresh-template] [--with-matrices]; modules: ${modules.join(', ')}`);
    return 2;
  }
  const chosen = list.mutations.filter((m) => (module === 'all' || m.module === module) && (!only || only.includes(m.id)))
    .map((m) => (withMatrices ? { ...m, tests: [...new Set([...m.tests, ...MATRIX_FILES])] } : m));
  // Each mutation must still match the compiled code exactly once, or the list is stale (a renamed line).
  const stale = chosen.filter((m) => readFileSync(join(root, m.file), 'utf8').split(m.find).length !== 2);
  if (stale.length > 0) {
    for (const m of stale) say(`STALE: ${m.id}: its text is not found exactly once in ${m.file}`);
    return 2;
  }
  // A test file that does not exist (an older checkout) catches nothing.
  const present = (files) => files.filter((f) => existsSync(join(root, f)));
  const files = present([...new Set(chosen.flatMap((m) => m.tests))]);
  if (baseline) {
    say(`baseline: ${files.length} test files without any mutation`);
    const base = await ava(files);
    if (base.code !== 0) {
      console.error(base.output);
      say('the baseline fails: a mutation is only killed by a suite that passes without it');
      return 2;
    }
  }
  const results = [];
  for (const m of chosen) {
    const path = join(root, m.file);
    const original = readFileSync(path, 'utf8');
    const restore = () => writeFileSync(path, original);
    process.once('SIGINT', restore);
    process.once('SIGTERM', restore);
    const started = Date.now();
    let template = null;
    try {
      writeFileSync(path, original.replace(m.find, m.replace));
      const tests = present(m.tests);
      let env = process.env;
      if (fresh) {
        template = await freshTemplate();
        env = { ...process.env, TEST_TEMPLATE_DB: template };
        delete env.TEST_WORKFLOW_BUNDLE;
      }
      const { code, output } = tests.length > 0 ? await ava(tests, env) : { code: 0, output: '' };
      const killed = code !== 0;
      const failing = [...output.matchAll(/✘ \[fail\]: (.+)/g)].map((x) => x[1]).slice(0, 2);
      results.push({ ...m, killed, seconds: Math.round((Date.now() - started) / 1000), failing });
      say(`${killed ? 'killed  ' : 'SURVIVED'} ${m.id} (${m.rule}) ${Math.round((Date.now() - started) / 1000)} s${killed ? ` by: ${failing.join(' | ')}` : ''}`);
    } finally {
      if (template) await dropDatabase(template).catch((err) => say(`could not drop ${template}: ${err.message}`));
      restore();
      process.removeListener('SIGINT', restore);
      process.removeListener('SIGTERM', restore);
    }
  }
  const killed = results.filter((r) => r.killed).length;
  console.log(`\nMutation run: ${module}${only ? ` (${only.join(', ')})` : ''}`);
  for (const r of results) console.log(`  ${r.killed ? 'killed  ' : 'SURVIVED'}  ${r.id.padEnd(30)} ${r.rule}${r.table ? '  [issue 22 table]' : ''}`);
  console.log(`Kill rate: ${killed}/${results.length} (${results.length ? Math.round((100 * killed) / results.length) : 0} %)`);
  const unexpected = results.filter((r) => !r.killed && !r.harmless);
  for (const r of results.filter((r) => !r.killed && r.harmless)) console.log(`  accepted survivor ${r.id}: ${r.harmless}`);
  return unexpected.length > 0 ? 1 : 0;
}
