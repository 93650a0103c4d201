/**
 * Automation runs in Postgres: the automation consumer turns outbox events into runs of the enabled, published
 * automations they match (one per automation and event, unique), and the run workflow's activities evaluate the
 * conditions against the entity as it stands now and execute each step once. Temporal owns the waiting; Postgres owns
 * what happened.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { recordEvent } from '../events/outbox.js';
import { createDeliveries } from '../webhooks/dispatch.js';
import { emailTemplates, triggers, triggersByEvent, type EntityType } from './catalog.js';
import type { Condition, Rule, Step } from './rule.js';

/** The name of this consumer's row in automation_outbox_consumer (its position is independent of webhook dispatch). */
export const CONSUMER_NAME = 'automations';
/** Events younger than this are not passed by the position (a transaction that started earlier may still commit one). */
const POSITION_MARGIN_SECONDS = 60;
const TRIGGER_TYPES = triggers.map((t) => t.event);

/** `automation-run-<workflowId>-<eventId>`: a business id, so starting a run twice is harmless. */
export const runWorkflowIdOf = (workflowId: string, eventId: string) => `automation-run-${workflowId}-${eventId}`;

interface OutboxEventRow {
  id: string;
  event_id: string;
  account_id: string;
  shop_id: string | null;
  store: string | null;
  event_type: string;
  resource_type: string;
  resource_id: string;
  data: Record<string, unknown>;
}

interface EnabledAutomation {
  id: string;
  account_id: string;
  workflow_id: string;
  trigger_event: string;
  markets: string[] | null;
  published_version: number;
}

export interface MatchResult {
  events: number;
  runs: number;
}

async function consumerPosition(trx: Knex.Transaction): Promise<number> {
  await trx('automation_outbox_consumer').insert({ name: CONSUMER_NAME, position: 0 }).onConflict('name').ignore();
  const row = await trx('automation_outbox_consumer').where({ name: CONSUMER_NAME }).first('position');
  return Number(row.position);
}

/**
 * Looks at the next outbox events of trigger types and creates a `pending` run for each enabled, published automation
 * that matches by account, trigger and shop. An event is claimed by inserting its row into automation_outbox_seen, so
 * concurrent consumers never match one event twice, and webhook dispatch is neither locked nor delayed.
 */
export async function matchOutboxBatch(db: Db, limit = 500): Promise<MatchResult> {
  return db.transaction(async (trx) => {
    const position = await consumerPosition(trx);
    const candidates: OutboxEventRow[] = await trx('outbox_events as o')
      .select('o.id', 'o.event_id', 'o.account_id', 'o.shop_id', 'o.store', 'o.event_type', 'o.resource_type', 'o.resource_id', 'o.data')
      .where('o.id', '>', position).whereIn('o.event_type', TRIGGER_TYPES)
      .whereNotExists((q) => q.select(trx.raw('1')).from('automation_outbox_seen as s').whereRaw('s.outbox_event_id = o.id'))
      .orderBy('o.id').limit(limit);
    let runs = 0;
    let claimed: OutboxEventRow[] = [];
    if (candidates.length > 0) {
      const inserted = await trx('automation_outbox_seen').insert(candidates.map((c) => ({ outbox_event_id: c.id }))).onConflict('outbox_event_id').ignore().returning('outbox_event_id');
      const mine = new Set(inserted.map((r) => String(r.outbox_event_id)));
      claimed = candidates.filter((c) => mine.has(String(c.id)));
    }
    if (claimed.length > 0) {
      const automations: EnabledAutomation[] = await trx('automations')
        .select('id', 'account_id', 'workflow_id', 'trigger_event', 'markets', 'published_version')
        .where({ enabled: true, state: 'published' }).whereIn('account_id', [...new Set(claimed.map((e) => e.account_id))])
        .whereIn('trigger_event', [...new Set(claimed.map((e) => e.event_type))]);
      const rows = claimed.flatMap((event) => automations.filter((a) => matches(a, event)).map((a) => runRow(a, event)));
      for (let i = 0; i < rows.length; i += 500) {
        runs += (await trx('automation_runs').insert(rows.slice(i, i + 500)).onConflict(['automation_id', 'event_id']).ignore().returning('id')).length;
      }
    }
    await advancePosition(trx, position);
    return { events: claimed.length, runs };
  });
}

