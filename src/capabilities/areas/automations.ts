/**
 * Automations (D31): the catalogue, dictionary options and templates, the account's rules and their runs, and the MCP
 * draft tools. A draft is created disabled; only a person enables, publishes or runs one (SPEC "Other named states").
 */
import { z } from 'zod';
import { actions, CATALOG_VERSION, dictionaryNames, emailTemplates, operatorsByType, ruleTemplates, templateRule, triggers, type DictionaryName } from '../../automations/catalog.js';
import { createDraft, findAutomation, updateDraft, validateForActor, WORKFLOW_ID_PATTERN, type Actor } from '../../automations/drafts.js';
import { dictionaryValues } from '../../automations/options.js';
import { ruleJsonSchema } from '../../automations/rule.js';
import { automationRecord, listAutomationRuns, listAutomations } from '../../queries/automations.js';
import type { CapabilityContext } from '../context.js';
import { cursor, limit } from '../params.js';
import { defineCapability, idempotentWrite, readOnly } from '../types.js';

const actorOf = (ctx: CapabilityContext): Actor => ({ accountId: ctx.caller.account.id, shopCodes: ctx.caller.shopCodes, by: `key:${ctx.caller.credentialId}` });

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const workflowId = z.string().regex(WORKFLOW_ID_PATTERN, 'an automation id such as aut_0123456789abcdef').describe('The automation\'s id (`workflowId` from automations_list).');
const ruleDocument = z.record(z.string(), z.unknown()).describe('The rule document (D31): {catalogVersion, name, description?, trigger, conditions?, steps}; its JSON Schema is `ruleSchema` of automations_catalog, and the README has an example.');

const problemSchema = z.object({
  nodeId: z.string().nullable().describe('The id of the node the problem is about; null for the document.'),
  path: z.string().describe('JSON pointer into the rule, e.g. `/steps/1/duration`.'),
  code: z.string().describe('E.g. SCHEMA, CATALOG_CHANGED, UNKNOWN_TRIGGER, UNKNOWN_FIELD, OPERATOR_NOT_ALLOWED, VALUE_TYPE, UNKNOWN_VALUE, DUPLICATE_NODE_ID, GROUP_SHAPE, TARGET_NOT_ALLOWED, MARKETS_REQUIRED.'),
  message: z.string(),
});
const validationSchema = z.object({
  valid: z.boolean(),
  catalogVersion: z.string().describe('The catalogue version the rule was checked against (the current one).'),
  problems: z.array(problemSchema).describe('Every problem, not only the first.'),
});

const automationSchema = z.object({
  workflowId: z.string(),
  name: z.string(),
  state: z.enum(['draft', 'published']).describe('`draft`: written (e.g. by an assistant), never runs. `published`: a person published it; it runs while `enabled`.'),
  enabled: z.boolean().describe('Only a person enables an automation, and only a published one; a draft is always disabled.'),
  version: z.number().int().describe('Version of the rule; send it as `expectedVersion` to automations_update_draft.'),
  publishedVersion: z.number().int().nullable().describe('The version that runs; null for a draft never published.'),
  trigger: z.string().describe('The trigger event type.'),
  shops: z.object({ all: z.boolean().describe('True: every shop of the account, also future ones.'), codes: z.array(z.string()) }),
  catalogVersion: z.string().describe('The catalogue version the rule was written against.'),
  catalogCurrent: z.boolean().describe('False when the catalogue moved since; an update must then be written against the current catalogue.'),
  sourceWorkflowId: z.string().nullable().describe('For a draft made from a published automation (published rules are not changed over MCP): that automation.'),
  createdBy: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
  publishedAt: timestamp.nullable(),
  enabledAt: timestamp.nullable(),
});

