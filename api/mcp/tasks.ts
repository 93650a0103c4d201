/**
 * Proposals as MCP tasks (issue 26.2). A client that declares tasks — 2025-11-25: a task-augmented `tools/call`
 * (`params.task`); 2026-07-28: the `io.modelcontextprotocol/tasks` extension in the request's client capabilities
 * (SEP-2663) — gets a task instead of the draft from the four propose tools: `working` while the proposal waits for a person and is written,
 * `completed` with the per-item result, `failed` with the reason (rejected, expired, nothing written), `cancelled` when
 * the assistant withdrew it. The task id is the proposal's draft id; its state is the proposal's row in Postgres and its
 * Temporal workflow, so any API process answers tasks/get, tasks/result, tasks/list and tasks/cancel (085_mcp_tasks
 * records only which proposals are tasks). The SDK we serve with (2.x) has no task runtime: the router hands these
 * messages here before the SDK sees them, and answers them in the SDK's wire shapes.
 */
import type { Caller } from '../../src/capabilities/context.js';
import { capabilitiesByTool } from '../../src/capabilities/registry.js';
import { callerMayUse, runCapability, type RunDeps } from '../../src/capabilities/run.js';
import { AppError, toAppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { isFinal, proposalWorkflowId } from '../../src/proposals/model.js';
import { getDraft, type DraftView } from '../../src/proposals/queries.js';
import { decideProposal } from '../../src/temporal/proposals.js';
import { JSONRPC, jsonRpcError, type JsonRpcErrorBody } from './protocol.js';
import { SERVER_INFO, SERVER_INFO_META } from './server.js';
import { errorResult, structuredContent, textRendering, toolNamed } from './tools.js';

/** The tools whose call may be a task: each stores a proposal that a person decides later. */
export const TASK_TOOLS: ReadonlySet<string> = new Set(['products_content_propose', 'categories_content_propose', 'availabilities_propose', 'claims_settings_propose']);

/** How often a client should poll tasks/get: a person decides in minutes or days, not milliseconds. */
export const POLL_INTERVAL_MS = 5_000;
/** How long one tasks/result request waits for the workflow before answering TASK_STILL_WORKING. */
export const RESULT_WAIT_MS = 50_000;
/** At most this many tasks per tasks/list page. */
export const TASK_PAGE = 50;

const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** The wire `Task` of the 2025-11-25 revision. */
export interface McpTask {
  taskId: string;
  status: 'working' | 'completed' | 'failed' | 'cancelled';
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval: number;
}

/** The two wire vocabularies: 2025-11-25 (`ttl`, `pollInterval`, tasks/result and tasks/list) and SEP-2663 (`ttlMs`, results inside tasks/get). */
export type TaskEra = 'legacy' | 'modern';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export type TaskMessage =
  | { method: 'tools/call'; id: string | number; tool: string; args: Record<string, unknown>; ttl: number | null }
  | { method: 'tasks/get'; id: string | number; taskId: unknown }
  | { method: 'tasks/result'; id: string | number; taskId: unknown }
  | { method: 'tasks/cancel'; id: string | number; taskId: unknown }
  | { method: 'tasks/list'; id: string | number; cursor: unknown };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The message when this module answers it, else null. 2025-11-25: a `tasks/*` request, or a `tools/call` of a propose
 * tool carrying `params.task`. 2026-07-28: `tasks/get` or `tasks/cancel`, or a `tools/call` of a propose tool whose
 * client capabilities name the Tasks extension (SEP-2663: the server decides, `params.task` is ignored; tasks/result
 * and tasks/list do not exist there and are left to the SDK, which answers -32601).
 */
export function taskMessage(body: unknown, era: TaskEra): TaskMessage | null {
  if (!isObject(body) || body.jsonrpc !== '2.0' || (typeof body.id !== 'string' && typeof body.id !== 'number')) return null;
  const params = isObject(body.params) ? body.params : {};
  switch (body.method) {
    case 'tools/call': {
      if (typeof params.name !== 'string' || !TASK_TOOLS.has(params.name)) return null;
      const args = isObject(params.arguments) ? params.arguments : {};
      if (era === 'modern') {
        const capabilities = isObject(params._meta) ? params._meta['io.modelcontextprotocol/clientCapabilities'] : undefined;
        const extensions = isObject(capabilities) ? capabilities.extensions : undefined;
        return isObject(extensions) && isObject(extensions[TASKS_EXTENSION]) ? { method: 'tools/call', id: body.id, tool: params.name, args, ttl: null } : null;
      }
      if (!isObject(params.task)) return null;
      const ttl = typeof params.task.ttl === 'number' && Number.isSafeInteger(params.task.ttl) && params.task.ttl > 0 ? params.task.ttl : null;
      return { method: 'tools/call', id: body.id, tool: params.name, args, ttl };
    }
    case 'tasks/get':
    case 'tasks/cancel':
      return { method: body.method, id: body.id, taskId: params.taskId } as TaskMessage;
    case 'tasks/result':
      return era === 'legacy' ? { method: body.method, id: body.id, taskId: params.taskId } : null;
    case 'tasks/list':
      return era === 'legacy' ? { method: 'tasks/list', id: body.id, cursor: params.cursor } : null;
    default:
      return null;
  }
}

interface TaskRow {
  task_id: string;
  tool: string;
  created_by: string;
  ttl_ms: string | number | null;
  created_at: Date;
}

/** The task's state from its proposal: the one mapping from proposal states to task states. */
export function taskOf(row: TaskRow, draft: DraftView): McpTask {
  // bigint: any safe-integer ttl a client asks for is kept as asked (pg returns bigint as a string).
  const base = { taskId: row.task_id, createdAt: row.created_at.toISOString(), ttl: row.ttl_ms === null ? null : Number(row.ttl_ms), pollInterval: POLL_INTERVAL_MS };
  const lastUpdatedAt = draft.finishedAt ?? draft.decision?.at ?? base.createdAt;
  const task = (status: McpTask['status'], statusMessage: string): McpTask => ({ ...base, status, statusMessage, lastUpdatedAt });
  if (!isFinal(draft.status)) {
    return task('working', draft.decision ? 'Approved; writing to the shop.' : `Waiting for a person to approve it in the application (until ${draft.expiresAt}).`);
  }
  if (draft.status === 'rejected') {
    if (draft.decision?.by === row.created_by) return task('cancelled', 'Withdrawn by the assistant before anybody decided; nothing was written.');
    return task('failed', `Rejected by ${draft.decision?.by ?? 'a person'}: ${draft.decision?.reason ?? 'no reason given'}. Nothing was written.`);
  }
  if (draft.status === 'expired') return task('failed', `Expired: nobody decided by ${draft.expiresAt}. Nothing was written.`);
  if (draft.status === 'failed') return task('failed', 'Approved, but no item could be written; see the per-item results.');
  return task('completed', `Approved and ${draft.status.replace(/_/g, ' ')}; the result has each item's outcome.`);
}

/** Why a finished task did not complete, as the D3 error its tasks/result carries. */
function failureOf(task: McpTask, draft: DraftView): AppError {
  if (task.status === 'cancelled') return new AppError('PROPOSAL_WITHDRAWN', task.statusMessage, { draftId: draft.draftId });
  if (draft.status === 'expired') return new AppError('PROPOSAL_EXPIRED', task.statusMessage, { draftId: draft.draftId, expiresAt: draft.expiresAt });
  if (draft.status === 'rejected') return new AppError('PROPOSAL_REJECTED', task.statusMessage, { draftId: draft.draftId, by: draft.decision?.by ?? null, reason: draft.decision?.reason ?? null });
  return new AppError('PROPOSAL_WRITE_FAILED', task.statusMessage, { draftId: draft.draftId, items: draft.items.map((i) => ({ id: i.id, status: i.status, error: i.result?.error ?? null })) });
}

const createdByOf = (caller: Caller) => `${caller.credentialType === 'oauth' ? 'oauth' : 'key'}:${caller.credentialId}`;

/** A JSON-RPC error whose data names our D3 code (a task request is not a tool call, so it has no tool error result). */
function taskError(id: string | number, code: number, error: AppError): JsonRpcErrorBody {
  return jsonRpcError(code, error.message, { code: error.code, ...error.details }, id);
}

function notFound(id: string | number, taskId: unknown): JsonRpcErrorBody {
  return taskError(id, JSONRPC.INVALID_PARAMS, new AppError('NOT_FOUND', `Failed to retrieve task: no task ${String(taskId).slice(0, 64)} for this credential.`, { param: 'taskId' }));
}

/** The task row and its proposal, when the caller may see both (account, shops, and the scope of the tool that made it). */
async function visibleTask(deps: RunDeps, caller: Caller, taskId: unknown): Promise<{ row: TaskRow; draft: DraftView } | null> {
  if (typeof taskId !== 'string' || taskId.length > 64) return null;
  const row = await deps.db('mcp_tasks').where({ task_id: taskId, account_id: caller.account.id }).first() as TaskRow | undefined;
  if (!row) return null;
  const capability = capabilitiesByTool.get(row.tool);
  if (!capability || !callerMayUse(capability, caller)) return null;
  try {
    return { row, draft: await getDraft(deps.db, caller.account.id, caller.shopCodes, taskId) };
  } catch (error) {
    if (error instanceof AppError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

/** The task as the era's wire names it: 2025-11-25 `ttl`/`pollInterval`, SEP-2663 `ttlMs`/`pollIntervalMs`. */
function onWire(task: McpTask, era: TaskEra): Record<string, unknown> {
  if (era === 'legacy') return { ...task };
  const { ttl, pollInterval, ...rest } = task;
  return { ...rest, ttlMs: ttl, pollIntervalMs: pollInterval };
}

/** What the finished task's call returns: the draft with each item's result, or the D3 error of why it did not complete. */
function finalResult(task: McpTask, found: { row: TaskRow; draft: DraftView }, requestId: string): Record<string, unknown> {
  const meta = { [RELATED_TASK_META]: { taskId: task.taskId }, requestId };
  if (task.status !== 'completed') return { ...errorResult(failureOf(task, found.draft), requestId), _meta: meta };
  const tool = toolNamed(found.row.tool)!;
  const content = structuredContent(tool.capability, { data: found.draft, market: found.draft.market });
  return { content: [{ type: 'text', text: textRendering(content) }], structuredContent: content, _meta: meta };
}

/** Answers one task message with the JSON-RPC response body (result or error), in the era's vocabulary. */
export async function answerTaskMessage(message: TaskMessage, era: TaskEra, caller: Caller, requestId: string, deps: RunDeps): Promise<object> {
  // 2026-07-28 results are `complete` (or `task`) and name the server, as the SDK's encoder does for its own results.
  const ok = (result: Record<string, unknown>) => ({
    jsonrpc: '2.0', id: message.id,
    result: era === 'legacy' ? result : { resultType: 'complete', ...result, _meta: { ...(result._meta as object | undefined), [SERVER_INFO_META]: SERVER_INFO } },
  });
  switch (message.method) {
    case 'tools/call': {
      const created = await createTask(message, caller, requestId, deps);
      if (!isCreated(created)) return ok(created);
      return ok(era === 'legacy' ? { task: onWire(created.task, era), _meta: { requestId } } : { ...onWire(created.task, era), resultType: 'task', _meta: { requestId } });
    }
    case 'tasks/get': {
      const found = await visibleTask(deps, caller, message.taskId);
      if (!found) return notFound(message.id, message.taskId);
      const task = taskOf(found.row, found.draft);
      if (era === 'legacy' || task.status === 'working') return ok(onWire(task, era));
      // SEP-2663: a finished task carries what the call would have returned; a refusal of the proposal is `failed`
      // with a JSON-RPC error naming our code (the brief's "failed with the reason"), a withdrawal is `cancelled`.
      if (task.status === 'completed') return ok({ ...onWire(task, era), result: finalResult(task, found, requestId) });
      if (task.status === 'cancelled') return ok(onWire(task, era));
      const failure = failureOf(task, found.draft);
      return ok({ ...onWire(task, era), error: { code: JSONRPC.SERVER_ERROR, message: failure.message, data: { code: failure.code, ...failure.details } } });
    }
    case 'tasks/result': {
      let found = await visibleTask(deps, caller, message.taskId);
      if (!found) return notFound(message.id, message.taskId);
      if (!isFinal(found.draft.status)) {
        await workflowEnd(deps, found.row.task_id);
        found = (await visibleTask(deps, caller, message.taskId))!;
      }
      const task = taskOf(found.row, found.draft);
      if (task.status === 'working') {
        return taskError(message.id, JSONRPC.SERVER_ERROR, new AppError('TASK_STILL_WORKING', `Task ${task.taskId} is still working: ${task.statusMessage} Poll tasks/get.`, { pollInterval: POLL_INTERVAL_MS }));
      }
      return ok(finalResult(task, found, requestId));
    }
    case 'tasks/cancel': {
      const cancelled = await cancelTask(message, caller, deps);
      if ('error' in cancelled) return cancelled;
      // SEP-2663 acknowledges with an empty result; 2025-11-25 answers the task.
      return ok(era === 'legacy' ? onWire(cancelled.task, era) : {});
    }
    case 'tasks/list':
      return listTasks(message, caller, deps);
  }
}

function isCreated(value: { task: McpTask } | Record<string, unknown>): value is { task: McpTask } {
  return 'task' in value && isObject(value.task);
}

/** Runs the propose tool; a refusal is the tool's error result (no task), a stored proposal becomes a task. */
async function createTask(message: Extract<TaskMessage, { method: 'tools/call' }>, caller: Caller, requestId: string, deps: RunDeps): Promise<{ task: McpTask } | Record<string, unknown>> {
  const tool = toolNamed(message.tool)!;
  let draft: DraftView;
  try {
    draft = (await runCapability(tool.capability, message.args, caller, requestId, deps)).data as DraftView;
  } catch (error) {
    const appError = toAppError(error);
    if (appError.code === 'INTERNAL_ERROR') logger.error({ err: error, tool: tool.name }, 'task-augmented tool call failed');
    return errorResult(appError, requestId);
  }
  const [row] = await deps.db('mcp_tasks')
    .insert({ task_id: draft.draftId, account_id: caller.account.id, created_by: createdByOf(caller), tool: tool.name, ttl_ms: message.ttl })
    .returning('*') as TaskRow[];
  return { task: taskOf(row, draft) };
}

/** Waits (at most RESULT_WAIT_MS) for the proposal's workflow to end; Temporal tells every API process alike. */
async function workflowEnd(deps: RunDeps, draftId: string): Promise<void> {
  if (!deps.temporal) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    const handle = (await deps.temporal.client()).workflow.getHandle(proposalWorkflowId(draftId));
    const ended = handle.result().then(() => undefined, () => undefined);
    await Promise.race([ended, new Promise<void>((resolve) => { timer = setTimeout(resolve, RESULT_WAIT_MS); })]);
  } catch (error) {
    logger.warn({ err: error, draftId }, 'tasks/result could not wait for the proposal workflow');
  } finally {
    clearTimeout(timer);
  }
}

/** Withdraws the proposal (a rejection by its own creator) while nobody has decided; refused once someone has. */
async function cancelTask(message: Extract<TaskMessage, { method: 'tasks/cancel' }>, caller: Caller, deps: RunDeps): Promise<{ task: McpTask } | JsonRpcErrorBody> {
  const found = await visibleTask(deps, caller, message.taskId);
  if (!found) return notFound(message.id, message.taskId);
  const refused = (status: string) => taskError(message.id, JSONRPC.INVALID_PARAMS, new AppError('PROPOSAL_ALREADY_DECIDED', `Cannot cancel task ${found.row.task_id}: the proposal is already ${status}; only an undecided proposal can be withdrawn.`, { status }));
  if (isFinal(found.draft.status) || found.draft.decision) return refused(found.draft.status);
  if (!deps.temporal) return taskError(message.id, JSONRPC.SERVER_ERROR, new AppError('WRITES_UNAVAILABLE', 'This service instance cannot reach the proposal workflows.'));
  try {
    await decideProposal(await deps.temporal.client(), found.row.task_id, { approve: false, by: found.row.created_by, reason: 'Withdrawn by the assistant (tasks/cancel).' });
  } catch (error) {
    if (error instanceof AppError && error.code === 'PROPOSAL_ALREADY_DECIDED') return refused('decided');
    throw error;
  }
  const after = (await visibleTask(deps, caller, message.taskId))!;
  return { task: taskOf(after.row, after.draft) };
}

/** The caller's tasks, newest first, on the shops and tools it may see; `cursor` is the offset of the next page. */
async function listTasks(message: Extract<TaskMessage, { method: 'tasks/list' }>, caller: Caller, deps: RunDeps): Promise<object> {
  let offset = 0;
  if (message.cursor !== undefined) {
    if (typeof message.cursor !== 'string' || !/^\d{1,9}$/.test(message.cursor)) {
      return taskError(message.id, JSONRPC.INVALID_PARAMS, new AppError('INVALID_CURSOR', 'The tasks/list cursor is malformed; send back `nextCursor` as it was given.', { param: 'cursor' }));
    }
    offset = Number(message.cursor);
  }
  const tools = [...TASK_TOOLS].filter((name) => callerMayUse(capabilitiesByTool.get(name)!, caller));
  const query = deps.db('mcp_tasks as t').join('proposals as p', 'p.draft_id', 't.task_id').join('shops as s', 's.id', 'p.shop_id')
    .where('t.account_id', caller.account.id).whereIn('t.tool', tools)
    .orderBy([{ column: 't.created_at', order: 'desc' }, { column: 't.task_id', order: 'desc' }]).offset(offset).limit(TASK_PAGE + 1).select('t.*');
  if (caller.shopCodes) query.whereIn('s.code', [...caller.shopCodes]);
  const rows = await query as TaskRow[];
  const page = rows.slice(0, TASK_PAGE);
  const tasks = await Promise.all(page.map(async (row) => taskOf(row, await getDraft(deps.db, caller.account.id, caller.shopCodes, row.task_id))));
  return { jsonrpc: '2.0', id: message.id, result: rows.length > TASK_PAGE ? { tasks, nextCursor: String(offset + TASK_PAGE) } : { tasks } };
}
