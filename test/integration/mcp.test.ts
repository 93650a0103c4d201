/**
 * The MCP endpoint with real clients over a real server and Postgres: SDK 2.x speaking 2026-07-28 and SDK 1.x speaking
 * 2025-11-25, 2025-06-18 and 2025-03-26, against the same running server; plus the transport rules over raw HTTP.
 */
import { appTest, type AppContext } from '../helpers/app.js';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { ProtocolError } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { isLoopbackHost } from '../../api/mcp/router.js';
import { TEXT_BUDGET, textRendering, toolDefinitions } from '../../api/mcp/tools.js';
import { TOOLS_DOC_END, TOOLS_DOC_START, toolsMarkdown } from '../../api/mcp/toolsDoc.js';
import { projectRoot } from '../../src/config/projectRoot.js';
import { allScopes, type Scope } from '../../src/auth/scopes.js';
import { capabilities } from '../../src/capabilities/registry.js';
import { TEST_NOW } from '../helpers/constants.js';
import { api, issueKey, startTestServer } from '../helpers/server.js';
import { connectLegacy, connectModern, envelope, LEGACY_VERSIONS, modernRequest, rawMcp, toolError, type LegacyVersion } from '../helpers/mcp.js';


const test = appTest();
type Context = AppContext;

const registryTools = capabilities.filter((c) => c.mcpTool).map((c) => c.mcpTool as string).sort();
const toolsOfScopes = (scopes: readonly Scope[]) => capabilities.filter((c) => c.mcpTool && scopes.includes(c.scope)).map((c) => c.mcpTool as string).sort();