/** Returns the catalogue the rule language is checked against. */
export const automationsCatalog = defineCapability({
  name: 'automations.catalog',
  summary: 'Triggers, condition fields, operators, actions, templates, catalogVersion.',
  description: 'Returns the automation catalogue: triggers (event types an automation can start from) with the condition fields each offers and their types, the operators per type, the actions a step can take (send webhook, wait, wait until a time of day, send e-mail, add tag), the e-mail templates, the ready-made rule templates, the JSON Schema of a rule document (`ruleSchema`) and `catalogVersion`, which changes whenever any of these change. Write rules against it; values of dictionary fields come from automations options (GET /automations/options).',
  path: '/automations/catalog',
  scope: 'automations:read',
  mcpTool: 'automations_catalog',
  kind: 'summary',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    catalogVersion: z.string(),
    triggers: z.array(z.object({
      event: z.string(), entity: z.enum(['order', 'shipment', 'claim']), description: z.string(),
      fields: z.array(z.object({
        field: z.string(), type: z.enum(['number', 'string', 'boolean', 'dictionary']),
        dictionary: z.string().nullable().describe('For dictionary fields: the dictionary of GET /automations/options.'),
        valueType: z.enum(['number', 'string']).nullable().describe('For dictionary fields: the JSON type of its values.'),
        operators: z.array(z.string()), description: z.string(),
      })),
    })),
    operators: z.record(z.string(), z.array(z.string())).describe('Operators per field type.'),
    actions: z.array(z.object({ action: z.string(), description: z.string(), parameters: z.array(z.object({ name: z.string(), type: z.string(), description: z.string() })) })),
    emailTemplates: z.array(z.object({ value: z.string(), name: z.string(), subject: z.string() })),
    templates: z.array(z.object({ templateId: z.string(), name: z.string(), description: z.string() })).describe('Ready-made rules; their documents are in automations_templates.'),
    ruleSchema: z.record(z.string(), z.unknown()).describe('JSON Schema (2020-12) of a rule document.'),
  }),
  annotations: readOnly,
  handler: async () => ({
    catalogVersion: CATALOG_VERSION,
    triggers: triggers.map((t) => ({
      event: t.event, entity: t.entity, description: t.description,
      fields: t.fields.map((f) => ({ field: f.field, type: f.type, dictionary: f.dictionary ?? null, valueType: f.valueType ?? null, operators: [...operatorsByType[f.type]], description: f.description })),
    })),
    operators: Object.fromEntries(Object.entries(operatorsByType).map(([k, v]) => [k, [...v]])),
    actions: actions.map((a) => ({ ...a, parameters: a.parameters.map((p) => ({ ...p })) })),
    emailTemplates: emailTemplates.map((t) => ({ value: t.value, name: t.name, subject: t.subject })),
    templates: ruleTemplates.map((t) => ({ templateId: t.templateId, name: t.name, description: t.description })),
    ruleSchema: ruleJsonSchema(),
  }),
});

/** Returns the values a dictionary field accepts, as `value` for the rule language and a display name. */
export const automationsOptions = defineCapability({
  name: 'automations.options',
  summary: 'Dictionary values for automation fields: `value` for the rule, and a name.',
  description: 'Returns the values automation fields accept: shops, currencies, order statuses, payment and shipping methods, carriers, shipment statuses, claim types and statuses, e-mail templates and webhook endpoints. `value` is what a rule compares with (or names, for endpoints and templates); `name` is for people. Without `dictionary`, every dictionary; values of shop data come from the shops the credential may see. Returned whole (no cursor).',
  path: '/automations/options',
  scope: 'automations:read',
  mcpTool: null,
  kind: 'list',
  market: 'none',
  params: z.object({ dictionary: z.enum(dictionaryNames as [DictionaryName, ...DictionaryName[]]).optional().describe('Only this dictionary.') }).strict(),
  result: z.object({ dictionary: z.string(), value: z.union([z.string(), z.number()]), name: z.string() }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const names = params.dictionary ? [params.dictionary] : dictionaryNames;
    const items = [];
    for (const dictionary of names) {
      for (const option of await dictionaryValues(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes, dictionary)) items.push({ dictionary, ...option });
    }
    return items;
  },
});

