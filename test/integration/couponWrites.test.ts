/**
 * Coupon writes over MCP (issue 13) against the real server, real Postgres and the demo shop platform: coupons_ensure
 * never overwriting a different discount, coupons_update with restrictions and coupons_remove behind D25's preview and
 * single-use confirmation token (every refusal, concurrent confirmations, a stale preview), the dependency guard, and
 * affiliate_discount_codes_ensure — through a 2026-07-28 client and a 2025-11-25 client.
 */
import type { ExecutionContext } from 'ava';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { connectLegacy, connectModern, toolError } from '../helpers/mcp.js';
import { TEST_NOW } from '../helpers/constants.js';
import { personActor, sampleRule } from '../helpers/automations.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { createDraft, publishAutomation, setAutomationEnabled } from '../../src/automations/drafts.js';
import { partnerShopNote, ruleUsesCoupon } from '../../src/coupons/writes.js';
import type { ShopPlatformAdapter } from '../../src/platforms/types.js';
import { shopId } from '../helpers/shops.js';
import { writingServerTest, type WritingServerContext } from '../helpers/writingServer.js';

type Context = WritingServerContext;
const test = writingServerTest();

/** A connected MCP client of either SDK, with the one method the tests use. */
interface ToolClient {
  callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

const CLIENTS = {
  '2026-07-28': async (server: TestServer, key: string): Promise<ToolClient> => connectModern(server, key) as unknown as ToolClient,
  '2025-11-25': async (server: TestServer, key: string): Promise<ToolClient> => (await connectLegacy(server, key, '2025-11-25')).client as unknown as ToolClient,
} as const;
type Revision = keyof typeof CLIENTS;

async function withClient<T>(t: ExecutionContext<Context>, revision: Revision, fn: (client: ToolClient) => Promise<T>, key = t.context.key, server = t.context.server): Promise<T> {
  const client = await CLIENTS[revision](server, key);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** The `data` of a successful call (failing the test with the error otherwise). */
async function ok(client: ToolClient, name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: { data: unknown }; content?: unknown };
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent!.data;
}

/** The error code of a call that must fail. */
async function fails(client: ToolClient, name: string, args: Record<string, unknown>): Promise<{ code: string; details?: Record<string, unknown> }> {
  return toolError((await client.callTool({ name, arguments: args })) as object).error;
}

function demo(t: ExecutionContext<Context>): ShopPlatformAdapter {
  return t.context.platforms.get('demo')!;
}

async function shopInShop(t: ExecutionContext<Context>, market: string, code: string) {
  return demo(t).readCoupon((await findSyncShop(t.context.database.db, 'demo', market))!, code);
}

const rest = (t: ExecutionContext<Context>, path: string) => api(t.context.server, path, t.context.key);

/** A coupon of the shop that no partner and no automation depends on (a shop campaign or standing code). */
async function plainCoupon(t: ExecutionContext<Context>, market: string, skip: string[] = []): Promise<any> {
  const id = await shopId(t.context.database.db, 'demo', market);
  return t.context.database.db('coupons as c').where('c.shop_id', id).whereNull('c.partner_index').where('c.discount_type', 'percent').whereNotIn('c.code', skip)
    .whereNotExists((q) => q.select(1).from('affiliate_discount_codes as d').whereRaw('d.shop_id = c.shop_id and d.code = c.code'))
    .orderBy('c.code').first('*');
}

for (const revision of Object.keys(CLIENTS) as Revision[]) {
  test.serial(`When a ${revision} client ensures, updates with restrictions and removes a coupon, then each write reaches the shop and /coupons at once, and an existing different discount is never overwritten`, async (t) => {
    const code = `CW${revision.replace(/-/g, '')}`;
    await withClient(t, revision, async (client) => {
      // Ensure on two shops: created on both, with what the shop stored in the mirror.
      const created = await ok(client, 'coupons_ensure', { markets: ['sk', 'cz'], code: code.toLowerCase(), discount: { type: 'percent', percent: 15 }, validUntil: '2027-01-01T00:00:00.000Z' });
      t.is(created.code, code);
      t.deepEqual(created.shops.map((s: any) => [s.market, s.outcome]), [['sk', 'created'], ['cz', 'created']]);
      for (const market of ['sk', 'cz']) {
        const inShop = await shopInShop(t, market, code);
        t.deepEqual(inShop?.discount, { type: 'percent', percent: 15 });
        const mirrored = await rest(t, `/coupons/${code}?market=${market}`);
        t.is(mirrored.status, 200);
        t.is(mirrored.body.data.discount.percent, 15);
        t.is(mirrored.body.data.validUntil, '2027-01-01T00:00:00.000Z');
      }
      // Repeating it changes nothing; a different discount is a conflict per shop and is NOT written.
      const again = await ok(client, 'coupons_ensure', { markets: ['sk'], code, discount: { type: 'percent', percent: 15 } });
      t.is(again.shops[0].outcome, 'exists');
      const existing = await plainCoupon(t, 'sk');
      const conflict = await ok(client, 'coupons_ensure', { markets: ['sk', 'cz'], code, discount: { type: 'percent', percent: 40 } });
      t.deepEqual(conflict.shops.map((s: any) => s.outcome), ['conflict', 'conflict']);
      t.regex(conflict.shops[0].message, /NOT overwritten/);
      t.deepEqual(conflict.shops[0].differences.find((d: any) => d.field === 'discount').requested, { type: 'percent', percent: 40, amount: null });
      t.deepEqual((await shopInShop(t, 'sk', code))?.discount, { type: 'percent', percent: 15 });
      const other = await ok(client, 'coupons_ensure', { markets: ['sk'], code: existing.code, discount: { type: 'fixed', amount: '3.00', currency: 'EUR' } });
      t.is(other.shops[0].outcome, 'conflict');
      t.is((await rest(t, `/coupons/${existing.code}?market=sk`)).body.data.discount.type, 'percent');

      // Update with product and category restrictions: a preview first, changing nothing.
      const id = await shopId(t.context.database.db, 'demo', 'sk');
      const products = (await t.context.database.db('products').where({ shop_id: id }).orderBy('code').limit(2).select('code')).map((r: any) => r.code);
      const categories = (await t.context.database.db('categories').where({ shop_id: id }).orderBy('guid').limit(1).select('guid')).map((r: any) => r.guid);
      const args = { market: 'sk', code, changes: { discount: { type: 'fixed', amount: '5.00', currency: 'EUR' }, productCodes: products, categoryGuids: categories, usageLimit: 100 } };
      const preview = await ok(client, 'coupons_update', args);
      t.is(preview.status, 'preview');
      t.deepEqual(preview.changes.map((c: any) => c.field), ['discount', 'usageLimit', 'categoryGuids', 'productCodes']);
      t.deepEqual(preview.changes[0], { field: 'discount', before: { type: 'percent', percent: 15, amount: null }, after: { type: 'fixed', percent: null, amount: { amount: '5.00', currency: 'EUR' } } });
      t.truthy(preview.confirmationToken);
      t.is(preview.expiresAt, new Date(TEST_NOW.getTime() + 10 * 60_000).toISOString());
      t.deepEqual((await shopInShop(t, 'sk', code))?.discount, { type: 'percent', percent: 15 }, 'a preview writes nothing');
      const updated = await ok(client, 'coupons_update', { ...args, confirmationToken: preview.confirmationToken });
      t.is(updated.status, 'updated');
      const after = (await rest(t, `/coupons/${code}?market=sk`)).body.data;
      t.deepEqual(after.discount, { type: 'fixed', percent: null, amount: { amount: '5.00', currency: 'EUR' } });
      t.deepEqual(after.restrictions, { categoryGuids: categories, productCodes: products });
      t.is(after.usage.limit, 100);
      t.is(after.validUntil, '2027-01-01T00:00:00.000Z', 'fields not named are kept');
      t.deepEqual(updated.coupon, after);
      // Unknown products are refused before anything is previewed.
      t.is((await fails(client, 'coupons_update', { market: 'sk', code, changes: { productCodes: ['NO-SUCH-PRODUCT'] } })).code, 'INVALID_PARAMETER');
      t.is((await fails(client, 'coupons_update', { market: 'sk', code: 'NOSUCHCOUPON', changes: { name: 'x' } })).code, 'COUPON_NOT_FOUND');

      // Remove: a preview with no dependencies, then the removal; it is gone from the shop and from /coupons.
      const removeArgs = { market: 'cz', code };
      const removal = await ok(client, 'coupons_remove', removeArgs);
      t.is(removal.status, 'preview');
      t.deepEqual(removal.dependencies, []);
      t.is(removal.coupon.code, code);
      t.truthy(await shopInShop(t, 'cz', code), 'a preview removes nothing');
      const removed = await ok(client, 'coupons_remove', { ...removeArgs, confirmationToken: removal.confirmationToken });
      t.is(removed.status, 'removed');
      t.is(await shopInShop(t, 'cz', code), null);
      t.is((await rest(t, `/coupons/${code}?market=cz`)).body.error.code, 'COUPON_NOT_FOUND');
      t.is((await fails(client, 'coupons_remove', removeArgs)).code, 'COUPON_NOT_FOUND');
    });
  });
}

test.serial('When a confirmation token is reused, altered, expired, tampered with, presented by another key or for another tool, or the coupon changed since, then each is refused with its own code and nothing changes', async (t) => {
  const db = t.context.database.db;
  const coupon = await plainCoupon(t, 'sk');
  const args = { market: 'sk', code: coupon.code, changes: { name: 'Renamed by the assistant' } };
  const otherKey = await issueKey(db);
  const later = await startTestServer(db, () => new Date(TEST_NOW.getTime() + 10 * 60_000), undefined, { platforms: t.context.platforms });
  try {
    await withClient(t, '2026-07-28', async (client) => {
      const preview = await ok(client, 'coupons_update', args);
      const token: string = preview.confirmationToken;
      t.deepEqual(preview.changes, [{ field: 'name', before: coupon.name, after: 'Renamed by the assistant' }]);
      t.is((await fails(client, 'coupons_update', { ...args, changes: { name: 'Something else' }, confirmationToken: token })).code, 'CONFIRMATION_TOKEN_MISMATCH');
      t.is((await fails(client, 'coupons_update', { ...args, market: 'cz', confirmationToken: token })).code, 'CONFIRMATION_TOKEN_MISMATCH');
      t.is((await fails(client, 'coupons_remove', { market: 'sk', code: coupon.code, confirmationToken: token })).code, 'CONFIRMATION_TOKEN_MISMATCH');
      const [prefix, body, sig] = token.split('.');
      const forged = JSON.parse(Buffer.from(body, 'base64url').toString());
      forged.exp += 3_600_000;
      t.is((await fails(client, 'coupons_update', { ...args, confirmationToken: `${prefix}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${sig}` })).code, 'CONFIRMATION_TOKEN_INVALID');
      t.is((await fails(client, 'coupons_update', { ...args, confirmationToken: 'not-a-token' })).code, 'CONFIRMATION_TOKEN_INVALID');
      // Another key of the same account, with every scope, cannot confirm it.
      t.is(await withClient(t, '2026-07-28', async (other) => (await fails(other, 'coupons_update', { ...args, confirmationToken: token })).code, otherKey), 'CONFIRMATION_TOKEN_OTHER_CREDENTIAL');
      // Ten minutes later it has expired.
      t.is(await withClient(t, '2026-07-28', async (late) => (await fails(late, 'coupons_update', { ...args, confirmationToken: token })).code, t.context.key, later), 'CONFIRMATION_TOKEN_EXPIRED');
      t.is((await rest(t, `/coupons/${coupon.code}?market=sk`)).body.data.name, coupon.name, 'no refusal changed anything');

      t.is((await ok(client, 'coupons_update', { ...args, confirmationToken: token })).status, 'updated');
      t.is((await rest(t, `/coupons/${coupon.code}?market=sk`)).body.data.name, 'Renamed by the assistant');
      t.is((await fails(client, 'coupons_update', { ...args, confirmationToken: token })).code, 'CONFIRMATION_TOKEN_USED');

      // A stale preview: the coupon changes in the shop between the preview and the confirmation.
      const staleArgs = { market: 'sk', code: coupon.code, changes: { usageLimit: 7 } };
      const stalePreview = await ok(client, 'coupons_update', staleArgs);
      const platformShop = (await findSyncShop(db, 'demo', 'sk'))!;
      const inShop = (await demo(t).readCoupon(platformShop, coupon.code))!;
      await demo(t).saveCoupon(platformShop, { code: coupon.code, discountPercent: 33, validUntil: inShop.validUntil, discount: { type: 'percent', percent: 33 } });
      const stale = await fails(client, 'coupons_update', { ...staleArgs, confirmationToken: stalePreview.confirmationToken });
      t.is(stale.code, 'CONFIRMATION_STALE');
      t.is((await demo(t).readCoupon(platformShop, coupon.code))?.usageLimit, inShop.usageLimit, 'nothing written');
      t.is((await ok(client, 'coupons_update', { ...staleArgs, confirmationToken: (await ok(client, 'coupons_update', staleArgs)).confirmationToken })).status, 'updated', 'a fresh preview works');
      // Nothing to change: no token at all.
      const same = await ok(client, 'coupons_update', staleArgs);
      t.is(same.status, 'unchanged');
      t.is(same.confirmationToken, null);
    });
  } finally {
    await later.close();
  }
});

test.serial('When one token confirms a removal from eight connections at once, then exactly one removes the coupon and the others are refused as used', async (t) => {
  const coupon = await plainCoupon(t, 'hu');
  const args = { market: 'hu', code: coupon.code };
  const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => CLIENTS[i % 2 === 0 ? '2026-07-28' : '2025-11-25'](t.context.server, t.context.key)));
  try {
    const preview = await ok(clients[0], 'coupons_remove', args);
    t.is(preview.status, 'preview');
    const results = await Promise.all(clients.map(async (c) => {
      const result = (await c.callTool({ name: 'coupons_remove', arguments: { ...args, confirmationToken: preview.confirmationToken } })) as { isError?: boolean; structuredContent?: any };
      return result.isError ? toolError(result).error.code : result.structuredContent.data.status;
    }));
    t.deepEqual(results.filter((r) => r === 'removed'), ['removed'], results.join());
    t.deepEqual(results.filter((r) => r !== 'removed'), Array(7).fill('CONFIRMATION_TOKEN_USED'));
    t.is(Number((await t.context.database.db('coupon_confirmations').where({ coupon_code: coupon.code }).count('* as n'))[0].n), 1);
    t.is(await shopInShop(t, 'hu', coupon.code), null);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
});

