/**
 * `automations list|show|create|publish|enable|disable|run`: what a person does with automations on the application's
 * Automations page (D11: the operator stands for the owner). Each change is one transaction in Postgres; the worker's
 * automation consumer acts on it (a disabled automation's waiting runs are cancelled within a second), so no command
 * depends on reaching Temporal.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { createDraft, findAutomation, publishAutomation, setAutomationEnabled, validateForActor, type Actor } from '../automations/drafts.js';
import { createManualRun } from '../automations/runs.js';
import { automationRecord, listAutomations } from '../queries/automations.js';
import { findAccountByCode } from '../queries/shops.js';
import { print, UsageError } from './output.js';

export const automationsUsage = `  automations list [--account CODE]
  automations show|publish|enable|disable WORKFLOW_ID [--account CODE]
  automations create --file RULE.json [--request-id ID] [--account CODE]   (a disabled draft, as an assistant's would be)
  automations run WORKFLOW_ID --event EVENT_ID [--account CODE]   (run a published automation now for a past event)
`;

async function actorFor(db: Db, code: string): Promise<Actor> {
  const found = await findAccountByCode(db, code);
  if (!found) throw new UsageError(`No account \`${code}\`.`);
  return { accountId: found.id, shopCodes: null, by: 'person:cli' };
}

async function refusalsAsUsage<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof AppError) {
      const problems = (error.details?.problems as { path: string; nodeId: string | null; message: string }[] | undefined) ?? [];
      throw new UsageError([`${error.code}: ${error.message}`, ...problems.map((p) => `  ${p.path || '/'} (${p.nodeId ?? 'rule'}): ${p.message}`)].join('\n'));
    }
    throw error;
  }
}

export async function automationsCommand(db: Db, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest, allowPositionals: true,
    options: { account: { type: 'string', default: 'demo' }, json: { type: 'boolean', default: false }, file: { type: 'string' }, 'request-id': { type: 'string' }, event: { type: 'string' } },
  });
  const json = values.json!;
  const actor = await actorFor(db, values.account!);
  const id = positionals[0];
  const needId = () => {
    if (!id) throw new UsageError(`automations ${action} WORKFLOW_ID`);
    return id;
  };
  switch (action) {
    case 'list': {
      const page = await listAutomations(db, actor, {}, { limit: 250, after: null });
      print(json, { automations: page.items }, page.items.map((a) => `${a.workflowId}  ${a.state}${a.enabled ? ' enabled' : ''}  v${a.version}  ${a.trigger}  shops=${a.shops.all ? 'all' : a.shops.codes.join(',')}  ${a.name}`).join('\n') || 'No automations.');
      return;
    }
    case 'show': {
      const row = await refusalsAsUsage(() => findAutomation(db, actor, needId()));
      const validation = await validateForActor(db, actor, row.dsl);
      print(json, { automation: { ...automationRecord(row), rule: row.dsl, validation } }, `${JSON.stringify({ ...automationRecord(row), rule: row.dsl, validation }, null, 2)}`);
      return;
    }
    case 'create': {
      if (!values.file) throw new UsageError('automations create --file RULE.json');
      let rule: unknown;
      try {
        rule = JSON.parse(fs.readFileSync(values.file, 'utf8'));
      } catch (error) {
        throw new UsageError(`Cannot read ${values.file} as JSON: ${(error as Error).message}`);
      }
      const row = await refusalsAsUsage(() => createDraft(db, actor, { clientRequestId: values['request-id'] ?? `cli:${Date.now()}`, rule }));
      print(json, { automation: automationRecord(row) }, `Draft ${row.workflow_id} created (disabled).`);
      return;
    }
    case 'publish': {
      const id = needId();
      const row = await refusalsAsUsage(() => publishAutomation(db, actor, id));
      const what = row.workflow_id === id ? `Automation ${id} published` : `Draft ${id} replaced the rule of automation ${row.workflow_id}`;
      print(json, { automation: automationRecord(row) }, `${what} (version ${row.published_version}); ${row.enabled ? 'enabled' : 'enable it to run'}.`);
      return;
    }
    case 'enable':
    case 'disable': {
      const row = await refusalsAsUsage(() => setAutomationEnabled(db, actor, needId(), action === 'enable'));
      print(json, { automation: automationRecord(row) }, `Automation ${row.workflow_id} ${row.enabled ? 'enabled' : 'disabled; its waiting runs are cancelled by the worker'}.`);
      return;
    }
    case 'run': {
      if (!values.event) throw new UsageError('automations run WORKFLOW_ID --event EVENT_ID');
      const run = await refusalsAsUsage(() => createManualRun(db, actor.accountId, needId(), values.event!));
      print(json, run, `Run ${run.runWorkflowId} created; the worker starts it within a second.`);
      return;
    }
    default:
      throw new UsageError(automationsUsage);
  }
}
