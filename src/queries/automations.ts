/** Reads of automations and their runs, always within one account; a shop-restricted caller sees rules on its shops only. */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { PageRequest } from '../capabilities/types.js';
import { CATALOG_VERSION } from '../automations/catalog.js';
import { findAutomation, type Actor, type AutomationRow } from '../automations/drafts.js';
import { iso, keysetPage, toPage } from './keyset.js';

/** An automation as REST and MCP return it (the rule itself only on the single read). */
export function automationRecord(row: AutomationRow) {
  return {
    workflowId: row.workflow_id,
    name: row.name,
    state: row.state,
    enabled: row.enabled,
    version: row.version,
    publishedVersion: row.published_version,
    trigger: row.dsl.trigger.event,
    shops: { all: row.markets === null, codes: row.markets ?? [] },
    catalogVersion: row.catalog_version,
    catalogCurrent: row.catalog_version === CATALOG_VERSION,
    sourceWorkflowId: row.source_workflow_id,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    publishedAt: iso(row.published_at),
    enabledAt: iso(row.enabled_at),
  };
}

function visibleTo(q: Knex.QueryBuilder, shopCodes: ReadonlySet<string> | null): Knex.QueryBuilder {
  if (shopCodes) q.whereRaw('markets && ?::text[]', [[...shopCodes]]);
  return q;
}

export async function listAutomations(db: Db, actor: Actor, filter: { state?: 'draft' | 'published'; enabled?: boolean }, page: PageRequest) {
  const q = visibleTo(db('automations').where({ account_id: actor.accountId }), actor.shopCodes);
  if (filter.state) q.where({ state: filter.state });
  if (filter.enabled !== undefined) q.where({ enabled: filter.enabled });
  const rows: AutomationRow[] = await keysetPage(q.select('*'), 'created_at', 'id', page);
  const result = toPage(rows, page, (r) => r.created_at, automationRecord);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

export type RunStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'not_matched' | 'cancelled' | 'failed';
export type StepStatus = 'running' | 'waiting' | 'done' | 'failed' | 'cancelled';

interface RunRow {
  id: string;
  run_workflow_id: string;
  automation_version: number;
  event_id: string;
  event_type: string;
  store: string | null;
  entity_type: 'order' | 'shipment' | 'claim';
  entity_id: string;
  order_code: string | null;
  status: RunStatus;
  outcome: string | null;
  manual: boolean;
  created_at: Date;
  finished_at: Date | null;
}

export async function listAutomationRuns(db: Db, actor: Actor, workflowId: string, status: string | undefined, page: PageRequest) {
  const automation = await findAutomation(db, actor, workflowId);
  const q = db('automation_runs').where({ automation_id: automation.id });
  if (status) q.where({ status });
  const rows: RunRow[] = await keysetPage(q.select('*'), 'created_at', 'id', page);
  const result = toPage(rows, page, (r) => r.created_at, (r) => r);
  const steps = result.rows.length === 0 ? [] : await db('automation_run_steps').whereIn('run_id', result.rows.map((r) => r.id)).orderBy(['run_id', 'position']);
  const items = result.rows.map((r) => ({
    runWorkflowId: r.run_workflow_id,
    automationVersion: r.automation_version,
    trigger: { eventId: r.event_id, eventType: r.event_type, store: r.store },
    entity: { type: r.entity_type, id: r.entity_id, orderCode: r.order_code },
    status: r.status,
    outcome: r.outcome,
    manual: r.manual,
    startedAt: r.created_at.toISOString(),
    finishedAt: iso(r.finished_at),
    steps: steps.filter((s) => String(s.run_id) === String(r.id)).map((s) => ({
      nodeId: s.node_id as string, action: s.action as string, status: s.status as StepStatus,
      startedAt: (s.started_at as Date).toISOString(), finishedAt: iso(s.finished_at), waitUntil: iso(s.wait_until), detail: (s.detail ?? null) as Record<string, unknown> | null,
    })),
  }));
  return { items, hasMore: result.hasMore, last: result.last };
}
