/**
 * The authorization server (D28) with the official MCP client's OAuth support: discovery from the 401, registration
 * by metadata document and dynamically, consent narrowing scopes and shops, tokens that follow the consent, refresh
 * that cannot widen, revocation. The person's part is played over HTTP here (test/e2e does it in a browser).
 */
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { FormClient, makePerson, startApplicationServer, testApplicationOptions, csrfOf } from '../helpers/application.js';
import { connectWithOAuth, finishOAuth, metadataDocumentFetch, startCallbackReceiver, TestOAuthProvider } from '../helpers/oauthClient.js';
import { fakeDns } from '../helpers/webhooks.js';
import type { TestServer } from '../helpers/server.js';
import { modernRequest, rawMcp } from '../helpers/mcp.js';
import { disablePerson, updatePerson } from '../../src/people/people.js';
import { findAccountByCode } from '../../src/queries/shops.js';
import { artifactKey } from '../../src/oauth/adapter.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  callback: { url: string; close: () => Promise<void> };
}

const test = anyTest as TestFn<Context>;
/** Every Client ID Metadata Document address the authorization server fetched. */
const fetched: string[] = [];

test.before(async (t) => {
  const database = await createTestDatabase();
  const callback = await startCallbackReceiver();
  // internal.example.com resolves to a private address: its metadata document must never be fetched.
  const documents = metadataDocumentFetch(callback.url);
  const oauthFetch = (async (input: string | URL | Request, init?: RequestInit) => {
    fetched.push(String(input instanceof Request ? input.url : input));
    return documents(input, init);
  }) as typeof fetch;
  const options = testApplicationOptions({ resolve: fakeDns({ 'client.example.com': ['93.184.215.14'], 'internal.example.com': ['10.1.2.3'] }).resolve, oauthFetch });
  t.context = { database, server: await startApplicationServer(database.db, options), callback };
});

test.after.always(async (t) => {
  await t.context.callback?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});


/** Follows redirects inside the service with the person's cookies until the page or the client's callback. */
async function follow(person: FormClient, start: string): Promise<{ path: string; text: string; callback: URL | null }> {
  let location = start;
  for (let hops = 0; hops < 10; hops++) {
    const url = new URL(location, person.baseUrl);
    if (url.origin !== person.baseUrl) return { path: location, text: '', callback: url };
    const response = await person.get(`${url.pathname}${url.search}`);
    if (response.status >= 300 && response.status < 400) {
      location = response.headers.get('location')!;
      continue;
    }
    return { path: `${url.pathname}${url.search}`, text: response.text, callback: null };
  }
  throw new Error('too many redirects');
}