/** Every page of orders_list over REST, for comparing with the MCP walk. */
async function restOrderPages(t: ExecutionContext<Context>, query: string): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any } = await api(t.context.server, `/orders?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, t.context.key);
    t.is(res.status, 200, JSON.stringify(res.body));
    pages.push(res.body.data.map((o: { code: string }) => o.code));
    cursor = res.body.meta.nextCursor;
  } while (cursor);
  return pages;
}

const WEEK = { market: 'sk', from: '2026-11-01', to: '2026-11-07', limit: 20 };
const WEEK_QUERY = 'market=sk&from=2026-11-01&to=2026-11-07&limit=20';

// ---------- 2026-07-28 with SDK 2.x ----------

test('When a 2026-07-28 client connects with a full key, then every registry tool is listed once, sorted, with schemas, title and annotations', async (t) => {
  const client = await connectModern(t.context.server, t.context.key);
  try {
    t.is(client.getProtocolEra(), 'modern');
    t.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
    const { tools } = await client.listTools();
    t.deepEqual(tools.map((tool) => tool.name), registryTools);
    for (const tool of tools) {
      const capability = capabilities.find((c) => c.mcpTool === tool.name)!;
      t.is(tool.inputSchema.type, 'object', tool.name);
      t.is((tool.outputSchema as { type?: string } | undefined)?.type, 'object', tool.name);
      t.truthy(tool.title, tool.name);
      // Descriptions are the capability's, condensed (issue 26.1): same opening words, and a usage line naming the scope.
      const words = new Set(capability.description.split(/[\s()]+/));
      t.true(tool.description!.split('\n')[0].split(/[\s()]+/).every((word) => words.has(word) || words.has(word.replace(/[.,:;]$/, '')) || word.endsWith('.')), tool.name);
      t.true(tool.description!.includes(`Scope ${capability.scope}`), `${tool.name} names its scope`);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) t.is(tool.annotations?.[hint], capability.annotations[hint], `${tool.name} ${hint}`);
    }
  } finally {
    await client.close();
  }
});

test('When keys carry fewer scopes, then tools/list shows exactly the tools of those scopes, over both eras', async (t) => {
  for (const scopes of [['orders:read'], ['shipping:read', 'stores:read'], ['account:read', 'products:read']] as Scope[][]) {
    const key = await issueKey(t.context.database.db, { scopes });
    const modern = await connectModern(t.context.server, key);
    t.deepEqual((await modern.listTools()).tools.map((tool) => tool.name), toolsOfScopes(scopes), scopes.join(','));
    await modern.close();
    const legacy = await connectLegacy(t.context.server, key, '2025-11-25');
    t.deepEqual((await legacy.client.listTools()).tools.map((tool) => tool.name), toolsOfScopes(scopes), scopes.join(','));
    await legacy.client.close();
  }
  const none = await issueKey(t.context.database.db, { scopes: ['personal-data:read'] });
  const client = await connectModern(t.context.server, none);
  t.deepEqual((await client.listTools()).tools, [], 'a scope without tools of its own lists nothing');
  await client.close();
});

test('When orders_list is walked by cursor over 2026-07-28, then the pages are those of REST, with hasMore and nextCursor as REST', async (t) => {
  const client = await connectModern(t.context.server, t.context.key);
  try {
    const expected = await restOrderPages(t, WEEK_QUERY);
    t.true(expected.length >= 3, 'the week spans several pages');
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const result = await client.callTool({ name: 'orders_list', arguments: { ...WEEK, ...(cursor ? { cursor } : {}) } });
      t.falsy(result.isError, JSON.stringify(result.content));
      const content = result.structuredContent as { items: Array<{ code: string }>; count: number; hasMore: boolean; nextCursor: string | null; market: string; period: unknown };
      t.is(content.market, 'sk');
      t.deepEqual(content.period, { from: WEEK.from, to: WEEK.to, timeZone: 'Europe/Bratislava' });
      t.is(content.count, content.items.length);
      t.is(content.hasMore, content.nextCursor !== null);
      t.deepEqual(JSON.parse((result.content as Array<{ text: string }>)[0].text), content, 'the text block is the JSON of structuredContent');
      pages.push(content.items.map((o) => o.code));
      cursor = content.nextCursor;
    } while (cursor);
    t.deepEqual(pages, expected);
  } finally {
    await client.close();
  }
});

test('When a tool fails with a business error over 2026-07-28, then it is an isError result with the REST code and message', async (t) => {
  const client = await connectModern(t.context.server, t.context.key);
  const shopKey = await issueKey(t.context.database.db, { shops: ['sk'] });
  const shopClient = await connectModern(t.context.server, shopKey);
  try {
    const cases: Array<{ client: typeof client; key: string; tool: string; args: Record<string, unknown>; rest: string; code: string }> = [
      { client, key: t.context.key, tool: 'orders_list', args: { market: 'sk', limit: 1000 }, rest: '/orders?market=sk&limit=1000', code: 'LIMIT_OUT_OF_RANGE' },
      { client, key: t.context.key, tool: 'orders_list', args: { market: 'sk', bogus: 1 }, rest: '/orders?market=sk&bogus=1', code: 'UNKNOWN_PARAMETER' },
      { client, key: t.context.key, tool: 'orders_list', args: { limit: 5 }, rest: '/orders?limit=5', code: 'MISSING_PARAMETER' },
      { client, key: t.context.key, tool: 'orders_list', args: { market: 'sk', from: '2026-11-10', to: '2026-11-01' }, rest: '/orders?market=sk&from=2026-11-10&to=2026-11-01', code: 'PERIOD_REVERSED' },
      { client, key: t.context.key, tool: 'orders_list', args: { market: 'sk', cursor: 'not-a-cursor' }, rest: '/orders?market=sk&cursor=not-a-cursor', code: 'INVALID_CURSOR' },
      { client, key: t.context.key, tool: 'orders_get', args: { market: 'sk', orderCode: 'NO-SUCH-ORDER' }, rest: '/orders/NO-SUCH-ORDER?market=sk', code: 'NOT_FOUND' },
      { client, key: t.context.key, tool: 'orders_list', args: { market: 'xx' }, rest: '/orders?market=xx', code: 'SHOP_NOT_FOUND' },
      { client: shopClient, key: shopKey, tool: 'orders_list', args: { market: 'cz' }, rest: '/orders?market=cz', code: 'SHOP_FORBIDDEN' },
      { client, key: t.context.key, tool: 'orders_list', args: { market: 's\u0000k' }, rest: '/orders?market=s%00k', code: 'INVALID_PARAMETER' },
    ];
    for (const c of cases) {
      const result = await c.client.callTool({ name: c.tool, arguments: c.args });
      const body = toolError(result);
      const rest = await api(t.context.server, c.rest, c.key);
      t.is(body.error.code, c.code, JSON.stringify(body));
      t.deepEqual(body.error, rest.body.error, `${c.tool} ${JSON.stringify(c.args)}: same error object as REST`);
      t.truthy(body.meta.requestId);
      t.is(result.structuredContent, undefined);
    }
  } finally {
    await client.close();
    await shopClient.close();
  }
});

test('When a tool outside the key\'s scopes or an unknown tool is called, then both get the same unknown-tool protocol error', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['stores:read'] });
  const client = await connectModern(t.context.server, key);
  try {
    const outside = await t.throwsAsync(client.callTool({ name: 'orders_list', arguments: { market: 'sk' } }), { instanceOf: ProtocolError });
    const unknown = await t.throwsAsync(client.callTool({ name: 'no_such_tool', arguments: {} }), { instanceOf: ProtocolError });
    t.is((outside as ProtocolError).code, -32602);
    t.is((unknown as ProtocolError).code, -32602);
    t.is(outside!.message.replace('orders_list', 'X'), unknown!.message.replace('no_such_tool', 'X'));
  } finally {
    await client.close();
  }
  const legacy = await connectLegacy(t.context.server, key, '2025-06-18');
  try {
    const outside = await t.throwsAsync(legacy.client.callTool({ name: 'orders_list', arguments: { market: 'sk' } }), { instanceOf: McpError });
    const unknown = await t.throwsAsync(legacy.client.callTool({ name: 'no_such_tool', arguments: {} }), { instanceOf: McpError });
    t.is((outside as McpError).code, -32602);
    t.is(outside!.message.replace('orders_list', 'X'), unknown!.message.replace('no_such_tool', 'X'));
  } finally {
    await legacy.client.close();
  }
});

// ---------- 2025 revisions with SDK 1.x ----------

for (const version of LEGACY_VERSIONS) {
  test(`When SDK 1.x connects speaking ${version}, then it negotiates ${version}, lists the tools, walks orders_list as REST and gets business errors as isError`, async (t) => {
    const { client, transport } = await connectLegacy(t.context.server, t.context.key, version as LegacyVersion);
    try {
      t.is(transport.protocolVersion, version);
      t.deepEqual((await client.listTools()).tools.map((tool) => tool.name), registryTools);
      const expected = await restOrderPages(t, WEEK_QUERY);
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const result = await client.callTool({ name: 'orders_list', arguments: { ...WEEK, ...(cursor ? { cursor } : {}) } });
        const content = result.structuredContent as { items: Array<{ code: string }>; hasMore: boolean; nextCursor: string | null };
        pages.push(content.items.map((o) => o.code));
        cursor = content.nextCursor;
      } while (cursor);
      t.deepEqual(pages, expected);

      const failed = await client.callTool({ name: 'orders_list', arguments: { market: 'sk', limit: 0 } });
      const rest = await api(t.context.server, '/orders?market=sk&limit=0', t.context.key);
      t.deepEqual(toolError(failed).error, rest.body.error);
    } finally {
      await client.close();
    }
  });
}

test('When a 2025-03-26 client sends no MCP-Protocol-Version header at all, then initialize and tools/call are served', async (t) => {
  const auth = { Authorization: `Bearer ${t.context.key}` };
  const init = await rawMcp(t.context.server, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '0' } } }, auth);
  t.is(init.status, 200, init.text);
  t.is(init.body.result.protocolVersion, '2025-03-26');
  t.is(init.headers.get('mcp-session-id'), null, 'no session is minted');
  const initialized = await rawMcp(t.context.server, { jsonrpc: '2.0', method: 'notifications/initialized' }, auth);
  t.is(initialized.status, 202);
  const call = await rawMcp(t.context.server, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'stores_list', arguments: {} } }, auth);
  t.is(call.status, 200, call.text);
  t.true(call.body.result.structuredContent.items.some((s: { code: string }) => s.code === 'sk'));
});

// ---------- credentials and metadata ----------

test('When the key is REST-only, missing or unknown, then 401 with a resource_metadata challenge and the D3 error body', async (t) => {
  const restOnly = await issueKey(t.context.database.db, { interfaces: ['rest'] });
  const { body, headers } = modernRequest('tools/list');
  const cases: Array<[Record<string, string>, string]> = [
    [{ Authorization: `Bearer ${restOnly}` }, 'INTERFACE_NOT_ALLOWED'],
    [{}, 'MISSING_CREDENTIALS'],
    [{ Authorization: `Bearer sk_${'A'.repeat(43)}` }, 'INVALID_CREDENTIALS'],
  ];
  for (const [auth, code] of cases) {
    const res = await rawMcp(t.context.server, body, { ...headers, ...auth });
    t.is(res.status, 401, res.text);
    t.is(res.body.error.code, code);
    t.is(typeof res.body.error.message, 'string');
    t.truthy(res.body.meta.requestId);
    const challenge = res.headers.get('www-authenticate') ?? '';
    t.true(challenge.startsWith('Bearer '), challenge);
    t.true(challenge.includes(`resource_metadata="${t.context.server.baseUrl}/.well-known/oauth-protected-resource/api/mcp"`), challenge);
  }
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
  const legacy = await rawMcp(t.context.server, initialize, { Authorization: `Bearer ${restOnly}` });
  t.is(legacy.status, 401);
  t.regex(legacy.body.error.message, /REST only/);
  await t.throwsAsync(connectModern(t.context.server, restOnly));
});

test('When the protected resource metadata is fetched, then it names the resource, every scope and header bearer tokens', async (t) => {
  for (const path of ['/.well-known/oauth-protected-resource/api/mcp', '/.well-known/oauth-protected-resource']) {
    const res = await fetch(`${t.context.server.baseUrl}${path}`);
    t.is(res.status, 200);
    const doc = await res.json() as Record<string, unknown>;
    t.is(doc.resource, `${t.context.server.baseUrl}/api/mcp`);
    t.deepEqual(doc.scopes_supported, [...allScopes]);
    t.true((doc.scopes_supported as string[]).includes('personal-data:read'), 'sensitive scopes are advertised');
    t.deepEqual(doc.bearer_methods_supported, ['header']);
    t.true(Array.isArray(doc.authorization_servers));
  }
});

// ---------- transport rules over raw HTTP ----------

test('When GET, DELETE without a session id or another non-POST method reaches /api/mcp, then 405 with Allow: POST, DELETE before the key is examined', async (t) => {
  for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
    const res = await rawMcp(t.context.server, undefined, {}, method);
    t.is(res.status, 405, method);
    t.is(res.headers.get('allow'), 'POST, DELETE');
  }
});

test('When a 2026-07-28 request lacks or contradicts MCP-Protocol-Version, Mcp-Method or Mcp-Name, then 400 with HeaderMismatch (-32020)', async (t) => {
  const key = t.context.key;
  const call = () => modernRequest('tools/call', { name: 'stores_list', arguments: {} }, key);
  const without = (name: string) => {
    const r = call();
    delete r.headers[name];
    return r;
  };
  const withHeader = (name: string, value: string) => {
    const r = call();
    r.headers[name] = value;
    return r;
  };
  const listWithoutMethod = modernRequest('tools/list', {}, key);
  delete listWithoutMethod.headers['Mcp-Method'];
  const cases: Array<[string, { body: unknown; headers: Record<string, string> }]> = [
    ['missing MCP-Protocol-Version', without('MCP-Protocol-Version')],
    ['missing Mcp-Method', without('Mcp-Method')],
    ['missing Mcp-Method on tools/list', listWithoutMethod],
    ['missing Mcp-Name', without('Mcp-Name')],
    ['Mcp-Method disagrees', withHeader('Mcp-Method', 'tools/list')],
    ['Mcp-Name disagrees', withHeader('Mcp-Name', 'orders_list')],
    ['Mcp-Name bad base64', withHeader('Mcp-Name', '=?base64?***?=')],
    ['MCP-Protocol-Version disagrees with _meta', withHeader('MCP-Protocol-Version', '2025-11-25')],
  ];
  for (const [name, request] of cases) {
    const res = await rawMcp(t.context.server, request.body, request.headers);
    t.is(res.status, 400, `${name}: ${res.text}`);
    t.is(res.body.error.code, -32020, name);
    t.is(res.body.id, (request.body as { id: number }).id, `${name}: the id is echoed`);
  }
  const encoded = withHeader('Mcp-Name', `=?base64?${Buffer.from('stores_list').toString('base64')}?=`);
  const ok = await rawMcp(t.context.server, encoded.body, encoded.headers);
  t.is(ok.status, 200, `a Base64-encoded Mcp-Name is decoded: ${ok.text}`);
});

test('When a request names a protocol revision we do not serve, then 400 UnsupportedProtocolVersion (-32022) naming the supported ones', async (t) => {
  const auth = { Authorization: `Bearer ${t.context.key}` };
  const modern = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: envelope('2099-01-01') } };
  const res = await rawMcp(t.context.server, modern, { ...auth, 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' });
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, -32022);
  t.is(res.body.error.data.requested, '2099-01-01');
  // In the envelope the client can only move to another 2026-era revision: exactly what server/discover lists (T1).
  const discover = modernRequest('server/discover', {}, t.context.key);
  const found = await rawMcp(t.context.server, discover.body, discover.headers);
  t.deepEqual(res.body.error.data.supported, found.body.result.supportedVersions);
  t.deepEqual(res.body.error.data.supported, ['2026-07-28']);
  const legacy = await rawMcp(t.context.server, { jsonrpc: '2.0', id: 8, method: 'tools/list' }, { ...auth, 'MCP-Protocol-Version': '2024-11-05' });
  t.is(legacy.status, 400, legacy.text);
  t.is(legacy.body.error.code, -32022);
  t.is(legacy.body.error.data.requested, '2024-11-05');
  // A 2025-era client may initialize with any revision we serve, or move to the envelope.
  t.deepEqual(legacy.body.error.data.supported, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
});

test('When a well-formed 2026-07-28 request is sent, then results carry resultType and cacheScope private on what depends on the credential', async (t) => {
  const list = modernRequest('tools/list', {}, t.context.key);
  const res = await rawMcp(t.context.server, list.body, list.headers);
  t.is(res.status, 200, res.text);
  t.is(res.body.result.resultType, 'complete');
  t.is(res.body.result.cacheScope, 'private');
  t.is(typeof res.body.result.ttlMs, 'number');
  const discover = modernRequest('server/discover', {}, t.context.key);
  const found = await rawMcp(t.context.server, discover.body, discover.headers);
  t.is(found.status, 200, found.text);
  t.true(found.body.result.supportedVersions.includes('2026-07-28'));
  t.is(found.body.result.cacheScope, 'private');
  const call = modernRequest('tools/call', { name: 'stores_list', arguments: {} }, t.context.key);
  const called = await rawMcp(t.context.server, call.body, call.headers);
  t.is(called.body.result.resultType, 'complete');
  t.truthy(called.body.result._meta.requestId);
});

test('When a request carries a foreign Origin, then 403; a localhost or configured origin passes', async (t) => {
  const list = modernRequest('tools/list', {}, t.context.key);
  const evil = await rawMcp(t.context.server, list.body, { ...list.headers, Origin: 'http://evil.example' });
  t.is(evil.status, 403, evil.text);
  const local = await rawMcp(t.context.server, list.body, { ...list.headers, Origin: t.context.server.baseUrl });
  t.is(local.status, 200, local.text);

  // A deployment with a public URL and a configured origin: only those two pass.
  const configured = await startTestServer(t.context.database.db, () => TEST_NOW, { allowedOrigins: ['https://assistant.example'], publicBaseUrl: 'https://shop-data.example' });
  try {
    for (const [origin, status] of [['https://assistant.example', 200], ['https://shop-data.example', 200], ['http://localhost:6274', 403], ['https://assistant.example.evil', 403], ['null', 403]] as const) {
      const res = await rawMcp(configured, list.body, { ...list.headers, Origin: origin });
      t.is(res.status, status, `${origin}: ${res.text}`);
    }
    const noOrigin = await rawMcp(configured, list.body, list.headers);
    t.is(noOrigin.status, 200, 'clients outside a browser send no Origin');
  } finally {
    await configured.close();
  }
});

test('When the body is not JSON or not JSON-RPC, then the transport answers 415, 400 parse error or 400 invalid request', async (t) => {
  const auth = { Authorization: `Bearer ${t.context.key}` };
  const text = await fetch(`${t.context.server.baseUrl}/api/mcp`, { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain' }, body: 'hello' });
  t.is(text.status, 415);
  const broken = await rawMcp(t.context.server, '{"jsonrpc":', auth);
  t.is(broken.status, 400);
  t.is(broken.body.error.code, -32700);
  const notRpc = await rawMcp(t.context.server, { hello: 'world' }, auth);
  t.is(notRpc.status, 400);
  t.is(notRpc.body.error.code, -32600);
});

test('When the generated tool definitions are inspected, then each registry tool appears once with an input schema that rejects unknown arguments', (t) => {
  t.deepEqual(toolDefinitions().map((tool) => tool.name), registryTools);
  for (const tool of toolDefinitions()) {
    t.is(tool.inputJsonSchema.type, 'object');
    t.is(tool.inputJsonSchema.additionalProperties, false, tool.name);
    t.is(tool.outputJsonSchema.type, 'object');
  }
});

test('When a page is too large for the text block, then the text stays valid JSON, shows the first records and says how many are missing', (t) => {
  const items = Array.from({ length: 120 }, (_, i) => ({ code: String(i), note: 'x'.repeat(2_000) }));
  const content = { market: 'sk', count: items.length, hasMore: true, nextCursor: 'c', items };
  const text = textRendering(content);
  t.true(text.length <= TEXT_BUDGET);
  const parsed = JSON.parse(text);
  t.true(parsed.items.length > 0 && parsed.items.length < items.length);
  t.deepEqual(parsed.items, items.slice(0, parsed.items.length));
  t.is(parsed.nextCursor, 'c');
  t.regex(parsed.textNote, new RegExp(`first ${parsed.items.length} of the 120 records`));
  const small = { market: 'sk', count: 1, hasMore: false, nextCursor: null, items: [{ code: '1' }] };
  t.deepEqual(JSON.parse(textRendering(small)), small);
});

test('When the docs carry the generated MCP tool table, then it is current (npm run docs)', (t) => {
  const files = ['docs/mcp.md'].map((file) => path.join(projectRoot, file)).filter((file) => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes(TOOLS_DOC_START));
  t.true(files.length > 0, 'the table is in docs/mcp.md');
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    t.is(text.slice(text.indexOf(TOOLS_DOC_START), text.indexOf(TOOLS_DOC_END) + TOOLS_DOC_END.length), toolsMarkdown(), `${path.relative(projectRoot, file)} is stale: npm run docs`);
  }
});

test('When a browser client from an allowed origin sends a preflight, then 204 allows POST (and DELETE of a session) with the protocol headers; its responses, 401 included, expose the challenge', async (t) => {
  const origin = 'http://localhost:6274'; // the MCP Inspector's own page, allowed while no PUBLIC_BASE_URL is set
  const preflight = await rawMcp(t.context.server, undefined, {
    Origin: origin, 'Access-Control-Request-Method': 'POST',
    'Access-Control-Request-Headers': 'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name',
  }, 'OPTIONS');
  t.is(preflight.status, 204, preflight.text);
  t.is(preflight.headers.get('access-control-allow-origin'), origin);
  t.is(preflight.headers.get('access-control-allow-methods'), 'POST,DELETE', 'DELETE ends a 2025-era session');
  const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');
  for (const header of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name']) t.true(allowed.includes(header), header);
  t.is(preflight.headers.get('access-control-max-age'), '600');
  t.regex(preflight.headers.get('vary') ?? '', /origin/i, 'caches must not serve one origin\'s answer to another');

  const list = modernRequest('tools/list', {}, t.context.key);
  const served = await rawMcp(t.context.server, list.body, { ...list.headers, Origin: origin });
  t.is(served.status, 200, served.text);
  t.is(served.headers.get('access-control-allow-origin'), origin);
  const anonymous = modernRequest('tools/list', {});
  const challenged = await rawMcp(t.context.server, anonymous.body, { ...anonymous.headers, Origin: origin });
  t.is(challenged.status, 401);
  t.is(challenged.headers.get('access-control-allow-origin'), origin);
  t.true((challenged.headers.get('access-control-expose-headers') ?? '').split(',').includes('WWW-Authenticate'), 'the page can read where to authorize');
  t.regex(challenged.headers.get('www-authenticate') ?? '', /resource_metadata=/);
});

test('When a preflight comes from a foreign origin or without Origin, then 403 or 405, and no CORS header is granted', async (t) => {
  const foreign = await rawMcp(t.context.server, undefined, { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' }, 'OPTIONS');
  t.is(foreign.status, 403);
  t.is(foreign.headers.get('access-control-allow-origin'), null);
  const noOrigin = await rawMcp(t.context.server, undefined, {}, 'OPTIONS');
  t.is(noOrigin.status, 405);
  t.is(noOrigin.headers.get('allow'), 'POST, DELETE');
  t.is(noOrigin.headers.get('access-control-allow-origin'), null);
});

test('When a browser page of any origin reads the protected resource metadata, then CORS allows it (it is public)', async (t) => {
  const res = await fetch(`${t.context.server.baseUrl}/.well-known/oauth-protected-resource/api/mcp`, { headers: { Origin: 'https://any-assistant.example' } });
  t.is(res.status, 200);
  t.is(res.headers.get('access-control-allow-origin'), '*');
});

/** POSTs to /api/mcp with a chosen Host header (fetch does not let a caller set Host). */
function postWithHost(port: number, host: string, body: unknown, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/api/mcp', method: 'POST', headers: { ...headers, Host: host, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test('When the server listens on loopback with no public URL, then a rebound DNS name in Host is 403 and localhost names pass', async (t) => {
  for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) t.true(isLoopbackHost(host), host);
  for (const host of ['0.0.0.0', '::', '10.1.2.3', 'shop-data.example']) t.false(isLoopbackHost(host), host);

  const list = modernRequest('tools/list', {}, t.context.key);
  for (const [localhostOnly, host, status] of [[true, 'rebound.example', 403], [true, 'localhost', 200], [true, '127.0.0.1', 200], [false, 'rebound.example', 200]] as const) {
    const server = await startTestServer(t.context.database.db, () => TEST_NOW, { allowedOrigins: [], localhostOnly });
    try {
      const port = Number(new URL(server.baseUrl).port);
      t.is(await postWithHost(port, `${host}:${port}`, list.body, list.headers), status, `${host} with localhostOnly=${localhostOnly}`);
    } finally {
      await server.close();
    }
  }
});
