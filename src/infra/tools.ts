/** Locates the Temporal binaries that scripts/bootstrap.mjs installs (pins live in scripts/tool-versions.json). */
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ToolPin {
  pypi: string;
  version: string;
  bin: string;
}

/** Shape of scripts/tool-versions.json, shared with the bootstrap so versions are pinned once. */
export interface ToolVersions {
  toolsDir: string;
  temporalCli: ToolPin;
  temporalTestServer: ToolPin;
}

let cachedRoot: string | undefined;

/** The project root: walks up from this file because it runs both from src/ (tsx) and dist/src/. */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Could not find the project root (no package.json above src/infra)');
    dir = parent;
  }
  cachedRoot = dir;
  return dir;
}

/** The pinned tool versions. */
export function toolVersions(): ToolVersions {
  return JSON.parse(readFileSync(join(projectRoot(), 'scripts/tool-versions.json'), 'utf8')) as ToolVersions;
}

/** Path of a tool binary inside the project-local tools dir. */
function localBin(pin: ToolPin): string {
  return join(projectRoot(), toolVersions().toolsDir, 'bin', pin.bin);
}

/** The first `name` found on PATH, or undefined. */
function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** The Temporal CLI: TEMPORAL_CLI, else the bootstrapped copy, else `temporal` on PATH. */
export function resolveTemporalCli(): string {
  if (process.env.TEMPORAL_CLI) return process.env.TEMPORAL_CLI;
  const local = localBin(toolVersions().temporalCli);
  if (existsSync(local)) return local;
  const onPath = findOnPath('temporal');
  if (onPath) return onPath;
  throw new Error(
    `Temporal CLI not found (looked at TEMPORAL_CLI, ${local}, PATH). Run \`node scripts/bootstrap.mjs\` to install it.`,
  );
}

/** The time-skipping test server: TEMPORAL_TEST_SERVER, else the bootstrapped copy (existence not checked). */
export function resolveTemporalTestServer(): string {
  return process.env.TEMPORAL_TEST_SERVER || localBin(toolVersions().temporalTestServer);
}
