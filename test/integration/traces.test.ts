/**
 * OpenTelemetry traces (issue 29 point 4), end to end: the composition root with OTEL_EXPORTER_OTLP_ENDPOINT pointing
 * at a small OTLP/HTTP receiver started here (a real HTTP server collecting the JSON exports), the real HTTP
 * application, a real Temporal dev server with our worker, Postgres, and the official MCP client. An MCP call that
 * starts a proposal workflow, with a known `_meta.traceparent`, yields one trace from the MCP message through the
 * capability, the Temporal client, the workflow and its activities down to SQL, each span a child of the one before; a REST request
 * continues the `traceparent` header; the log lines carry the span's trace id.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { createApp } from '../../api/app.js';
import { createHttpServer } from '../../api/http/server.js';
import { allScopes } from '../../src/auth/scopes.js';
import { loadConfig } from '../../src/config/index.js';
import { compose, startWorker, type Service } from '../../src/entry/compose.js';
import { findAccountByCode, findShopByCode } from '../../src/queries/shops.js';
import { workflowIds } from '../../src/temporal/constants.js';
import { ensureWebhookWorkflows } from '../../src/temporal/webhooks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { captured, requestLines } from '../helpers/logs.js';
import { connectModern } from '../helpers/mcp.js';
import { api, issueKey, type TestServer } from '../helpers/server.js';
import { startReceiver as startWebhookReceiver, type Receiver as WebhookReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { emitOrderEvents, isolateWebhooks, makeEndpoint } from '../helpers/webhooks.js';

/** One exported span as the OTLP/JSON body carries it (ids in hex). */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links?: Array<{ traceId: string; spanId: string }>;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  service: string;
}

interface Context {
  database: TestDatabase;
  service: Service;
  server: TestServer;
  receiver: http.Server;
  spans: ExportedSpan[];
  exportRequests: Array<{ path: string; contentType: string | undefined }>;
  modern: ModernClient;
  key: string;
  taskQueue: string;
  webhookReceiver: WebhookReceiver;
}
const test = anyTest as TestFn<Context>;

/** A minimal OTLP/HTTP receiver: POST /v1/traces with a JSON ExportTraceServiceRequest, answered 200 `{}`. */
async function startReceiver(spans: ExportedSpan[], requests: Context['exportRequests']): Promise<http.Server> {
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ resource: { attributes: ExportedSpan['attributes'] }; scopeSpans: Array<{ spans: ExportedSpan[] }> }> };
      for (const resourceSpans of body.resourceSpans) {
        const service = String(resourceSpans.resource.attributes?.find((a) => a.key === 'service.name')?.value.stringValue);
        for (const scope of resourceSpans.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return receiver;
}

test.before(async (t) => {
  const spans: ExportedSpan[] = [];
  const exportRequests: Context['exportRequests'] = [];
  const receiver = await startReceiver(spans, exportRequests);
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  const config = loadConfig({
    NODE_ENV: 'test',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OTEL_SERVICE_NAME: 'store-ops-traces-test',
    CURSOR_SECRET: crypto.randomBytes(32).toString('hex'),
    SECRETS_KEY: crypto.randomBytes(32).toString('hex'),
    // The webhook receiver of the delivery test listens on loopback (development rule, D17).
    WEBHOOK_ALLOW_LOOPBACK: 'true',
  });
  // The root as production builds it; our own task queue, so other files' workers on the shared dev server take nothing.
  const service = compose(config, { databaseUrl: database.url, temporalAddress: process.env.TEMPORAL_ADDRESS! });
  const taskQueue = `test-traces-${crypto.randomBytes(4).toString('hex')}`;
  await startWorker(service, { taskQueue });
  const httpServer = createHttpServer(createApp({ ...service.app, temporal: { ...service.temporal, taskQueue } }));
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const server: TestServer = {
    baseUrl: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => httpServer.close(() => resolve())),
  };
  const key = await issueKey(service.db, { scopes: allScopes, writeMode: 'autonomous' });
  const modern = await connectModern(server, key);
  await ensureWebhookWorkflows(await service.temporal.client(), taskQueue, { retentionSchedule: false });
  const webhookReceiver = await startWebhookReceiver();
  t.context = { database, service, server, receiver, spans, exportRequests, modern, key, taskQueue, webhookReceiver };
});

