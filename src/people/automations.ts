/**
 * Automations as a person sees and acts on them in the application (issue 14, SPEC "Other named states"): every person
 * reads the drafts and published rules of their shops with their validation and runs; a person with `automations:edit`
 * publishes, enables, disables and runs one. A person who sees only some shops changes only rules wholly inside them
 * (as for webhook endpoints). The actions are those of src/automations (the operator CLI calls the same ones); Temporal
 * is only asked to act sooner than the worker's consumer would (start a manual run, cancel waiting runs).
 */
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { findAutomation, publishAutomation, setAutomationEnabled, validateForActor, type Actor, type AutomationRow } from '../automations/drafts.js';
import { cancelRunsOfDisabledAutomations, createManualRun, markRunsStarted, type RunWorkflows } from '../automations/runs.js';
import type { ValidationResult } from '../automations/validate.js';
import { automationRecord, listAutomationRuns, listAutomations } from '../queries/automations.js';
import { logger } from '../logger.js';
import { hasPermission, type Person } from './model.js';

const log = logger.child({ component: 'automations-page' });

export function mayEditAutomations(person: Person): boolean {
  return hasPermission(person, 'automations:edit');
}

/** The person as the automation rules see an actor: their account and shops. */
export function actorOf(person: Person): Actor {
  return { accountId: person.accountId, shopCodes: person.shopCodes, by: `person:${person.email}` };
}

export type AutomationSummary = ReturnType<typeof automationRecord>;

/** The automations the person sees (rules on one of their shops; all of them for a person who sees every shop), newest first. */
export async function automationsOf(db: Db, person: Person): Promise<AutomationSummary[]> {
  const items: AutomationSummary[] = [];
  let after: { key: string; id: string } | null = null;
  // A few pages at most: an account has tens of automations, not thousands.
  for (let i = 0; i < 10; i++) {
    const page = await listAutomations(db, actorOf(person), {}, { limit: 250, after });
    items.push(...page.items);
    if (!page.hasMore || !page.last) break;
    after = page.last;
  }
  return items;
}

export interface AutomationDetail {
  automation: AutomationSummary;
  rule: AutomationRow['dsl'];
  /** Against the current catalogue and the account's dictionaries now (AU2). */
  validation: ValidationResult;
  runs: Awaited<ReturnType<typeof listAutomationRuns>>['items'];
  /** Recent events of the trigger in the rule's and the person's shops: what a manual run can be started for. */
  recentEvents: { eventId: string; eventType: string; store: string | null; resourceId: string; occurredAt: string }[];
  /** Whether this person may act on it (permission and shops). */
  canEdit: boolean;
}

export async function automationOf(db: Db, person: Person, workflowId: string): Promise<AutomationDetail> {
  const actor = actorOf(person);
  const row = await findAutomation(db, actor, workflowId);
  const [validation, runs] = await Promise.all([validateForActor(db, actor, row.dsl), listAutomationRuns(db, actor, workflowId, undefined, { limit: 20, after: null })]);
  const events = db('outbox_events').where({ account_id: person.accountId, event_type: row.dsl.trigger.event })
    .orderBy('id', 'desc').limit(20).select('event_id', 'event_type', 'store', 'resource_id', 'occurred_at');
  const markets = row.dsl.trigger.markets ?? null;
  if (markets) events.whereIn('store', markets);
  if (person.shopCodes) events.whereIn('store', [...person.shopCodes]);
  return {
    automation: automationRecord(row), rule: row.dsl, validation, runs: runs.items,
    recentEvents: (await events).map((e) => ({ eventId: e.event_id, eventType: e.event_type, store: e.store, resourceId: e.resource_id, occurredAt: new Date(e.occurred_at).toISOString() })),
    canEdit: mayEditAutomations(person) && withinShops(person, row),
  };
}

function withinShops(person: Person, row: AutomationRow): boolean {
  const shops = person.shopCodes;
  return !shops || (row.markets !== null && row.markets.every((m) => shops.has(m)));
}

