/** REST calls and error assertions shared by the test files (one copy, issue 22 point 6). */
import type { ExecutionContext } from 'ava';
import { api, type ApiResponse, type TestServer } from './server.js';

/** What a file's context needs for `get`: its running server and its default key. */
export interface RestContext {
  server: TestServer;
  key: string;
}

/** GET `path` under /api/v1 with the file's key (or `key`; `null` sends no credential). */
export function get(t: { context: RestContext }, path: string, key: string | null = t.context.key, init?: RequestInit): Promise<ApiResponse<any>> {
  return api(t.context.server, path, key ?? undefined, init);
}

/** The response is the documented error: this HTTP status and this error code (D3), with the body in the message. */
export function assertError(t: ExecutionContext<any>, res: { status: number; body: any }, status: number, code: string): void {
  t.is(res.status, status, JSON.stringify(res.body));
  t.is(res.body?.error?.code, code, JSON.stringify(res.body));
}

/** assertError plus the envelope every REST error has: a message, and the request id both in meta and the header. */
export function assertErrorEnvelope(t: ExecutionContext<any>, res: { status: number; body: any; headers: Headers }, status: number, code: string): void {
  assertError(t, res, status, code);
  t.is(typeof res.body.error.message, 'string');
  t.truthy(res.body.meta.requestId);
  t.is(res.headers.get('request-id'), res.body.meta.requestId);
}
