/**
 * What the authorization server refuses (issue 22 point 4, issue 23 point 3), each its own test, over raw HTTP as a
 * client would send it: no PKCE, `plain`, a wrong verifier, an unregistered redirect_uri, a code used twice, a reused
 * refresh token, a token for another resource; plain-http redirect URIs off loopback; registration floods; fetches of
 * private addresses. And what it must accept: an authorization request without `scope` reaches consent.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { FormClient, makePerson, startApplicationServer, testApplicationOptions, csrfOf } from '../helpers/application.js';
import { fakeDns } from '../helpers/webhooks.js';
import type { TestServer } from '../helpers/server.js';
import { modernRequest, rawMcp } from '../helpers/mcp.js';
import { artifactKey } from '../../src/oauth/adapter.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  /** Registration limited to 3 per minute. */
  throttled: TestServer;
  owner: { email: string; password: string };
}

const test = anyTest as TestFn<Context>;
const REDIRECT = 'http://127.0.0.1:9/callback';
/** Every address the authorization server tried to fetch. */
const fetched: string[] = [];

test.before(async (t) => {
  const database = await createTestDatabase();
  const oauthFetch = (async (input: string | URL | Request) => {
    fetched.push(String(input instanceof Request ? input.url : input));
    return new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } });
  }) as typeof fetch;
  const resolve = fakeDns({ 'keys.example.com': ['93.184.215.14'], 'internal.example.com': ['10.1.2.3'] }).resolve;
  t.context = {
    database,
    server: await startApplicationServer(database.db, testApplicationOptions({ resolve, oauthFetch })),
    // The service's own default (S3: 10 per client address per minute), not a test value.
    throttled: await startApplicationServer(database.db, testApplicationOptions({ resolve, oauthFetch, registrationsPerMinute: undefined })),
    owner: await makePerson(database.db, { role: 'owner' }),
  };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.throttled?.close();
  await t.context.database?.drop();
});


async function register(base: string, metadata: Record<string, unknown> = {}) {
  const response = await fetch(`${base}/oauth/register`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Raw Client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native', ...metadata }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() as any };
}

function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

/** Follows redirects inside the service with the person's cookies until a page or the client's redirect URI. */
async function follow(person: FormClient, start: string): Promise<{ path: string; text: string; status: number; callback: URL | null }> {
  let location = start;
  for (let hops = 0; hops < 10; hops++) {
    const url = new URL(location, person.baseUrl);
    if (url.origin !== person.baseUrl) return { path: location, text: '', status: 0, callback: url };
    const response = await person.get(`${url.pathname}${url.search}`);
    if (response.status >= 300 && response.status < 400) {
      location = response.headers.get('location')!;
      continue;
    }
    return { path: `${url.pathname}${url.search}`, text: response.text, status: response.status, callback: null };
  }
  throw new Error('too many redirects');
}

function authorizeQuery(t: { context: Context }, clientId: string, challenge: string | null, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'orders:read', resource: `${t.context.server.baseUrl}/api/mcp`, state: 'st', ...extra });
  if (challenge) {
    query.set('code_challenge', challenge);
    query.set('code_challenge_method', 'S256');
  }
  return `/oauth/authorize?${query}`;
}

/** The whole authorization as the owner, consenting to orders:read; returns the code and the verifier. */
async function authorizationCode(t: { context: Context }, clientId: string, browser?: FormClient) {
  const { verifier, challenge } = pkce();
  const person = browser ?? new FormClient(t.context.server.baseUrl);
  if (!browser) await person.signIn(t.context.owner.email, t.context.owner.password);
  const consent = await follow(person, authorizeQuery(t, clientId, challenge));
  if (!consent.path.startsWith('/app/consent/')) throw new Error(`no consent: ${consent.path} ${consent.text.slice(0, 300)}`);
  const posted = await person.post(consent.path, { _csrf: csrfOf(consent.text), decision: 'allow', scopes: 'orders:read', shopChoice: 'all', writeMode: 'read_only' });
  const done = await follow(person, posted.headers.get('location')!);
  const code = done.callback?.searchParams.get('code');
  if (!code) throw new Error(`no code: ${done.callback ?? done.path}`);
  return { code, verifier, person };
}