test.after.always(async (t) => {
  const { service, taskQueue } = t.context;
  if (service && taskQueue) await (await service.temporal.client()).workflow.getHandle(workflowIds.webhookDispatcher(taskQueue)).terminate().catch(() => {});
  await t.context.webhookReceiver?.close();
  await t.context.modern?.close();
  await t.context.server?.close();
  await t.context.service?.close();
  await new Promise((resolve) => t.context.receiver?.close(resolve));
  await t.context.database?.drop();
});

const spanNamed = (spans: ExportedSpan[], traceId: string, name: string) => spans.find((s) => s.traceId === traceId && s.name === name);
const attribute = (span: ExportedSpan, key: string) => span.attributes?.find((a) => a.key === key)?.value;

test.serial('When an MCP call with _meta.traceparent starts a workflow, then the MCP message, the Temporal client, the workflow, its activities and SQL share that trace, each span the child of the one before', async (t) => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const callerSpanId = 'b7ad6b7169203331';
  const { db } = t.context.service;
  const account = (await findAccountByCode(db, 'demo'))!;
  const shop = (await findShopByCode(db, account.id, 'sk'))!;
  const product = await db('products').where({ shop_id: shop.id }).whereNotNull('meta_title').orderBy('code').first('code');
  const read = await api(t.context.server, `/products/${encodeURIComponent(product.code)}/content?market=sk`, t.context.key);

  let draftId = '';
  const lines = await captured('debug', async () => {
    const result = await t.context.modern.callTool({
      name: 'products_content_propose',
      arguments: { market: 'sk', products: [{ code: product.code, fingerprint: read.body.data.fingerprint, fields: { metaTitle: 'Traced title' } }] },
      _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    draftId = (result as { structuredContent: { data: { draftId: string; status: string } } }).structuredContent.data.draftId;
    // Autonomous texts are written before the answer: the workflow and its activities have run.
    t.is((result as { structuredContent: { data: { status: string } } }).structuredContent.data.status, 'written');
  });
  t.like(requestLines(lines).find((l) => l.path === '/api/mcp'), { traceId, tool: 'products_content_propose' }, 'the log line carries the trace id of the spans');

  const { spans } = t.context;
  // Spans reach the collector in batches: the message span ends with the answer and may come after the activity's.
  await waitUntil(async () => spanNamed(spans, traceId, 'RunActivity:finishProposal') !== undefined && spanNamed(spans, traceId, 'mcp tools/call products_content_propose') !== undefined, 30_000);

  const message = spanNamed(spans, traceId, 'mcp tools/call products_content_propose')!;
  t.truthy(message, 'the MCP message span');
  t.is(message.parentSpanId, callerSpanId, 'continues the caller\'s span from _meta');
  t.is(message.service, 'store-ops-traces-test');
  const httpSpan = spans.find((s) => s.spanId === message.links?.[0]?.spanId);
  t.like(httpSpan, { name: 'POST /api/mcp', kind: 2 }, 'linked to the HTTP request span');

  const capability = spanNamed(spans, traceId, 'capability products.content_propose')!;
  t.truthy(capability, 'the capability span');
  t.is(capability.parentSpanId, message.spanId);
  const start = spanNamed(spans, traceId, 'StartWorkflow:proposalWorkflow')!;
  t.truthy(start, 'the Temporal client span');
  t.is(start.parentSpanId, capability.spanId);
  const run = spanNamed(spans, traceId, 'RunWorkflow:proposalWorkflow')!;
  t.truthy(run, 'the workflow span');
  t.is(run.parentSpanId, start.spanId);
  for (const activity of ['loadProposal', 'writeProposalItem', 'finishProposal']) {
    const scheduled = spans.find((s) => s.traceId === traceId && s.name === `StartActivity:${activity}` && s.parentSpanId === run.spanId);
    t.truthy(scheduled, `the workflow schedules ${activity}`);
    const ran = spans.find((s) => s.traceId === traceId && s.name === `RunActivity:${activity}` && s.parentSpanId === scheduled?.spanId);
    t.truthy(ran, `${activity} runs in the same trace`);
  }
  const writeItem = spanNamed(spans, traceId, 'RunActivity:writeProposalItem')!;
  const sql = spans.filter((s) => s.traceId === traceId && s.parentSpanId === writeItem.spanId && attribute(s, 'db.system')?.stringValue === 'postgresql');
  t.true(sql.length > 0, 'the activity\'s SQL statements are its children');
  t.true(sql.every((s) => !JSON.stringify(s.attributes).includes('Traced title')), 'bound values are not in the SQL spans');
  t.true(draftId.length > 0);
  t.true(t.context.exportRequests.every((r) => r.path === '/v1/traces' && r.contentType === 'application/json'), 'OTLP/HTTP with JSON bodies at /v1/traces');
});

test.serial('When a REST request carries a traceparent header, then its server span continues it, its capability and SQL are below it, and its log line carries the trace id', async (t) => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpanId = '00f067aa0ba902b7';
  const lines = await captured('debug', async () => {
    const response = await api(t.context.server, '/orders?market=sk&limit=1', t.context.key, { headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } });
    t.is(response.status, 200);
  });
  t.like(requestLines(lines).find((l) => l.path === '/api/v1/orders'), { traceId });
  const { spans } = t.context;
  await waitUntil(async () => spanNamed(spans, traceId, 'GET /api/v1/orders') !== undefined, 30_000);
  const server = spanNamed(spans, traceId, 'GET /api/v1/orders')!;
  t.is(server.parentSpanId, callerSpanId);
  t.is(server.kind, 2, 'SPAN_KIND_SERVER');
  t.deepEqual(attribute(server, 'http.response.status_code'), { intValue: 200 });
  const capability = () => spans.find((s) => s.traceId === traceId && s.name === 'capability orders.list' && s.parentSpanId === server.spanId);
  const sqlOfRequest = () => spans.filter((s) => s.traceId === traceId && s.parentSpanId === capability()?.spanId && attribute(s, 'db.system')?.stringValue === 'postgresql');
  await waitUntil(async () => sqlOfRequest().length > 0, 30_000);
  t.regex(String(attribute(sqlOfRequest()[0]!, 'db.statement')?.stringValue), /select/i);
});

