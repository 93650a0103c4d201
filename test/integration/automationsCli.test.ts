/** The operator command line for automations (D11: a person publishes, enables and disables), as a real process. */
import { appTest } from '../helpers/app.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { orderEvent, sampleRule } from '../helpers/automations.js';
import { api } from '../helpers/server.js';
import { runCli, type CliResult } from '../helpers/cli.js';

const test = appTest();

function cli(t: { context: { database: { url: string } } }, ...args: string[]): Promise<CliResult> {
  return runCli(t.context.database.url, ['automations', ...args]);
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

test('When a person runs a published automation for a past event, then one manual run is created, and a second run for that event is refused', async (t) => {
  const created = JSON.parse((await cli(t, 'create', '--file', ruleFile(sampleRule()), '--request-id', 'manual-1', '--json')).stdout);
  const { workflowId } = created.automation;
  const { eventId } = await orderEvent(t.context.database.db, 'order.created');
  const draftRun = await cli(t, 'run', workflowId, '--event', eventId);
  t.is(draftRun.code, 2);
  t.regex(draftRun.stderr, /STATE_CONFLICT: .*publish it before running/);
  t.is((await cli(t, 'publish', workflowId)).code, 0);
  const run = await cli(t, 'run', workflowId, '--event', eventId, '--json');
  t.is(run.code, 0, run.stderr);
  t.is(JSON.parse(run.stdout).runWorkflowId, `automation-run-${workflowId}-${eventId}`);
  const runs = await api(t.context.server, `/automations/${workflowId}/runs`, t.context.key);
  t.like(runs.body.data[0], { manual: true, status: 'pending', trigger: { eventId, eventType: 'order.created', store: 'sk' } });
  const again = await cli(t, 'run', workflowId, '--event', eventId);
  t.is(again.code, 2);
  t.regex(again.stderr, /already ran for event/);
  const paid = await orderEvent(t.context.database.db, 'order.paid');
  const wrongType = await cli(t, 'run', workflowId, '--event', paid.eventId);
  t.is(wrongType.code, 2);
  t.regex(wrongType.stderr, /trigger is order.created/);
});