function matches(automation: EnabledAutomation, event: OutboxEventRow): boolean {
  if (String(automation.account_id) !== String(event.account_id) || automation.trigger_event !== event.event_type) return false;
  return automation.markets === null || (event.store !== null && automation.markets.includes(event.store));
}

function runRow(automation: EnabledAutomation, event: OutboxEventRow) {
  const entity = triggersByEvent.get(event.event_type)!.entity;
  const orderCode = typeof event.data.order_code === 'string' ? event.data.order_code : null;
  return {
    automation_id: automation.id, account_id: automation.account_id, run_workflow_id: runWorkflowIdOf(automation.workflow_id, event.event_id),
    automation_version: automation.published_version, outbox_event_id: event.id, event_id: event.event_id, event_type: event.event_type,
    shop_id: event.shop_id, store: event.store, entity_type: entity, entity_id: event.resource_id, order_code: orderCode, status: 'pending',
  };
}

/**
 * Moves the position over events that are settled: below the first trigger-type event not yet seen, and not newer
 * than the margin (ids are taken at insert, commits may come later). Seen rows at or below it are no longer needed.
 */
async function advancePosition(trx: Knex.Transaction, position: number): Promise<void> {
  const result = await trx.raw(`
    select least(
      coalesce((select min(o.id) - 1 from outbox_events o where o.id > :position and o.event_type = any(:types)
                and not exists (select 1 from automation_outbox_seen s where s.outbox_event_id = o.id)), 9223372036854775806),
      coalesce((select max(o.id) from outbox_events o where o.id > :position and o.created_at < now() - make_interval(secs => :margin)), :position)
    ) as next`, { position, types: TRIGGER_TYPES, margin: POSITION_MARGIN_SECONDS });
  const next = Number(result.rows[0].next);
  if (next <= position) return;
  await trx('automation_outbox_consumer').where({ name: CONSUMER_NAME }).update({ position: next, updated_at: trx.fn.now() });
  await trx('automation_outbox_seen').where('outbox_event_id', '<=', next).delete();
}

/** A run waiting for its workflow: what the starter needs. */
export interface StartableRun {
  runId: string;
  runWorkflowId: string;
  /** For the run workflow's search attributes (account code, shop code, the automation's id); absent when cancelling. */
  labels?: { account: string; shop: string | null; automation: string };
}

/** Pending runs without a workflow (new, or left by a crash between commit and start). */
export async function unstartedRuns(db: Db, limit = 500): Promise<StartableRun[]> {
  const rows = await db('automation_runs as r').join('automations as au', 'au.id', 'r.automation_id').join('accounts as a', 'a.id', 'r.account_id')
    .leftJoin('shops as s', 's.id', 'r.shop_id')
    .select('r.id', 'r.run_workflow_id', 'a.code as account', 's.code as shop', 'au.workflow_id as automation')
    .where('r.status', 'pending').whereNull('r.workflow_started_at').orderBy('r.id').limit(limit);
  return rows.map((r) => ({ runId: String(r.id), runWorkflowId: r.run_workflow_id, labels: { account: r.account, shop: r.shop ?? null, automation: r.automation } }));
}

export async function markRunsStarted(db: Db, runIds: string[]): Promise<void> {
  if (runIds.length > 0) await db('automation_runs').whereIn('id', runIds).whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
}

interface RunContext {
  id: string;
  account_id: string;
  automation_id: string;
  workflow_id: string;
  automation_name: string;
  enabled: boolean;
  run_workflow_id: string;
  automation_version: number;
  event_id: string;
  event_type: string;
  shop_id: string | null;
  store: string | null;
  entity_type: EntityType;
  entity_id: string;
  order_code: string | null;
  status: string;
  manual: boolean;
}

