/**
 * Validation of a rule (D31) against the catalogue of its `catalogVersion`: structure (the published JSON Schema, via
 * zod) and meaning (trigger, fields, operators, values, templates, endpoints). Every problem is returned with the node
 * id and a JSON pointer, never only the first.
 */
import { z } from 'zod';
import { CATALOG_VERSION, emailTemplates, operatorsByType, triggersByEvent, type DictionaryName, type TriggerDefinition } from './catalog.js';
import { comparisonOperators, MAX_CONDITION_DEPTH, MAX_CONDITIONS_PER_GROUP, NODE_ID_PATTERN, ruleSchema, type Rule } from './rule.js';

export interface ValidationProblem {
  /** The node the problem is about (its `id`), or null for the document itself. */
  nodeId: string | null;
  /** JSON pointer into the rule, e.g. `/steps/1/duration`. */
  path: string;
  code: string;
  message: string;
}

export interface ValidationResult {
  valid: boolean;
  catalogVersion: string;
  problems: ValidationProblem[];
}

/** Looks up the values a dictionary accepts (per account); validate caches one call per dictionary. */
export type DictionaryLookup = (dictionary: DictionaryName) => Promise<ReadonlyArray<string | number>>;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const pointer = (path: readonly PropertyKey[]) => (path.length === 0 ? '' : `/${path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`);

/** The id of the innermost node on `path` (the last object on the way that has a string id). */
function nodeAt(doc: unknown, path: readonly PropertyKey[]): string | null {
  let current: unknown = doc;
  let id: string | null = null;
  for (const key of path) {
    if (isObject(current) && typeof current.id === 'string') id = current.id;
    current = isObject(current) || Array.isArray(current) ? (current as Record<PropertyKey, unknown>)[key as string] : undefined;
  }
  if (isObject(current) && typeof current.id === 'string') id = current.id;
  return id;
}

