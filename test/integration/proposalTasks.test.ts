/**
 * Issue 26.2: proposals as MCP tasks, with the official SDK 1.x client speaking 2025-11-25 (the revision whose Tasks
 * the SDK implements), a real Temporal dev server with our worker and Postgres. Two API servers share the database and
 * Temporal: a task is created on one and read, listed, awaited and cancelled on the other. Approval completes it with
 * the per-item result; rejection fails it with the reason; cancel withdraws an undecided proposal and is refused once
 * somebody decided. Another account's or another shop's credential does not find it. Clients that ask for no task get
 * today's answer. The 2026-07-28 Tasks extension (SEP-2663) has no client in the official SDKs yet, so its leg is
 * driven over raw HTTP with the revision's headers and envelope.
 */
import anyTest, { type TestFn } from 'ava';
import crypto from 'node:crypto';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { allScopes } from '../../src/auth/scopes.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { decideProposal } from '../../src/temporal/proposals.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { createTestDatabase, rowForInsert, type TestDatabase } from '../helpers/db.js';
import { ensureSampleProposals } from '../helpers/proposals.js';
import { connectLegacy, connectModern, modernRequest, rawMcp, toolError, type LegacyConnection } from '../helpers/mcp.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  /** Two API processes' worth of servers over one database and one Temporal. */
  one: TestServer;
  two: TestServer;
  temporal: TemporalAccess;
  worker: InProcessWorker;
  key: string;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const { db } = database;
  const worker = await startInProcessWorker(db, { prefix: 'test-tasks' });
  const { taskQueue } = worker;
  const temporal: TemporalAccess = { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue };
  const one = await startTestServer(db, () => new Date(), undefined, { platforms: createPlatformRegistry({ db }), temporal });
  const two = await startTestServer(db, () => new Date(), undefined, { platforms: createPlatformRegistry({ db }), temporal: { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue } });
  t.context = { database, one, two, temporal, worker, key: await issueKey(db, { scopes: allScopes }) };
});

test.after.always(async (t) => {
  await t.context.one?.close();
  await t.context.two?.close();
  await t.context.temporal?.close();
  await t.context.worker?.stop();
  await t.context.database?.drop();
});

async function legacy(server: TestServer, key: string): Promise<LegacyConnection> {
  return connectLegacy(server, key, '2025-11-25');
}

let offset = 0;
/** Arguments of a product-text proposal on shop `sk` for a product no other test of this file uses. */
async function productTexts(t: { context: Context }): Promise<Record<string, unknown>> {
  const { db } = t.context.database;
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id');
  const row = await db('products').where({ shop_id: shop.id }).whereNotNull('meta_title').orderBy('code').offset(offset++).first('code');
  const read = await api(t.context.one, `/products/${encodeURIComponent(row.code)}/content?market=sk`, t.context.key);
  return { market: 'sk', products: [{ code: row.code, fingerprint: read.body.data.fingerprint, fields: { metaTitle: `Task title ${offset}` } }] };
}

/** Creates a task through the SDK's task-augmented call and returns the task it announced. */
async function createTask(connection: LegacyConnection, name: string, args: Record<string, unknown>, ttl = 3_600_000): Promise<{ taskId: string; status: string; ttl: number | null; pollInterval?: number }> {
  const stream = connection.client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl } });
  for await (const message of stream) {
    if (message.type === 'taskCreated') return message.task;
    throw new Error(`expected taskCreated, got ${JSON.stringify(message).slice(0, 300)}`);
  }
  throw new Error('no message');
}

