/**
 * Sends one webhook POST with undici, connecting only to addresses verified by addresses.ts: the connector's `lookup`
 * answers with those addresses, so the socket never asks DNS again (no window between check and connect). TLS still
 * verifies the certificate against the URL's host name (SNI). Redirects are never followed; the reply body is not read.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, errors, request } from 'undici';
import type { ResolvedAddress } from './addresses.js';
import { inClientSpan } from '../tracing/spans.js';

export type AttemptOutcome = 'success' | 'http_error' | 'redirect' | 'timeout' | 'connection_error' | 'address_rejected';

export interface SendResult {
  outcome: AttemptOutcome;
  httpStatus: number | null;
  /** A short reason for a failure (an error code, never a body). */
  error: string | null;
  durationMs: number;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls.connect that returns only the verified addresses. */
export function pinnedLookup(addresses: readonly ResolvedAddress[]) {
  return (_hostname: string, options: LookupOptions | number | LookupCallback, callback?: LookupCallback): void => {
    const cb = (typeof options === 'function' ? options : callback) as LookupCallback;
    const opts: LookupOptions = typeof options === 'object' && options !== null ? options : { family: typeof options === 'number' ? options : 0 };
    const family = opts.family === 4 || opts.family === 'IPv4' ? 4 : opts.family === 6 || opts.family === 'IPv6' ? 6 : 0;
    const candidates = family === 0 ? addresses : addresses.filter((a) => a.family === family);
    if (candidates.length === 0) {
      const error: NodeJS.ErrnoException = new Error('no verified address of the requested family');
      error.code = 'ENOTFOUND';
      cb(error, '', 0);
      return;
    }
    if (opts.all) cb(null, candidates.map((a) => ({ address: a.address, family: a.family })));
    else cb(null, candidates[0].address, candidates[0].family);
  };
}

/**
 * Keep-alive connection pools keyed by host name *and* the verified address set: a connection is reused only while
 * the name still resolves to exactly the addresses it was opened to.
 */
const agents = new Map<string, Agent>();
const MAX_AGENTS = 256;

function agentFor(hostname: string, addresses: readonly ResolvedAddress[], timeoutMs: number): Agent {
  const key = `${hostname}|${timeoutMs}|${addresses.map((a) => a.address).sort().join(',')}`;
  let agent = agents.get(key);
  if (!agent) {
    if (agents.size >= MAX_AGENTS) {
      const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
      agents.delete(oldestKey);
      void oldest.close().catch(() => {});
    }
    agent = new Agent({
      connect: { lookup: pinnedLookup(addresses) as never, timeout: timeoutMs },
      keepAliveTimeout: 4_000,
      maxRedirections: 0,
    });
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the pooled connections (worker shutdown, tests). */
export async function closeWebhookAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((a) => a.close().catch(() => {})));
}

function errorCode(error: unknown): string {
  const e = error as { code?: unknown; cause?: { code?: unknown }; name?: string };
  const code = [e.cause?.code, e.code].find((c) => typeof c === 'string');
  return (code as string | undefined) ?? e.name ?? 'error';
}

/**
 * POSTs `body` to `url` over the verified addresses; a 2xx within `timeoutMs` is a success. Never throws. With tracing,
 * the attempt is a CLIENT span `webhook POST` (below the activity that makes it: a delivery workflow's attempt, or the
 * dispatcher's direct batch).
 */
export function postWebhook(opts: Parameters<typeof send>[0]): Promise<SendResult> {
  return inClientSpan('webhook POST', { 'server.address': opts.url.hostname, 'http.request.method': 'POST' }, () => send(opts), (result) => ({
    'store_ops.webhook.outcome': result.outcome, ...(result.httpStatus === null ? {} : { 'http.response.status_code': result.httpStatus }),
  }));
}

async function send(opts: {
  url: URL;
  hostname: string;
  addresses: readonly ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}): Promise<SendResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const response = await request(opts.url, {
      method: 'POST',
      headers: opts.headers,
      body: opts.body,
      dispatcher: agentFor(opts.hostname, opts.addresses, opts.timeoutMs),
      signal: AbortSignal.timeout(opts.timeoutMs),
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      maxRedirections: 0,
    });
    // The reply body is not read (SPEC): it is discarded (up to a small limit, so the connection can be reused).
    response.body.dump({ limit: 64 * 1024 }).catch(() => {});
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { outcome: 'success', httpStatus: status, error: null, durationMs: took() };
    if (status >= 300 && status < 400) return { outcome: 'redirect', httpStatus: status, error: 'redirect not followed', durationMs: took() };
    return { outcome: 'http_error', httpStatus: status, error: null, durationMs: took() };
  } catch (error) {
    const code = errorCode(error);
    // AbortSignal.timeout rejects with a DOMException named TimeoutError (its numeric `code` is not ours).
    const name = (error as { name?: string }).name;
    const timedOut = error instanceof errors.HeadersTimeoutError || error instanceof errors.ConnectTimeoutError
      || name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
    if (timedOut) return { outcome: 'timeout', httpStatus: null, error: `no answer within ${opts.timeoutMs / 1000} s`, durationMs: took() };
    return { outcome: 'connection_error', httpStatus: null, error: code, durationMs: took() };
  }
}
