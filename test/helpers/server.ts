/** The real HTTP application on port 0 over a test database, plus helpers to issue keys and call it. */
import type { AddressInfo } from 'node:net';
import { createApp, type AppDeps } from '../../api/app.js';
import type { McpOptions } from '../../api/mcp/router.js';
import { createAccessKey } from '../../src/auth/keys.js';
import { allScopes, type Interface, type Scope, type WriteMode } from '../../src/auth/scopes.js';
import type { Db } from '../../src/db/knex.js';
import { findAccountByCode } from '../../src/queries/shops.js';
import { TEST_NOW } from './constants.js';
import { testAppDeps } from './service.js';
import { createHttpServer } from '../../api/http/server.js';

export interface TestServer {
  baseUrl: string;
  close: () => Promise<void>;
}

/** What write capabilities need beside the database: the platform adapters and Temporal. */
export type WriteDeps = Pick<AppDeps, 'platforms' | 'temporal'>;

/** Starts the application on a free port; `mcp` sets the MCP origin and host rules of a deployment. */
export async function startTestServer(db: Db, now: () => Date = () => TEST_NOW, mcp?: McpOptions, writes: WriteDeps = {}): Promise<TestServer> {
  const app = createApp(testAppDeps(db, now, writes, { mcp }));
  const server = createHttpServer(app);
  // Keep-alive: createHttpServer keeps idle sockets 65 s, longer than the client (undici, 4 s) ever does.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface KeyOptions {
  account?: string;
  scopes?: readonly Scope[];
  interfaces?: Interface[];
  shops?: string[] | null;
  expiresAt?: Date | null;
  writeMode?: WriteMode;
}

/** Issues a real access key through the same code the CLI uses. */
export async function issueKey(db: Db, options: KeyOptions = {}): Promise<string> {
  const account = await findAccountByCode(db, options.account ?? 'demo');
  if (!account) throw new Error(`no account ${options.account}`);
  const { key } = await createAccessKey(db, {
    accountId: account.id,
    name: 'test',
    scopes: [...(options.scopes ?? allScopes)],
    interfaces: options.interfaces ?? ['rest', 'mcp'],
    shopCodes: options.shops ?? null,
    expiresAt: options.expiresAt ?? null,
    createdBy: 'test',
    writeMode: options.writeMode,
  });
  return key;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** GET (or another method) against the REST API with a key. */
export async function api<T = any>(server: TestServer, path: string, key?: string, init: RequestInit = {}): Promise<ApiResponse<T>> {
  const headers = new Headers(init.headers);
  if (key) headers.set('Authorization', `Bearer ${key}`);
  const response = await fetch(`${server.baseUrl}/api/v1${path}`, { ...init, headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}
