/**
 * Issue 26.3, 2025-era leg (ME decisions): a 2025-11-25 client (the official SDK 1.x, its own `elicitation/create`
 * handler) that declares elicitation in `initialize` gets a session (`Mcp-Session-Id`, a Postgres row); its
 * coupons_update/coupons_remove is answered on an SSE stream carrying our yes/no question, and its answer comes back as
 * a POST — also to a second server process over the same database. Accept → applied through the D25 token; decline,
 * cancel or no answer in time → nothing changes (shop, mirror and token table asserted unchanged). DELETE ends the
 * session; a session is nobody else's.
 */
import type { ExecutionContext } from 'ava';
import { connectLegacy, connectLegacyAsking, rawMcp, toolError, type ElicitAnswer } from '../helpers/mcp.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { shopId } from '../helpers/shops.js';
import { issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { writingServerTest, type WritingServerContext } from '../helpers/writingServer.js';
import { TEST_NOW } from '../helpers/constants.js';
import { openSession, useSession } from '../../api/mcp/sessions.js';
import type { Caller } from '../../src/capabilities/context.js';

type Context = WritingServerContext;
const test = writingServerTest();

/**
 * Another API process over the same database (its own app and memory), and one that waits 1.5 s for an answer; started
 * on first use (the file's own before hook creates the database concurrently with any hook of ours).
 */
const servers: { second?: Promise<TestServer>; impatient?: Promise<TestServer> } = {};
function second(t: ExecutionContext<Context>): Promise<TestServer> {
  return (servers.second ??= startTestServer(t.context.database.db, () => TEST_NOW, undefined, { platforms: t.context.platforms }));
}
function impatient(t: ExecutionContext<Context>): Promise<TestServer> {
  return (servers.impatient ??= startTestServer(t.context.database.db, () => TEST_NOW, { allowedOrigins: [], confirmationWaitMs: 1_500 }, { platforms: t.context.platforms }));
}

test.after.always(async () => {
  await (await servers.second)?.close();
  await (await servers.impatient)?.close();
});

/** A plain percent coupon of the shop (no partner, no automation depends on it, never confirmed before). */
async function plainCoupon(t: ExecutionContext<Context>, market: string): Promise<{ code: string }> {
  const id = await shopId(t.context.database.db, 'demo', market);
  return t.context.database.db('coupons as c').where('c.shop_id', id).whereNull('c.partner_index').where('c.discount_type', 'percent')
    .whereNotExists((q) => q.select(1).from('affiliate_discount_codes as d').whereRaw('d.shop_id = c.shop_id and d.code = c.code'))
    .whereNotExists((q) => q.select(1).from('coupon_confirmations as u').whereRaw('u.shop_id = c.shop_id and u.coupon_code = c.code'))
    .orderBy('c.code', 'desc').first('code');
}

async function couponState(t: ExecutionContext<Context>, market: string, code: string): Promise<any> {
  const shop = (await findSyncShop(t.context.database.db, 'demo', market))!;
  const id = await shopId(t.context.database.db, 'demo', market);
  return {
    inShop: await t.context.platforms.get('demo')!.readCoupon(shop, code),
    mirror: await t.context.database.db('coupons').where({ shop_id: id, code }).first(),
    tokensUsed: Number((await t.context.database.db('coupon_confirmations').count('* as n').first())!.n),
  };
}

function dataOf(result: unknown): any {
  const r = result as { isError?: boolean; structuredContent?: { data: unknown }; content?: unknown };
  if (r.isError) throw new Error(`tool failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent!.data;
}

const accept: ElicitAnswer = { action: 'accept', content: { confirm: true } };

test.serial('When a 2025-11-25 client that declares elicitation initializes, then it gets a session recorded in Postgres, and the person it asks accepts a coupons_update, which is applied', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  // The question's row as it stands while the person is being asked: it waits 5 minutes for the answer (ME4).
  const questions: Array<{ created_at: Date; expires_at: Date }> = [];
  const { client, asked, transport } = await connectLegacyAsking(t.context.server, t.context.key, async () => {
    questions.push(await t.context.database.db('mcp_session_questions').orderBy('created_at', 'desc').first('created_at', 'expires_at'));
    return accept;
  });
  try {
    t.regex(transport.sessionId ?? '', /^[A-Za-z0-9_-]{43}$/, 'a session id was issued');
    const row = await t.context.database.db('mcp_sessions').orderBy('created_at', 'desc').first();
    t.is(row.expires_at.getTime() - row.created_at.getTime(), 60 * 60 * 1000, 'an unused session ends after an hour');
    t.is(row.protocol_version, '2025-11-25');
    t.deepEqual(row.client_capabilities, { elicitation: { form: {} } });
    t.is(row.ended_at, null);
    t.not(row.id_hash, transport.sessionId, 'the id itself is not stored');
    const data = dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'sk', code, changes: { usageLimit: 606 } } }));
    t.is(data.status, 'updated');
    t.is(asked.length, 1, 'the person was asked once');
    t.regex(asked[0].message, new RegExp(`Change coupon ${code} in shop sk\\?`));
    t.regex(asked[0].message, /usageLimit: .+ → 606/);
    t.deepEqual((asked[0].requestedSchema as { required: string[] }).required, ['confirm']);
    t.is(asked[0].mode, 'form');
    t.is(questions.length, 1);
    t.is(questions[0].expires_at.getTime() - questions[0].created_at.getTime(), 5 * 60 * 1000, 'the question waits 5 minutes');
    const after = await couponState(t, 'sk', code);
    t.is(after.inShop.usageLimit, 606);
    t.is(after.mirror.usage_limit, 606);
    t.is(Number((await t.context.database.db('mcp_session_questions').count('* as n').first())!.n), 0, 'the answered question is gone');
  } finally {
    await client.close();
  }
});

test.serial('When a session is unused for an hour, then it has ended; used a moment before, it lives another hour from that use (ME)', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const caller = { account: { id: String(account.id) }, credentialId: `idle-${Date.now()}`, credentialType: 'access_key' } as unknown as Caller;
  const hour = 60 * 60 * 1000;
  const at = (ms: number) => new Date(TEST_NOW.getTime() + ms);
  const idle = await openSession(db, caller, '2025-11-25', { elicitation: { form: {} } }, TEST_NOW);
  t.is(await useSession(db, idle, caller, at(hour)), null, 'an hour unused: ended');
  const used = await openSession(db, caller, '2025-11-25', { elicitation: { form: {} } }, TEST_NOW);
  t.truthy(await useSession(db, used, caller, at(hour - 1)), 'a millisecond before the hour: alive');
  t.truthy(await useSession(db, used, caller, at(2 * hour - 2)), 'renewed by the use: alive until an hour after it');
  t.is(await useSession(db, used, caller, at(3 * hour - 2)), null, 'an hour after the last use: ended');
});

for (const [action, tool] of [['decline', 'coupons_update'], ['cancel', 'coupons_remove']] as const) {
  test.serial(`When the person answers ${action} to a ${tool} question in a 2025 session, then nothing changes in the shop, the mirror or the token table`, async (t) => {
    const { code } = await plainCoupon(t, 'cz');
    const before = await couponState(t, 'cz', code);
    const { client, asked } = await connectLegacyAsking(t.context.server, t.context.key, () => ({ action }));
    try {
      const args = tool === 'coupons_update' ? { market: 'cz', code, changes: { usageLimit: 4321 } } : { market: 'cz', code };
      const data = dataOf(await client.callTool({ name: tool, arguments: args }));
      t.is(data.status, action === 'decline' ? 'declined' : 'cancelled');
      t.is(data.confirmationToken, null);
      t.is(asked.length, 1);
      t.deepEqual(await couponState(t, 'cz', code), before);
    } finally {
      await client.close();
    }
  });
}

test.serial('When a 2025-06-18 client that declares elicitation updates a coupon, then it is asked in its session (form without `mode`, as that revision has it) and accept applies it', async (t) => {
  const { code } = await plainCoupon(t, 'cz');
  const { client, asked, transport } = await connectLegacyAsking(t.context.server, t.context.key, () => accept, { version: '2025-06-18' });
  try {
    t.truthy(transport.sessionId);
    t.is(transport.protocolVersion, '2025-06-18');
    const data = dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'cz', code, changes: { perCustomerLimit: 3 } } }));
    t.is(data.status, 'updated');
    t.is(asked.length, 1);
    t.is(asked[0].mode, undefined);
    t.is((await couponState(t, 'cz', code)).inShop.perCustomerLimit, 3);
  } finally {
    await client.close();
  }
});

test.serial('When the answer to a coupons_remove question is POSTed to another API process, then it reaches the waiting call and the coupon is removed', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  const { client, asked } = await connectLegacyAsking(t.context.server, t.context.key, () => accept, { answersTo: await second(t) });
  try {
    const data = dataOf(await client.callTool({ name: 'coupons_remove', arguments: { market: 'sk', code } }));
    t.is(data.status, 'removed');
    t.is(asked.length, 1);
    const after = await couponState(t, 'sk', code);
    t.is(after.inShop, null);
    t.is(after.mirror, undefined);
  } finally {
    await client.close();
  }
});

test.serial('When the person does not answer in time, then the call ends with CONFIRMATION_NOT_ANSWERED and nothing changes', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  const before = await couponState(t, 'sk', code);
  let late: () => void = () => undefined;
  const answered = new Promise<ElicitAnswer>((resolve) => { late = () => resolve(accept); });
  const { client, asked } = await connectLegacyAsking(await impatient(t), t.context.key, () => answered);
  try {
    const result = await client.callTool({ name: 'coupons_update', arguments: { market: 'sk', code, changes: { usageLimit: 13 } } });
    t.true(result.isError);
    t.is(toolError(result).error.code, 'CONFIRMATION_NOT_ANSWERED');
    t.is(asked.length, 1);
    // The accept that comes too late changes nothing either.
    late();
    await new Promise((resolve) => setTimeout(resolve, 500));
    t.deepEqual(await couponState(t, 'sk', code), before);
  } finally {
    await client.close();
  }
});

test.serial('When the client ends its session with DELETE, then the session id is not found any more (404), and its row is ended', async (t) => {
  const { client, transport } = await connectLegacyAsking(t.context.server, t.context.key, () => accept);
  const sessionId = transport.sessionId!;
  await transport.terminateSession();
  await client.close();
  const headers = { Authorization: `Bearer ${t.context.key}`, 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Session-Id': sessionId };
  const after = await rawMcp(t.context.server, { jsonrpc: '2.0', id: 7, method: 'tools/list' }, headers);
  t.is(after.status, 404);
  t.is(after.body.error.code, -32001);
  t.is(after.body.id, 7);
  const again = await rawMcp(t.context.server, undefined, headers, 'DELETE');
  t.is(again.status, 404, 'a session ends once');
  t.true(await t.context.database.db('mcp_sessions').whereNotNull('ended_at').count('* as n').first().then((r) => Number(r!.n) >= 1));
});

test.serial('When another key presents a live session id, then it is not found (404) and the session stays usable by its own key', async (t) => {
  const { client, transport } = await connectLegacyAsking(t.context.server, t.context.key, () => accept);
  try {
    const other = await issueKey(t.context.database.db);
    const stolen = await rawMcp(t.context.server, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { Authorization: `Bearer ${other}`, 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Session-Id': transport.sessionId! });
    t.is(stolen.status, 404);
    t.is((await rawMcp(t.context.server, undefined, { Authorization: `Bearer ${other}`, 'Mcp-Session-Id': transport.sessionId! }, 'DELETE')).status, 404);
    t.true((await client.listTools()).tools.length > 0);
  } finally {
    await client.close();
  }
});

test.serial('When a 2025-11-25 client declares no elicitation, then it gets no session and coupons_update keeps the D25 preview and token', async (t) => {
  const { code } = await plainCoupon(t, 'cz');
  const before = await couponState(t, 'cz', code);
  const { client, transport } = await connectLegacy(t.context.server, t.context.key, '2025-11-25');
  try {
    t.is(transport.sessionId, undefined);
    const data = dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'cz', code, changes: { usageLimit: 31 } } }));
    t.is(data.status, 'preview');
    t.regex(data.confirmationToken, /^cct1\./);
    t.deepEqual(await couponState(t, 'cz', code), before);
  } finally {
    await client.close();
  }
});

test.serial('When a session client sends the token itself, then the token path applies without a question', async (t) => {
  const { code } = await plainCoupon(t, 'cz');
  const { client, asked } = await connectLegacyAsking(t.context.server, t.context.key, () => ({ action: 'decline' }));
  try {
    // A preview from a stateless request of the same key, confirmed by the token in the session.
    const { client: plain } = await connectLegacy(t.context.server, t.context.key, '2025-11-25');
    const args = { market: 'cz', code, changes: { usageLimit: 64 } };
    const preview = dataOf(await plain.callTool({ name: 'coupons_update', arguments: args }));
    await plain.close();
    const updated = dataOf(await client.callTool({ name: 'coupons_update', arguments: { ...args, confirmationToken: preview.confirmationToken } }));
    t.is(updated.status, 'updated');
    t.is(asked.length, 0);
    t.is((await couponState(t, 'cz', code)).inShop.usageLimit, 64);
  } finally {
    await client.close();
  }
});

test.serial('When the person accepts the session question without ticking "Apply this change" (confirm false), then it counts as declined and nothing changes (ME4)', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  const before = await couponState(t, 'sk', code);
  const { client, asked } = await connectLegacyAsking(t.context.server, t.context.key, () => ({ action: 'accept', content: { confirm: false } }));
  try {
    const data = dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'sk', code, changes: { usageLimit: 707 } } }));
    t.is(asked.length, 1, 'the person was asked');
    t.is(data.status, 'declined');
    const after = await couponState(t, 'sk', code);
    t.deepEqual(after.inShop, before.inShop, 'the shop\'s coupon is unchanged');
    t.is(after.mirror.usage_limit, before.mirror.usage_limit);
    t.not(after.inShop.usageLimit, 707);
  } finally {
    await client.close();
  }
});