test('When an MCP client is given only /api/mcp, then it discovers the server, the person consents to part, and the token carries exactly that', async (t) => {
  const { server, callback } = t.context;
  const mcpUrl = new URL(`${server.baseUrl}/api/mcp`);
  const owner = await makePerson(t.context.database.db, { role: 'member', permissions: ['reports'], shops: ['sk', 'cz'] });
  const provider = new TestOAuthProvider(callback.url, true);
  const first = await connectWithOAuth(mcpUrl, provider);
  t.is(first.client, null);
  t.truthy(provider.authorizationUrl);
  const authUrl = provider.authorizationUrl!;
  t.is(authUrl.searchParams.get('client_id'), 'https://client.example.com/oauth/client-metadata.json');
  t.is(authUrl.searchParams.get('code_challenge_method'), 'S256');
  t.is(authUrl.searchParams.get('resource'), `${server.baseUrl}/api/mcp`);

  const person = new FormClient(server.baseUrl);
  t.is((await person.signIn(owner.email, owner.password)).status, 303);
  const consent = await follow(person, `${authUrl.pathname}${authUrl.search}`);
  t.regex(consent.path, /^\/app\/consent\//, consent.text.slice(0, 500));
  t.regex(consent.text, /Test Assistant/);
  t.regex(consent.text, /client\.example\.com\/oauth\/client-metadata\.json/);
  // Offered: what the person may see; not offered: purchase prices (no permission).
  t.regex(consent.text, /value="reports:read"/);
  t.notRegex(consent.text, /value="purchase-prices:read"/);
  const posted = await person.post(consent.path, {
    _csrf: csrfOf(consent.text), decision: 'allow', scopes: ['orders:read', 'stores:read'], shopChoice: 'some', shops: 'sk', writeMode: 'read_only',
  });
  t.is(posted.status, 303, posted.text.slice(0, 500));
  const done = await follow(person, posted.headers.get('location')!);
  t.truthy(done.callback, `${done.path} ${done.text.slice(0, 800)}`);
  t.is(done.callback!.searchParams.get('iss'), server.baseUrl, 'RFC 9207 iss in the response');

  const client = await finishOAuth(mcpUrl, provider, first.transport, done.callback!);
  t.is(provider.savedTokens.scope.split(' ').sort().join(' '), 'orders:read stores:read');
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  t.true(tools.includes('orders_list'));
  t.false(tools.some((name) => name.startsWith('shipping_')), tools.join(','));
  const sk = await client.callTool({ name: 'orders_list', arguments: { market: 'sk', limit: 1 } });
  t.falsy(sk.isError);
  const cz = await client.callTool({ name: 'orders_list', arguments: { market: 'cz', limit: 1 } });
  t.true(cz.isError);
  await client.close();
});

/** Runs the whole flow for `provider` as `login`, ticking `form`; returns the connected client. */
async function authorize(t: { context: Context }, provider: TestOAuthProvider, login: { email: string; password: string }, form: Record<string, string | string[]>) {
  const mcpUrl = new URL(`${t.context.server.baseUrl}/api/mcp`);
  const first = await connectWithOAuth(mcpUrl, provider);
  const person = new FormClient(t.context.server.baseUrl);
  await person.signIn(login.email, login.password);
  const authUrl = provider.authorizationUrl!;
  const consent = await follow(person, `${authUrl.pathname}${authUrl.search}`);
  const posted = await person.post(consent.path, { _csrf: csrfOf(consent.text), decision: 'allow', ...form });
  const done = await follow(person, posted.headers.get('location')!);
  if (!done.callback) throw new Error(`no callback: ${done.path} ${done.text.slice(0, 300)}`);
  return { client: await finishOAuth(mcpUrl, provider, first.transport, done.callback), person, consentText: consent.text };
}

async function tokenRequest(t: { context: Context }, form: Record<string, string>) {
  const response = await fetch(`${t.context.server.baseUrl}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: response.status, body: await response.json() as any };
}

test('When the server is discovered, then both metadata documents name it and advertise what MCP clients need', async (t) => {
  const base = t.context.server.baseUrl;
  const resource = await (await fetch(`${base}/.well-known/oauth-protected-resource/api/mcp`)).json() as any;
  t.deepEqual(resource.authorization_servers, [base]);
  t.true(resource.scopes_supported.includes('purchase-prices:read'));
  const challenge = (await fetch(`${base}/api/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).headers.get('www-authenticate')!;
  t.regex(challenge, /resource_metadata=/);
  t.regex(challenge, /personal-data:read/);
  const server = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json() as any;
  t.is(server.issuer, base);
  t.deepEqual(server.code_challenge_methods_supported, ['S256']);
  t.deepEqual(server.response_types_supported, ['code']);
  t.true(server.authorization_response_iss_parameter_supported);
  t.true(server.client_id_metadata_document_supported);
  t.is(server.registration_endpoint, `${base}/oauth/register`);
  t.is(server.revocation_endpoint, `${base}/oauth/revoke`);
  t.true(server.scopes_supported.includes('reports:read'));
});

