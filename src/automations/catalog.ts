/**
 * The automation catalogue (SPEC "/automations/catalog", D31): triggers, condition fields per trigger with their types,
 * operators per type, actions, e-mail templates and ready-made rule templates, plus the rule's JSON Schema. Its
 * `catalogVersion` is a hash of all of it, so it changes whenever any of these change (and only then).
 */
import crypto from 'node:crypto';
import { comparisonOperators, ruleJsonSchema, type ComparisonOperator, type Rule } from './rule.js';

export type FieldType = 'number' | 'string' | 'boolean' | 'dictionary';
export type EntityType = 'order' | 'shipment' | 'claim';

/** A dictionary whose values /automations/options lists (`value` for the rule, `name` for people). */
export type DictionaryName = 'shops' | 'currencies' | 'order_statuses' | 'payment_methods' | 'shipping_methods' | 'carriers' | 'shipment_statuses' | 'claim_types' | 'claim_statuses' | 'email_templates' | 'webhook_endpoints';
export const dictionaryNames: readonly DictionaryName[] = ['shops', 'currencies', 'order_statuses', 'payment_methods', 'shipping_methods', 'carriers', 'shipment_statuses', 'claim_types', 'claim_statuses', 'email_templates', 'webhook_endpoints'];

export interface ConditionField {
  field: string;
  entity: EntityType;
  type: FieldType;
  /** For `dictionary` fields: where the values come from; `valueType` says whether they are numbers or strings. */
  dictionary?: DictionaryName;
  valueType?: 'number' | 'string';
  description: string;
}

export const operatorsByType: Record<FieldType, readonly ComparisonOperator[]> = {
  number: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'],
  string: ['eq', 'ne', 'in', 'not_in', 'contains', 'is_empty', 'is_not_empty'],
  boolean: ['eq'],
  dictionary: ['eq', 'ne', 'in', 'not_in'],
};

const orderFields: ConditionField[] = [
  { field: 'order.totalWithVat', entity: 'order', type: 'number', description: 'Order total with VAT in the order\'s currency.' },
  { field: 'order.totalWithVatEur', entity: 'order', type: 'number', description: 'Order total with VAT converted to EUR at the rate stored on the order (D23).' },
  { field: 'order.currency', entity: 'order', type: 'dictionary', dictionary: 'currencies', valueType: 'string', description: 'ISO currency code of the order.' },
  { field: 'order.statusId', entity: 'order', type: 'dictionary', dictionary: 'order_statuses', valueType: 'number', description: 'Current order status id.' },
  { field: 'order.paid', entity: 'order', type: 'boolean', description: 'Whether the order is paid.' },
  { field: 'order.paymentMethod', entity: 'order', type: 'dictionary', dictionary: 'payment_methods', valueType: 'string', description: 'Payment method of the order.' },
  { field: 'order.shippingMethod', entity: 'order', type: 'dictionary', dictionary: 'shipping_methods', valueType: 'string', description: 'Shipping method of the order.' },
  { field: 'order.country', entity: 'order', type: 'string', description: 'Customer\'s country (ISO 3166-1 alpha-2).' },
  { field: 'order.couponCode', entity: 'order', type: 'string', description: 'Coupon code used on the order (empty when none).' },
];
const shipmentFields: ConditionField[] = [
  { field: 'shipment.carrierCode', entity: 'shipment', type: 'dictionary', dictionary: 'carriers', valueType: 'string', description: 'Carrier of the shipment.' },
  { field: 'shipment.status', entity: 'shipment', type: 'dictionary', dictionary: 'shipment_statuses', valueType: 'string', description: 'Current tracking status, e.g. `DELIVERED`.' },
  { field: 'shipment.country', entity: 'shipment', type: 'string', description: 'Destination country (ISO 3166-1 alpha-2).' },
];
const claimFields: ConditionField[] = [
  { field: 'claim.type', entity: 'claim', type: 'dictionary', dictionary: 'claim_types', valueType: 'string', description: 'Claim type: withdrawal or complaint.' },
  { field: 'claim.statusId', entity: 'claim', type: 'dictionary', dictionary: 'claim_statuses', valueType: 'number', description: 'Current claim status id.' },
  { field: 'claim.refundWithVat', entity: 'claim', type: 'number', description: 'Refunded amount with VAT in the claim\'s currency (0 when none).' },
];
const marketField: ConditionField = { field: 'event.market', entity: 'order', type: 'dictionary', dictionary: 'shops', valueType: 'string', description: 'Shop code of the event.' };