/** Returns the ready-made rules with their documents. */
export const automationsTemplates = defineCapability({
  name: 'automations.templates',
  summary: 'Ready-made automation templates with their rule documents.',
  description: 'Returns ready-made automations: what each does, its rule document written against the current catalogue, and what must be filled in before saving it (`fill`, e.g. a webhook endpoint). Save one with automations_create_draft after filling it. Returned whole (no cursor).',
  path: '/automations/templates',
  scope: 'automations:read',
  mcpTool: 'automations_templates',
  kind: 'list',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    templateId: z.string(), name: z.string(), description: z.string(),
    fill: z.array(z.object({ nodeId: z.string(), field: z.string(), description: z.string() })),
    rule: z.record(z.string(), z.unknown()),
  }),
  annotations: readOnly,
  handler: async () => ruleTemplates.map((t) => ({ templateId: t.templateId, name: t.name, description: t.description, fill: t.fill.map((f) => ({ ...f })), rule: templateRule(t) as unknown as Record<string, unknown> })),
});

/** Lists the account's automations with their state and shop scope. */
export const automationsList = defineCapability({
  name: 'automations.list',
  summary: 'Automations with state and shop scope.',
  description: 'Returns the account\'s automations, newest first: name, state (draft or published), whether enabled, version, trigger, shop scope and catalogue version (without the rule document: read one with automations_get). A key restricted to some shops sees the rules on its shops. Paginated by cursor.',
  path: '/automations',
  scope: 'automations:read',
  mcpTool: 'automations_list',
  kind: 'list',
  market: 'none',
  params: z.object({
    state: z.enum(['draft', 'published']).optional().describe('Only automations in this state.'),
    enabled: z.boolean().optional().describe('Only enabled (true) or disabled (false) automations.'),
    limit: limit.optional(),
    cursor: cursor.optional(),
  }).strict(),
  result: automationSchema,
  annotations: readOnly,
  handler: ({ params, ctx, page }) => listAutomations(ctx.db, actorOf(ctx), params, page),
});

/** Reads one automation with its rule document and its validation against the current catalogue. */
export const automationsGet = defineCapability({
  name: 'automations.get',
  summary: 'One automation with its rule (DSL) and validation result.',
  description: 'Returns one automation by `workflowId`: state, version, shop scope, the rule document, and its validation now (against the current catalogue and the account\'s current dictionaries, e.g. a webhook endpoint deleted since), with every problem and its node.',
  path: '/automations/{workflowId}',
  scope: 'automations:read',
  mcpTool: 'automations_get',
  kind: 'get',
  market: 'none',
  params: z.object({ workflowId }).strict(),
  result: automationSchema.extend({ rule: z.record(z.string(), z.unknown()), validation: validationSchema }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const actor = actorOf(ctx);
    const row = await findAutomation(ctx.db, actor, params.workflowId);
    return { ...automationRecord(row), rule: row.dsl as unknown as Record<string, unknown>, validation: await validateForActor(ctx.db, actor, row.dsl) };
  },
});

const runStatus = z.enum(['pending', 'running', 'waiting', 'completed', 'not_matched', 'cancelled', 'failed']);

/** Lists the runs of one automation, newest first, each with its trigger event, steps and outcome. */
export const automationsRuns = defineCapability({
  name: 'automations.runs',
  summary: 'Run history of one automation.',
  description: 'Returns the runs of one automation, newest first: the event that triggered each (event id and type, shop), its entity, its status (`pending`, `running`, `waiting` on a timer, `completed`, `not_matched` when the conditions did not hold, `cancelled` when the automation was disabled meanwhile, `failed`), its outcome and every step with status and times. Paginated by cursor.',
  path: '/automations/{workflowId}/runs',
  scope: 'automations:read',
  mcpTool: 'automations_runs',
  kind: 'list',
  market: 'none',
  params: z.object({ workflowId, status: runStatus.optional().describe('Only runs in this status.'), limit: limit.optional(), cursor: cursor.optional() }).strict(),
  result: z.object({
    runWorkflowId: z.string().describe('The Temporal workflow id `automation-run-<workflowId>-<eventId>`.'),
    automationVersion: z.number().int(),
    trigger: z.object({ eventId: z.string(), eventType: z.string(), store: z.string().nullable() }),
    entity: z.object({ type: z.enum(['order', 'shipment', 'claim']), id: z.string(), orderCode: z.string().nullable() }),
    status: runStatus,
    outcome: z.string().nullable(),
    manual: z.boolean().describe('Started by a person ("run now"), not by an event.'),
    startedAt: timestamp,
    finishedAt: timestamp.nullable(),
    steps: z.array(z.object({
      nodeId: z.string(), action: z.string(), status: z.enum(['running', 'waiting', 'done', 'failed', 'cancelled']),
      startedAt: timestamp, finishedAt: timestamp.nullable(), waitUntil: timestamp.nullable(), detail: z.record(z.string(), z.unknown()).nullable(),
    })),
  }),
  annotations: readOnly,
  handler: ({ params, ctx, page }) => listAutomationRuns(ctx.db, actorOf(ctx), params.workflowId, params.status, page),
});