test.serial('When a 2025-11-25 client lists the tools, then the four propose tools say tasks are optional and the server declares tasks', async (t) => {
  const connection = await legacy(t.context.one, t.context.key);
  try {
    const { tools } = await connection.client.listTools();
    const optional = tools.filter((tool) => (tool as { execution?: { taskSupport?: string } }).execution?.taskSupport === 'optional').map((tool) => tool.name).sort();
    t.deepEqual(optional, ['availabilities_propose', 'categories_content_propose', 'claims_settings_propose', 'products_content_propose']);
    t.deepEqual(connection.client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  } finally {
    await connection.client.close();
  }
});

test.serial('When a task is created on one server and a person approves, then the other server reports it working, then completed with the per-item result', async (t) => {
  const creator = await legacy(t.context.one, t.context.key);
  const reader = await legacy(t.context.two, t.context.key);
  try {
    const created = await createTask(creator, 'products_content_propose', await productTexts(t));
    t.regex(created.taskId, /^prp_[0-9a-f]{16}$/);
    t.is(created.status, 'working');
    t.is(created.ttl, 3_600_000);
    t.is(created.pollInterval, 5_000);

    const waiting = await reader.client.experimental.tasks.getTask(created.taskId);
    t.is(waiting.status, 'working');
    t.regex(waiting.statusMessage ?? '', /^Waiting for a person to approve it in the application/);
    const listed = await reader.client.experimental.tasks.listTasks();
    t.true(listed.tasks.some((task) => task.taskId === created.taskId && task.status === 'working'));

    // tasks/result on the second server waits for the workflow, which the person's approval ends.
    const result = reader.client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
    t.is((await decideProposal(await t.context.temporal.client(), created.taskId, { approve: true, by: 'person:1' })).status, 'written');
    const final = await result;
    t.falsy(final.isError);
    const draft = (final.structuredContent as { data: any }).data;
    t.is(draft.draftId, created.taskId);
    t.is(draft.status, 'written');
    t.deepEqual(draft.items.map((item: any) => item.status), ['written']);
    t.deepEqual((final._meta as Record<string, unknown>)['io.modelcontextprotocol/related-task'], { taskId: created.taskId });
    const done = await reader.client.experimental.tasks.getTask(created.taskId);
    t.is(done.status, 'completed');
  } finally {
    await creator.client.close();
    await reader.client.close();
  }
});

test.serial('When a person rejects the proposal, then the task fails with the reason and its result is PROPOSAL_REJECTED', async (t) => {
  const connection = await legacy(t.context.one, t.context.key);
  try {
    // A ttl beyond 32 bits (30 days) is kept as asked.
    const created = await createTask(connection, 'claims_settings_propose', { market: 'sk', refundOptions: { refundCouponValidityDays: 123 } }, 2_592_000_000);
    t.is(created.ttl, 2_592_000_000);
    await decideProposal(await t.context.temporal.client(), created.taskId, { approve: false, by: 'person:1', reason: 'Keep the validity' });
    const task = await connection.client.experimental.tasks.getTask(created.taskId);
    t.is(task.status, 'failed');
    t.is(task.statusMessage, 'Rejected by person:1: Keep the validity. Nothing was written.');
    const result = await connection.client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
    const error = toolError(result).error;
    t.is(error.code, 'PROPOSAL_REJECTED');
    t.is(error.details?.reason, 'Keep the validity');
  } finally {
    await connection.client.close();
  }
});

test.serial('When the assistant cancels an undecided task on the other server, then the proposal is withdrawn, and a second cancel or a cancel after a decision is refused', async (t) => {
  const creator = await legacy(t.context.one, t.context.key);
  const other = await legacy(t.context.two, t.context.key);
  try {
    const created = await createTask(creator, 'products_content_propose', await productTexts(t));
    const cancelled = await other.client.experimental.tasks.cancelTask(created.taskId);
    t.is(cancelled.status, 'cancelled');
    const row = await t.context.database.db('proposals').where({ draft_id: created.taskId }).first('status', 'decision', 'decided_by', 'created_by');
    t.is(row.status, 'rejected');
    t.is(row.decided_by, row.created_by);
    const again = await t.throwsAsync(other.client.experimental.tasks.cancelTask(created.taskId));
    t.regex(again!.message, /already rejected/);
    t.is((again as unknown as { data?: { code?: string } }).data?.code, 'PROPOSAL_ALREADY_DECIDED');
    t.is(toolError(await creator.client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema)).error.code, 'PROPOSAL_WITHDRAWN');

    const approved = await createTask(creator, 'products_content_propose', await productTexts(t));
    await decideProposal(await t.context.temporal.client(), approved.taskId, { approve: true, by: 'person:1' });
    const refused = await t.throwsAsync(other.client.experimental.tasks.cancelTask(approved.taskId));
    t.is((refused as unknown as { data?: { code?: string } }).data?.code, 'PROPOSAL_ALREADY_DECIDED');
    t.is((await other.client.experimental.tasks.getTask(approved.taskId)).status, 'completed');
  } finally {
    await creator.client.close();
    await other.client.close();
  }
});