/** Validates a rule document; `lookup` answers dictionary values of the account (shops, statuses, endpoints...). */
export async function validateRule(doc: unknown, lookup: DictionaryLookup): Promise<ValidationResult> {
  const problems: ValidationProblem[] = [];
  const add = (path: readonly PropertyKey[], code: string, message: string) => problems.push({ nodeId: nodeAt(doc, path), path: pointer(path), code, message });
  const cache = new Map<DictionaryName, Promise<ReadonlyArray<string | number>>>();
  const values = (name: DictionaryName) => {
    if (!cache.has(name)) cache.set(name, lookup(name));
    return cache.get(name)!;
  };

  if (!isObject(doc)) {
    add([], 'NOT_AN_OBJECT', 'A rule is a JSON object with catalogVersion, name, trigger, conditions and steps.');
    return { valid: false, catalogVersion: CATALOG_VERSION, problems };
  }

  // Structure, except the conditions tree, which is checked node by node below for clearer messages.
  const parsed = ruleSchema.safeParse(doc);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.path[0] === 'conditions') continue;
      add(issue.path, 'SCHEMA', describeIssue(issue));
    }
  }

  if (typeof doc.catalogVersion === 'string' && doc.catalogVersion !== CATALOG_VERSION) {
    add(['catalogVersion'], 'CATALOG_CHANGED', `The rule was written against catalogue ${doc.catalogVersion}; the current catalogue is ${CATALOG_VERSION}. Read automations_catalog and write the rule against it.`);
  }

  // Node ids are unique across the rule.
  const seen = new Map<string, string>();
  const visitIds = (value: unknown, path: PropertyKey[]) => {
    if (Array.isArray(value)) value.forEach((v, i) => visitIds(v, [...path, i]));
    if (!isObject(value)) return;
    if (typeof value.id === 'string') {
      const first = seen.get(value.id);
      if (first !== undefined) add([...path, 'id'], 'DUPLICATE_NODE_ID', `Node id \`${value.id}\` is already used at ${first}; node ids are unique in a rule.`);
      else seen.set(value.id, pointer(path));
    }
    for (const [k, v] of Object.entries(value)) if (typeof v === 'object') visitIds(v, [...path, k]);
  };
  visitIds(doc, []);

  // Trigger and markets.
  let trigger: TriggerDefinition | undefined;
  const rawTrigger = doc.trigger;
  if (isObject(rawTrigger)) {
    if (typeof rawTrigger.event === 'string') {
      trigger = triggersByEvent.get(rawTrigger.event);
      if (!trigger) add(['trigger', 'event'], 'UNKNOWN_TRIGGER', `\`${rawTrigger.event}\` is not a trigger of the catalogue (${[...triggersByEvent.keys()].join(', ')}).`);
    }
    if (Array.isArray(rawTrigger.markets)) {
      const shops = await values('shops');
      rawTrigger.markets.forEach((m, i) => {
        if (typeof m === 'string' && !shops.includes(m)) add(['trigger', 'markets', i], 'UNKNOWN_VALUE', `The account has no shop \`${m}\` (or this credential may not see it).`);
      });
    }
  }

  // Conditions, recursively.
  if (doc.conditions !== undefined) {
    await checkCondition(doc.conditions, ['conditions'], 1, true);
  }

  async function checkCondition(node: unknown, path: PropertyKey[], depth: number, mustBeGroup: boolean): Promise<void> {
    if (!isObject(node)) {
      add(path, 'SCHEMA', 'A condition is an object: a group {id, all|any} or a comparison {id, field, op, value}.');
      return;
    }
    if (typeof node.id !== 'string' || !NODE_ID_PATTERN.test(node.id)) add([...path, 'id'], 'SCHEMA', 'Every condition needs an `id`: a lower-case letter, then letters, digits, _ or -, at most 40.');
    const isGroup = 'all' in node || 'any' in node;
    if (isGroup || mustBeGroup) {
      const keys = Object.keys(node).filter((k) => k !== 'id');
      const lists = keys.filter((k) => k === 'all' || k === 'any');
      if (lists.length !== 1) add(path, 'GROUP_SHAPE', 'A condition group has exactly one of `all` or `any`.');
      for (const k of keys.filter((k) => k !== 'all' && k !== 'any')) add([...path, k], 'SCHEMA', `Unknown property \`${k}\` in a condition group.`);
      if (depth > MAX_CONDITION_DEPTH) add(path, 'TOO_DEEP', `Condition groups nest at most ${MAX_CONDITION_DEPTH} levels.`);
      for (const k of lists) {
        const list = node[k];
        if (!Array.isArray(list) || list.length === 0 || list.length > MAX_CONDITIONS_PER_GROUP) {
          add([...path, k], 'SCHEMA', `\`${k}\` is a list of 1 to ${MAX_CONDITIONS_PER_GROUP} conditions.`);
          continue;
        }
        for (let i = 0; i < list.length; i++) await checkCondition(list[i], [...path, k, i], depth + 1, false);
      }
      return;
    }
    await checkComparison(node, path);
  }

  async function checkComparison(node: Json, path: PropertyKey[]): Promise<void> {
    for (const k of Object.keys(node)) if (!['id', 'field', 'op', 'value'].includes(k)) add([...path, k], 'SCHEMA', `Unknown property \`${k}\` in a comparison.`);
    const op = node.op;
    if (typeof op !== 'string' || !(comparisonOperators as readonly string[]).includes(op)) {
      add([...path, 'op'], 'UNKNOWN_OPERATOR', `\`op\` must be one of ${comparisonOperators.join(', ')}.`);
    }
    if (typeof node.field !== 'string') {
      add([...path, 'field'], 'SCHEMA', '`field` is required: a condition field of the trigger.');
      return;
    }
    if (!trigger) return; // the trigger's problem is reported already; fields depend on it
    const field = trigger.fields.find((f) => f.field === node.field);
    if (!field) {
      add([...path, 'field'], 'UNKNOWN_FIELD', `\`${node.field}\` is not a condition field of trigger ${trigger.event} (${trigger.fields.map((f) => f.field).join(', ')}).`);
      return;
    }
    if (typeof op !== 'string' || !(comparisonOperators as readonly string[]).includes(op)) return;
    const allowed = operatorsByType[field.type];
    if (!(allowed as readonly string[]).includes(op)) {
      add([...path, 'op'], 'OPERATOR_NOT_ALLOWED', `\`${op}\` does not apply to ${field.field} (type ${field.type}); use one of ${allowed.join(', ')}.`);
      return;
    }
    const value = node.value;
    if (op === 'is_empty' || op === 'is_not_empty') {
      if (value !== undefined) add([...path, 'value'], 'VALUE_NOT_ALLOWED', `\`${op}\` takes no value.`);
      return;
    }
    const list = op === 'in' || op === 'not_in';
    if (value === undefined) {
      add([...path, 'value'], 'MISSING_VALUE', `\`${op}\` needs a value${list ? ' (a list)' : ''}.`);
      return;
    }
    if (list !== Array.isArray(value)) {
      add([...path, 'value'], 'VALUE_TYPE', list ? `\`${op}\` takes a list of values.` : `\`${op}\` takes one value, not a list.`);
      return;
    }
    const items: unknown[] = Array.isArray(value) ? value : [value];
    if (Array.isArray(value) && (value.length === 0 || value.length > 100)) add([...path, 'value'], 'VALUE_TYPE', 'A list holds 1 to 100 values.');
    const expected = field.type === 'dictionary' ? field.valueType! : field.type;
    const known = field.dictionary ? await values(field.dictionary) : null;
    items.forEach((item, i) => {
      const at = Array.isArray(value) ? [...path, 'value', i] : [...path, 'value'];
      if (typeof item !== expected) {
        add(at, 'VALUE_TYPE', `${field.field} compares with a ${expected}; got ${JSON.stringify(item)}.`);
      } else if (typeof item === 'number' && !Number.isFinite(item)) {
        add(at, 'VALUE_TYPE', 'A number must be finite.');
      } else if (known && !known.includes(item as string | number)) {
        add(at, 'UNKNOWN_VALUE', `${JSON.stringify(item)} is not a value of dictionary ${field.dictionary} (see /automations/options?dictionary=${field.dictionary}).`);
      }
    });
  }

  // Steps: dictionary references and targets.
  if (Array.isArray(doc.steps)) {
    for (let i = 0; i < doc.steps.length; i++) {
      const step = doc.steps[i];
      if (!isObject(step)) continue;
      if (step.action === 'send_email' && typeof step.template === 'string' && !emailTemplates.some((t) => t.value === step.template)) {
        add(['steps', i, 'template'], 'UNKNOWN_VALUE', `\`${step.template}\` is not an e-mail template (${emailTemplates.map((t) => t.value).join(', ')}).`);
      }
      if (step.action === 'send_webhook' && typeof step.endpointId === 'string' && /^\d{1,18}$/.test(step.endpointId) && !(await values('webhook_endpoints')).includes(step.endpointId)) {
        add(['steps', i, 'endpointId'], 'UNKNOWN_VALUE', `The account has no webhook endpoint ${step.endpointId} (deleted endpoints do not count).`);
      }
      if (step.action === 'add_tag' && step.target === 'claim' && trigger && trigger.entity !== 'claim') {
        add(['steps', i, 'target'], 'TARGET_NOT_ALLOWED', `Trigger ${trigger.event} has no claim; tag the \`order\` instead.`);
      }
    }
  }

  return { valid: problems.length === 0, catalogVersion: CATALOG_VERSION, problems };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `Unknown propert${issue.keys.length > 1 ? 'ies' : 'y'} ${issue.keys.map((k) => `\`${k}\``).join(', ')}.`;
  if (issue.code === 'invalid_type' && issue.input === undefined) return `\`${String(issue.path[issue.path.length - 1])}\` is required.`;
  const name = issue.path.length > 0 ? `\`${String(issue.path[issue.path.length - 1])}\`` : 'The rule';
  if (issue.code === 'invalid_format') return `${name} must be ${issue.message}.`;
  return `${name}: ${issue.message}.`;
}

/** The parsed rule of a document that validated. */
export function asRule(doc: unknown): Rule {
  return ruleSchema.parse(doc);
}
