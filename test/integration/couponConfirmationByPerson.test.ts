/**
 * Issue 26.3: coupons_update and coupons_remove ask the person, where the client can ask (2026-07-28 multi-round-trip
 * `input_required` with a form-mode elicitation, through the official SDK 2.x client and its elicitation handler).
 * Accept → applied; decline or cancel → nothing changes (shop, mirror and token table asserted unchanged). A tampered
 * requestState is refused like a tampered token. A 2026-07-28 client that declares no elicitation keeps D25's preview
 * and token unchanged. The 2025-era leg (a session, `elicitation/create` on the call's stream) is
 * couponConfirmationInSession.test.ts.
 */
import type { ExecutionContext } from 'ava';
import { connectModern, connectModernAsking, modernRequest, rawMcp, toolError, type ElicitAnswer } from '../helpers/mcp.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { shopId } from '../helpers/shops.js';
import { writingServerTest, type WritingServerContext } from '../helpers/writingServer.js';

type Context = WritingServerContext;
const test = writingServerTest();

/** A plain percent coupon of the shop (no partner, no automation depends on it), not one of `skip`. */
async function plainCoupon(t: ExecutionContext<Context>, market: string, skip: string[] = []): Promise<{ code: string }> {
  const id = await shopId(t.context.database.db, 'demo', market);
  return t.context.database.db('coupons as c').where('c.shop_id', id).whereNull('c.partner_index').where('c.discount_type', 'percent').whereNotIn('c.code', skip)
    .whereNotExists((q) => q.select(1).from('affiliate_discount_codes as d').whereRaw('d.shop_id = c.shop_id and d.code = c.code'))
    .whereNotExists((q) => q.select(1).from('coupon_confirmations as u').whereRaw('u.shop_id = c.shop_id and u.coupon_code = c.code'))
    .orderBy('c.code').first('code');
}

/** Everything a coupon write could touch: the coupon in the shop, its mirror row, and the used tokens. */
async function couponState(t: ExecutionContext<Context>, market: string, code: string): Promise<unknown> {
  const shop = (await findSyncShop(t.context.database.db, 'demo', market))!;
  const id = await shopId(t.context.database.db, 'demo', market);
  return {
    inShop: await t.context.platforms.get('demo')!.readCoupon(shop, code),
    mirror: await t.context.database.db('coupons').where({ shop_id: id, code }).first(),
    tokensUsed: Number((await t.context.database.db('coupon_confirmations').count('* as n').first())!.n),
  };
}

async function askingClient(t: ExecutionContext<Context>, answer: ElicitAnswer) {
  return connectModernAsking(t.context.server, t.context.key, () => answer);
}

