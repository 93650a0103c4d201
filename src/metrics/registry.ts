/**
 * Prometheus metrics (issue 29, point 3), one registry per process. What a process does itself is counted here as it
 * happens (HTTP requests, MCP calls, webhook attempts); what the whole service has waiting (outbox backlog, pending
 * deliveries, sync lag, e-mail outbox) is read from Postgres when scraped (src/metrics/database.ts), so every process
 * reports the same cluster-wide figure and no counter can drift.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

/** Latency of answered HTTP requests by method, normalised route and status class. */
export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency, by method, route (ids replaced by :id) and status class',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

/** JSON-RPC messages to /api/mcp by method. */
export const mcpRequests = new Counter({
  name: 'mcp_requests_total',
  help: 'JSON-RPC requests to /api/mcp, by method',
  labelNames: ['method'] as const,
  registers: [metricsRegistry],
});

/** tools/call by tool and outcome (`ok`, or the D3 error code). */
export const mcpToolCalls = new Counter({
  name: 'mcp_tool_calls_total',
  help: 'MCP tool calls, by tool and outcome (ok or the error code)',
  labelNames: ['tool', 'outcome'] as const,
  registers: [metricsRegistry],
});

/** Webhook attempts this process made, by outcome. */
export const webhookAttempts = new Counter({
  name: 'webhook_attempts_total',
  help: 'Webhook delivery attempts made by this process, by outcome (delivered or failed)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

const ID_LIKE = /^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z]+_[A-Za-z0-9_-]{6,}|.*\d{3,}.*|.{33,})$/;

/**
 * The route label of a request path: segments that name a record become `:id`, so the label set stays small; a 404
 * (a scan for paths that do not exist) is `unmatched`, so unknown paths cannot grow it either.
 */
export function routeLabel(path: string, status: number): string {
  if (status === 404) return 'unmatched';
  return path.split('/').map((segment) => (segment && ID_LIKE.test(segment) ? ':id' : segment)).join('/') || '/';
}

/** Records one answered request. */
export function observeRequest(method: string, path: string, status: number, seconds: number): void {
  const statusClass = `${Math.min(5, Math.max(1, Math.floor(status / 100)))}xx`;
  httpRequestDuration.observe({ method, route: routeLabel(path, status), status_class: statusClass }, seconds);
}