test.serial('When another account, a credential of another shop or one without the tool\'s scope asks for a task, then it is not found and not listed', async (t) => {
  const creator = await legacy(t.context.one, t.context.key);
  const created = await createTask(creator, 'products_content_propose', await productTexts(t));
  await creator.client.close();
  // MX7: a demo credential of every shop, holding every scope but the one of the tool that made the task, does not see it.
  const withoutScope = await issueKey(t.context.database.db, { scopes: allScopes.filter((scope) => scope !== 'product-content:read') });
  for (const key of [await issueKey(t.context.database.db, { account: 'acme', scopes: allScopes }), await issueKey(t.context.database.db, { scopes: allScopes, shops: ['cz'] }), withoutScope]) {
    const stranger = await legacy(t.context.two, key);
    try {
      const error = await t.throwsAsync(stranger.client.experimental.tasks.getTask(created.taskId));
      t.regex(error!.message, /no task prp_/);
      t.is((error as unknown as { data?: { code?: string } }).data?.code, 'NOT_FOUND');
      await t.throwsAsync(stranger.client.experimental.tasks.cancelTask(created.taskId), { message: /no task prp_/ });
      await t.throwsAsync(stranger.client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema), { message: /no task prp_/ });
      t.false((await stranger.client.experimental.tasks.listTasks()).tasks.some((task) => task.taskId === created.taskId));
    } finally {
      await stranger.client.close();
    }
  }
  const row = await t.context.database.db('proposals').where({ draft_id: created.taskId }).first('status');
  t.is(row.status, 'awaiting_approval', 'nobody else withdrew it');
  // The tool's scope alone is enough: another demo credential holding only product-content:read sees the task.
  const scopeOnly = await legacy(t.context.two, await issueKey(t.context.database.db, { scopes: ['product-content:read'] }));
  try {
    t.is((await scopeOnly.client.experimental.tasks.getTask(created.taskId)).status, 'working');
  } finally {
    await scopeOnly.client.close();
  }
});

test.serial('When a client asks for no task (2025-11-25 and 2026-07-28), then the propose tool answers the draft as before and no task is recorded', async (t) => {
  const before = Number((await t.context.database.db('mcp_tasks').count('* as n').first())!.n);
  const connection = await legacy(t.context.one, t.context.key);
  const modern = await connectModern(t.context.two, t.context.key);
  try {
    for (const client of [connection.client, modern]) {
      const result = await client.callTool({ name: 'products_content_propose', arguments: await productTexts(t) }) as { structuredContent: { data: any } };
      t.is(result.structuredContent.data.status, 'awaiting_approval');
      t.regex(result.structuredContent.data.draftId, /^prp_/);
    }
  } finally {
    await connection.client.close();
    await modern.close();
  }
  t.is(Number((await t.context.database.db('mcp_tasks').count('* as n').first())!.n), before);
});

/** A 2026-07-28 request whose client capabilities name the Tasks extension. */
async function modernTasks(server: TestServer, key: string, method: string, params: Record<string, unknown>): Promise<any> {
  const { body, headers } = modernRequest(method, params, key);
  (body.params as any)._meta['io.modelcontextprotocol/clientCapabilities'] = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
  const response = await rawMcp(server, body, headers);
  if (response.status !== 200) throw new Error(`${method}: HTTP ${response.status} ${response.text.slice(0, 300)}`);
  return response.body;
}

test.serial('When a 2026-07-28 client declares the Tasks extension, then a propose call returns a task, tasks/get on the other server reports working, then completed with the result inline', async (t) => {
  const discover = await rawMcp(t.context.one, modernRequest('server/discover', {}, t.context.key).body, modernRequest('server/discover', {}, t.context.key).headers);
  t.deepEqual(discover.body.result.capabilities.extensions?.['io.modelcontextprotocol/tasks'], {});

  const created = (await modernTasks(t.context.one, t.context.key, 'tools/call', { name: 'products_content_propose', arguments: await productTexts(t) })).result;
  t.is(created.resultType, 'task');
  t.is(created.status, 'working');
  t.is(created.ttlMs, null);
  t.is(created.pollIntervalMs, 5_000);
  t.regex(created.taskId, /^prp_[0-9a-f]{16}$/);

  const working = (await modernTasks(t.context.two, t.context.key, 'tasks/get', { taskId: created.taskId })).result;
  t.is(working.resultType, 'complete');
  t.is(working.status, 'working');
  t.is(working.result, undefined);

  await decideProposal(await t.context.temporal.client(), created.taskId, { approve: true, by: 'person:1' });
  const done = (await modernTasks(t.context.two, t.context.key, 'tasks/get', { taskId: created.taskId })).result;
  t.is(done.status, 'completed');
  t.is(done.result.structuredContent.data.status, 'written');
  t.deepEqual(done.result.structuredContent.data.items.map((item: any) => item.status), ['written']);

  // SEP-2663 has no tasks/list or tasks/result: the SDK answers them as unknown methods.
  const list = modernRequest('tasks/list', {}, t.context.key);
  const unknown = await rawMcp(t.context.two, list.body, list.headers);
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, -32601);
});

