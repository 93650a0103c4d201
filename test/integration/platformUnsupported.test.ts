/**
 * A write the shop's platform does not take (its adapter's declared capabilities lack it) is refused with
 * PLATFORM_UNSUPPORTED and reaches neither the platform nor the service's records; the same write on a platform that
 * takes it goes through. Real server, real Postgres, real MCP client; the second platform is a real adapter that
 * delegates reads to the demo and declares only text writes.
 */
import anyTest, { type TestFn } from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { connectModern, toolError } from '../helpers/mcp.js';
import { TEST_NOW } from '../helpers/constants.js';
import { createPlatformRegistry, type PlatformRegistry } from '../../src/platforms/registry.js';
import type { CouponInput, PlatformShop, ShopPlatformAdapter } from '../../src/platforms/types.js';

interface Context { database: TestDatabase; platforms: PlatformRegistry; server: TestServer; key: string; couponWrites: string[] }
const test = anyTest as TestFn<Context>;
const WALL = () => TEST_NOW;

/** A platform whose API takes product and category texts only (no coupons, no availability dictionary). */
function textsOnlyPlatform(demo: ShopPlatformAdapter, couponWrites: string[]): ShopPlatformAdapter {
  return {
    platform: 'texts-only',
    capabilities: { areas: demo.capabilities.areas, writes: ['product_texts', 'category_texts'], coupons: null, documents: ['invoice'] },
    credentialFields: [],
    verifyConnection: async () => ({ ok: true, settings: {} }),
    now: (shop) => demo.now(shop),
    readChanges: (shop, area, request) => demo.readChanges(shop, area, request),
    writeAvailabilities: (shop, entries) => demo.writeAvailabilities(shop, entries),
    writeProductTexts: (shop, code, texts) => demo.writeProductTexts(shop, code, texts),
    writeCategoryTexts: (shop, guid, texts) => demo.writeCategoryTexts(shop, guid, texts),
    saveCoupon: async (shop: PlatformShop, coupon: CouponInput) => { couponWrites.push(`${shop.code}:${coupon.code}`); return demo.saveCoupon(shop, coupon); },
    removeCoupon: (shop, code) => demo.removeCoupon(shop, code),
    readCoupon: (shop, code) => demo.readCoupon(shop, code),
  };
}

test.before(async (t) => {
  const database = await createTestDatabase();
  const couponWrites: string[] = [];
  const demo = createPlatformRegistry({ db: database.db, wallClock: WALL }).get('demo')!;
  const platforms = createPlatformRegistry({ db: database.db, wallClock: WALL, extra: [textsOnlyPlatform(demo, couponWrites)] });
  // The demo account's `pl` shop now runs on the texts-only platform (its data and settings stay as loaded).
  const account = await database.db('accounts').where({ code: 'demo' }).first('id');
  await database.db('shops').where({ account_id: account.id, code: 'pl' }).update({ platform: 'texts-only' });
  const server = await startTestServer(database.db, WALL, undefined, { platforms });
  t.context = { database, platforms, server, key: await issueKey(database.db), couponWrites };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

async function couponRows(t: { context: Context }, code: string): Promise<number> {
  const row = await t.context.database.db('coupons').where({ code }).count<{ count: string }[]>('* as count').first();
  return Number(row!.count);
}

test('When a coupon is written to a shop whose platform takes no coupons, then PLATFORM_UNSUPPORTED names the platform and the write, and nothing reaches the platform or the records', async (t) => {
  const client = await connectModern(t.context.server, t.context.key);
  try {
    const result = await client.callTool({ name: 'coupons_ensure', arguments: { markets: ['pl'], code: 'NOPE-PL-1', discount: { type: 'percent', percent: 10 } } });
    const { error } = toolError(result as object) as { error: { code: string; details?: Record<string, unknown> } };
    t.is(error.code, 'PLATFORM_UNSUPPORTED');
    t.is(error.details?.platform, 'texts-only');
    t.is(error.details?.write, 'coupons');
    t.is(error.details?.market, 'pl');
    t.deepEqual(t.context.couponWrites, []);
    t.is(await couponRows(t, 'NOPE-PL-1'), 0);
    const stored = await t.context.database.db('demo_shop_writes').where({ kind: 'coupon' }).whereRaw('upper(key) = ?', ['NOPE-PL-1']).count<{ count: string }[]>('* as count').first();
    t.is(Number(stored!.count), 0);

    // The other side: the same tool on a demo shop (which takes coupons) writes.
    const written = await client.callTool({ name: 'coupons_ensure', arguments: { markets: ['sk'], code: 'YES-SK-1', discount: { type: 'percent', percent: 10 } } });
    t.falsy((written as { isError?: boolean }).isError, JSON.stringify(written));
    t.truthy(await t.context.platforms.get('demo')!.readCoupon((await shopOf(t, 'sk'))!, 'YES-SK-1'));
  } finally {
    await client.close();
  }
});

test('When the coupon capabilities of a shop whose platform takes no coupons are read, then it is unsupported with no discount types', async (t) => {
  const client = await connectModern(t.context.server, t.context.key);
  try {
    const result = await client.callTool({ name: 'coupons_capabilities', arguments: { market: 'pl' } }) as { structuredContent?: { data: any }; isError?: boolean };
    t.falsy(result.isError, JSON.stringify(result));
    t.is(result.structuredContent!.data.platform, 'texts-only');
    t.false(result.structuredContent!.data.supported);
    t.deepEqual(result.structuredContent!.data.discountTypes, []);
    const demo = await client.callTool({ name: 'coupons_capabilities', arguments: { market: 'sk' } }) as { structuredContent?: { data: any } };
    t.true(demo.structuredContent!.data.supported);
    t.deepEqual(demo.structuredContent!.data.discountTypes, ['percent', 'fixed', 'free_shipping']);
  } finally {
    await client.close();
  }
});

async function shopOf(t: { context: Context }, code: string) {
  const { findSyncShop } = await import('../../src/sync/shops.js');
  return findSyncShop(t.context.database.db, 'demo', code);
}
