/** The operator command line for automations (D11: a person publishes, enables and disables), as a real process. */
import { appTest } from '../helpers/app.js';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/config/projectRoot.js';
import { sampleRule } from '../helpers/automations.js';
import { api } from '../helpers/server.js';

const run = promisify(execFile);
const test = appTest();

async function cli(t: { context: { database: { url: string } } }, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(projectRoot, 'dist', 'src', 'entry', 'cli.js'), 'automations', ...args], {
      env: { ...process.env, DATABASE_URL: t.context.database.url, LOG_LEVEL: 'silent' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function ruleFile(rule: unknown): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'automation-')), 'rule.json');
  fs.writeFileSync(file, JSON.stringify(rule));
  return file;
}

test('When a person creates, publishes, enables and disables an automation from the command line, then REST shows each state', async (t) => {
  const created = await cli(t, 'create', '--file', ruleFile(sampleRule()), '--json');
  t.is(created.code, 0, created.stderr);
  const { workflowId } = JSON.parse(created.stdout).automation;
  const state = async () => (await api(t.context.server, `/automations/${workflowId}`, t.context.key)).body.data;
  t.like(await state(), { state: 'draft', enabled: false });

  const early = await cli(t, 'enable', workflowId);
  t.is(early.code, 2);
  t.regex(early.stderr, /STATE_CONFLICT: .*publish it before enabling/);

  t.is((await cli(t, 'publish', workflowId)).code, 0);
  t.like(await state(), { state: 'published', enabled: false, publishedVersion: 1 });
  t.is((await cli(t, 'enable', workflowId)).code, 0);
  t.like(await state(), { state: 'published', enabled: true });
  const listed = await cli(t, 'list');
  t.regex(listed.stdout, new RegExp(`${workflowId}  published enabled  v1  order.created  shops=sk`));
  t.is((await cli(t, 'disable', workflowId)).code, 0);
  t.like(await state(), { enabled: false });
  const shown = JSON.parse((await cli(t, 'show', workflowId, '--json')).stdout);
  t.true(shown.automation.validation.valid);
});

test('When the command line is given a bad rule or an unknown automation, then it exits 2 with every problem', async (t) => {
  const bad = await cli(t, 'create', '--file', ruleFile(sampleRule({ trigger: { id: 't', event: 'order.lost' }, steps: [{ id: 's', action: 'wait', duration: 'later' }] as never })));
  t.is(bad.code, 2);
  t.regex(bad.stderr, /INVALID_AUTOMATION/);
  t.regex(bad.stderr, /\/trigger\/event \(t\)/);
  t.regex(bad.stderr, /\/steps\/0\/duration \(s\)/);
  const missing = await cli(t, 'publish', 'aut_0000000000000000');
  t.is(missing.code, 2);
  t.regex(missing.stderr, /NOT_FOUND/);
});
