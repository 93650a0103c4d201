/** The application (/app) on port 0 with a real clock, people made through the service's own code, and a cookie-keeping client. */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createApp } from '../../api/app.js';
import type { ApplicationOptions } from '../../api/app/index.js';
import { createHttpServer } from '../../api/http/server.js';
import type { McpOptions } from '../../api/mcp/router.js';
import type { Db } from '../../src/db/knex.js';
import { createPerson } from '../../src/people/people.js';
import type { Role } from '../../src/people/model.js';
import { findAccountByCode } from '../../src/queries/shops.js';
import { systemResolver } from '../../src/webhooks/addresses.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import type { TestServer, WriteDeps } from './server.js';
import { testAppDeps } from './service.js';

export const TEST_PASSWORD = 'correct horse battery staple';

export function testApplicationOptions(overrides: Partial<ApplicationOptions> = {}): ApplicationOptions & { key: Buffer } {
  const key = crypto.randomBytes(32);
  return { key, secretsKey: () => key, allowLoopback: true, resolve: systemResolver, signInAttemptsPerWindow: 1000, registrationsPerMinute: 1000, ...overrides };
}

/**
 * Starts the whole HTTP app (REST, MCP, /app) with the real clock: sessions, TOTP and tokens need real time. `app` is
 * the Express app it serves (its router stack lists the routes it registers).
 */
export async function startApplicationServer(db: Db, application: ApplicationOptions, mcp?: McpOptions, writes: WriteDeps = {}): Promise<TestServer & { app: Express }> {
  const app = createApp(testAppDeps(db, () => new Date(), writes, { mcp, application }));
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    app,
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The CSRF token of the first form in `html` (every form of the application carries one). */
export const csrfOf = (html: string): string => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** An integration file's `test` over the application: a copy of the demo database and the app's server for the file. */
export function applicationServerTest(): TestFn<{ database: TestDatabase; server: TestServer }> {
  const test = anyTest as TestFn<{ database: TestDatabase; server: TestServer }>;
  test.before(async (t) => {
    const database = await createTestDatabase();
    t.context = { database, server: await startApplicationServer(database.db, testApplicationOptions()) };
  });
  test.after.always(async (t) => {
    await t.context.server?.close();
    await t.context.database?.drop();
  });
  return test;
}

export interface PersonOptions {
  account?: string;
  role?: Role;
  permissions?: string[];
  shops?: string[] | null;
  email?: string;
}

/** Creates a person through the service (as `people create` does); returns the e-mail and password. */
export async function makePerson(db: Db, options: PersonOptions = {}): Promise<{ id: string; email: string; password: string }> {
  const account = await findAccountByCode(db, options.account ?? 'demo');
  if (!account) throw new Error(`no account ${options.account}`);
  const email = options.email ?? `p${crypto.randomBytes(5).toString('hex')}@example.com`;
  const { id } = await createPerson(db, {
    accountId: account.id, email, password: TEST_PASSWORD, role: options.role ?? 'owner', permissions: options.permissions ?? [], shops: options.shops ?? null,
  });
  return { id, email, password: TEST_PASSWORD };
}

/** A tiny browser-like HTTP client: keeps cookies, does not follow redirects, reads the CSRF token of a page. */
export class FormClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  async request(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string }> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('Cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(`${this.baseUrl}${path}`, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (attributes.some((a) => /expires=Thu, 01 Jan 1970/i.test(a)) || value === '') this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value);
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  get(path: string) {
    return this.request(path);
  }

  /** POSTs a form; `_csrf` is taken from `csrfFrom` (a page's HTML) unless given. */
  post(path: string, form: Record<string, string | string[]>, extraHeaders: Record<string, string> = {}) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    return this.request(path, { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: this.baseUrl, ...extraHeaders } });
  }

  /** Opens a page and returns its CSRF token. */
  async csrf(path = '/app/sign-in'): Promise<string> {
    const page = await this.get(path);
    const match = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!match) throw new Error(`no CSRF token on ${path} (status ${page.status})`);
    return match[1];
  }

  async signIn(email: string, password: string): Promise<{ status: number; location: string | null }> {
    const _csrf = await this.csrf('/app/sign-in');
    const response = await this.post('/app/sign-in', { _csrf, email, password, next: '/app' });
    return { status: response.status, location: response.headers.get('location') };
  }
}