async function runContext(db: Db | Knex.Transaction, runId: string, opts: { lock?: boolean } = {}): Promise<RunContext> {
  const q = db('automation_runs as r').join('automations as a', 'a.id', 'r.automation_id')
    .select('r.*', 'a.workflow_id', 'a.name as automation_name', 'a.enabled').where('r.id', runId);
  if (opts.lock) q.forUpdate('r');
  const row = await q.first();
  if (!row) throw new Error(`automation run ${runId} does not exist`);
  return row as RunContext;
}

const FINISHED = ['completed', 'not_matched', 'cancelled', 'failed'];

/** What the run workflow does next after starting. */
export type RunBegin = { proceed: false; status: string } | { proceed: true; steps: Step[]; timeZone: string };

/**
 * Starts a run: a disabled automation (unless the run is a person's manual run) cancels it; otherwise the conditions are
 * evaluated against the entity in Postgres now. Idempotent: a run already decided answers the same way again.
 */
export async function beginRun(db: Db, runId: string): Promise<RunBegin> {
  return db.transaction(async (trx) => {
    const run = await runContext(trx, runId, { lock: true });
    const { dsl } = await trx('automation_versions').where({ automation_id: run.automation_id, version: run.automation_version }).first('dsl') as { dsl: Rule };
    const timeZone = await zoneOf(trx, run);
    if (FINISHED.includes(run.status)) return { proceed: false, status: run.status };
    if (run.status === 'running' || run.status === 'waiting') return { proceed: true, steps: dsl.steps, timeZone };
    if (!run.enabled && !run.manual) {
      await finish(trx, runId, 'cancelled', 'The automation was disabled before the run started.');
      return { proceed: false, status: 'cancelled' };
    }
    const values = await entityValues(trx, run);
    const matched = dsl.conditions ? evaluate(dsl.conditions, values) : true;
    if (!matched) {
      await finish(trx, runId, 'not_matched', 'The conditions did not hold for the entity as it stands.');
      return { proceed: false, status: 'not_matched' };
    }
    await trx('automation_runs').where({ id: runId }).update({ status: 'running' });
    return { proceed: true, steps: dsl.steps, timeZone };
  });
}

async function zoneOf(db: Db | Knex.Transaction, run: RunContext): Promise<string> {
  if (run.shop_id) {
    const shop = await db('shops').where({ id: run.shop_id }).first('time_zone');
    if (shop) return shop.time_zone;
  }
  return (await db('accounts').where({ id: run.account_id }).first('time_zone')).time_zone;
}

async function finish(trx: Db | Knex.Transaction, runId: string, status: string, outcome: string): Promise<void> {
  await trx('automation_runs').where({ id: runId }).whereNotIn('status', FINISHED).update({ status, outcome, finished_at: trx.fn.now() });
}

/** Ends a run (completed, cancelled, failed) and its unfinished steps; a finished run stays as it is. */
export async function finishRun(db: Db, runId: string, status: 'completed' | 'cancelled' | 'failed', outcome: string): Promise<void> {
  await db.transaction(async (trx) => {
    await finish(trx, runId, status, outcome);
    if (status !== 'completed') {
      await trx('automation_run_steps').where({ run_id: runId }).whereIn('status', ['running', 'waiting']).update({ status: status === 'cancelled' ? 'cancelled' : 'failed', finished_at: trx.fn.now() });
    }
  });
}