async function token(t: { context: Context }, form: Record<string, string>) {
  const response = await fetch(`${t.context.server.baseUrl}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: response.status, body: await response.json() as any };
}

const exchange = (t: { context: Context }, clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) =>
  token(t, { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: `${t.context.server.baseUrl}/api/mcp`, ...extra });

async function mcpStatus(t: { context: Context }, accessToken: string) {
  const list = modernRequest('tools/list', {}, accessToken);
  return (await rawMcp(t.context.server, list.body, list.headers)).status;
}

/** The error the authorization endpoint sends back to the client's redirect URI (the library redirects it). */
async function authorizeError(t: { context: Context }, path: string) {
  const response = await fetch(`${t.context.server.baseUrl}${path}`, { redirect: 'manual' });
  const location = response.headers.get('location');
  return { status: response.status, callback: location ? new URL(location, t.context.server.baseUrl) : null, text: location ? '' : await response.text() };
}

test('When an authorization request has no PKCE challenge, then it is refused with invalid_request', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const refused = await authorizeError(t, authorizeQuery(t, body.client_id, null));
  t.is(refused.callback?.origin, 'http://127.0.0.1:9');
  t.is(refused.callback?.searchParams.get('error'), 'invalid_request');
  t.regex(refused.callback?.searchParams.get('error_description') ?? '', /PKCE/);
});

test('When an authorization request uses the plain PKCE method, then it is refused', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const refused = await authorizeError(t, authorizeQuery(t, body.client_id, null, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }));
  t.is(refused.callback?.searchParams.get('error'), 'invalid_request');
  t.regex(refused.callback?.searchParams.get('error_description') ?? '', /code_challenge_method|plain|S256/);
});

test('When the code is exchanged with a wrong verifier, then it is refused with invalid_grant', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const { code, verifier } = await authorizationCode(t, body.client_id);
  const wrong = await exchange(t, body.client_id, code, pkce().verifier);
  t.is(wrong.status, 400);
  t.is(wrong.body.error, 'invalid_grant');
  t.is(wrong.body.access_token, undefined);
  // The other side: the right verifier would have worked (a fresh code, as the first was spent by the attempt or not).
  const again = await authorizationCode(t, body.client_id);
  t.is((await exchange(t, body.client_id, again.code, again.verifier)).status, 200);
  t.truthy(verifier);
});

test('When the redirect_uri is not one the client registered, then the person sees an error page and nothing is sent there', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const { challenge } = pkce();
  const refused = await authorizeError(t, authorizeQuery(t, body.client_id, challenge, { redirect_uri: 'http://127.0.0.1:9/elsewhere' }));
  t.is(refused.callback, null, 'never redirected to an unregistered address');
  t.is(refused.status, 400);
  t.regex(refused.text, /invalid_redirect_uri|redirect_uri/);
});

test('When a code is used twice, then the second exchange is refused and the tokens of the first stop working', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const { code, verifier } = await authorizationCode(t, body.client_id);
  const first = await exchange(t, body.client_id, code, verifier);
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(await mcpStatus(t, first.body.access_token), 200);
  const second = await exchange(t, body.client_id, code, verifier);
  t.is(second.status, 400);
  t.is(second.body.error, 'invalid_grant');
  t.is(await mcpStatus(t, first.body.access_token), 401, 'a replayed code revokes what it issued');
});

test('When a refresh token is used again after rotation, then it is refused and the grant with its access tokens ends', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const { code, verifier } = await authorizationCode(t, body.client_id);
  const issued = await exchange(t, body.client_id, code, verifier);
  const rotated = await token(t, { grant_type: 'refresh_token', client_id: body.client_id, refresh_token: issued.body.refresh_token });
  t.is(rotated.status, 200, JSON.stringify(rotated.body));
  t.is(await mcpStatus(t, rotated.body.access_token), 200);
  const reused = await token(t, { grant_type: 'refresh_token', client_id: body.client_id, refresh_token: issued.body.refresh_token });
  t.is(reused.status, 400);
  t.is(reused.body.error, 'invalid_grant');
  t.is(await mcpStatus(t, rotated.body.access_token), 401, 'reuse ends the whole grant');
  t.is((await token(t, { grant_type: 'refresh_token', client_id: body.client_id, refresh_token: rotated.body.refresh_token })).status, 400);
});

test('When a token is asked for another resource, then it is refused with invalid_target', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const { code, verifier } = await authorizationCode(t, body.client_id);
  const other = await exchange(t, body.client_id, code, verifier, { resource: 'https://other.example/api/mcp' });
  t.is(other.status, 400);
  t.is(other.body.error, 'invalid_target');
  const { challenge } = pkce();
  const atAuthorize = await authorizeError(t, authorizeQuery(t, body.client_id, challenge, { resource: 'https://other.example/api/mcp' }));
  t.is(atAuthorize.callback?.searchParams.get('error'), 'invalid_target');
});

test('When the refresh token is revoked, then its access token stops working too', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const { code, verifier } = await authorizationCode(t, body.client_id);
  const issued = await exchange(t, body.client_id, code, verifier);
  t.is(await mcpStatus(t, issued.body.access_token), 200);
  const revoked = await fetch(`${t.context.server.baseUrl}/oauth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: issued.body.refresh_token, client_id: body.client_id }) });
  t.is(revoked.status, 200);
  t.is(await mcpStatus(t, issued.body.access_token), 401);
});

