/**
 * Confirmation by the person (issue 26.3): where the client can ask its user (2026-07-28 multi-round-trip
 * `input_required` with an embedded form-mode `elicitation/create`), coupons_update and coupons_remove answer their
 * preview with a question in the client's own UI instead of handing the model a token. The question's requestState is
 * the D25 confirmation token of the preview, so the confirmed round is the token path itself: the token's signature,
 * credential, arguments, expiry, single use and coupon-state checks all still apply, and a tampered requestState is
 * refused like a tampered token. Declined or cancelled: nothing is written.
 *
 * A 2025-era client (2025-06-18, 2025-11-25) that declared elicitation in `initialize` has a session (sessions.ts);
 * on it the same question is a server request, `elicitation/create`, on the call's SSE stream, and the person's answer
 * comes back as a POST, to this process or another (askInSession). Clients that declare no elicitation, and 2025-era
 * requests without a session, get today's D25 answer unchanged.
 */
import type { Response } from 'express';
import { inputRequired, inputResponse, type CallToolResult, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import type { RunDeps } from '../../src/capabilities/run.js';
import { AppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { askQuestion, declaresFormElicitation, waitForAnswer, type McpSession } from './sessions.js';
import { errorResult } from './tools.js';
import type { McpCallContext } from './server.js';
import { callTool } from './server.js';
import type { ToolDefinition } from './tools.js';

/** The write tools whose change a person confirms (D25's tools). */
export const PERSON_CONFIRMED_TOOLS: ReadonlySet<string> = new Set(['coupons_update', 'coupons_remove']);

/** The key of the one embedded question in `inputRequests` / `inputResponses`. */
const QUESTION = 'confirm';

/** The form the client shows: one yes/no field, required (form-mode elicitation allows only flat primitive fields). */
const CONFIRM_FORM = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Apply this change', description: 'Yes applies the change in the shop now; it cannot be undone by the assistant.' } },
  required: ['confirm'],
};

interface PreviewData {
  status: string;
  market: string;
  code: string;
  changes?: Array<{ field: string; before: unknown; after: unknown }>;
  dependencies: Array<{ type: string; name: string; state: string }>;
  confirmationToken: string | null;
  expiresAt: string | null;
  message: string;
}

/** Whether this 2026-07-28 request declares form-mode elicitation (`elicitation: {}` means form mode, as in 2025-11-25). */
export function clientCanElicit(ctx: ServerContext): boolean {
  const capabilities = ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities' as keyof typeof ctx.mcpReq.envelope] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  const elicitation = capabilities?.elicitation;
  if (!elicitation || typeof elicitation !== 'object') return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

function shown(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (v.type === 'percent') return `${String(v.percent)} %`;
    if (v.type === 'fixed') return `${String(v.amount)} ${String(v.currency)}`;
    if (v.type === 'free_shipping') return 'free shipping';
    if ('amount' in v && 'currency' in v) return `${String(v.amount)} ${String(v.currency)}`;
    return JSON.stringify(value);
  }
  return String(value);
}

/** The question a person reads: what changes (before → after) and what depends on the coupon. */
export function confirmationMessage(tool: string, preview: PreviewData): string {
  const lines = tool === 'coupons_remove'
    ? [`Remove coupon ${preview.code} from shop ${preview.market}? This cannot be undone.`]
    : [`Change coupon ${preview.code} in shop ${preview.market}?`, ...(preview.changes ?? []).map((c) => `• ${c.field}: ${shown(c.before)} → ${shown(c.after)}`)];
  if (preview.dependencies.length > 0) lines.push(`Depends on it: ${preview.dependencies.map((d) => `${d.name} (${d.type.replace('_', ' ')}, ${d.state})`).join('; ')}.`);
  return lines.join('\n');
}

export function previewOf(result: CallToolResult): PreviewData | null {
  if (result.isError) return null;
  const data = (result.structuredContent as { data?: PreviewData } | undefined)?.data;
  return data && data.status === 'preview' && data.confirmationToken ? data : null;
}

/**
 * Runs a person-confirmed tool: with a token from the model, or for a client without elicitation, exactly as before;
 * otherwise the preview becomes a question to the person, and the answer decides in the retried round.
 */
export async function callConfirmedTool(tool: ToolDefinition, args: unknown, ctx: ServerContext, context: McpCallContext, deps: RunDeps): Promise<CallToolResult | InputRequiredResult> {
  const given = (args ?? {}) as Record<string, unknown>;
  if (given.confirmationToken !== undefined || !clientCanElicit(ctx)) return callTool(tool, given, context, deps);
  const token = ctx.mcpReq.requestState<string>();
  if (typeof token === 'string') {
    const answer = inputResponse(ctx.mcpReq.inputResponses, QUESTION);
    if (answer.kind === 'elicit' && answer.action === 'accept' && answer.content?.confirm === true) {
      // The person said yes: the token path, with the token the question carried.
      return callTool(tool, { ...given, confirmationToken: token }, context, deps);
    }
    if (answer.kind === 'elicit') return notConfirmed(tool, given, answer.action === 'cancel' ? 'cancelled' : 'declined', context, deps);
    // A retry without an answer to our question: ask again from a fresh preview.
  }
  const result = await callTool(tool, given, context, deps);
  const preview = previewOf(result);
  if (!preview) return result;
  return inputRequired({
    inputRequests: { [QUESTION]: inputRequired.elicit({ message: confirmationMessage(tool.name, preview), requestedSchema: CONFIRM_FORM }) },
    requestState: preview.confirmationToken!,
  });
}

/** The answer when the person said no (or closed the question): the current preview, nothing written, no token. */
export async function notConfirmed(tool: ToolDefinition, args: Record<string, unknown>, status: 'declined' | 'cancelled', context: McpCallContext, deps: RunDeps): Promise<CallToolResult> {
  const result = await callTool(tool, args, context, deps);
  const preview = previewOf(result);
  if (!preview) return result;
  const what = tool.name === 'coupons_remove' ? 'removal' : 'change';
  const data = {
    ...preview,
    status,
    confirmationToken: null,
    expiresAt: null,
    message: `The person ${status === 'declined' ? 'declined' : 'dismissed'} the ${what} of coupon ${preview.code} in shop ${preview.market}; nothing was changed. Do not retry unless the person asks for it again.`,
  };
  const content = { ...(result.structuredContent as Record<string, unknown>), data };
  return { ...result, content: [{ type: 'text', text: JSON.stringify(content) }], structuredContent: content };
}

/** How long a call waits for the person's answer by default: well inside the token's 10 minutes. */
export const SESSION_ANSWER_WAIT_MS = 5 * 60 * 1000;
/** An SSE comment this often keeps proxies from closing a stream that waits for a person. */
const KEEP_ALIVE_MS = 15_000;

/**
 * A coupons_update/remove call without a token, from a 2025-era session whose client declared elicitation: the
 * arguments, or null when the call takes the ordinary path (another tool, a token given, no elicitation declared).
 */
export function sessionConfirmCall(body: unknown, session: McpSession): { id: string | number; tool: string; args: Record<string, unknown> } | null {
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (!message || typeof message !== 'object' || Array.isArray(message) || message.jsonrpc !== '2.0' || message.method !== 'tools/call') return null;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return null;
  const name = message.params?.name;
  if (typeof name !== 'string' || !PERSON_CONFIRMED_TOOLS.has(name) || !declaresFormElicitation(session.clientCapabilities)) return null;
  const args = message.params?.arguments;
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) return null;
  const given = (args ?? {}) as Record<string, unknown>;
  return given.confirmationToken === undefined ? { id: message.id, tool: name, args: given } : null;
}

function sseEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * The 2025-era session path: the preview is computed; when it is one a person can confirm, the call's answer becomes an
 * SSE stream carrying our `elicitation/create` (the yes/no form of the 2026 path), the question is a Postgres row, and
 * the call waits for the row's answer, which the client POSTs on the session to any process. Accept → the D25 token
 * path with the preview's token (kept in this call's memory only, never stored); decline, cancel or an unticked box →
 * nothing written (notConfirmed); no answer within `waitMs`, the client gone, or the session ended →
 * CONFIRMATION_NOT_ANSWERED, nothing written.
 */
export async function askInSession(res: Response, call: { id: string | number; tool: ToolDefinition; args: Record<string, unknown> }, session: McpSession, context: McpCallContext, deps: RunDeps, waitMs = SESSION_ANSWER_WAIT_MS): Promise<void> {
  const headers = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' };
  const reply = (result: unknown) => sseEvent({ result, jsonrpc: '2.0', id: call.id });
  const previewed = await callTool(call.tool, call.args, context, deps);
  const preview = previewOf(previewed);
  if (!preview) {
    res.writeHead(200, headers).end(reply(previewed));
    return;
  }
  const rpcId = await askQuestion(deps.db, session, call.tool.name, deps.now(), waitMs);
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  res.writeHead(200, headers);
  const question = { message: confirmationMessage(call.tool.name, preview), requestedSchema: CONFIRM_FORM };
  // 2025-11-25 names the mode; 2025-06-18 has form mode only and no `mode` field.
  res.write(sseEvent({ jsonrpc: '2.0', id: rpcId, method: 'elicitation/create', params: session.protocolVersion === '2025-11-25' ? { mode: 'form', ...question } : question }));
  const keepAlive = setInterval(() => res.write(': waiting for the person\n\n'), KEEP_ALIVE_MS);
  let result: unknown;
  try {
    const answer = await waitForAnswer(deps.db, rpcId, Date.now() + waitMs, gone.signal);
    if (answer?.action === 'accept' && answer.content?.confirm === true) {
      result = await callTool(call.tool, { ...call.args, confirmationToken: preview.confirmationToken }, context, deps);
    } else if (answer) {
      result = await notConfirmed(call.tool, call.args, answer.action === 'cancel' ? 'cancelled' : 'declined', context, deps);
    } else {
      result = errorResult(new AppError('CONFIRMATION_NOT_ANSWERED', `The person did not answer the question about coupon ${preview.code} in shop ${preview.market} in time; nothing was changed. Call ${call.tool.name} again to ask again.`, { tool: call.tool.name }), context.requestId);
    }
  } catch (error) {
    logger.error({ err: error, tool: call.tool.name }, 'confirmation in a session failed');
    result = errorResult(new AppError('INTERNAL_ERROR', 'The confirmation failed; nothing was changed.'), context.requestId);
  } finally {
    clearInterval(keepAlive);
  }
  if (!gone.signal.aborted) res.end(reply(result));
}
