/**
 * The one line a minute a running service logs at `info` (issue 29, point 6): what it did since the last line, while
 * every single request is logged at `debug`. Counters are in-process: each process (API, worker, `npm start`) sums
 * what it did itself.
 */
import type { Logger } from 'pino';
import { webhookAttempts } from './metrics/registry.js';

type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

interface Counts {
  requests: Record<StatusClass, number>;
  /** JSON-RPC messages to /api/mcp, and of them the `tools/call`s. */
  mcp: { requests: number; toolCalls: number };
  /** Webhook attempts made and logged by this process. */
  webhookAttempts: { delivered: number; failed: number };
}

const empty = (): Counts => ({ requests: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }, mcp: { requests: 0, toolCalls: 0 }, webhookAttempts: { delivered: 0, failed: 0 } });
let counts = empty();

/** Counts one answered HTTP request (1xx counts as 2xx: nothing to watch there). */
export function countRequest(status: number): void {
  const key = status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : '2xx';
  counts.requests[key] += 1;
}

/** Counts one request to the MCP endpoint; `toolCall` when it was a `tools/call`. */
export function countMcpRequest(toolCall: boolean): void {
  counts.mcp.requests += 1;
  if (toolCall) counts.mcp.toolCalls += 1;
}

/** Counts one webhook attempt this process logged (a receiver's 2xx, or any failure). */
export function countWebhookAttempt(delivered: boolean): void {
  counts.webhookAttempts[delivered ? 'delivered' : 'failed'] += 1;
  webhookAttempts.inc({ outcome: delivered ? 'delivered' : 'failed' });
}

/** The counts since the last call, and starts counting afresh. */
export function takeCounts(): Counts {
  const taken = counts;
  counts = empty();
  return taken;
}

/** Logs the summary line of the last `periodSeconds` at info, and starts counting afresh. */
export function logSummary(log: Logger, periodSeconds: number): void {
  log.info({ ...takeCounts(), periodSeconds }, 'summary');
}

/** Logs the summary every `everyMs` at info; returns the stop. */
export function startLogSummary(log: Logger, everyMs = 60_000): () => Promise<void> {
  takeCounts();
  const timer = setInterval(() => logSummary(log, everyMs / 1000), everyMs);
  timer.unref();
  return async () => clearInterval(timer);
}