/** The condition fields' values of the run's entity as it stands in Postgres (null when the entity is not there). */
export async function entityValues(db: Db | Knex.Transaction, run: Pick<RunContext, 'shop_id' | 'store' | 'entity_type' | 'entity_id' | 'order_code'>): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = { 'event.market': run.store };
  if (!run.shop_id) return values;
  let orderCode = run.order_code;
  if (run.entity_type === 'shipment' && /^\d{1,18}$/.test(run.entity_id)) {
    const s = await db('shipments').where({ shop_id: run.shop_id, id: run.entity_id }).first('carrier_code', 'status', 'country', 'order_code');
    if (s) Object.assign(values, { 'shipment.carrierCode': s.carrier_code, 'shipment.status': s.status, 'shipment.country': String(s.country).trim() });
    orderCode ??= s?.order_code ?? null;
  }
  if (run.entity_type === 'claim') {
    const c = await db('claims').where({ shop_id: run.shop_id, code: run.entity_id }).first('type', 'status_id', 'refund_with_vat', 'order_code');
    if (c) Object.assign(values, { 'claim.type': c.type, 'claim.statusId': c.status_id, 'claim.refundWithVat': Number(c.refund_with_vat ?? 0) });
    orderCode ??= c?.order_code ?? null;
  }
  if (run.entity_type === 'order') orderCode = run.entity_id;
  if (orderCode) {
    const o = await db('orders').where({ shop_id: run.shop_id, code: orderCode })
      .first('total_with_vat', 'eur_rate', 'currency', 'status_id', 'paid', 'payment_method', 'shipping_method', 'customer_country', 'coupon_code');
    if (o) {
      Object.assign(values, {
        'order.totalWithVat': Number(o.total_with_vat), 'order.totalWithVatEur': Math.round(Number(o.total_with_vat) * Number(o.eur_rate) * 100) / 100,
        'order.currency': String(o.currency).trim(), 'order.statusId': o.status_id, 'order.paid': o.paid, 'order.paymentMethod': o.payment_method,
        'order.shippingMethod': o.shipping_method, 'order.country': o.customer_country ? String(o.customer_country).trim() : null, 'order.couponCode': o.coupon_code ?? '',
      });
    }
  }
  return values;
}

/** Evaluates a condition tree; a field without a value (entity missing) satisfies only `ne`, `not_in` and `is_empty`. */
export function evaluate(condition: Condition, values: Record<string, unknown>): boolean {
  if ('all' in condition && condition.all) return condition.all.every((c) => evaluate(c, values));
  if ('any' in condition && condition.any) return condition.any.some((c) => evaluate(c, values));
  const { field, op, value } = condition as { field: string; op: string; value?: unknown };
  const actual = values[field];
  const missing = actual === null || actual === undefined;
  switch (op) {
    case 'eq': return !missing && actual === value;
    case 'ne': return missing || actual !== value;
    case 'gt': return !missing && (actual as number) > (value as number);
    case 'gte': return !missing && (actual as number) >= (value as number);
    case 'lt': return !missing && (actual as number) < (value as number);
    case 'lte': return !missing && (actual as number) <= (value as number);
    case 'in': return !missing && (value as unknown[]).includes(actual);
    case 'not_in': return missing || !(value as unknown[]).includes(actual);
    case 'contains': return !missing && String(actual).includes(String(value));
    case 'is_empty': return missing || actual === '';
    case 'is_not_empty': return !missing && actual !== '';
    default: return false;
  }
}

/** Records that a wait step waits (until when), once. */
export async function recordWait(db: Db, runId: string, position: number, step: Step, until: Date): Promise<void> {
  await db('automation_run_steps').insert({ run_id: runId, node_id: step.id, position, action: step.action, status: 'waiting', wait_until: until })
    .onConflict(['run_id', 'node_id']).ignore();
  await db('automation_runs').where({ id: runId, status: 'running' }).update({ status: 'waiting' });
}