export interface TriggerDefinition {
  event: string;
  entity: EntityType;
  description: string;
  fields: ConditionField[];
}

function trigger(event: string, entity: EntityType, description: string): TriggerDefinition {
  // Shipments and claims belong to an order, so their rules may also test the order's fields.
  const own = entity === 'order' ? orderFields : entity === 'shipment' ? [...shipmentFields, ...orderFields] : [...claimFields, ...orderFields];
  return { event, entity, description, fields: [{ ...marketField, entity }, ...own] };
}

/** Outbox event types that make sense to automate: those about an order, a shipment or a claim. */
export const triggers: readonly TriggerDefinition[] = [
  trigger('order.created', 'order', 'A new order arrived from a shop.'),
  trigger('order.paid', 'order', 'An order was marked paid.'),
  trigger('order.status_changed', 'order', 'An order\'s status changed.'),
  trigger('shipment.created', 'shipment', 'A shipment was created at a carrier.'),
  trigger('shipment.status_changed', 'shipment', 'A shipment\'s tracking status changed.'),
  trigger('shipment.delivered', 'shipment', 'A shipment was delivered.'),
  trigger('claim.created', 'claim', 'A claim was created.'),
  trigger('claim.status_changed', 'claim', 'A claim\'s status changed.'),
  trigger('claim.closed', 'claim', 'A claim was closed.'),
];
export const triggersByEvent = new Map(triggers.map((t) => [t.event, t]));

export interface ActionDefinition {
  action: string;
  description: string;
  parameters: { name: string; type: string; description: string }[];
}

export const actions: readonly ActionDefinition[] = [
  { action: 'send_webhook', description: 'Sends the event `automation.action` to one webhook endpoint of the account, through the same delivery path, signature, retries and log as every webhook.', parameters: [{ name: 'endpointId', type: 'dictionary webhook_endpoints', description: 'The endpoint that receives it.' }] },
  { action: 'wait', description: 'Waits for a duration (a durable timer: it survives restarts).', parameters: [{ name: 'duration', type: 'string', description: 'Minutes, hours or days: `30m`, `12h`, `2d` (at most 9999 of the unit).' }] },
  { action: 'wait_until', description: 'Waits until the next time a clock time is reached in the shop\'s time zone.', parameters: [{ name: 'timeOfDay', type: 'string', description: '`HH:MM`, 24-hour clock.' }] },
  { action: 'send_email', description: 'Sends an e-mail from a template to the account\'s people (recorded in the e-mail outbox, D30).', parameters: [{ name: 'template', type: 'dictionary email_templates', description: 'The template.' }] },
  { action: 'add_tag', description: 'Adds a tag to the run\'s order or claim, kept inside the service (the shop is not changed).', parameters: [{ name: 'target', type: '`order` | `claim`', description: '`claim` only for claim triggers.' }, { name: 'tag', type: 'string', description: 'Lower-case letters, digits, `_` or `-`, at most 40.' }] },
];

export interface EmailTemplate {
  value: string;
  name: string;
  subject: string;
  body: string;
}

/** E-mail templates for `send_email`; `{{…}}` are filled from the run (identifiers only, never personal data). */
export const emailTemplates: readonly EmailTemplate[] = [
  { value: 'order_attention', name: 'Order needs attention', subject: 'Order {{order_code}} in {{market}} needs attention', body: 'The automation "{{automation_name}}" flagged order {{order_code}} in shop {{market}}.' },
  { value: 'high_value_order', name: 'High-value order', subject: 'High-value order {{order_code}} in {{market}}', body: 'Order {{order_code}} in shop {{market}} matched the rule "{{automation_name}}".' },
  { value: 'claim_attention', name: 'Claim needs attention', subject: 'Claim {{claim_code}} in {{market}} needs attention', body: 'The automation "{{automation_name}}" flagged claim {{claim_code}} (order {{order_code}}) in shop {{market}}.' },
  { value: 'shipment_attention', name: 'Shipment needs attention', subject: 'Shipment {{shipment_id}} in {{market}} needs attention', body: 'The automation "{{automation_name}}" flagged shipment {{shipment_id}} (order {{order_code}}) in shop {{market}}.' },
];

