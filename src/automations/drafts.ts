/**
 * Automations as records the service owns: drafts written over MCP (create, update, validate) and the actions only a
 * person takes (publish, enable, disable; the operator CLI stands for the application, D11). Every change is one
 * transaction with a row lock; every saved version is kept in automation_versions.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { CATALOG_VERSION } from './catalog.js';
import { dictionaryValues } from './options.js';
import type { Rule } from './rule.js';
import { validateRule, type ValidationProblem, type ValidationResult } from './validate.js';

export const WORKFLOW_ID_PATTERN = /^aut_[a-z0-9]{16}$/;

/** Who acts and what they may see: an MCP caller (key) or a person (CLI / application). */
export interface Actor {
  accountId: string;
  /** null = every shop of the account. */
  shopCodes: ReadonlySet<string> | null;
  /** `key:<id>` for an MCP credential, `person:<who>` for the application or the operator CLI. */
  by: string;
}

export interface AutomationRow {
  id: string;
  account_id: string;
  workflow_id: string;
  name: string;
  state: 'draft' | 'published';
  enabled: boolean;
  version: number;
  dsl: Rule;
  catalog_version: string;
  valid: boolean;
  problems: ValidationProblem[];
  markets: string[] | null;
  trigger_event: string | null;
  published_version: number | null;
  source_workflow_id: string | null;
  client_request_id: string | null;
  request_hash: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  enabled_at: Date | null;
}

/** JSON with sorted keys, so equal documents hash equally whatever order jsonb returns them in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const hashOf = (value: unknown) => crypto.createHash('sha256').update(canonicalJson(value)).digest('hex');

function newWorkflowId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `aut_${Array.from(crypto.randomBytes(16), (b) => alphabet[b % 36]).join('')}`;
}

/** Validates a rule for an actor: the catalogue, the account's dictionaries, and the actor's shops. */
export async function validateForActor(db: Db | Knex.Transaction, actor: Actor, doc: unknown): Promise<ValidationResult> {
  const result = await validateRule(doc, async (name) => (await dictionaryValues(db as Db, actor.accountId, actor.shopCodes, name)).map((o) => o.value));
  const trigger = (doc as { trigger?: { markets?: unknown } } | null)?.trigger;
  if (actor.shopCodes && trigger && typeof trigger === 'object' && trigger.markets === undefined) {
    result.problems.push({ nodeId: (trigger as { id?: string }).id ?? null, path: '/trigger/markets', code: 'MARKETS_REQUIRED', message: 'This credential sees only some shops: name them in `trigger.markets` (a rule for every shop needs an all-shops credential).' });
    result.valid = false;
  }
  return result;
}

/** Refuses a rule that does not validate: CATALOG_CHANGED when it was written against another catalogue, else every problem. */
function requireValid(result: ValidationResult, doc: unknown, draftCatalogVersion?: string): void {
  const stale = result.problems.find((p) => p.code === 'CATALOG_CHANGED');
  if (stale) {
    throw new AppError('CATALOG_CHANGED', stale.message, {
      catalogVersion: (doc as { catalogVersion?: unknown }).catalogVersion, draftCatalogVersion, currentCatalogVersion: CATALOG_VERSION,
    });
  }
  if (!result.valid) {
    throw new AppError('INVALID_AUTOMATION', `The rule has ${result.problems.length} problem${result.problems.length > 1 ? 's' : ''}; nothing was saved.`, { problems: result.problems });
  }
}

async function insertVersion(trx: Knex.Transaction, automationId: string, version: number, doc: unknown, by: string): Promise<void> {
  await trx('automation_versions').insert({ automation_id: automationId, version, dsl: JSON.stringify(doc), catalog_version: CATALOG_VERSION, valid: true, problems: '[]', created_by: by });
}

const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

async function findByRequest(db: Db | Knex.Transaction, accountId: string, clientRequestId: string): Promise<AutomationRow | undefined> {
  return db('automations').where({ account_id: accountId, client_request_id: clientRequestId }).first();
}

function sameRequestOrConflict(existing: AutomationRow, hash: string, clientRequestId: string): AutomationRow {
  if (existing.request_hash !== hash) {
    throw new AppError('IDEMPOTENCY_CONFLICT', `clientRequestId \`${clientRequestId}\` was already used for another request (it created ${existing.workflow_id}); use a new id for a new draft.`, { clientRequestId, workflowId: existing.workflow_id });
  }
  return existing;
}

