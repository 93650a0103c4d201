/**
 * 2025-era sessions (issue 26.3, ME decisions): a 2025-06-18 or 2025-11-25 client that declares elicitation in
 * `initialize` gets an `Mcp-Session-Id`, so a later tools/call can ask its person (`elicitation/create` on the call's
 * SSE stream). The session and every question asked on it are rows in Postgres (migration 098), never a process's
 * memory: any API process answers any request of a session, and an answer POSTed to another process reaches the call
 * that waits for it by the question's row.
 */
import crypto from 'node:crypto';
import type { Caller } from '../../src/capabilities/context.js';
import type { Db } from '../../src/db/knex.js';

/** A session unused this long ends by itself (the client then initializes again, as the 2025 transports prescribe). */
export const SESSION_IDLE_MS = 60 * 60 * 1000;
/** How often a waiting call reads its question's row: a person answers in seconds, not milliseconds. */
export const ANSWER_POLL_MS = 250;

/** The 2025 revisions that have `elicitation/create` (2025-03-26 has none). */
const ELICITING_VERSIONS = new Set(['2025-06-18', '2025-11-25']);

export interface McpSession {
  idHash: string;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
}

export interface QuestionAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content: Record<string, unknown> | null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The credential as proposals and tasks name it: `key:<id>` or `oauth:<id>`. */
export function credentialOf(caller: Caller): string {
  return `${caller.credentialType === 'oauth' ? 'oauth' : 'key'}:${caller.credentialId}`;
}

/** The session id is never stored: only its SHA-256. */
export function sessionHash(id: string): string {
  return crypto.createHash('sha256').update(id).digest('hex');
}

/** Whether these declared client capabilities include form-mode elicitation (`elicitation: {}` means form mode). */
export function declaresFormElicitation(capabilities: unknown): boolean {
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  if (!isObject(elicitation)) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/**
 * For a 2025-era `initialize` whose client can be asked (a revision with elicitation, form mode declared): the
 * revision and capabilities to record. Null for every other message, which keeps the stateless exchange of T-decisions.
 */
export function sessionWorthyInitialize(body: unknown): { protocolVersion: string; capabilities: Record<string, unknown> } | null {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'initialize' || !isObject(body.params)) return null;
  const { protocolVersion, capabilities } = body.params;
  if (typeof protocolVersion !== 'string' || !ELICITING_VERSIONS.has(protocolVersion) || !declaresFormElicitation(capabilities)) return null;
  return { protocolVersion, capabilities: capabilities as Record<string, unknown> };
}

/** Records a new session of this caller and returns its id (visible ASCII, 32 random bytes). */
export async function openSession(db: Db, caller: Caller, protocolVersion: string, capabilities: Record<string, unknown>, now: Date): Promise<string> {
  const id = crypto.randomBytes(32).toString('base64url');
  // Sessions over a day past their end go as new ones come: no job of their own, and the expiry index finds them.
  await db('mcp_sessions').where('expires_at', '<', new Date(now.getTime() - 24 * 60 * 60 * 1000)).delete();
  await db('mcp_sessions').insert({
    id_hash: sessionHash(id),
    account_id: caller.account.id,
    credential: credentialOf(caller),
    protocol_version: protocolVersion,
    client_capabilities: JSON.stringify(capabilities),
    created_at: now,
    last_seen_at: now,
    expires_at: new Date(now.getTime() + SESSION_IDLE_MS),
  });
  return id;
}

/**
 * The live session with this id of this caller's credential, its idle time renewed; null when it never existed,
 * ended, expired, or belongs to another credential (all "not found": a session id is no capability of its own).
 */