test.serial('When a coupon is an approved partner\'s code or used by an enabled automation, then remove only previews it with the dependency and never removes it', async (t) => {
  const db = t.context.database.db;
  const id = await shopId(t.context.database.db, 'demo', 'sk');
  const partnerCode = await db('affiliate_discount_codes as d').join('affiliate_partners as p', 'p.id', 'd.partner_id').join('coupons as c', function on() { this.on('c.shop_id', 'd.shop_id').andOn('c.code', 'd.code'); })
    .where({ 'd.shop_id': id, 'p.state': 'approved' }).orderBy('d.code').first('d.code', 'p.id', 'p.handle');
  t.truthy(partnerCode, 'the demo data has an approved partner\'s code');
  await withClient(t, '2025-11-25', async (client) => {
    const blocked = await ok(client, 'coupons_remove', { market: 'sk', code: partnerCode.code });
    t.is(blocked.status, 'blocked');
    t.is(blocked.confirmationToken, null);
    t.deepEqual(blocked.dependencies.map((d: any) => [d.type, d.id, d.blocking]), [['affiliate_partner', String(partnerCode.id), true]]);
    t.truthy(await shopInShop(t, 'sk', partnerCode.code));

    // An automation: blocking only while enabled; enabled between the preview and the confirmation, the removal is refused.
    const coupon = await plainCoupon(t, 'sk', [partnerCode.code]);
    const actor = await personActor(db);
    const rule = sampleRule({ name: 'Tag coupon orders', conditions: { id: 'when', all: [{ id: 'coupon', field: 'order.couponCode', op: 'eq', value: coupon.code.toLowerCase() }] } });
    const draft = await createDraft(db, actor, { clientRequestId: 'coupon-dependency', rule });
    await publishAutomation(db, actor, draft.workflow_id);
    await setAutomationEnabled(db, actor, draft.workflow_id, true);
    // acme's enabled automation on the same code in every shop (acme has an sk too) is acme's business: never demo's dependency.
    const acme = await personActor(db, 'acme');
    const acmeRule = sampleRule({ name: 'Acme coupon orders', trigger: { id: 'created', event: 'order.created' }, conditions: rule.conditions });
    const acmeDraft = await createDraft(db, acme, { clientRequestId: 'coupon-dependency-acme', rule: acmeRule });
    await publishAutomation(db, acme, acmeDraft.workflow_id);
    await setAutomationEnabled(db, acme, acmeDraft.workflow_id, true);
    const byAutomation = await ok(client, 'coupons_remove', { market: 'sk', code: coupon.code });
    t.is(byAutomation.status, 'blocked');
    t.deepEqual(byAutomation.dependencies.map((d: any) => [d.type, d.id, d.state, d.blocking]), [['automation', draft.workflow_id, 'enabled', true]]);
    const inCz = await ok(client, 'coupons_ensure', { markets: ['cz'], code: coupon.code, discount: { type: 'free_shipping' } });
    t.true(['created', 'exists', 'conflict'].includes(inCz.shops[0].outcome));
    const czPreview = await ok(client, 'coupons_remove', { market: 'cz', code: coupon.code });
    t.is(czPreview.status, 'preview', 'the rule is for sk only');
    await setAutomationEnabled(db, actor, draft.workflow_id, false);
    const preview = await ok(client, 'coupons_remove', { market: 'sk', code: coupon.code });
    t.is(preview.status, 'preview');
    t.deepEqual(preview.dependencies.map((d: any) => [d.state, d.blocking]), [['disabled', false]]);
    await setAutomationEnabled(db, actor, draft.workflow_id, true);
    const refused = await fails(client, 'coupons_remove', { market: 'sk', code: coupon.code, confirmationToken: preview.confirmationToken });
    t.is(refused.code, 'COUPON_HAS_DEPENDENCIES');
    t.truthy(await shopInShop(t, 'sk', coupon.code));
    t.is((await rest(t, `/coupons/${coupon.code}?market=sk`)).status, 200);
    await setAutomationEnabled(db, actor, draft.workflow_id, false);
    await setAutomationEnabled(db, acme, acmeDraft.workflow_id, false);
  });
});