test.serial('When a request carries no traceparent, then its span starts a trace of its own and the log line carries that trace id', async (t) => {
  let requestId = '';
  const lines = await captured('debug', async () => {
    const response = await api(t.context.server, '/orders?market=sk&limit=1', t.context.key);
    requestId = response.headers.get('request-id')!;
  });
  const line = requestLines(lines).find((l) => l.requestId === requestId)!;
  t.regex(line.traceId, /^[0-9a-f]{32}$/);
  const { spans } = t.context;
  await waitUntil(async () => spans.some((s) => s.traceId === line.traceId && s.name === 'GET /api/v1/orders'), 30_000);
  const server = spans.find((s) => s.traceId === line.traceId && s.name === 'GET /api/v1/orders')!;
  t.is(server.parentSpanId ?? '', '', 'a root span');
  t.deepEqual(attribute(server, 'store_ops.request_id'), { stringValue: requestId });
});

test.serial('When a webhook is delivered, then the attempt is a client span connected with the SQL that records it', async (t) => {
  const { db } = t.context.service;
  const { webhookReceiver } = t.context;
  const endpoint = await makeEndpoint(db, t.context.service.webhooks, { url: webhookReceiver.url, events: ['order.created'], shops: ['sk'] });
  webhookReceiver.secret = endpoint.secret;
  await emitOrderEvents(db, 1, { shop: 'sk', prefix: 'TRACE' });
  await webhookReceiver.waitFor((requests) => requests.length === 1, 60_000);

  const { spans } = t.context;
  await waitUntil(async () => spans.some((s) => s.name === 'webhook POST'), 30_000);
  const attempt = spans.find((s) => s.name === 'webhook POST')!;
  t.is(attempt.kind, 3, 'SPAN_KIND_CLIENT');
  t.deepEqual(attribute(attempt, 'server.address'), { stringValue: '127.0.0.1' });
  t.deepEqual(attribute(attempt, 'http.response.status_code'), { intValue: 200 });
  t.deepEqual(attribute(attempt, 'store_ops.webhook.outcome'), { stringValue: 'success' });
  t.truthy(attempt.parentSpanId, 'below the activity that made it');
  // The attempt is logged in webhook_delivery_attempts by SQL in the same trace.
  const recorded = () => spans.some((s) => s.traceId === attempt.traceId && String(attribute(s, 'db.statement')?.stringValue).includes('webhook_delivery_attempts'));
  await waitUntil(async () => recorded(), 30_000);
  t.true(recorded());
});