export async function useSession(db: Db, id: string, caller: Caller, now: Date): Promise<McpSession | null> {
  const rows = await db('mcp_sessions')
    .where({ id_hash: sessionHash(id), account_id: caller.account.id, credential: credentialOf(caller) })
    .whereNull('ended_at')
    .where('expires_at', '>', now)
    .update({ last_seen_at: now, expires_at: new Date(now.getTime() + SESSION_IDLE_MS) })
    .returning(['id_hash', 'protocol_version', 'client_capabilities']) as Array<{ id_hash: string; protocol_version: string; client_capabilities: Record<string, unknown> }>;
  const row = rows[0];
  return row ? { idHash: row.id_hash, protocolVersion: row.protocol_version, clientCapabilities: row.client_capabilities } : null;
}

/** Ends the session (HTTP DELETE); its open questions go with it, so a call waiting on one stops waiting. */
export async function endSession(db: Db, id: string, caller: Caller, now: Date): Promise<boolean> {
  const ended = await db('mcp_sessions')
    .where({ id_hash: sessionHash(id), account_id: caller.account.id, credential: credentialOf(caller) })
    .whereNull('ended_at')
    .update({ ended_at: now });
  if (ended > 0) await db('mcp_session_questions').where({ session_hash: sessionHash(id) }).whereNull('answered_at').delete();
  return ended > 0;
}

/** Records a question about to be sent on the session; returns the JSON-RPC id of the `elicitation/create` request. */
export async function askQuestion(db: Db, session: McpSession, tool: string, now: Date, waitMs: number): Promise<string> {
  const rpcId = `confirm-${crypto.randomUUID()}`;
  await db('mcp_session_questions').insert({ rpc_id: rpcId, session_hash: session.idHash, tool, created_at: now, expires_at: new Date(now.getTime() + waitMs) });
  return rpcId;
}

/**
 * A JSON-RPC response POSTed on a session (`{id, result}` or `{id, error}`, no method): the answer to one of our
 * questions. Returns the question's id and the answer (an error response counts as cancel), or null for any other body.
 */
export function postedAnswer(body: unknown): { rpcId: string; answer: QuestionAnswer } | null {
  if (!isObject(body) || body.jsonrpc !== '2.0' || 'method' in body || typeof body.id !== 'string') return null;
  if ('error' in body) return { rpcId: body.id, answer: { action: 'cancel', content: null } };
  const result = body.result;
  if (!isObject(result) || (result.action !== 'accept' && result.action !== 'decline' && result.action !== 'cancel')) return null;
  return { rpcId: body.id, answer: { action: result.action, content: isObject(result.content) ? result.content : null } };
}

/** Stores the answer to an open question of this session; false when there is none (unknown, answered or withdrawn). */
export async function recordAnswer(db: Db, session: McpSession, rpcId: string, answer: QuestionAnswer, now: Date): Promise<boolean> {
  const updated = await db('mcp_session_questions')
    .where({ rpc_id: rpcId, session_hash: session.idHash })
    .whereNull('answered_at')
    .update({ action: answer.action, content: answer.content === null ? null : JSON.stringify(answer.content), answered_at: now });
  return updated > 0;
}

/**
 * Waits for the answer by reading the question's row (whichever process received it), until `deadline` (epoch ms,
 * the real clock) or `signal` aborts. The row is removed either way: a question is answered once. Null = no answer
 * (timed out, withdrawn by the client's disconnect, or the session ended).
 */
export async function waitForAnswer(db: Db, rpcId: string, deadline: number, signal: AbortSignal): Promise<QuestionAnswer | null> {
  try {
    for (;;) {
      const row = await db('mcp_session_questions').where({ rpc_id: rpcId }).first('action', 'content', 'answered_at') as { action: QuestionAnswer['action'] | null; content: Record<string, unknown> | null } | undefined;
      if (!row) return null;
      if (row.action) return { action: row.action, content: row.content };
      if (signal.aborted || Date.now() >= deadline) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(ANSWER_POLL_MS, Math.max(0, deadline - Date.now())));
        signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
      });
    }
  } finally {
    await db('mcp_session_questions').where({ rpc_id: rpcId }).delete();
  }
}