/**
 * Creates a DISABLED draft. Idempotent through `clientRequestId`: the same id with the same body returns the draft it
 * created, with another body it is IDEMPOTENCY_CONFLICT. `sourceWorkflowId` marks a draft made from a published rule.
 */
export async function createDraft(db: Db, actor: Actor, input: { clientRequestId: string; rule: unknown; sourceWorkflowId?: string }): Promise<AutomationRow> {
  const hash = hashOf({ rule: input.rule, source: input.sourceWorkflowId ?? null });
  const existing = await findByRequest(db, actor.accountId, input.clientRequestId);
  if (existing) return sameRequestOrConflict(existing, hash, input.clientRequestId);
  const validation = await validateForActor(db, actor, input.rule);
  requireValid(validation, input.rule);
  const rule = input.rule as Rule;
  try {
    return await db.transaction(async (trx) => {
      const [row] = await trx('automations').insert({
        account_id: actor.accountId, workflow_id: newWorkflowId(), name: rule.name, state: 'draft', enabled: false, version: 1,
        dsl: JSON.stringify(rule), catalog_version: CATALOG_VERSION, valid: true, problems: '[]',
        markets: rule.trigger.markets ?? null, trigger_event: null, source_workflow_id: input.sourceWorkflowId ?? null,
        client_request_id: input.clientRequestId, request_hash: hash, created_by: actor.by,
      }).returning('*');
      await insertVersion(trx, row.id, 1, rule, actor.by);
      return row as AutomationRow;
    });
  } catch (error) {
    // Two identical requests at once: the loser answers with the winner's draft.
    if (!isUniqueViolation(error)) throw error;
    const winner = await findByRequest(db, actor.accountId, input.clientRequestId);
    if (!winner) throw error;
    return sameRequestOrConflict(winner, hash, input.clientRequestId);
  }
}

/** Visible to the actor: its account, and (for a shop-restricted actor) a rule on one of its shops. */
function visible(row: AutomationRow | undefined, actor: Actor): row is AutomationRow {
  if (!row || String(row.account_id) !== String(actor.accountId)) return false;
  if (!actor.shopCodes) return true;
  return row.markets !== null && row.markets.some((m) => actor.shopCodes!.has(m));
}

export async function findAutomation(db: Db | Knex.Transaction, actor: Actor, workflowId: string, opts: { lock?: boolean } = {}): Promise<AutomationRow> {
  const q = db('automations').where({ workflow_id: workflowId, account_id: actor.accountId });
  if (opts.lock) q.forUpdate();
  const row: AutomationRow | undefined = WORKFLOW_ID_PATTERN.test(workflowId) ? await q.first() : undefined;
  if (!visible(row, actor)) throw new AppError('NOT_FOUND', `No automation ${workflowId}.`, { param: 'workflowId' });
  return row;
}

/**
 * Updates an unpublished draft. `expectedVersion` must be the draft's version (else VERSION_CONFLICT); a rule written
 * against another catalogue is CATALOG_CHANGED. A published automation is never changed over MCP: the update becomes a
 * new draft that names it (idempotent: the same update of the same version gives the same new draft).
 */
export async function updateDraft(db: Db, actor: Actor, input: { workflowId: string; expectedVersion: number; rule: unknown }): Promise<AutomationRow & { createdFrom?: string }> {
  const current = await findAutomation(db, actor, input.workflowId);
  if (current.state === 'published') {
    if (current.version !== input.expectedVersion) throw versionConflict(current);
    const draft = await createDraft(db, actor, {
      clientRequestId: `update:${current.workflow_id}:v${current.version}:${hashOf(input.rule).slice(0, 16)}`, rule: input.rule, sourceWorkflowId: current.workflow_id,
    });
    return { ...draft, createdFrom: current.workflow_id };
  }
  const validation = await validateForActor(db, actor, input.rule);
  return db.transaction(async (trx) => {
    const row = await findAutomation(trx, actor, input.workflowId, { lock: true });
    if (row.state === 'published') throw new AppError('STATE_CONFLICT', `Automation ${row.workflow_id} was published meanwhile; repeat the update to get a new draft.`, { state: row.state });
    if (row.version !== input.expectedVersion) {
      // A retried update that already took effect answers with the draft as it is.
      if (row.version === input.expectedVersion + 1 && canonicalJson(row.dsl) === canonicalJson(input.rule)) return row;
      throw versionConflict(row);
    }
    requireValid(validation, input.rule, row.catalog_version);
    const rule = input.rule as Rule;
    const version = row.version + 1;
    const [updated] = await trx('automations').where({ id: row.id }).update({
      name: rule.name, version, dsl: JSON.stringify(rule), catalog_version: CATALOG_VERSION, valid: true, problems: '[]',
      markets: rule.trigger.markets ?? null, updated_at: trx.fn.now(),
    }).returning('*');
    await insertVersion(trx, row.id, version, rule, actor.by);
    return updated as AutomationRow;
  });
}

