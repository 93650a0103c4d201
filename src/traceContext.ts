/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the trace id of a `traceparent`, so our log lines join the
 * caller's trace (issue 26 point 5). A malformed value is ignored — tracing never fails a request.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The 32-hex trace id of a valid `traceparent`, else null (version ff, all-zero ids, extra fields on version 00). */
export function traceIdOf(traceparent: unknown): string | null {
  if (typeof traceparent !== 'string' || traceparent.length > 512) return null;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (!match) return null;
  const [, version, traceId, parentId, , rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return null;
  return traceId!;
}