/** The next instant at `HH:MM` in `timeZone` strictly after `now`. */
export function nextTimeOfDay(timeOfDay: string, timeZone: string, now: Date): Date {
  const [hh, mm] = timeOfDay.split(':').map(Number);
  const parts = (d: Date) => Object.fromEntries(new Intl.DateTimeFormat('en-GB', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
    .formatToParts(d).filter((p) => p.type !== 'literal').map((p) => [p.type, Number(p.value)]));
  const local = parts(now);
  // Offset of the zone at a given UTC instant, in ms.
  const offset = (d: Date) => { const p = parts(d); return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(d.getTime() / 1000) * 1000; };
  for (let day = 0; day < 3; day++) {
    const guess = Date.UTC(local.year, local.month - 1, local.day + day, hh, mm);
    const candidate = new Date(guess - offset(new Date(guess - offset(new Date(guess)))));
    if (candidate.getTime() > now.getTime()) return candidate;
  }
  throw new Error('unreachable');
}

/**
 * Executes one non-waiting step exactly once: the step row, locked, says whether it already happened (an activity
 * retried after a crash finds it done and does nothing). A disabled automation cancels the run instead.
 */
export async function executeStep(db: Db, runId: string, position: number, step: Step): Promise<{ status: 'done' | 'cancelled'; detail?: Record<string, unknown> }> {
  return db.transaction(async (trx) => {
    const run = await runContext(trx, runId, { lock: true });
    const existing = await trx('automation_run_steps').where({ run_id: runId, node_id: step.id }).first();
    if (existing?.status === 'done') return { status: 'done' as const, detail: existing.detail ?? undefined };
    if (run.status === 'cancelled' || (!run.enabled && !run.manual)) {
      await finish(trx, runId, 'cancelled', 'The automation was disabled during the run.');
      await trx('automation_run_steps').where({ run_id: runId }).whereIn('status', ['running', 'waiting']).update({ status: 'cancelled', finished_at: trx.fn.now() });
      return { status: 'cancelled' as const };
    }
    const detail = await performStep(trx, run, step);
    if (existing) await trx('automation_run_steps').where({ run_id: runId, node_id: step.id }).update({ status: 'done', finished_at: trx.fn.now(), detail });
    else await trx('automation_run_steps').insert({ run_id: runId, node_id: step.id, position, action: step.action, status: 'done', finished_at: trx.fn.now(), detail });
    await trx('automation_runs').where({ id: runId }).whereIn('status', ['running', 'waiting']).update({ status: 'running' });
    return { status: 'done' as const, detail };
  });
}

/** Marks a wait step as over. */
export async function finishWait(db: Db, runId: string, step: Step): Promise<void> {
  await db('automation_run_steps').where({ run_id: runId, node_id: step.id, status: 'waiting' }).update({ status: 'done', finished_at: db.fn.now() });
  await db('automation_runs').where({ id: runId, status: 'waiting' }).update({ status: 'running' });
}

async function performStep(trx: Knex.Transaction, run: RunContext, step: Step): Promise<Record<string, unknown>> {
  switch (step.action) {
    case 'add_tag': {
      const code = step.target === 'claim' ? (run.entity_type === 'claim' ? run.entity_id : null) : await orderCodeOf(trx, run);
      if (!code || !run.shop_id) return { skipped: `the run has no ${step.target}` };
      await trx('automation_tags').insert({ account_id: run.account_id, shop_id: run.shop_id, entity_type: step.target, entity_code: code, tag: step.tag, run_id: run.id, node_id: step.id })
        .onConflict(['shop_id', 'entity_type', 'entity_code', 'tag']).ignore();
      return { target: step.target, code, tag: step.tag };
    }
    case 'send_email': {
      const template = emailTemplates.find((t) => t.value === step.template);
      if (!template) return { skipped: `no e-mail template ${step.template}` };
      const vars: Record<string, string> = {
        automation_name: run.automation_name, market: run.store ?? '', order_code: (await orderCodeOf(trx, run)) ?? '',
        claim_code: run.entity_type === 'claim' ? run.entity_id : '', shipment_id: run.entity_type === 'shipment' ? run.entity_id : '',
      };
      const fill = (text: string) => text.replace(/\{\{(\w+)\}\}/g, (_m, k: string) => vars[k] ?? '');
      // The one e-mail outbox (D30); the dedupe key keeps a retried step to one e-mail.
      await trx('email_outbox').insert({
        account_id: run.account_id, source: 'automation', event: template.value, dedupe_key: `automation:${run.id}:${step.id}`, shop_id: run.shop_id,
        recipient_group: 'account_people', subject: fill(template.subject), body_html: fill(template.body),
      }).onConflict(['account_id', 'dedupe_key']).ignore();
      return { template: template.value, recipients: 'account_people' };
    }
    case 'send_webhook':
      return sendAutomationAction(trx, run, step);
    default:
      throw new Error(`step ${step.action} is not executed by executeStep`);
  }
}

async function orderCodeOf(db: Knex.Transaction, run: RunContext): Promise<string | null> {
  if (run.entity_type === 'order') return run.entity_id;
  if (run.order_code) return run.order_code;
  if (run.entity_type === 'shipment' && run.shop_id && /^\d{1,18}$/.test(run.entity_id)) {
    return (await db('shipments').where({ shop_id: run.shop_id, id: run.entity_id }).first('order_code'))?.order_code ?? null;
  }
  return null;
}

/**
 * The "send webhook" step: an `automation.action` event in the outbox, aimed at the one endpoint the step names (like a
 * test delivery, it is never matched to subscribers), and its delivery — the same path, signature, retries and log as
 * every webhook. A deleted or disabled endpoint gets nothing (its deliveries would only be skipped).
 */
async function sendAutomationAction(trx: Knex.Transaction, run: RunContext, step: Extract<Step, { action: 'send_webhook' }>): Promise<Record<string, unknown>> {
  const endpoint = await trx('webhook_endpoints').where({ id: step.endpointId, account_id: run.account_id }).first('id', 'state', 'deleted_at');
  if (!endpoint || endpoint.deleted_at || endpoint.state === 'disabled') return { endpointId: step.endpointId, skipped: endpoint ? `endpoint ${endpoint.deleted_at ? 'deleted' : 'disabled'}` : 'no such endpoint' };
  const orderCode = await orderCodeOf(trx, run);
  const ids: Record<string, string> = {};
  if (orderCode) ids.order_code = orderCode;
  if (run.entity_type === 'shipment') ids.shipment_id = run.entity_id;
  if (run.entity_type === 'claim') ids.claim_code = run.entity_id;
  const shop = run.shop_id && run.store ? { id: run.shop_id, code: run.store } : null;
  const event = await recordEvent(trx, {
    accountId: run.account_id, shop, type: 'automation.action', resource: { type: run.entity_type, id: run.entity_id },
    data: { automation: { workflow_id: run.workflow_id, run_id: run.run_workflow_id, node_id: step.id, source_event: run.event_id }, ...ids },
    occurredAt: new Date(),
  });
  // Aimed at this endpoint only: dispatch must not match it to subscribers (as for `ping`).
  await trx('outbox_events').where({ id: event.id }).update({ dispatched_at: trx.fn.now() });
  const [delivery] = await createDeliveries(trx, [event.id], [String(endpoint.id)]);
  return { endpointId: step.endpointId, eventId: event.eventId, deliveryId: delivery?.id ?? null };
}

/** Runs of an automation that may still be waiting or running (to cancel when a person disables it). */
export async function activeRuns(db: Db, automationId: string): Promise<StartableRun[]> {
  const rows = await db('automation_runs').select('id', 'run_workflow_id').where({ automation_id: automationId }).whereIn('status', ['pending', 'running', 'waiting']);
  return rows.map((r) => ({ runId: String(r.id), runWorkflowId: r.run_workflow_id }));
}

/** How the consumer reaches Temporal; activities implement it with the worker's client. */
export interface RunWorkflows {
  /** Starts the run's workflow; resolves when it runs or already ran (the id is a business id). */
  start(run: StartableRun): Promise<void>;
  /** Asks the run's workflow to cancel; `not_found` when no such workflow runs. */
  cancel(run: StartableRun): Promise<'requested' | 'not_found'>;
}

/**
 * Starts workflows for pending runs that have none yet. A run is marked started after its workflow runs, so a crash in
 * between costs one more (idempotent) start, never a second run.
 */
export async function startPendingRuns(db: Db, workflows: RunWorkflows, limit = 500, concurrency = 32): Promise<number> {
  const runs = await unstartedRuns(db, limit);
  const started: string[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, runs.length) }, async () => {
    while (next < runs.length) {
      const run = runs[next++];
      await workflows.start(run);
      started.push(run.runId);
    }
  }));
  await markRunsStarted(db, started);
  return started.length;
}

