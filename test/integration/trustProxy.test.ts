/**
 * Proxy headers (S2): X-Forwarded-* are believed only from the proxies TRUST_PROXY names, and with PUBLIC_BASE_URL
 * set every URL the service publishes derives from it alone, whatever a client sends. Behind a trusted HTTPS proxy the
 * session cookie is `__Host-`, Secure, HttpOnly, SameSite=Lax.
 */
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import type { TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  /** PUBLIC_BASE_URL https://ops.example.com, TRUST_PROXY off. */
  published: TestServer;
  /** No PUBLIC_BASE_URL, TRUST_PROXY loopback (the test's requests come from 127.0.0.1, like a proxy on the host). */
  trusting: TestServer;
  /** No PUBLIC_BASE_URL, TRUST_PROXY off. */
  plain: TestServer;
}

const test = anyTest as TestFn<Context>;
const PUBLIC = 'https://ops.example.com';
const FORGED = { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'http', 'X-Forwarded-For': '203.0.113.9', Forwarded: 'host=evil.example;proto=http' };

test.before(async (t) => {
  const database = await createTestDatabase();
  t.context = {
    database,
    published: await startApplicationServer(database.db, testApplicationOptions({ publicBaseUrl: PUBLIC }), { allowedOrigins: [], publicBaseUrl: PUBLIC, localhostOnly: false }),
    trusting: await startApplicationServer(database.db, testApplicationOptions({ trustProxy: ['loopback'] })),
    plain: await startApplicationServer(database.db, testApplicationOptions()),
  };
});

test.after.always(async (t) => {
  await t.context.published?.close();
  await t.context.trusting?.close();
  await t.context.plain?.close();
  await t.context.database?.drop();
});

/** Every string value of a JSON document that looks like a URL. */
function urlsIn(value: unknown): string[] {
  if (typeof value === 'string') return /^[a-z]+:\/\//.test(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(urlsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(urlsIn);
  return [];
}

test('When a client sends X-Forwarded-Host: evil.example with PUBLIC_BASE_URL set, then both metadata documents and the challenge are unchanged', async (t) => {
  const base = t.context.published.baseUrl;
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/.well-known/oauth-protected-resource/api/mcp']) {
    const honest = await (await fetch(`${base}${path}`)).json();
    const forged = await (await fetch(`${base}${path}`, { headers: FORGED })).json();
    t.deepEqual(forged, honest, path);
    const urls = urlsIn(forged);
    t.true(urls.length > 0, path);
    for (const url of urls) t.true(url.startsWith(`${PUBLIC}/`) || url === PUBLIC, `${path}: ${url}`);
  }
  const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server`, { headers: FORGED })).json() as Record<string, string>;
  t.is(metadata.issuer, PUBLIC);
  t.is(metadata.token_endpoint, `${PUBLIC}/oauth/token`);
  t.is(metadata.authorization_endpoint, `${PUBLIC}/oauth/authorize`);
  const challenge = (await fetch(`${base}/api/mcp`, { method: 'POST', headers: { ...FORGED, 'Content-Type': 'application/json' }, body: '{}' })).headers.get('www-authenticate') ?? '';
  t.regex(challenge, /resource_metadata="https:\/\/ops\.example\.com\//);
  t.notRegex(challenge, /evil/);
});

test('When no proxy is trusted, then a forged X-Forwarded-Host or -Proto changes nothing the authorization server publishes', async (t) => {
  const base = t.context.plain.baseUrl;
  const forged = await (await fetch(`${base}/.well-known/oauth-authorization-server`, { headers: { ...FORGED, 'X-Forwarded-Proto': 'https' } })).json() as Record<string, string>;
  t.is(forged.issuer, base);
  t.is(forged.token_endpoint, `${base}/oauth/token`);
  t.false(JSON.stringify(forged).includes('evil'));
});

test('When a trusted proxy forwards a host, then the authorization server still publishes the issuer\'s own URLs, never the forwarded host', async (t) => {
  const base = t.context.trusting.baseUrl;
  const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server`, { headers: { 'X-Forwarded-Host': 'evil.example' } })).json() as Record<string, string>;
  t.is(metadata.issuer, base);
  t.is(metadata.token_endpoint, `${base}/oauth/token`);
  t.false(JSON.stringify(metadata).includes('evil'));
});

test('When a trusted proxy says the request came over HTTPS, then the session cookie is __Host-, Secure, HttpOnly and SameSite=Lax', async (t) => {
  const response = await fetch(`${t.context.trusting.baseUrl}/app/sign-in`, { headers: { 'X-Forwarded-Proto': 'https' } });
  t.is(response.status, 200);
  const cookie = response.headers.getSetCookie().find((line) => line.includes('sid=')) ?? '';
  t.regex(cookie, /^__Host-sid=/);
  t.regex(cookie, /;\s*Secure/i);
  t.regex(cookie, /;\s*HttpOnly/i);
  t.regex(cookie, /;\s*SameSite=Lax/i);
  t.regex(cookie, /;\s*Path=\//i);
  t.notRegex(cookie, /Domain=/i, '__Host- cookies carry no Domain');
});

test('When an untrusted client says the request came over HTTPS, then the cookie stays the plain-http one', async (t) => {
  const response = await fetch(`${t.context.plain.baseUrl}/app/sign-in`, { headers: { 'X-Forwarded-Proto': 'https' } });
  const cookie = response.headers.getSetCookie().find((line) => line.includes('sid=')) ?? '';
  t.regex(cookie, /^sid=/);
  t.notRegex(cookie, /Secure/i);
  // The trusting server without the header is plain http too: the cookie follows the real scheme, not the setting.
  const direct = await fetch(`${t.context.trusting.baseUrl}/app/sign-in`);
  t.regex(direct.headers.getSetCookie().find((line) => line.includes('sid=')) ?? '', /^sid=/);
});