/** The automation if the person may act on it: the permission, visible, and wholly inside their shops. */
async function editable(db: Db, person: Person, workflowId: string): Promise<AutomationRow> {
  if (!mayEditAutomations(person)) throw new AppError('INSUFFICIENT_SCOPE', 'You need the automations:edit permission to publish, enable, disable or run automations.', { requiredPermission: 'automations:edit' });
  const row = await findAutomation(db, actorOf(person), workflowId);
  if (!withinShops(person, row)) throw new AppError('SHOP_FORBIDDEN', 'This automation also acts on shops you may not see; a person who sees them changes it.');
  return row;
}

/** How the page reaches Temporal: the run workflows of the workers' task queue, or null when there is no Temporal. */
export type RunWorkflowsAccess = () => Promise<RunWorkflows | null>;

export async function publishAsPerson(db: Db, person: Person, workflowId: string): Promise<AutomationRow> {
  const draft = await editable(db, person, workflowId);
  // A draft of a published automation replaces that automation's rule, so the person must be allowed to change it too.
  if (draft.state === 'draft' && draft.source_workflow_id) await editable(db, person, draft.source_workflow_id);
  return publishAutomation(db, actorOf(person), workflowId);
}

export async function enableAsPerson(db: Db, person: Person, workflowId: string): Promise<AutomationRow> {
  await editable(db, person, workflowId);
  return setAutomationEnabled(db, actorOf(person), workflowId, true);
}

/**
 * Disables the automation, then cancels its waiting and running runs (not a person's manual runs) through Temporal at
 * once. Returns whether that happened now; when Temporal cannot be reached the worker's consumer does it within a
 * second of reaching it (the disabled state is already committed, and every step checks it).
 */
export async function disableAsPerson(db: Db, person: Person, workflowId: string, workflows: RunWorkflowsAccess): Promise<{ automation: AutomationRow; cancelledNow: boolean }> {
  await editable(db, person, workflowId);
  const automation = await setAutomationEnabled(db, actorOf(person), workflowId, false);
  try {
    const client = await workflows();
    if (!client) return { automation, cancelledNow: false };
    await cancelRunsOfDisabledAutomations(db, client, 200, automation.id);
    return { automation, cancelledNow: true };
  } catch (error) {
    log.warn({ err: error, workflowId }, 'could not cancel runs through Temporal now; the consumer will');
    return { automation, cancelledNow: false };
  }
}

/**
 * A manual run of a published automation for one past event of its trigger (in the person's shops): the run is recorded
 * (one per automation and event, AU10) and its workflow started at once; `started` is false when Temporal cannot be
 * reached, and the worker's consumer starts it then.
 */
export async function runAsPerson(db: Db, person: Person, workflowId: string, eventId: string, workflows: RunWorkflowsAccess): Promise<{ runWorkflowId: string; started: boolean }> {
  await editable(db, person, workflowId);
  if (person.shopCodes) {
    const event = /^[0-9a-f-]{36}$/i.test(eventId) ? await db('outbox_events').where({ account_id: person.accountId, event_id: eventId }).first('store') : undefined;
    if (event && (!event.store || !person.shopCodes.has(event.store))) throw new AppError('NOT_FOUND', `No event ${eventId} in your shops.`, { param: 'eventId' });
  }
  const { runWorkflowId } = await createManualRun(db, person.accountId, workflowId, eventId);
  const run = await db('automation_runs').where({ run_workflow_id: runWorkflowId }).first('id');
  try {
    const client = await workflows();
    if (!client) return { runWorkflowId, started: false };
    await client.start({ runId: String(run.id), runWorkflowId });
    await markRunsStarted(db, [String(run.id)]);
    return { runWorkflowId, started: true };
  } catch (error) {
    log.warn({ err: error, runWorkflowId }, 'could not start the run through Temporal now; the consumer will');
    return { runWorkflowId, started: false };
  }
}