function dataOf(result: unknown): any {
  const r = result as { isError?: boolean; structuredContent?: { data: unknown }; content?: unknown };
  if (r.isError) throw new Error(`tool failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent!.data;
}

test.serial('When a 2026-07-28 client that can ask its user updates a coupon and the person accepts, then the person was shown the change and it is applied in the shop', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  const { client, asked } = await askingClient(t, { action: 'accept', content: { confirm: true } });
  try {
    const data = dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'sk', code, changes: { usageLimit: 777 } } }));
    t.is(data.status, 'updated');
    t.is(data.confirmationToken, null);
    t.is(asked.length, 1, 'the person was asked once');
    t.regex(asked[0].message, new RegExp(`Change coupon ${code} in shop sk\\?`));
    t.regex(asked[0].message, /usageLimit: .+ → 777/);
    t.deepEqual((asked[0].requestedSchema as { required: string[] }).required, ['confirm']);
    t.is(((await couponState(t, 'sk', code)) as any).inShop.usageLimit, 777);
    t.is(((await couponState(t, 'sk', code)) as any).mirror.usage_limit, 777);
  } finally {
    await client.close();
  }
});

for (const action of ['decline', 'cancel'] as const) {
  test.serial(`When the person answers ${action} to a coupons_update question, then nothing changes in the shop, the mirror or the token table`, async (t) => {
    const { code } = await plainCoupon(t, 'cz');
    const before = await couponState(t, 'cz', code);
    const { client, asked } = await askingClient(t, { action });
    try {
      const data = dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'cz', code, changes: { usageLimit: 4321, name: 'Never applied' } } }));
      t.is(data.status, action === 'decline' ? 'declined' : 'cancelled');
      t.is(data.confirmationToken, null);
      t.regex(data.message, /nothing was changed/);
      t.is(asked.length, 1);
      t.deepEqual(await couponState(t, 'cz', code), before);
    } finally {
      await client.close();
    }
  });

  test.serial(`When the person answers ${action} to a coupons_remove question, then the coupon stays`, async (t) => {
    const { code } = await plainCoupon(t, 'sk');
    const before = await couponState(t, 'sk', code);
    const { client, asked } = await askingClient(t, { action });
    try {
      const data = dataOf(await client.callTool({ name: 'coupons_remove', arguments: { market: 'sk', code } }));
      t.is(data.status, action === 'decline' ? 'declined' : 'cancelled');
      t.regex(asked[0].message, new RegExp(`Remove coupon ${code} from shop sk\\? This cannot be undone\\.`));
      t.deepEqual(await couponState(t, 'sk', code), before);
    } finally {
      await client.close();
    }
  });
}

test.serial('When the person accepts a coupons_remove question, then the coupon is removed from the shop and the mirror', async (t) => {
  const { code } = await plainCoupon(t, 'cz');
  const { client, asked } = await askingClient(t, { action: 'accept', content: { confirm: true } });
  try {
    const data = dataOf(await client.callTool({ name: 'coupons_remove', arguments: { market: 'cz', code } }));
    t.is(data.status, 'removed');
    t.is(asked.length, 1);
    const after = (await couponState(t, 'cz', code)) as any;
    t.is(after.inShop, null);
    t.is(after.mirror, undefined);
  } finally {
    await client.close();
  }
});

test.serial('When the person accepts but leaves the box unticked, then it counts as declined and nothing changes', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  const before = await couponState(t, 'sk', code);
  const { client } = await askingClient(t, { action: 'accept', content: { confirm: false } });
  try {
    t.is(dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'sk', code, changes: { usageLimit: 9 } } })).status, 'declined');
    t.deepEqual(await couponState(t, 'sk', code), before);
  } finally {
    await client.close();
  }
});

test.serial('When a retried call carries an accepted answer with a forged requestState, then it is refused as an invalid confirmation token and nothing changes', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  const before = await couponState(t, 'sk', code);
  const { body, headers } = modernRequest('tools/call', { name: 'coupons_update', arguments: { market: 'sk', code, changes: { usageLimit: 55 } } }, t.context.key);
  const params = body.params as Record<string, any>;
  params._meta['io.modelcontextprotocol/clientCapabilities'] = { elicitation: { form: {} } };
  params.inputResponses = { confirm: { action: 'accept', content: { confirm: true } } };
  params.requestState = 'cct1.forged.signature';
  const response = await rawMcp(t.context.server, body, headers);
  t.is(response.status, 200);
  t.is(toolError(response.body.result).error.code, 'CONFIRMATION_TOKEN_INVALID');
  t.deepEqual(await couponState(t, 'sk', code), before);
});

test.serial('When a 2026-07-28 client that declares no elicitation updates a coupon, then it gets the D25 preview and token as before', async (t) => {
  const { code } = await plainCoupon(t, 'sk');
  const before = await couponState(t, 'sk', code);
  const client = await connectModern(t.context.server, t.context.key);
  try {
    const data = dataOf(await client.callTool({ name: 'coupons_update', arguments: { market: 'sk', code, changes: { usageLimit: 31 } } }));
    t.is(data.status, 'preview');
    t.regex(data.confirmationToken, /^cct1\./);
    t.deepEqual(await couponState(t, 'sk', code), before);
  } finally {
    await client.close();
  }
});

test.serial('When a 2026-07-28 request without elicitation reaches the SDK (a progress token makes it no plain call), then it still gets the preview and token, not a question', async (t) => {
  const { code } = await plainCoupon(t, 'cz');
  const before = await couponState(t, 'cz', code);
  const { body, headers } = modernRequest('tools/call', { name: 'coupons_remove', arguments: { market: 'cz', code } }, t.context.key);
  (body.params as Record<string, any>)._meta.progressToken = 'progress-1';
  const response = await rawMcp(t.context.server, body, headers);
  t.is(response.status, 200);
  t.is(response.body.result.resultType, 'complete');
  t.is(response.body.result.structuredContent.data.status, 'preview');
  t.regex(response.body.result.structuredContent.data.confirmationToken, /^cct1\./);
  t.deepEqual(await couponState(t, 'cz', code), before);
});
