#!/usr/bin/env node
// Prepares a fresh checkout: installs npm deps, the pinned Temporal tools (and with --test-tools the test-only
// tools) and builds dist/.
// Plain JS with node built-ins only, because it runs before node_modules exists.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const quiet = process.argv.includes('--quiet');
const versions = JSON.parse(readFileSync(join(root, 'scripts/tool-versions.json'), 'utf8'));

/** Prints progress unless --quiet; --quiet still prints when work is actually done. */
function say(msg, didWork = false) {
  if (!quiet || didWork) console.error(`[bootstrap] ${msg}`);
}

/** Child processes of the steps that run side by side. */
const running = new Set();

/** Stops bootstrap with a clear message, so `npm start`/`npm test` never run stale code. */
function fail(msg) {
  console.error(`[bootstrap] FAILED: ${msg}`);
  // The steps that run side by side stop with it, so no install goes on writing after a failed bootstrap.
  for (const child of running) child.kill('SIGTERM');
  process.exit(1);
}

/** Runs a command with inherited stdio, without blocking (the installs and the build go side by side), and fails bootstrap when it does not exit 0. */
function runAsync(cmd, args, what, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env });
    running.add(child);
    child.once('error', (error) => fail(`${what}: ${error.message}`));
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (code === 0) resolve();
      else fail(`${what} exited with ${code ?? signal}`);
    });
  });
}

/** True when an executable named `name` is on PATH. */
function onPath(name) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, name)));
}

// a. npm deps: npm writes node_modules/.package-lock.json, so it is stale when older than the lockfile.
const hiddenLock = join(root, 'node_modules/.package-lock.json');
const lock = join(root, 'package-lock.json');
/** a. The project's own npm install; only the build waits for it (the tools below install into .tools/ on their own). */
async function installNpmDependencies() {
  if (existsSync(hiddenLock) && statSync(hiddenLock).mtimeMs >= statSync(lock).mtimeMs) return;
  // `npm install`, not `npm ci`: the registries reachable here lack the non-Linux optional binaries (e.g.
  // @swc/core-darwin-*), so the lockfile cannot list them and `npm ci` rejects it; `npm install` follows the lockfile.
  say('installing npm dependencies (npm install, following package-lock.json)', true);
  await runAsync('npm', ['install', '--no-audit', '--no-fund'], 'npm install');
}

