/**
 * The automation rule language (D31): a JSON document of a trigger, conditions (all/any, nested) and a sequence of
 * steps, every node with a stable id. This zod schema is the structural half of validation and, as JSON Schema, is
 * published in the catalogue; the catalogue half (which fields, operators and values) is in validate.ts.
 */
import { z } from 'zod';

export const NODE_ID_PATTERN = /^[a-z][a-z0-9_-]{0,39}$/;
export const DURATION_PATTERN = /^([1-9]\d{0,3})(m|h|d)$/;
export const TIME_OF_DAY_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;
export const TAG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,39}$/;
export const MAX_STEPS = 20;
export const MAX_CONDITIONS_PER_GROUP = 20;
export const MAX_CONDITION_DEPTH = 4;

export const comparisonOperators = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains', 'is_empty', 'is_not_empty'] as const;
export type ComparisonOperator = (typeof comparisonOperators)[number];

const nodeId = z.string().regex(NODE_ID_PATTERN, 'a node id: lower-case letter, then letters, digits, _ or -, at most 40').describe('Stable node id, unique in the rule; runs and validation problems name nodes by it.');
const scalar = z.union([z.string().max(200), z.number(), z.boolean()]);

export const comparisonSchema = z.object({
  id: nodeId,
  field: z.string().min(1).max(80).describe('A condition field of the trigger, from the catalogue (e.g. `order.totalWithVatEur`).'),
  op: z.enum(comparisonOperators).describe('An operator the field\'s type allows (catalogue `operators`).'),
  value: z.union([scalar, z.array(scalar).min(1).max(100)]).optional().describe('The value to compare with; an array for `in`/`not_in`; absent for `is_empty`/`is_not_empty`. Dictionary fields take the `value` of /automations/options.'),
}).strict();

export interface ConditionGroup {
  id: string;
  all?: Condition[];
  any?: Condition[];
}
export type Comparison = z.infer<typeof comparisonSchema>;
export type Condition = Comparison | ConditionGroup;

export const conditionGroupSchema: z.ZodType<ConditionGroup> = z.object({
  id: nodeId,
  get all() {
    return z.array(conditionSchema).min(1).max(MAX_CONDITIONS_PER_GROUP).optional().describe('Every condition must hold.');
  },
  get any() {
    return z.array(conditionSchema).min(1).max(MAX_CONDITIONS_PER_GROUP).optional().describe('At least one condition must hold.');
  },
}).strict().describe('A group: exactly one of `all` or `any`.');

export const conditionSchema: z.ZodType<Condition> = z.union([comparisonSchema, conditionGroupSchema]);

export const stepSchema = z.discriminatedUnion('action', [
  z.object({ id: nodeId, action: z.literal('send_webhook'), endpointId: z.string().regex(/^\d{1,18}$/, 'digits').describe('The webhook endpoint (webhooks_endpoints) that receives `automation.action`.') }).strict(),
  z.object({ id: nodeId, action: z.literal('wait'), duration: z.string().regex(DURATION_PATTERN, 'a duration such as 30m, 12h or 2d').describe('How long to wait: minutes (m), hours (h) or days (d), e.g. `2d`.') }).strict(),
  z.object({ id: nodeId, action: z.literal('wait_until'), timeOfDay: z.string().regex(TIME_OF_DAY_PATTERN, 'HH:MM').describe('Waits until the next time this clock time is reached in the shop\'s time zone, e.g. `08:00`.') }).strict(),
  z.object({ id: nodeId, action: z.literal('send_email'), template: z.string().min(1).max(80).describe('An e-mail template of the catalogue; sent to the account\'s people.') }).strict(),
  z.object({ id: nodeId, action: z.literal('add_tag'), target: z.enum(['order', 'claim']).describe('What to tag: the run\'s order, or its claim (claim triggers only).'), tag: z.string().regex(TAG_PATTERN, 'lower-case letters, digits, _ or -, at most 40').describe('The tag, kept by the service.') }).strict(),
]);
export type Step = z.infer<typeof stepSchema>;

export const ruleSchema = z.object({
  catalogVersion: z.string().min(1).max(64).describe('The `catalogVersion` of the catalogue the rule was written against.'),
  name: z.string().trim().min(1).max(120),
  description: z.string().max(1000).optional(),
  trigger: z.object({
    id: nodeId,
    event: z.string().min(1).max(80).describe('A trigger of the catalogue (an outbox event type such as `order.paid`).'),
    markets: z.array(z.string().min(1).max(32)).min(1).max(50).optional().describe('Shop codes the rule applies to; absent = every shop of the account, also future ones.'),
  }).strict(),
  conditions: conditionGroupSchema.optional().describe('Conditions evaluated against the event\'s entity as it stands in Postgres when the run starts; absent = always.'),
  steps: z.array(stepSchema).min(1).max(MAX_STEPS).describe('Executed in order; each step once per run.'),
}).strict();

export type Rule = z.infer<typeof ruleSchema>;

/** The published JSON Schema of a rule (draft 2020-12). */
export function ruleJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ruleSchema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** Milliseconds of a `wait` duration. */
export function durationMs(duration: string): number {
  const m = DURATION_PATTERN.exec(duration);
  if (!m) throw new Error(`bad duration ${duration}`);
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}
