/**
 * Quiet, useful logs (issue 29, point 6): each request is one line at debug with its request id (MCP lines name the
 * JSON-RPC method and tool, at /api/mcp), and the minute's summary at info counts them; a W3C traceparent (HTTP header,
 * or an MCP request's `params._meta`, issue 26 point 5) puts its trace id beside the request id.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { logSummary, takeCounts } from '../../src/logSummary.js';
import { appTest } from '../helpers/app.js';
import { captured, requestLines } from '../helpers/logs.js';
import { modernRequest, rawMcp } from '../helpers/mcp.js';
import { api } from '../helpers/server.js';

const test = appTest();

test.serial('When requests are served at the default level (info), then no request line is written', async (t) => {
  const lines = await captured('info', async () => {
    t.is((await api(t.context.server, '/orders?market=sk&limit=1', t.context.key)).status, 200);
  });
  t.deepEqual(requestLines(lines), []);
});

test.serial('When requests are served at debug, then each is one line at debug with its request id, the full path and no query', async (t) => {
  let requestId = '';
  const lines = await captured('debug', async () => {
    const response = await api(t.context.server, '/orders?market=sk&limit=1', t.context.key);
    requestId = response.headers.get('request-id')!;
  });
  const [line] = requestLines(lines);
  t.is(requestLines(lines).length, 1);
  t.is(line.level, 20);
  t.is(line.requestId, requestId);
  t.is(line.method, 'GET');
  t.is(line.path, '/api/v1/orders');
  t.is(line.status, 200);
});

test.serial('When an MCP tool is called, then its line names /api/mcp, the JSON-RPC method and the tool', async (t) => {
  let requestId = '';
  const lines = await captured('debug', async () => {
    const { body, headers } = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk', limit: 1 } }, t.context.key);
    const response = await rawMcp(t.context.server, body, headers);
    t.is(response.status, 200);
    requestId = response.headers.get('request-id')!;
  });
  const [line] = requestLines(lines);
  t.like(line, { level: 20, requestId, method: 'POST', path: '/api/mcp', status: 200, rpcMethod: 'tools/call', tool: 'orders_list' });
});

test.serial('When a request carries a W3C traceparent header, then its log lines carry the trace id beside the request id', async (t) => {
  let requestId = '';
  const lines = await captured('debug', async () => {
    const response = await api(t.context.server, '/orders?market=sk&limit=1', t.context.key, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    t.is(response.status, 200);
    requestId = response.headers.get('request-id')!;
  });
  const [line] = requestLines(lines);
  t.like(line, { requestId, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', path: '/api/v1/orders' });
  t.true(lines.filter((l) => l.requestId === requestId).every((l) => l.traceId === '4bf92f3577b34da6a3ce929d0e0e4736'));
});

test.serial('When an MCP request carries traceparent in params._meta (SEP-414), then its trace id wins over the header', async (t) => {
  const lines = await captured('debug', async () => {
    const { body, headers } = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk', limit: 1 } }, t.context.key);
    (body.params as { _meta: Record<string, unknown> })._meta.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const response = await rawMcp(t.context.server, body, { ...headers, traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    t.is(response.status, 200);
  });
  const [line] = requestLines(lines);
  t.like(line, { path: '/api/mcp', tool: 'orders_list', traceId: '0af7651916cd43dd8448eb211c80319c' });
});

test.serial('When a traceparent is malformed, then the request is served and its line has no trace id', async (t) => {
  const malformed = [
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // all-zero trace id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // all-zero parent id
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // version ff
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', // upper case
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', // version 00 with more fields
    'not a trace',
  ];
  const lines = await captured('debug', async () => {
    for (const traceparent of malformed) t.is((await api(t.context.server, '/orders?market=sk&limit=1', t.context.key, { headers: { traceparent } })).status, 200);
    const { body, headers } = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk', limit: 1 } }, t.context.key);
    (body.params as { _meta: Record<string, unknown> })._meta.traceparent = 42;
    t.is((await rawMcp(t.context.server, body, headers)).status, 200);
  });
  t.is(requestLines(lines).length, malformed.length + 1);
  t.deepEqual(requestLines(lines).filter((l) => 'traceId' in l), []);
});

test.serial('When a minute of traffic is summed up, then one info line counts requests by status class, MCP calls and webhook attempts', async (t) => {
  takeCounts();
  const { server, key } = t.context;
  for (let i = 0; i < 3; i += 1) t.is((await api(server, '/orders?market=sk&limit=1', key)).status, 200);
  t.is((await api(server, '/orders?market=sk&limit=1')).status, 401);
  t.is((await api(server, '/no-such-path', key)).status, 404);
  const call = modernRequest('tools/call', { name: 'orders_list', arguments: { market: 'sk', limit: 1 } }, key);
  t.is((await rawMcp(server, call.body, call.headers)).status, 200);
  const list = modernRequest('tools/list', {}, key);
  t.is((await rawMcp(server, list.body, list.headers)).status, 200);
  // Probes are not traffic.
  t.is((await fetch(`${server.baseUrl}/healthz`)).status, 200);
  await new Promise((resolve) => setImmediate(resolve));

  const lines: string[] = [];
  const summary = pino({ base: null, timestamp: false }, new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } }));
  logSummary(summary, 60);
  await new Promise((resolve) => setImmediate(resolve));
  t.is(lines.length, 1);
  t.deepEqual(JSON.parse(lines[0]), {
    level: 30,
    msg: 'summary',
    periodSeconds: 60,
    requests: { '2xx': 5, '3xx': 0, '4xx': 2, '5xx': 0 },
    mcp: { requests: 2, toolCalls: 1 },
    webhookAttempts: { delivered: 0, failed: 0 },
  });
});