/** Claim types, shipment statuses: fixed vocabularies of the service (the other dictionaries come from the shops). */
export const claimTypes = [{ value: 'withdrawal', name: 'Withdrawal from the purchase' }, { value: 'complaint', name: 'Complaint' }] as const;
export const shipmentStatuses = ['CREATED', 'HANDED_OVER', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED', 'RETURNED', 'FAILED', 'CANCELLED']
  .map((value) => ({ value, name: value.toLowerCase().replace(/_/g, ' ') }));

export interface RuleTemplate {
  templateId: string;
  name: string;
  description: string;
  /** Parameters a person or assistant must fill before saving (node id and field). */
  fill: { nodeId: string; field: string; description: string }[];
  rule: Omit<Rule, 'catalogVersion'>;
}

export const ruleTemplates: readonly RuleTemplate[] = [
  {
    templateId: 'high-value-paid-order-to-erp',
    name: 'High-value paid order: wait two days, tag it, tell the ERP',
    description: 'When an order is paid and its total is over 200 EUR, wait two days, tag the order `vip` and send the ERP a webhook.',
    fill: [{ nodeId: 'notify_erp', field: 'endpointId', description: 'Your ERP\'s webhook endpoint (automations options `webhook_endpoints`).' }],
    rule: {
      name: 'High-value paid order to the ERP',
      trigger: { id: 'paid', event: 'order.paid' },
      conditions: { id: 'when', all: [{ id: 'over_200_eur', field: 'order.totalWithVatEur', op: 'gt', value: 200 }] },
      steps: [
        { id: 'wait_2_days', action: 'wait', duration: '2d' },
        { id: 'tag_vip', action: 'add_tag', target: 'order', tag: 'vip' },
        { id: 'notify_erp', action: 'send_webhook', endpointId: '1' },
      ],
    },
  },
  {
    templateId: 'complaint-alert',
    name: 'Complaint: alert the team in the morning',
    description: 'When a complaint is created, wait until 08:00 in the shop\'s zone, tag the claim and e-mail the account\'s people.',
    fill: [],
    rule: {
      name: 'Complaint alert',
      trigger: { id: 'claim_created', event: 'claim.created' },
      conditions: { id: 'when', all: [{ id: 'is_complaint', field: 'claim.type', op: 'eq', value: 'complaint' }] },
      steps: [
        { id: 'morning', action: 'wait_until', timeOfDay: '08:00' },
        { id: 'tag_claim', action: 'add_tag', target: 'claim', tag: 'complaint-review' },
        { id: 'mail_team', action: 'send_email', template: 'claim_attention' },
      ],
    },
  },
  {
    templateId: 'failed-delivery-follow-up',
    name: 'Failed or returned delivery: tag the order and e-mail',
    description: 'When a shipment ends as FAILED or RETURNED, tag its order and e-mail the account\'s people.',
    fill: [],
    rule: {
      name: 'Failed delivery follow-up',
      trigger: { id: 'shipment_status', event: 'shipment.status_changed' },
      conditions: { id: 'when', any: [{ id: 'failed', field: 'shipment.status', op: 'in', value: ['FAILED', 'RETURNED'] }] },
      steps: [
        { id: 'tag_order', action: 'add_tag', target: 'order', tag: 'delivery-problem' },
        { id: 'mail_team', action: 'send_email', template: 'shipment_attention' },
      ],
    },
  },
];

/** Everything the version covers, in one canonical object. */
function versionedContent() {
  return { triggers, operatorsByType, comparisonOperators, actions, emailTemplates, claimTypes, shipmentStatuses, ruleTemplates, ruleSchema: ruleJsonSchema() };
}

/** `catalogVersion`: a hash of the whole catalogue, so any change to it moves the version. */
export const CATALOG_VERSION = `cat-${crypto.createHash('sha256').update(JSON.stringify(versionedContent())).digest('hex').slice(0, 16)}`;

/** A template's rule with the current catalogue version, ready to be saved as a draft once `fill` is done. */
export function templateRule(template: RuleTemplate): Rule {
  return { catalogVersion: CATALOG_VERSION, ...template.rule };
}