function versionConflict(row: AutomationRow): AppError {
  return new AppError('VERSION_CONFLICT', `Automation ${row.workflow_id} is at version ${row.version}; read it again and send that as \`expectedVersion\`.`, { param: 'expectedVersion', currentVersion: row.version });
}

/**
 * A person publishes a draft: its current version becomes the one that runs (it stays disabled until enabled). A draft
 * made from a published automation (`source_workflow_id`) replaces that automation's rule instead: it becomes the
 * source's next published version under the source's workflowId, the source keeps its enabled state, and the draft
 * row is consumed — so one automation runs, never the old and the new side by side. Runs already started finish the
 * version they started with (they read it from automation_versions).
 */
export async function publishAutomation(db: Db, actor: Actor, workflowId: string): Promise<AutomationRow> {
  return db.transaction(async (trx) => {
    const row = await findAutomation(trx, actor, workflowId, { lock: true });
    const validation = await validateForActor(trx, actor, row.dsl);
    if (!validation.valid) throw new AppError('INVALID_AUTOMATION', `Automation ${workflowId} does not validate against the current catalogue; fix the draft first.`, { problems: validation.problems });
    if (row.state === 'draft' && row.source_workflow_id) return replaceSource(trx, actor, row);
    const [updated] = await trx('automations').where({ id: row.id }).update({
      state: 'published', published_version: row.version, trigger_event: row.dsl.trigger.event, markets: row.dsl.trigger.markets ?? null,
      published_at: trx.fn.now(), updated_at: trx.fn.now(),
    }).returning('*');
    return updated as AutomationRow;
  });
}

/** Publishes `draft` as the next version of the published automation it was made from, and removes the draft row. */
async function replaceSource(trx: Knex.Transaction, actor: Actor, draft: AutomationRow): Promise<AutomationRow> {
  const source = await findAutomation(trx, actor, draft.source_workflow_id!, { lock: true });
  const version = source.version + 1;
  const [updated] = await trx('automations').where({ id: source.id }).update({
    name: draft.dsl.name, version, dsl: JSON.stringify(draft.dsl), catalog_version: CATALOG_VERSION, valid: true, problems: '[]',
    state: 'published', published_version: version, trigger_event: draft.dsl.trigger.event, markets: draft.dsl.trigger.markets ?? null,
    published_at: trx.fn.now(), updated_at: trx.fn.now(),
  }).returning('*');
  // The version keeps who wrote the rule (the draft's author); the draft's own versions go with its row.
  await insertVersion(trx, source.id, version, draft.dsl, draft.created_by);
  await trx('automations').where({ id: draft.id }).del();
  return updated as AutomationRow;
}

/** A person enables (published automations only) or disables an automation; disabling also ends its waiting runs (see runs). */
export async function setAutomationEnabled(db: Db, actor: Actor, workflowId: string, enabled: boolean): Promise<AutomationRow> {
  return db.transaction(async (trx) => {
    const row = await findAutomation(trx, actor, workflowId, { lock: true });
    if (enabled && row.state !== 'published') throw new AppError('STATE_CONFLICT', `Automation ${workflowId} is a draft: publish it before enabling it.`, { state: row.state });
    if (row.enabled === enabled) return row;
    const [updated] = await trx('automations').where({ id: row.id }).update({ enabled, enabled_at: enabled ? trx.fn.now() : row.enabled_at, updated_at: trx.fn.now() }).returning('*');
    return updated as AutomationRow;
  });
}