test('When a client registers dynamically and the token is refreshed, then the refresh rotates and can never widen the scopes', async (t) => {
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  const provider = new TestOAuthProvider(t.context.callback.url, false);
  const { client } = await authorize(t, provider, owner, { scopes: ['orders:read', 'shipping:read'], shopChoice: 'all', writeMode: 'proposals' });
  t.truthy(provider.info?.client_id);
  t.false(String(provider.info.client_id).startsWith('https://'));
  const refresh = provider.savedTokens.refresh_token;
  t.truthy(refresh);
  // D28: access tokens live 1 hour, refresh tokens 30 days (as the token response and the stored token say).
  t.is(provider.savedTokens.expires_in, 3600);
  const lifetime = async (kind: string, token: string) => {
    const row = await t.context.database.db('oauth_artifacts').where({ kind, id: artifactKey(token) }).first('payload', 'expires_at');
    return { seconds: row.payload.exp - row.payload.iat, storedUntil: row.expires_at.getTime() - row.payload.iat * 1000 };
  };
  const access = await lifetime('AccessToken', provider.savedTokens.access_token);
  t.is(access.seconds, 3600);
  t.true(Math.abs(access.storedUntil - 3600 * 1000) < 5000, String(access.storedUntil));
  const refreshLife = await lifetime('RefreshToken', refresh!);
  t.is(refreshLife.seconds, 30 * 86_400);
  t.true(Math.abs(refreshLife.storedUntil - 30 * 86_400 * 1000) < 5000, String(refreshLife.storedUntil));
  // The authorization code the client exchanged lived 60 s (Q9): stored, consumed, under the same grant.
  const { grantId } = (await t.context.database.db('oauth_artifacts').where({ kind: 'AccessToken', id: artifactKey(provider.savedTokens.access_token) }).first('payload')).payload;
  const codes = await t.context.database.db('oauth_artifacts').where({ kind: 'AuthorizationCode', grant_id: grantId }).select('payload', 'consumed_at');
  t.is(codes.length, 1);
  t.truthy(codes[0].consumed_at, 'used once');
  t.is(codes[0].payload.exp - codes[0].payload.iat, 60);
  const wider = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refresh, client_id: provider.info.client_id, scope: 'orders:read purchase-prices:read' });
  t.is(wider.status, 400);
  t.is(wider.body.error, 'invalid_scope');
  const renewed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refresh, client_id: provider.info.client_id });
  t.is(renewed.status, 200, JSON.stringify(renewed.body));
  t.is(renewed.body.expires_in, 3600, 'a refreshed access token lives 1 hour too');
  t.is(renewed.body.scope.split(' ').filter((s: string) => s.includes(':')).sort().join(' '), 'orders:read shipping:read');
  t.not(renewed.body.refresh_token, refresh, 'rotated');
  // The used refresh token is spent (reuse even ends the grant, as the library detects a replay).
  t.is((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refresh, client_id: provider.info.client_id })).status, 400);
  await client.close();
});