/** Validates a rule document without writing anything (MCP only). */
export const automationsValidateDraft = defineCapability({
  name: 'automations.validate_draft',
  summary: 'Validates an automation rule without saving it.',
  description: 'Checks a rule document against the catalogue of its `catalogVersion` and the account\'s dictionaries and returns every problem with its node id, JSON pointer and reason (never only the first). Writes nothing. A rule written against an older catalogue gets the problem CATALOG_CHANGED.',
  path: null,
  scope: 'automations:read',
  mcpTool: 'automations_validate_draft',
  kind: 'summary',
  market: 'none',
  params: z.object({ rule: ruleDocument }).strict(),
  result: validationSchema,
  annotations: readOnly,
  handler: ({ params, ctx }) => validateForActor(ctx.db, actorOf(ctx), params.rule),
});

const clientRequestId = z.string().min(1).max(100).regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces').describe('Your id for this request: the same id with the same rule returns the same draft; with another rule it is IDEMPOTENCY_CONFLICT.');

/** Creates a disabled automation draft; idempotent through clientRequestId (MCP only). */
export const automationsCreateDraft = defineCapability({
  name: 'automations.create_draft',
  summary: 'Creates a DISABLED automation draft (idempotent through clientRequestId).',
  description: 'Saves a rule document as a new draft. The draft is disabled and never runs: only a person publishes and enables it in the application. The rule is validated first; with any problem nothing is saved (INVALID_AUTOMATION with every problem, or CATALOG_CHANGED when `catalogVersion` is not the current one). Repeating the call with the same `clientRequestId` and rule returns the same draft.',
  path: null,
  scope: 'automations:write',
  mcpTool: 'automations_create_draft',
  kind: 'write',
  market: 'none',
  params: z.object({ clientRequestId, rule: ruleDocument }).strict(),
  result: automationSchema,
  annotations: idempotentWrite,
  handler: async ({ params, ctx }) => automationRecord(await createDraft(ctx.db, actorOf(ctx), params)),
});

/** Updates an unpublished draft (or makes a new draft from a published automation), with optimistic versioning (MCP only). */
export const automationsUpdateDraft = defineCapability({
  name: 'automations.update_draft',
  summary: 'Updates an unpublished draft; requires expectedVersion; CATALOG_CHANGED when the catalogue moved.',
  description: 'Replaces the rule of a draft. `expectedVersion` must be its current `version` (else VERSION_CONFLICT: read it again). A rule whose `catalogVersion` is not the current catalogue is CATALOG_CHANGED: read automations_catalog and write the rule against it. A published automation is never changed over MCP: the update creates a new draft that names it in `sourceWorkflowId` (repeating the same update returns that same draft). Enables, publishes and runs nothing.',
  path: null,
  scope: 'automations:write',
  mcpTool: 'automations_update_draft',
  kind: 'write',
  market: 'none',
  params: z.object({ workflowId, expectedVersion: z.number().int().min(1).max(1_000_000).describe('The `version` you read.'), rule: ruleDocument }).strict(),
  result: automationSchema,
  annotations: idempotentWrite,
  handler: async ({ params, ctx }) => automationRecord(await updateDraft(ctx.db, actorOf(ctx), params)),
});