test('When a rule is read for coupon use, then eq, in and contains on order.couponCode count and other fields or operators do not', (t) => {
  const rule = (field: string, op: string, value: unknown) => ({ conditions: { id: 'w', all: [{ id: 'a', any: [{ id: 'c', field, op, value }] }] } }) as any;
  t.true(ruleUsesCoupon(rule('order.couponCode', 'eq', 'vitaj10'), 'VITAJ10'));
  t.true(ruleUsesCoupon(rule('order.couponCode', 'in', ['X', 'VITAJ10']), 'VITAJ10'));
  t.true(ruleUsesCoupon(rule('order.couponCode', 'contains', 'VITAJ'), 'VITAJ10'));
  t.false(ruleUsesCoupon(rule('order.couponCode', 'ne', 'VITAJ10'), 'VITAJ10'));
  t.false(ruleUsesCoupon(rule('order.couponCode', 'eq', 'OTHER'), 'VITAJ10'));
  t.false(ruleUsesCoupon(rule('order.paymentMethod', 'eq', 'VITAJ10'), 'VITAJ10'));
  t.false(ruleUsesCoupon({ conditions: undefined } as any, 'VITAJ10'));
});

test.serial('When a partner discount code is ensured, then the coupon is created or reused (never overwritten), linked to the partner with the shop note, and then guarded against removal', async (t) => {
  const db = t.context.database.db;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const approved = await db('affiliate_partners').where({ account_id: account.id, state: 'approved' }).orderBy('id').limit(2).select('id', 'handle');
  const waiting = await db('affiliate_partners').where({ account_id: account.id }).whereNot('state', 'approved').first('id', 'state');
  t.is(approved.length, 2);
  const partner = { id: String(approved[0].id), handle: approved[0].handle };
  await withClient(t, '2026-07-28', async (client) => {
    const created = await ok(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: partner.id, code: 'partnercw1', discount: { type: 'percent', percent: 12 } });
    t.is(created.outcome, 'created');
    t.is(created.code, 'PARTNERCW1');
    t.is(created.shopNote, partnerShopNote(partner));
    t.is((await shopInShop(t, 'sk', 'PARTNERCW1'))?.note, partnerShopNote(partner), 'the note is in the shop');
    const listed = await rest(t, '/affiliate/discount-codes?market=sk');
    t.true(listed.body.data.some((d: any) => d.code === 'PARTNERCW1' && d.partnerId === partner.id), JSON.stringify(listed.body.data[0]));
    t.is((await rest(t, '/coupons/PARTNERCW1?market=sk')).body.data.discount.percent, 12);
    t.is((await ok(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: partner.id, code: 'PARTNERCW1' })).outcome, 'already_linked');

    t.is((await fails(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: String(approved[1].id), code: 'PARTNERCW1' })).code, 'COUPON_CODE_TAKEN');
    t.is((await fails(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: String(waiting.id), code: 'PARTNERCW2', discount: { type: 'percent', percent: 5 } })).code, 'STATE_CONFLICT');
    // A code reserved by another partner's approved code request is that partner's, even before its coupon exists.
    await db('affiliate_code_reservations').insert({ shop_id: await shopId(t.context.database.db, 'demo', 'sk'), partner_id: approved[1].id, code: 'RESERVEDCW', reserved_at: TEST_NOW });
    const reserved = await fails(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: partner.id, code: 'reservedcw', discount: { type: 'percent', percent: 5 } });
    t.is(reserved.code, 'COUPON_CODE_TAKEN');
    t.is(reserved.details?.partnerId, String(approved[1].id));
    t.is(await shopInShop(t, 'sk', 'RESERVEDCW'), null);
    // coupons_ensure may not take it either: refused before anything is written on any shop named (cz first, free there).
    const ensured = await fails(client, 'coupons_ensure', { markets: ['cz', 'sk'], code: 'reservedcw', discount: { type: 'percent', percent: 5 } });
    t.is(ensured.code, 'COUPON_CODE_TAKEN');
    t.is(ensured.details?.partnerId, String(approved[1].id));
    t.is(await shopInShop(t, 'sk', 'RESERVEDCW'), null);
    t.is(await shopInShop(t, 'cz', 'RESERVEDCW'), null, 'nothing written on the shop where the code is free');
    // The other side: the reservation is per shop, so the same code is created where no partner reserved it.
    const free = await ok(client, 'coupons_ensure', { markets: ['cz'], code: 'reservedcw', discount: { type: 'percent', percent: 5 } });
    t.deepEqual(free.shops.map((s: any) => [s.market, s.outcome]), [['cz', 'created']]);
    t.deepEqual((await shopInShop(t, 'cz', 'RESERVEDCW'))?.discount, { type: 'percent', percent: 5 });
    t.is((await fails(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: partner.id, code: 'PARTNERCW3' })).code, 'MISSING_PARAMETER');
    t.is(await shopInShop(t, 'sk', 'PARTNERCW3'), null);

    // An existing shop coupon: a different discount is a conflict (nothing written or linked); without one it is reused with the note.
    const existing = await plainCoupon(t, 'sk', ['PARTNERCW1']);
    const before = await shopInShop(t, 'sk', existing.code);
    const conflict = await ok(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: partner.id, code: existing.code, discount: { type: 'percent', percent: 99 } });
    t.is(conflict.outcome, 'conflict');
    t.deepEqual((await shopInShop(t, 'sk', existing.code))?.discount, before?.discount);
    t.falsy(await db('affiliate_discount_codes').where({ code: existing.code }).first());
    const reused = await ok(client, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: partner.id, code: existing.code });
    t.is(reused.outcome, 'reused');
    const after = await shopInShop(t, 'sk', existing.code);
    t.is(after?.note, partnerShopNote(partner));
    t.deepEqual(after?.discount, before?.discount);
    // Now a live dependency: remove only previews it.
    const blocked = await ok(client, 'coupons_remove', { market: 'sk', code: existing.code });
    t.is(blocked.status, 'blocked');
  });
});

