/**
 * The official MCP conformance suite (pinned, installed by `npm test`'s bootstrap) against our /api/mcp, for both
 * protocol eras. The suite cannot send a credential, so it talks to a one-line proxy that adds our access key and
 * forwards everything else untouched (Host and Origin included, so the DNS-rebinding probes reach our checks).
 * Every check of a scenario must pass; SKIPPED and INFO are what the suite reports for what does not apply to a
 * stateless server without sessions (e.g. the session lifecycle).
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/config/projectRoot.js';
import { appTest } from '../helpers/app.js';

const run = promisify(execFile);
const tools = JSON.parse(readFileSync(path.join(projectRoot, 'scripts/tool-versions.json'), 'utf8')) as { mcpConformance: { dir: string } };
const cli = path.join(projectRoot, tools.mcpConformance.dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const node20Hook = path.join(projectRoot, 'scripts/mcp-conformance-node20.mjs');

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
  details?: { untestable?: boolean };
}

/** A check the suite marks "Not testable" needs the suite's own diagnostic tools (e.g. `test_missing_capability`): not applicable here. */
function applicable(check: Check): boolean {
  return !(check.details?.untestable === true || check.errorMessage?.startsWith('Not testable'));
}

const test = appTest<{ proxyUrl: string; closeProxy: () => Promise<void> }>({}, async ({ server, key }) => {
  const target = new URL(server.baseUrl);
  const proxy = http.createServer((req, res) => {
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    proxyUrl: `http://localhost:${(proxy.address() as AddressInfo).port}/api/mcp`,
    closeProxy: () => new Promise<void>((resolve) => proxy.close(() => resolve())),
  };
});
test.after.always(async (t) => t.context.closeProxy?.());

/** Runs one scenario at one revision; returns every check the suite recorded. */
async function scenario(url: string, name: string, specVersion: string): Promise<Check[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-conformance-'));
  try {
    await run(process.execPath, ['--import', node20Hook, cli, 'server', '--url', url, '--scenario', name, '--spec-version', specVersion, '--force', '-o', dir], { maxBuffer: 16 * 1024 * 1024, timeout: 120_000 })
      .catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout, stderr: error.stderr }));
    const checks: Check[] = [];
    const walk = (p: string) => {
      for (const entry of readdirSync(p)) {
        const full = path.join(p, entry);
        if (statSync(full).isDirectory()) walk(full);
        else if (entry === 'checks.json') checks.push(...(JSON.parse(readFileSync(full, 'utf8')) as Check[]));
      }
    };
    walk(dir);
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The scenarios that apply to a data server with its own tools (the others need the suite's reference tools, prompts or resources). */
const SCENARIOS: Array<[string, string]> = [
  ['server-stateless', '2026-07-28'],
  ['http-header-validation', '2026-07-28'],
  ['http-custom-header-server-validation', '2026-07-28'],
  ['dns-rebinding-protection', '2026-07-28'],
  ['tools-list', '2026-07-28'],
  ['server-initialize', '2025-11-25'],
  ['server-session-lifecycle', '2025-11-25'],
  ['ping', '2025-11-25'],
  ['tools-list', '2025-11-25'],
  ['dns-rebinding-protection', '2025-11-25'],
];

for (const [name, version] of SCENARIOS) {
  test(`When the MCP conformance suite runs ${name} at ${version}, then every check passes`, async (t) => {
    t.timeout(180_000);
    const checks = await scenario(t.context.proxyUrl, name, version);
    t.true(checks.length > 0, 'the suite recorded checks');
    const failed = checks.filter((check) => (check.status === 'FAILURE' || check.status === 'WARNING') && applicable(check));
    t.deepEqual(failed.map((check) => `${check.id}: ${check.errorMessage ?? ''}`), []);
    // A stateless server has no session lifecycle to exercise: the suite reports that as INFO only.
    if (name !== 'server-session-lifecycle') t.true(checks.some((check) => check.status === 'SUCCESS'), 'at least one check applied and passed');
    if (name === 'server-stateless') {
      // Issue 15 point 9: -32022's data.supported must be what server/discover lists.
      t.is(checks.find((check) => check.id === 'sep-2575-server-unsupported-version-error')?.status, 'SUCCESS');
    }
  });
}
