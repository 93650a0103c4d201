/**
 * The spans our own code starts: one per HTTP request (REST, MCP, the application, OAuth), one per MCP message and one
 * per capability run. Requests and messages continue the caller's W3C trace context; without tracing (no provider installed) none is started and the log's
 * `traceId` comes from the caller's `traceparent` alone (O14).
 */
import { context as otelContext, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { AppError } from '../errors.js';
import { tracingInstalled } from './setup.js';

const tracer = trace.getTracer('store-ops');

/** A started span, the context to run its work in, and its trace id (what the log lines carry). */
export interface ActiveSpan {
  span: Span;
  context: Context;
  traceId: string;
}

/** Ends `span` with the HTTP status it answered: a 5xx is an error of ours, a 4xx the caller's (not an error here). */
export function endWithStatus(span: Span, status: number, finished: boolean): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!finished) span.setAttribute('store_ops.aborted', true);
  span.end();
}

/**
 * Runs `fn` in an INTERNAL span `name` (a capability), so what it does (SQL, a workflow start) hangs below it. A
 * thrown AppError is the caller's mistake: its code is an attribute; anything else marks the span as an error.
 * Without tracing it just runs `fn`.
 */
export async function inSpan<T>(name: string, attributes: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  if (!tracingInstalled()) return fn();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof AppError) span.setAttribute('store_ops.error_code', error.code);
      else span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Runs `fn` in a CLIENT span `name` (a call we make to someone else) and adds the attributes `outcome` derives from its
 * result (`fn` never throws: a webhook attempt reports its failure as a result). Without tracing it just runs `fn`.
 */
export async function inClientSpan<T>(name: string, attributes: Record<string, string>, fn: () => Promise<T>, outcome: (result: T) => Record<string, string | number>): Promise<T> {
  if (!tracingInstalled()) return fn();
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      const result = await fn();
      span.setAttributes(outcome(result));
      return result;
    } finally {
      span.end();
    }
  });
}

/** The server span of an HTTP request, its parent the request's `traceparent`/`tracestate` headers; null without tracing. */
export function startRequestSpan(method: string, path: string, headers: Record<string, string | string[] | undefined>, requestId: string): ActiveSpan | null {
  if (!tracingInstalled()) return null;
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path, 'store_ops.request_id': requestId } }, parent);
  return { span, context: trace.setSpan(parent, span), traceId: span.spanContext().traceId };
}

/**
 * The span of one MCP message (`mcp tools/call orders_list`). SEP-414: a valid `params._meta.traceparent` names the
 * message's own trace, so it is the parent (the HTTP request's span becomes a link); otherwise the HTTP request's span
 * is. Null without tracing.
 */
export function startMcpMessageSpan(rpcMethod: string | undefined, tool: string | undefined, meta: { traceparent?: unknown; tracestate?: unknown } | undefined): ActiveSpan | null {
  if (!tracingInstalled()) return null;
  const requestContext = otelContext.active();
  const carrier: Record<string, string> = {};
  if (typeof meta?.traceparent === 'string') carrier.traceparent = meta.traceparent;
  if (typeof meta?.tracestate === 'string') carrier.tracestate = meta.tracestate;
  const fromMeta = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier));
  const requestSpan = trace.getSpanContext(requestContext);
  const parent = fromMeta ? trace.setSpanContext(ROOT_CONTEXT, fromMeta) : requestContext;
  const name = ['mcp', rpcMethod ?? 'unknown', tool].filter(Boolean).join(' ');
  const span = tracer.startSpan(name, {
    kind: fromMeta ? SpanKind.SERVER : SpanKind.INTERNAL,
    attributes: { 'rpc.system': 'jsonrpc', 'rpc.method': rpcMethod ?? 'unknown', ...(tool ? { 'mcp.tool.name': tool } : {}) },
    links: fromMeta && requestSpan ? [{ context: requestSpan }] : [],
  }, parent);
  return { span, context: trace.setSpan(parent, span), traceId: span.spanContext().traceId };
}
