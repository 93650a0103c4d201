/** Structured JSON logs (pino); every line written inside a request carries its request id. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

interface LogContext { requestId?: string }
const logContext = new AsyncLocalStorage<LogContext>();

/** Runs fn with a request id that every log line inside it will carry. */
export function withLogContext<T>(context: LogContext, fn: () => T): T {
  return logContext.run(context, fn);
}

/** Adds the current request id (if any) to every line. */
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