// b. Temporal tools from PyPI into the git-ignored tools dir.
const toolsDir = join(root, versions.toolsDir);
/** A tool counts as installed only at the pinned version, so bumping the pin reinstalls it. */
function installed(tool) {
  const distInfo = `${tool.pypi.replaceAll('-', '_')}-${tool.version}.dist-info`;
  return existsSync(join(toolsDir, 'bin', tool.bin)) && existsSync(join(toolsDir, distInfo));
}
const wanted = [versions.temporalTestServer];
if (!process.env.TEMPORAL_CLI && !onPath('temporal')) wanted.push(versions.temporalCli);
const missing = wanted.filter((tool) => !installed(tool));
/** b. The Temporal CLI and test server. */
async function installTemporalTools() {
  if (missing.length === 0) return;
  const specs = missing.map((tool) => `${tool.pypi}==${tool.version}`);
  say(`installing ${specs.join(' ')} into ${versions.toolsDir}`, true);
  // pip --target refuses to merge into an existing bin/ dir, so install into a staging dir and copy.
  mkdirSync(toolsDir, { recursive: true });
  const staging = mkdtempSync(join(root, '.tools/.staging-'));
  try {
    await runAsync(
      'python3',
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', staging, ...specs],
      'pip install of the Temporal tools (needs python3 with pip)',
      // We run as root in containers; pip's root warning is noise there.
      { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' },
    );
    cpSync(staging, toolsDir, { recursive: true, force: true });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  for (const tool of missing) {
    if (!installed(tool)) fail(`${tool.pypi} did not provide ${versions.toolsDir}/bin/${tool.bin}`);
  }
}

// b2. For `npm test` only (--test-tools): schemathesis, which fuzzes our OpenAPI contract, in its own virtualenv.
async function installSchemathesis() {
  if (!process.argv.includes('--test-tools')) return;
  const tool = versions.schemathesis;
  const dir = join(root, tool.dir);
  const marker = join(dir, '.installed-version');
  if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== tool.version) {
    say(`installing ${tool.pypi}==${tool.version} into ${tool.dir}`, true);
    rmSync(dir, { recursive: true, force: true });
    await runAsync('python3', ['-m', 'venv', dir], 'python3 -m venv for schemathesis');
    await runAsync(join(dir, 'bin/python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `${tool.pypi}==${tool.version}`],
      `pip install of ${tool.pypi}`, { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' });
    writeFileSync(marker, `${tool.version}\n`);
  }
}

// b3. The first-name data set behind `marketingGender` (Joerg Michael's nam_dict, ~48k names with frequencies per
// country, as shipped in the PyPI package gender-guesser): data only, read by src/customers/gender.ts.
async function installNameData() {
  const tool = versions.nameData;
  const dir = join(root, tool.dir);
  const marker = join(dir, '.installed-version');
  if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== tool.version || !existsSync(join(dir, tool.file))) {
    say(`installing ${tool.pypi}==${tool.version} (name data set) into ${tool.dir}`, true);
    rmSync(dir, { recursive: true, force: true });
    await runAsync('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', dir, `${tool.pypi}==${tool.version}`],
      `pip install of ${tool.pypi}`, { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' });
    writeFileSync(marker, `${tool.version}\n`);
  }
}

// b4. For `npm test` only: the official MCP conformance suite (npm, pinned) in its own prefix, outside our lockfile.
async function installMcpConformance() {
  if (!process.argv.includes('--test-tools')) return;
  const tool = versions.mcpConformance;
  const dir = join(root, tool.dir);
  const marker = join(dir, '.installed-version');
  if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== tool.version) {
    say(`installing ${tool.npm}@${tool.version} into ${tool.dir}`, true);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
    await runAsync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--ignore-scripts', `${tool.npm}@${tool.version}`], `npm install of ${tool.npm}`);
    writeFileSync(marker, `${tool.version}\n`);
  }
}

// b4b. For `npm test` only: the PyPI `standardwebhooks` library (with its dependencies) under .tools, so the tests
// verify deliveries with the official Python implementation of Standard Webhooks too (PYTHONPATH=<dir>).
async function installStandardWebhooksPython() {
  if (!process.argv.includes('--test-tools')) return;
  const tool = versions.standardWebhooksPython;
  const dir = join(root, tool.dir);
  const marker = join(dir, '.installed-version');
  if (!existsSync(marker) || readFileSync(marker, 'utf8').trim() !== tool.version) {
    say(`installing ${tool.pypi}==${tool.version} into ${tool.dir}`, true);
    rmSync(dir, { recursive: true, force: true });
    await runAsync('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', dir, `${tool.pypi}==${tool.version}`],
      `pip install of ${tool.pypi}`, { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' });
    writeFileSync(marker, `${tool.version}\n`);
  }
}

// b5. For `npm test` only: a real Medusa (the shop platform the Medusa adapter is tested against). There is no starter
// to download here, so the project is ours: platform-plugins/medusa holds its package.json (Medusa pinned, with its
// lockfile), medusa-config.ts and the event forwarder subscriber; they are copied into .tools/medusa and installed
// there with npm. The marker keeps hashes of the template so that a changed subscriber is copied again in a moment,
// while npm runs only when package.json or its lockfile changed (a fresh install takes minutes).
// test/helpers/medusaServer.ts reads `schemaHash` to know when its migrated database snapshot is stale.
async function installMedusa() {
  if (!process.argv.includes('--test-tools')) return;
  const tool = versions.medusa;
  const dir = join(root, tool.dir);
  const template = join(root, tool.template);
  const marker = join(dir, '.installed.json');
  /** Files of the template, relative and sorted, so the hashes do not depend on directory order. */
  const listFiles = (base, rel = '') =>
    readdirSync(join(base, rel), { withFileTypes: true })
      .filter((entry) => !['node_modules', '.medusa'].includes(entry.name))
      .flatMap((entry) => (entry.isDirectory() ? listFiles(base, join(rel, entry.name)) : [join(rel, entry.name)]))
      .sort();
  const hashOf = (files) => {
    const hash = createHash('sha256').update(tool.version);
    for (const file of files) hash.update(`\0${file}\0`).update(readFileSync(join(template, file)));
    return hash.digest('hex').slice(0, 16);
  };
  const files = listFiles(template);
  const wantedState = {
    version: tool.version,
    installHash: hashOf(['package.json', 'package-lock.json']),
    filesHash: hashOf(files),
    // Subscribers do not change the database; everything else (modules, config, versions) may.
    schemaHash: hashOf(files.filter((file) => !file.startsWith(join('src', 'subscribers')))),
  };
  const pinned = JSON.parse(readFileSync(join(template, 'package.json'), 'utf8')).dependencies?.[tool.npm];
  if (pinned !== tool.version) fail(`${tool.template}/package.json pins ${tool.npm}@${pinned}, tool-versions.json says ${tool.version}`);
  const installedVersion = () => {
    const pkg = join(dir, 'node_modules', tool.npm, 'package.json');
    return existsSync(pkg) ? JSON.parse(readFileSync(pkg, 'utf8')).version : null;
  };
  const state = existsSync(marker) ? JSON.parse(readFileSync(marker, 'utf8')) : {};
  if (state.filesHash !== wantedState.filesHash || installedVersion() !== tool.version) {
    mkdirSync(dir, { recursive: true });
    // A file deleted from the template must go from the copy too (everything of ours lives under src/ or at the top).
    rmSync(join(dir, 'src'), { recursive: true, force: true });
    for (const file of files) cpSync(join(template, file), join(dir, file), { force: true });
    if (state.installHash !== wantedState.installHash || installedVersion() !== tool.version) {
      say(`installing Medusa ${tool.version} (${tool.npm}, ${tool.template}) into ${tool.dir}; the first time takes minutes`, true);
      // Follows the template's lockfile; install scripts stay off unless its allowScripts approves them (none needed).
      // At a lower CPU priority: it runs beside the project's npm install and the build, which the tests wait for first.
      const install = ['npm', 'install', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error'];
      if (onPath('nice')) await runAsync('nice', ['-n', '10', ...install], `npm install of Medusa into ${tool.dir}`);
      else await runAsync(install[0], install.slice(1), `npm install of Medusa into ${tool.dir}`);
      if (installedVersion() !== tool.version) fail(`${tool.dir} has ${tool.npm}@${installedVersion()} after npm install, wanted ${tool.version}`);
    } else {
      say(`copied the changed Medusa project files into ${tool.dir}`, true);
    }
    writeFileSync(marker, `${JSON.stringify(wantedState, null, 2)}\n`);
  }
}

// c. Build. tsc's own no-op check still costs seconds (it loads the compiler and every file), so the build is skipped
// when the stamp written by the last successful build is newer than every input: a source file, a folder (a deleted or
// added file changes its folder's time), tsconfig.json or the installed dependencies.
const buildInputs = ['src', 'api', 'workflows', 'activities', 'test', 'bench'];
const stamp = join(root, 'dist/.build-stamp');

/** Newest modification time (ms) of `path` and, for a folder, everything under it. */
function newestMtime(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  let newest = stat.mtimeMs;
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

/** c. tsc into dist/, unless nothing changed since the last build. */
async function build() {
  if (process.env.SKIP_BUILD === '1') {
    say('SKIP_BUILD=1, not building');
    return;
  }
  const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const inputs = Math.max(...buildInputs.map((dir) => newestMtime(join(root, dir))), newestMtime(join(root, 'tsconfig.json')), newestMtime(hiddenLock));
  if (built > inputs) {
    say('dist/ is newer than every source file, not building');
  } else {
    say('building (tsc)');
    // The stamp's time is taken before tsc starts, so a file saved during the build makes the next run build again.
    const startedAt = new Date();
    await runAsync(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], 'TypeScript build');
    writeFileSync(stamp, `${startedAt.toISOString()}\n`);
    utimesSync(stamp, startedAt, startedAt);
  }
}

// The installs are independent of each other: the downloads (npm, pip, npm into .tools) and the CPU-bound build
// overlap, which takes minutes off a fresh `npm test` (they used to run one after another). Only the build needs the
// project's node_modules; Medusa's own npm install, the largest, starts beside the project's instead of after it.
await Promise.all([
  installNpmDependencies().then(build),
  installTemporalTools(), installSchemathesis(), installNameData(), installMcpConformance(), installStandardWebhooksPython(), installMedusa(),
]);