test.serial('When a server has no platform adapters, then a write is a clear PLATFORM_UNAVAILABLE error, not a crash', async (t) => {
  const bare = await startTestServer(t.context.database.db);
  try {
    await withClient(t, '2026-07-28', async (client) => {
      const error = await fails(client, 'coupons_ensure', { markets: ['sk'], code: 'BARE1', discount: { type: 'free_shipping' } });
      t.is(error.code, 'PLATFORM_UNAVAILABLE');
    }, t.context.key, bare);
  } finally {
    await bare.close();
  }
});

test.serial('When a write names a shop outside the key, or bad values, then nothing is written anywhere', async (t) => {
  const skOnly = await issueKey(t.context.database.db, { shops: ['sk'] });
  await withClient(t, '2026-07-28', async (client) => {
    t.is((await fails(client, 'coupons_ensure', { markets: ['sk', 'cz'], code: 'SCOPED1', discount: { type: 'percent', percent: 5 } })).code, 'SHOP_FORBIDDEN');
    t.is(await shopInShop(t, 'sk', 'SCOPED1'), null, 'sk was not written either');
    t.is((await fails(client, 'coupons_ensure', { markets: ['sk'], code: 'BAD CODE', discount: { type: 'percent', percent: 5 } })).code, 'INVALID_PARAMETER');
    t.is((await fails(client, 'coupons_ensure', { markets: ['sk'], code: 'FIXED1', discount: { type: 'fixed', amount: '5.00', currency: 'CZK' } })).code, 'INVALID_PARAMETER');
    t.is((await fails(client, 'coupons_ensure', { markets: ['sk'], code: 'PCT1', discount: { type: 'percent', percent: 150 } })).code, 'INVALID_PARAMETER');
    t.is((await fails(client, 'coupons_update', { market: 'sk', code: 'X', changes: {} })).code, 'INVALID_PARAMETER');
    t.is((await fails(client, 'coupons_ensure', { markets: ['sk'], code: 'PCT2', discount: { type: 'percent', percent: 12.345 } })).code, 'INVALID_PARAMETER');
    t.is((await fails(client, 'coupons_ensure', { markets: ['sk'], code: 'DATES1', discount: { type: 'free_shipping' }, validFrom: '2027-02-01T00:00:00Z', validUntil: '2027-01-01T00:00:00Z' })).code, 'INVALID_PARAMETER');
    for (const code of ['BAD CODE', 'FIXED1', 'PCT1', 'PCT2', 'DATES1']) t.is(await shopInShop(t, 'sk', code), null, `${code} not written`);
  }, skOnly);
});