/**
 * Cancels the waiting or running runs of automations a person disabled (event runs only; a person's manual run goes on).
 * The run workflow records the cancellation; one whose workflow is gone is ended here.
 */
export async function cancelRunsOfDisabledAutomations(db: Db, workflows: RunWorkflows, limit = 200, automationId?: string): Promise<number> {
  const query = db('automation_runs as r').join('automations as a', 'a.id', 'r.automation_id')
    .where('a.enabled', false).where('r.manual', false).whereIn('r.status', ['running', 'waiting', 'pending'])
    .whereNotNull('r.workflow_started_at').whereNull('r.cancel_requested_at')
    .select('r.id', 'r.run_workflow_id').orderBy('r.id').limit(limit);
  // The application's "disable" cancels the runs of the one automation at once (`automationId`); the consumer, all.
  if (automationId !== undefined) query.where('a.id', automationId);
  const rows = await query;
  for (const row of rows) {
    const run = { runId: String(row.id), runWorkflowId: row.run_workflow_id as string };
    if ((await workflows.cancel(run)) === 'not_found') await finishRun(db, run.runId, 'cancelled', 'The automation was disabled.');
    await db('automation_runs').where({ id: row.id }).update({ cancel_requested_at: db.fn.now() });
  }
  return rows.length;
}