test('When an authorization request names no scope, then it reaches consent, which offers the scopes the person may grant', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const member = await makePerson(t.context.database.db, { role: 'member', permissions: [] });
  const person = new FormClient(t.context.server.baseUrl);
  await person.signIn(member.email, member.password);
  const query = new URLSearchParams({ response_type: 'code', client_id: body.client_id, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: `${t.context.server.baseUrl}/api/mcp`, state: 's' });
  const consent = await follow(person, `/oauth/authorize?${query}`);
  t.regex(consent.path, /^\/app\/consent\//, `${consent.path} ${consent.text.slice(0, 300)}`);
  const offered = [...consent.text.matchAll(/name="scopes" value="([^"]+)"/g)].map((m) => m[1]);
  t.true(offered.includes('orders:read'));
  t.false(offered.includes('purchase-prices:read'), 'not what the person lacks');
  t.false(offered.includes('coupons:write'), 'no write scope without coupons:manage');
  // S1: the person may not hand out autonomous writing, and a forged form asking for it is refused.
  t.notRegex(consent.text, /value="autonomous"/);
  const forged = await person.post(consent.path, { _csrf: csrfOf(consent.text), decision: 'allow', scopes: 'product-content:read', shopChoice: 'all', writeMode: 'autonomous' });
  t.is(forged.status, 400);
  t.regex(forged.text, /autonomous/);
  const allowed = await person.post(consent.path, { _csrf: csrfOf(consent.text), decision: 'allow', scopes: 'orders:read', shopChoice: 'all', writeMode: 'proposals' });
  const done = await follow(person, allowed.headers.get('location')!);
  t.truthy(done.callback?.searchParams.get('code'), String(done.callback));
});

test('When a client registers a plain-http redirect URI off loopback or a custom scheme, then registration is refused; https and loopback http pass', async (t) => {
  // As a native app and as a web app (which the library itself lets use plain http anywhere): our rule holds for both.
  for (const application_type of ['native', 'web']) {
    for (const uri of ['http://client.example.com/callback', 'http://10.0.0.5/callback', 'myapp:/callback', 'javascript:alert(1)', 'https://client.example.com/callback#frag']) {
      const refused = await register(t.context.server.baseUrl, { redirect_uris: [uri], application_type });
      t.is(refused.status, 400, `${application_type} ${uri}`);
      t.is(refused.body.error, 'invalid_redirect_uri', `${application_type} ${uri}`);
    }
    for (const uri of ['https://client.example.com/callback', 'http://127.0.0.1:8123/cb', 'http://localhost/cb', 'http://[::1]:7000/cb']) {
      t.is((await register(t.context.server.baseUrl, { redirect_uris: [uri], application_type })).status, 201, `${application_type} ${uri}`);
    }
  }
});

test('When registrations flood in from one address, then ten a minute are accepted and the eleventh is refused with 429 (S3)', async (t) => {
  const answers = [];
  for (let i = 0; i < 11; i++) answers.push(await register(t.context.throttled.baseUrl));
  t.deepEqual(answers.map((a) => a.status), [...Array(10).fill(201), 429]);
  // The window is one minute, as the policy header states it (no waiting for a minute to pass).
  t.regex(answers[0].headers.get('ratelimit-policy') ?? '', /;\s*q=10;\s*w=60\b/);
});

/** A private_key_jwt client assertion (never validly signed: the server must fetch the client's keys to find that out). */
function clientAssertion(base: string, clientId: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const payload = { iss: clientId, sub: clientId, aud: [base, `${base}/oauth/token`], exp: Math.floor(Date.now() / 1000) + 60, jti: crypto.randomUUID() };
  return `${part({ alg: 'ES256', typ: 'JWT' })}.${part(payload)}.${Buffer.alloc(64).toString('base64url')}`;
}

