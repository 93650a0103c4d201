/** The service's own log lines, captured while a test runs (the real pino logger, its stream swapped for the time). */
import { pino } from 'pino';
import { logger } from '../../src/logger.js';

/** Every line the service's logger writes while `fn` runs, at `level`. */
export async function captured(level: string, fn: () => Promise<void>): Promise<Record<string, any>[]> {
  const lines: string[] = [];
  const stream = logger as unknown as Record<symbol, unknown>;
  const original = stream[pino.symbols.streamSym];
  const previousLevel = logger.level;
  stream[pino.symbols.streamSym] = { write: (line: string) => void lines.push(line) };
  logger.level = level;
  try {
    await fn();
    // A request's line is written when its response finished, which may be just after the client has the answer.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    stream[pino.symbols.streamSym] = original;
    logger.level = previousLevel;
  }
  return lines.map((line) => JSON.parse(line));
}

/** The access-log lines among `lines`. */
export const requestLines = (lines: Record<string, any>[]) => lines.filter((line) => line.msg === 'request');