test.serial('When a 2026-07-28 task is rejected or withdrawn, then tasks/get says failed with the code and reason, or cancelled; a second cancel is refused', async (t) => {
  const rejected = (await modernTasks(t.context.one, t.context.key, 'tools/call', { name: 'products_content_propose', arguments: await productTexts(t) })).result;
  await decideProposal(await t.context.temporal.client(), rejected.taskId, { approve: false, by: 'person:1', reason: 'Not this wording' });
  const failed = (await modernTasks(t.context.two, t.context.key, 'tasks/get', { taskId: rejected.taskId })).result;
  t.is(failed.status, 'failed');
  t.is(failed.error.data.code, 'PROPOSAL_REJECTED');
  t.is(failed.error.data.reason, 'Not this wording');

  const withdrawn = (await modernTasks(t.context.one, t.context.key, 'tools/call', { name: 'products_content_propose', arguments: await productTexts(t) })).result;
  const ack = await modernTasks(t.context.two, t.context.key, 'tasks/cancel', { taskId: withdrawn.taskId });
  t.is(ack.result.resultType, 'complete');
  t.is((await modernTasks(t.context.one, t.context.key, 'tasks/get', { taskId: withdrawn.taskId })).result.status, 'cancelled');
  t.is((await modernTasks(t.context.one, t.context.key, 'tasks/cancel', { taskId: withdrawn.taskId })).error.data.code, 'PROPOSAL_ALREADY_DECIDED');
  const stranger = await issueKey(t.context.database.db, { account: 'acme', scopes: allScopes });
  t.is((await modernTasks(t.context.two, stranger, 'tasks/get', { taskId: withdrawn.taskId })).error.data.code, 'NOT_FOUND');
});

test.serial('When a caller has 50 tasks, then tasks/list answers them on one page; with 51, it pages 50 and a cursor to the 51st', async (t) => {
  const { db } = t.context.database;
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  const cz = await db('shops').where({ account_id: demo.id, code: 'cz' }).first('id');
  const sample = (await ensureSampleProposals(db))['products.content_draft:draftId'];
  const source = await db('proposals').where({ draft_id: sample }).first();
  // Tasks on shop cz (the other tests' tasks are on sk), seen through a cz-only key: copies of a stored proposal.
  const key = await issueKey(db, { scopes: allScopes, shops: ['cz'] });
  const addTasks = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const draftId = `prp_${crypto.randomBytes(8).toString('hex')}`;
      await db('proposals').insert({ ...rowForInsert(source, ['id']), draft_id: draftId, shop_id: cz.id });
      await db('mcp_tasks').insert({ task_id: draftId, account_id: demo.id, created_by: 'key:paging', tool: 'products_content_propose' });
    }
  };
  const connection = await legacy(t.context.one, key);
  try {
    await addTasks(50);
    const whole = await connection.client.experimental.tasks.listTasks();
    t.is(whole.tasks.length, 50);
    t.is(whole.nextCursor, undefined);
    await addTasks(1);
    const first = await connection.client.experimental.tasks.listTasks();
    t.is(first.tasks.length, 50);
    t.is(first.nextCursor, '50');
    const second = await connection.client.experimental.tasks.listTasks(first.nextCursor);
    t.is(second.tasks.length, 1);
    t.is(second.nextCursor, undefined);
    t.is(new Set([...first.tasks, ...second.tasks].map((task) => task.taskId)).size, 51);
  } finally {
    await connection.client.close();
  }
});