test.serial('When a coupon update ends its validity at the instant it starts, then it is refused before any preview; one second later is previewed (the end is exclusive)', async (t) => {
  const coupon = await plainCoupon(t, 'sk');
  await withClient(t, '2026-07-28', async (client) => {
    const same = await fails(client, 'coupons_update', { market: 'sk', code: coupon.code, changes: { validFrom: '2027-03-01T00:00:00.000Z', validUntil: '2027-03-01T00:00:00.000Z' } });
    t.is(same.code, 'INVALID_PARAMETER');
    const later = await ok(client, 'coupons_update', { market: 'sk', code: coupon.code, changes: { validFrom: '2027-03-01T00:00:00.000Z', validUntil: '2027-03-01T00:00:01.000Z' } });
    t.is(later.status, 'preview');
    t.truthy(later.confirmationToken);
  });
});

test.serial('When a fixed discount is 0.00, then it is refused and nothing is written; 0.01 is the smallest one created (a fixed discount is more than zero)', async (t) => {
  await withClient(t, '2026-07-28', async (client) => {
    const zero = await fails(client, 'coupons_ensure', { markets: ['sk'], code: 'FIXEDZERO', discount: { type: 'fixed', amount: '0.00', currency: 'EUR' } });
    t.is(zero.code, 'INVALID_PARAMETER');
    t.is(await shopInShop(t, 'sk', 'FIXEDZERO'), null, '0.00 not written');
    const cent = await ok(client, 'coupons_ensure', { markets: ['sk'], code: 'FIXEDCENT', discount: { type: 'fixed', amount: '0.01', currency: 'EUR' } });
    t.is(cent.shops[0].outcome, 'created');
    t.not(await shopInShop(t, 'sk', 'FIXEDCENT'), null, '0.01 written');
  });
});