/**
 * A person runs a published automation now for one past event of its trigger (the application's "run"): a run marked
 * `manual`, which goes on even while the automation is disabled. One run per automation and event still holds.
 */
export async function createManualRun(db: Db, accountId: string, workflowId: string, eventId: string): Promise<{ runWorkflowId: string }> {
  return db.transaction(async (trx) => {
    const automation = await trx('automations').where({ account_id: accountId, workflow_id: workflowId }).forUpdate().first();
    if (!automation) throw new AppError('NOT_FOUND', `No automation ${workflowId}.`, { param: 'workflowId' });
    if (automation.state !== 'published') throw new AppError('STATE_CONFLICT', `Automation ${workflowId} is a draft: publish it before running it.`, { state: automation.state });
    const event: OutboxEventRow | undefined = /^[0-9a-f-]{36}$/i.test(eventId)
      ? await trx('outbox_events').where({ account_id: accountId, event_id: eventId }).first('id', 'event_id', 'account_id', 'shop_id', 'store', 'event_type', 'resource_type', 'resource_id', 'data')
      : undefined;
    if (!event) throw new AppError('NOT_FOUND', `No event ${eventId} in this account.`, { param: 'eventId' });
    if (event.event_type !== automation.trigger_event) throw new AppError('STATE_CONFLICT', `Event ${eventId} is ${event.event_type}; the automation's trigger is ${automation.trigger_event}.`, { eventType: event.event_type });
    if (automation.markets && (!event.store || !automation.markets.includes(event.store))) throw new AppError('STATE_CONFLICT', `Event ${eventId} is of shop ${event.store}, outside the automation's shops.`, { store: event.store });
    const row = { ...runRow(automation, event), manual: true };
    const inserted = await trx('automation_runs').insert(row).onConflict(['automation_id', 'event_id']).ignore().returning('id');
    if (inserted.length === 0) throw new AppError('STATE_CONFLICT', `Automation ${workflowId} already ran for event ${eventId}; an event never starts two runs.`, { runWorkflowId: row.run_workflow_id });
    return { runWorkflowId: row.run_workflow_id };
  });
}
