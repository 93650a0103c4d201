/** Structured JSON logs (pino); every line written inside a request carries its request id. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

interface LogContext { requestId?: string; traceId?: string }
const logContext = new AsyncLocalStorage<LogContext>();

/** Runs fn with a request id that every log line inside it will carry. */
export function withLogContext<T>(context: LogContext, fn: () => T): T {
  return logContext.run(context, fn);
}

/** Sets the trace id of the current context (the MCP router learns it from the body, after the context began). */
export function setLogTraceId(traceId: string): void {
  const store = logContext.getStore();
  if (store) store.traceId = traceId;
}

/** Adds the current request id and trace id (if any) to every line. */
export const logMixin = (): LogContext => logContext.getStore() ?? {};

/** Secrets never reach the log, even if someone logs a request or a key by mistake. */
export const logRedaction = { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret', '*.secret'], censor: '[redacted]' };

export const logger: Logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'store-ops' },
  timestamp: pino.stdTimeFunctions.isoTime,
  mixin: logMixin,
  redact: logRedaction,
});