test('When the person revokes the connection in the application, then the token stops working at once', async (t) => {
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  const provider = new TestOAuthProvider(t.context.callback.url, true);
  const { client, person } = await authorize(t, provider, owner, { scopes: ['orders:read'], shopChoice: 'all', writeMode: 'read_only' });
  t.true((await client.listTools()).tools.length > 0);
  const page = await person.get('/app/connections');
  t.regex(page.text, /Test Assistant/);
  t.regex(page.text, /read_only/);
  const id = /data-connection-id="([^"]+)"/.exec(page.text)![1];
  // A connection is one person's (D28): another owner of the same account neither sees it listed nor revokes it.
  const colleague = await makePerson(t.context.database.db, { role: 'owner' });
  const other = new FormClient(t.context.server.baseUrl);
  await other.signIn(colleague.email, colleague.password);
  const othersPage = await other.get('/app/connections');
  t.is(othersPage.status, 200);
  t.false(othersPage.text.includes(id), 'another person of the account does not see the connection');
  t.is((await other.post(`/app/connections/${id}/revoke`, { _csrf: csrfOf(othersPage.text) })).status, 404);
  t.is((await t.context.database.db('oauth_connections').where({ id }).first('revoked_at')).revoked_at, null);
  t.true((await client.listTools()).tools.length > 0, 'the token still works after the colleague tried');
  t.is((await person.post(`/app/connections/${id}/revoke`, { _csrf: csrfOf(page.text) })).status, 303);
  const token = provider.savedTokens.access_token;
  const raw = await fetch(`${t.context.server.baseUrl}/api/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
  t.is(raw.status, 401);
  t.regex(raw.headers.get('www-authenticate')!, /invalid_token/);
  t.is((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: provider.savedTokens.refresh_token, client_id: provider.info?.client_id ?? 'https://client.example.com/oauth/client-metadata.json' })).status, 400);
  await client.close().catch(() => undefined);
});

test('When a consent reaches beyond the person or the request, then it is refused and nothing is granted', async (t) => {
  const member = await makePerson(t.context.database.db, { role: 'member', permissions: [], shops: ['sk'] });
  const provider = new TestOAuthProvider(t.context.callback.url, true);
  const mcpUrl = new URL(`${t.context.server.baseUrl}/api/mcp`);
  await connectWithOAuth(mcpUrl, provider);
  const person = new FormClient(t.context.server.baseUrl);
  await person.signIn(member.email, member.password);
  const authUrl = provider.authorizationUrl!;
  const consent = await follow(person, `${authUrl.pathname}${authUrl.search}`);
  t.notRegex(consent.text, /value="automations:write"/, 'automations:write only for a person who may edit automations');
  t.notRegex(consent.text, /value="all"/, 'no "all shops" for a person with some shops');
  const _csrf = csrfOf(consent.text);
  for (const form of <Record<string, string | string[]>[]>[
    { scopes: ['orders:read', 'personal-data:read'], shopChoice: 'some', shops: 'sk' },
    { scopes: 'orders:read', shopChoice: 'all' },
    { scopes: 'orders:read', shopChoice: 'some', shops: ['sk', 'cz'] },
  ]) {
    const refused = await person.post(consent.path, { _csrf, decision: 'allow', writeMode: 'read_only', ...form });
    t.is(refused.status, 400, JSON.stringify(form));
  }
  t.is(await t.context.database.db('oauth_connections').where({ person_id: member.id }).count('* as n').first().then((r: any) => Number(r.n)), 0);
  // An open redirect through the consent's sign-in is refused too.
  const next = await new FormClient(t.context.server.baseUrl).get(`/app/sign-in?next=${encodeURIComponent('https://evil.example/')}`);
  t.regex(next.text, /name="next" value="\/app"/);
  // Deny sends the client an access_denied error.
  const denied = await person.post(consent.path, { _csrf, decision: 'deny' });
  const back = await follow(person, denied.headers.get('location')!);
  t.is(back.callback?.searchParams.get('error'), 'access_denied');
});

test('When an OAuth token is sent to REST, then it is refused: tokens are for MCP only', async (t) => {
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  const provider = new TestOAuthProvider(t.context.callback.url, true);
  const { client } = await authorize(t, provider, owner, { scopes: ['orders:read'], shopChoice: 'all', writeMode: 'read_only' });
  const rest = await fetch(`${t.context.server.baseUrl}/api/v1/orders?market=sk&limit=1`, { headers: { Authorization: `Bearer ${provider.savedTokens.access_token}` } });
  t.is(rest.status, 401);
  const stored = await t.context.database.db('oauth_artifacts').where({ kind: 'AccessToken' });
  t.false(JSON.stringify(stored).includes(provider.savedTokens.access_token), 'only a hash of the token is stored');
  await client.close();
});

test('When an OAuth client calls a tool whose scope it lacks, then it gets the step-up challenge naming the scope', async (t) => {
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  const provider = new TestOAuthProvider(t.context.callback.url, true);
  const { client } = await authorize(t, provider, owner, { scopes: ['orders:read'], shopChoice: 'all', writeMode: 'read_only' });
  await client.close();
  const token = provider.savedTokens.access_token;
  const denied = modernRequest('tools/call', { name: 'shipping_stats', arguments: { market: 'sk' } }, token);
  const response = await rawMcp(t.context.server, denied.body, denied.headers);
  t.is(response.status, 403);
  t.regex(response.headers.get('www-authenticate')!, /^Bearer error="insufficient_scope", scope="shipping:read", resource_metadata="/);
  const allowed = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk', limit: 1 } }, token);
  t.is((await rawMcp(t.context.server, allowed.body, allowed.headers)).status, 200);
});

const connectionOf = async (t: { context: Context }, token: string) => {
  const response = await fetch(`${t.context.server.baseUrl}/api/v1/account/connection`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, body: await response.json() as any };
};

test('When an OAuth token asks /account/connection, then it gets its connection: application, who granted it and when, scopes per area, shops, write mode', async (t) => {
  const owner = await makePerson(t.context.database.db, { role: 'member', permissions: ['reports'], shops: ['sk', 'cz'] });
  const provider = new TestOAuthProvider(t.context.callback.url, true);
  const { client } = await authorize(t, provider, owner, { scopes: ['orders:read', 'stores:read'], shopChoice: 'some', shops: 'sk', writeMode: 'read_only' });
  await client.close();
  const { status, body } = await connectionOf(t, provider.savedTokens.access_token);
  t.is(status, 200, JSON.stringify(body));
  const data = body.data;
  t.like(data.credential, { type: 'oauth_connection', name: 'Test Assistant', clientId: 'https://client.example.com/oauth/client-metadata.json', interfaces: ['mcp'], grantedBy: owner.email, expiresAt: null });
  const connection = await t.context.database.db('oauth_connections').where({ person_id: owner.id }).first();
  t.is(data.credential.id, connection.id);
  t.is(data.credential.grantedAt, connection.created_at.toISOString());
  t.is(data.aiWriteMode, 'read_only');
  t.deepEqual(data.shops, { all: false, codes: ['sk'] });
  t.deepEqual(data.permissions.find((p: any) => p.area === 'orders').granted, ['orders:read']);
  t.true(data.permissions.find((p: any) => p.area === 'reports').missing.includes('reports:read'));
  // Only this path: the token is still no REST credential elsewhere.
  const other = await fetch(`${t.context.server.baseUrl}/api/v1/stores`, { headers: { Authorization: `Bearer ${provider.savedTokens.access_token}` } });
  t.is(other.status, 401);
});

test('When the person who consented loses a permission or a shop, or is disabled, then the token is narrowed or refused at once', async (t) => {
  const { db } = t.context.database;
  const member = await makePerson(db, { role: 'member', permissions: ['reports'], shops: ['sk', 'cz'] });
  const provider = new TestOAuthProvider(t.context.callback.url, true);
  const { client } = await authorize(t, provider, member, { scopes: ['orders:read', 'stores:read', 'reports:read'], shopChoice: 'some', shops: ['sk', 'cz'], writeMode: 'read_only' });
  const token = provider.savedTokens.access_token;
  t.true((await client.listTools()).tools.some((tool) => tool.name === 'reports_financial_summary'));
  const account = (await findAccountByCode(db, 'demo'))!;
  await updatePerson(db, account.id, member.id, { permissions: [], shops: ['sk'] });
  // Raw requests: the client library may keep the list it read before.
  const list = modernRequest('tools/list', {}, token);
  const names: string[] = ((await rawMcp(t.context.server, list.body, list.headers)).body as any).result.tools.map((tool: any) => tool.name);
  t.false(names.some((name) => name.startsWith('reports_')), names.join(','));
  t.true(names.includes('orders_list'));
  const cz = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'cz', limit: 1 } }, token);
  t.true(((await rawMcp(t.context.server, cz.body, cz.headers)).body as any).result.isError, 'cz is gone with the person\'s shop');
  const narrowed = await connectionOf(t, token);
  t.deepEqual(narrowed.body.data.shops, { all: false, codes: ['sk'] });
  t.deepEqual(narrowed.body.data.permissions.find((p: any) => p.area === 'reports').granted, []);
  await disablePerson(db, account.id, member.id);
  t.is((await connectionOf(t, token)).status, 401);
  await client.close().catch(() => undefined);
});

test('When a person is allowed to edit automations only after consenting, then the connection does not inherit automations:write, not even by refresh', async (t) => {
  const { db } = t.context.database;
  const member = await makePerson(db, { role: 'member', permissions: [] });
  const provider = new TestOAuthProvider(t.context.callback.url, false);
  const { client, consentText } = await authorize(t, provider, member, { scopes: ['automations:read', 'stores:read'], shopChoice: 'all', writeMode: 'proposals' });
  await client.close();
  t.notRegex(consentText, /value="automations:write"/);
  const account = (await findAccountByCode(db, 'demo'))!;
  await updatePerson(db, account.id, member.id, { permissions: ['automations:edit'] });
  const toolsOf = async (token: string) => {
    const list = modernRequest('tools/list', {}, token);
    return ((await rawMcp(t.context.server, list.body, list.headers)).body as any).result.tools.map((tool: any) => tool.name) as string[];
  };
  const before = await toolsOf(provider.savedTokens.access_token);
  t.true(before.includes('automations_list'));
  t.false(before.includes('automations_create_draft'), before.join(','));
  const wider = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: provider.savedTokens.refresh_token, client_id: provider.info.client_id, scope: 'automations:read automations:write' });
  t.is(wider.status, 400);
  const renewed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: provider.savedTokens.refresh_token, client_id: provider.info.client_id });
  t.is(renewed.status, 200, JSON.stringify(renewed.body));
  t.false(renewed.body.scope.split(' ').includes('automations:write'));
  t.false((await toolsOf(renewed.body.access_token)).includes('automations_create_draft'));
});

test('When a client id names a metadata document on a private address, then it is never fetched and the authorization is refused', async (t) => {
  const base = t.context.server.baseUrl;
  const query = new URLSearchParams({
    response_type: 'code', client_id: 'https://internal.example.com/oauth/client.json', redirect_uri: 'http://127.0.0.1:9/callback',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', scope: 'orders:read', resource: `${base}/api/mcp`, state: 'x',
  });
  const response = await fetch(`${base}/oauth/authorize?${query}`, { redirect: 'manual' });
  t.true(response.status >= 400 && response.status < 500, String(response.status));
  const page = await response.text();
  t.regex(page, /invalid_client/);
  t.regex(page, /Sign-in not possible/, 'the application\'s own error page');
  t.false(fetched.some((url) => url.includes('internal.example.com')), fetched.join(','));
  t.true(fetched.every((url) => url.startsWith('https://client.example.com/')));
});

test('When an OAuth access token has expired, then MCP answers 401 with the invalid_token challenge', async (t) => {
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  const provider = new TestOAuthProvider(t.context.callback.url, true);
  const { client } = await authorize(t, provider, owner, { scopes: ['orders:read'], shopChoice: 'all', writeMode: 'read_only' });
  await client.close();
  const token = provider.savedTokens.access_token;
  const list = modernRequest('tools/list', {}, token);
  t.is((await rawMcp(t.context.server, list.body, list.headers)).status, 200);
  // An hour passes for this token (its stored expiry is what the server checks).
  t.is(await t.context.database.db('oauth_artifacts').where({ kind: 'AccessToken', id: artifactKey(token) }).update({ expires_at: new Date(Date.now() - 1000) }), 1);
  const expired = await rawMcp(t.context.server, list.body, list.headers);
  t.is(expired.status, 401);
  t.regex(expired.headers.get('www-authenticate')!, /^Bearer error="invalid_token", error_description="The access token expired at [^"]+", resource_metadata="/);
});

test('When a client asks for some scopes, then the consent screen offers only those, sensitive ones unticked', async (t) => {
  const base = t.context.server.baseUrl;
  const registered = await fetch(`${base}/oauth/register`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Narrow Client', redirect_uris: [t.context.callback.url], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native' }),
  });
  t.is(registered.status, 201);
  const { client_id } = await registered.json() as { client_id: string };
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  const person = new FormClient(base);
  await person.signIn(owner.email, owner.password);
  const query = new URLSearchParams({
    response_type: 'code', client_id, redirect_uri: t.context.callback.url, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256', scope: 'orders:read reports:read', resource: `${base}/api/mcp`, state: 's',
  });
  const consent = await follow(person, `/oauth/authorize?${query}`);
  t.regex(consent.path, /^\/app\/consent\//);
  const offered = [...consent.text.matchAll(/name="scopes" value="([^"]+)"/g)].map((m) => m[1]).sort();
  t.deepEqual(offered, ['orders:read', 'reports:read']);
  t.regex(consent.text, /value="orders:read" checked/);
  t.notRegex(consent.text, /value="reports:read" checked/, 'sensitive: unticked until the person ticks it');
  t.regex(consent.text, /Narrow Client/);

  // SPEC "Authentication": reports, purchase prices, customer personal data, suppliers and purchasing, automation
  // drafts (and the availability drafts) are sensitive: each marked and unticked; a plain read beside them ticked.
  const sensitive = ['reports:read', 'purchase-prices:read', 'personal-data:read', 'purchasing:read', 'automations:write', 'availabilities:draft'];
  const wide = await follow(person, `/oauth/authorize?${new URLSearchParams({ ...Object.fromEntries(query), scope: ['stores:read', ...sensitive].join(' '), state: 's2' })}`);
  t.regex(wide.path, /^\/app\/consent\//);
  t.deepEqual([...wide.text.matchAll(/name="scopes" value="([^"]+)"/g)].map((m) => m[1]).sort(), ['stores:read', ...sensitive].sort());
  t.regex(wide.text, /value="stores:read" checked/);
  for (const scope of sensitive) {
    t.notRegex(wide.text, new RegExp(`value="${scope}" checked`), `${scope} unticked by default`);
    t.regex(wide.text, new RegExp(`<label class="sensitive">\\s*<input type="checkbox" name="scopes" value="${scope}"`), `${scope} marked sensitive`);
  }
});