/** Registers a private_key_jwt client with `jwksUri` and authenticates as it at the token endpoint (where its keys are read). */
async function authenticateWithKeysAt(base: string, jwksUri: string): Promise<number> {
  const registered = await register(base, { jwks_uri: jwksUri, token_endpoint_auth_method: 'private_key_jwt' });
  if (registered.status !== 201) throw new Error(`registration with jwks_uri ${jwksUri}: ${registered.status} ${JSON.stringify(registered.body)}`);
  const response = await fetch(`${base}/oauth/token`, {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token', refresh_token: 'none', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: clientAssertion(base, registered.body.client_id),
    }),
  });
  return response.status;
}

test.serial('When a client names a jwks_uri or sector_identifier_uri on a private address, then the server never fetches it; on a public address it does', async (t) => {
  const base = t.context.server.baseUrl;
  fetched.length = 0;
  // The other side first, so the recorder is known to see the server's fetches: a public address is fetched.
  t.is(await authenticateWithKeysAt(base, 'https://keys.example.com/jwks.json'), 401, 'no valid key there: the assertion is refused');
  t.true(fetched.includes('https://keys.example.com/jwks.json'), `the keys were read at the token endpoint: ${fetched.join(',')}`);
  t.is((await register(base, { sector_identifier_uri: 'https://keys.example.com/sector.json' })).status, 400, 'its answer is not the list of redirect URIs');
  t.true(fetched.includes('https://keys.example.com/sector.json'), `the sector document was read at registration: ${fetched.join(',')}`);
  // Private addresses: the same steps, and nothing is opened.
  for (const jwksUri of ['https://internal.example.com/jwks.json', 'https://127.0.0.1/jwks.json']) {
    t.is(await authenticateWithKeysAt(base, jwksUri), 401, jwksUri);
  }
  for (const sectorUri of ['https://127.0.0.1/sector.json', 'https://internal.example.com/sector.json']) {
    t.is((await register(base, { sector_identifier_uri: sectorUri })).status, 400, sectorUri);
  }
  t.deepEqual(fetched.filter((url) => url.includes('internal.example.com') || url.includes('127.0.0.1')), []);
});

test('When a second authorization in the same browser ends the first one\'s refresh token, then the first access token ends too', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const first = await authorizationCode(t, body.client_id);
  const firstTokens = await exchange(t, body.client_id, first.code, first.verifier);
  t.is(await mcpStatus(t, firstTokens.body.access_token), 200);
  const second = await authorizationCode(t, body.client_id, first.person);
  const secondTokens = await exchange(t, body.client_id, second.code, second.verifier);
  t.is(await mcpStatus(t, secondTokens.body.access_token), 200);
  const refresh = await token(t, { grant_type: 'refresh_token', client_id: body.client_id, refresh_token: firstTokens.body.refresh_token });
  const access = await mcpStatus(t, firstTokens.body.access_token);
  // Never half: a refused refresh token and a working access token of the same authorization.
  t.is(refresh.status === 400, access === 401, `refresh ${refresh.status}, access ${access}`);
  // The binding itself: once the session a token was issued under is gone, the token is refused.
  const payload = await t.context.database.db('oauth_artifacts').where({ kind: 'AccessToken', id: artifactKey(secondTokens.body.access_token) }).first('payload');
  const sessionUid = payload?.payload?.sessionUid;
  t.truthy(sessionUid, 'the library binds the token to the sign-in session');
  await t.context.database.db('oauth_artifacts').where({ kind: 'Session', uid: sessionUid }).delete();
  t.is(await mcpStatus(t, secondTokens.body.access_token), 401);
});

test('When a consent form ticks a scope the application did not ask for, then it is refused (400) and no code is sent; the scope it asked for is granted', async (t) => {
  const { body } = await register(t.context.server.baseUrl);
  const person = new FormClient(t.context.server.baseUrl);
  await person.signIn(t.context.owner.email, t.context.owner.password);
  const consent = await follow(person, authorizeQuery(t, body.client_id, pkce().challenge));
  t.regex(consent.path, /^\/app\/consent\//, `${consent.path} ${consent.text.slice(0, 300)}`);
  const forged = await person.post(consent.path, { _csrf: csrfOf(consent.text), decision: 'allow', scopes: 'customers:read', shopChoice: 'all', writeMode: 'read_only' });
  t.is(forged.status, 400);
  t.regex(forged.text, /did not ask for customers:read/);
  const allowed = await person.post(consent.path, { _csrf: csrfOf(consent.text), decision: 'allow', scopes: 'orders:read', shopChoice: 'all', writeMode: 'read_only' });
  const done = await follow(person, allowed.headers.get('location')!);
  t.truthy(done.callback?.searchParams.get('code'), String(done.callback));
});
