/** Claims over the real HTTP server and a real Postgres: listing, one claim with links that resolve, statistics checked against raw rows, masking, personal data, settings scopes, isolation. */
import { appTest, type AppContext } from '../helpers/app.js';
import type { ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import { issueKey } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { connectModern } from '../helpers/mcp.js';
import { shopDefinition } from '../../src/platforms/demo/catalogue.js';
import { claimAt, OrderTimeline } from '../../src/platforms/demo/generator.js';
import { get, assertError } from '../helpers/rest.js';
import { shopOf, type ShopInfo } from '../helpers/shops.js';
import { rowForInsert } from '../helpers/db.js';
import { applyClaims } from '../../src/sync/apply/claims.js';
import { EventSink } from '../../src/sync/events.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { percentileCont, todayIn, daysBefore, hoursOf } from '../helpers/oracles.js';

const test = appTest({ scopes: ['claims:read', 'claims-settings:read', 'personal-data:read'] });
type Context = AppContext;


/** A whole IBAN anywhere in a text: country, check digits and BBAN that pass the ISO 13616 mod-97 check. */
function containsIban(text: string): boolean {
  for (const [candidate] of text.matchAll(/[A-Z]{2}\d{2}[0-9A-Z]{11,30}/g)) {
    const moved = candidate.slice(4) + candidate.slice(0, 4);
    let rest = 0;
    for (const ch of moved) {
      const digits = /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55);
      for (const d of digits) rest = (rest * 10 + Number(d)) % 97;
    }
    if (rest === 1) return true;
  }
  return false;
}

/** The whole account numbers the demo shop `sk` holds for its claims, regenerated from the shop's platform settings. */
async function demoAccounts(t: ExecutionContext<Context>, shopId: string): Promise<string[]> {
  const { settings } = await t.context.database.db('shop_platform_settings').where({ shop_id: shopId }).first('settings');
  const timeline = new OrderTimeline(settings.seed, shopDefinition('sk'), { orders: settings.orders, days: settings.days, endDate: new Date(settings.historyEnd) });
  const accounts: string[] = [];
  for (const plan of timeline.plans(-Infinity, timeline.historyEndMs)) {
    const account = claimAt(plan, timeline.historyEndMs)?.customerRequest.bankAccount;
    if (account) accounts.push(account);
  }
  return accounts;
}

/** Every string value in a JSON document, with its path. */
function strings(value: unknown, path = '$'): Array<[string, string]> {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, `${path}.${k}`));
  return [];
}

// ---- Reference figures, computed here from raw rows (plain selects, no aggregates) ----

const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function expectedStatistics(t: ExecutionContext<Context>, shop: ShopInfo, from: string, to: string) {
  const rows: Array<{ status_id: number; status_name: string; type: string; resolution: string | null; reason: string | null; opened_at: Date; closed_at: Date | null; rating: number | null }> = await t.context.database.db('claims')
    .select('status_id', 'status_name', 'type', 'resolution', 'reason', 'opened_at', 'closed_at', 'rating')
    .where({ shop_id: shop.id })
    .whereRaw('opened_at >= (?::date)::timestamp at time zone ?', [from, shop.timeZone])
    .whereRaw('opened_at < ((?::date) + 1)::timestamp at time zone ?', [to, shop.timeZone]);
  const countBy = <K extends string | number>(keyOf: (r: (typeof rows)[number]) => K | null) => {
    const counts = new Map<K, number>();
    for (const r of rows) {
      const k = keyOf(r);
      if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    return [...counts.entries()];
  };
  const ranked = (entries: Array<[string, number]>) => entries.sort((a, b) => b[1] - a[1] || byCode(a[0], b[0]));
  const times = rows.filter((r) => r.closed_at).map((r) => r.closed_at!.getTime() - r.opened_at.getTime()).sort((a, b) => a - b);
  const ratings = rows.filter((r) => r.rating !== null).map((r) => r.rating!);
  const ratingSum = ratings.reduce((a, b) => a + b, 0);
  return {
    claims: { total: rows.length, open: rows.filter((r) => !r.closed_at).length, closed: times.length },
    statuses: countBy((r) => r.status_id).sort((a, b) => a[0] - b[0])
      .map(([id, count]) => ({ status: { id, name: rows.find((r) => r.status_id === id)!.status_name }, count })),
    types: ranked(countBy((r) => r.type)).map(([type, count]) => ({ type, count })),
    resolutions: ranked(countBy((r) => r.resolution)).map(([resolution, count]) => ({ resolution, count })),
    resolutionTime: {
      measured: times.length,
      medianHours: times.length ? hoursOf(percentileCont(times, 0.5)) : null,
      p90Hours: times.length ? hoursOf(percentileCont(times, 0.9)) : null,
    },
    ratings: {
      rated: ratings.length,
      // avg rounded half away from zero to 2 decimals, in exact integer arithmetic.
      average: ratings.length ? Math.floor((2 * ratingSum * 100 + ratings.length) / (2 * ratings.length)) / 100 : null,
      distribution: countBy((r) => r.rating).sort((a, b) => a[0] - b[0]).map(([score, count]) => ({ score, count })),
    },
    reasons: ranked(countBy((r) => r.reason)).map(([reason, count]) => ({ reason, count })),
  };
}

// ---- Statistics ----

test('When statistics are read without a period, then they cover the last 30 days and equal the figures computed from raw rows', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const today = todayIn(shop.timeZone, TEST_NOW);
  const res = await get(t, '/claims/statistics?market=sk');
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.meta.period, { from: daysBefore(today, 29), to: today, timeZone: shop.timeZone });
  const expected = await expectedStatistics(t, shop, daysBefore(today, 29), today);
  t.true(expected.claims.total > 5, `the demo data has claims in the last 30 days (${expected.claims.total})`);
  t.deepEqual(res.body.data, expected);
});

test('When statistics are read for a long period, then open and closed claims, ratings and reasons equal the raw computation', async (t) => {
  for (const market of ['sk', 'cz']) {
    const shop = await shopOf(t.context.database.db, 'demo', market);
    const res = await get(t, `/claims/statistics?market=${market}&from=2026-01-01&to=2026-11-20`);
    t.is(res.status, 200, JSON.stringify(res.body));
    const expected = await expectedStatistics(t, shop, '2026-01-01', '2026-11-20');
    t.true(expected.claims.closed > 20 && expected.ratings.rated > 5 && expected.claims.open > 0, JSON.stringify(expected.claims));
    t.deepEqual(res.body.data, expected, market);
  }
  assertError(t, await get(t, '/claims/statistics?market=sk&from=2026-10-10&to=2026-10-01'), 400, 'PERIOD_REVERSED');
  assertError(t, await get(t, '/claims/statistics?market=sk&limit=5'), 400, 'UNKNOWN_PARAMETER');
});

// ---- Listing ----

test('When claims are listed, then they come newest first, filters by status and type hold, and a cursor walk returns every claim once', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const raw: Array<{ id: string; code: string; opened_at: Date; status_id: number; type: string }> = await db('claims').where({ shop_id: shop.id })
    .orderBy([{ column: 'opened_at', order: 'desc' }, { column: 'id', order: 'desc' }]).select('id', 'code', 'opened_at', 'status_id', 'type');
  t.true(raw.length > 40);
  const walk = async (query: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: any } = await get(t, `/claims?market=sk&limit=25${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      t.is(res.status, 200, JSON.stringify(res.body));
      seen.push(...res.body.data.map((c: any) => c.code));
      cursor = res.body.meta.nextCursor;
    } while (cursor);
    return seen;
  };
  t.deepEqual(await walk(''), raw.map((r) => r.code));
  t.deepEqual(await walk('&type=complaint'), raw.filter((r) => r.type === 'complaint').map((r) => r.code));
  t.deepEqual(await walk('&status=3'), raw.filter((r) => r.status_id === 3).map((r) => r.code));

  const first = (await get(t, '/claims?market=sk&limit=1')).body.data[0];
  t.is(first.order.code, first.orderCode);
  t.regex(first.openedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assertError(t, await get(t, '/claims?market=sk&type=exchange'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/claims?market=sk&status=abc'), 400, 'INVALID_PARAMETER');
  const page = await get(t, '/claims?market=sk&type=complaint&limit=2');
  assertError(t, await get(t, `/claims?market=sk&type=withdrawal&limit=2&cursor=${encodeURIComponent(page.body.meta.nextCursor)}`), 400, 'CURSOR_MISMATCH');
});

test.serial('When another shop has a stock movement under the same claim code, then the claim lists only its own shop\'s movements', async (t) => {
  const db = t.context.database.db;
  const sk = await shopOf(db, 'demo', 'sk');
  const cz = await shopOf(db, 'demo', 'cz');
  const claim = await db('claims').where({ shop_id: sk.id }).whereExists(db('stock_movements').whereRaw('stock_movements.shop_id = claims.shop_id and stock_movements.claim_code = claims.code')).orderBy('code').first('code');
  const own = (await get(t, `/claims/${claim.code}?market=sk`)).body.data;
  t.true(own.links.stockMovements.length > 0);
  // Claim codes repeat across shops: a cz movement carrying the sk claim's code must stay out of it.
  const row = await db('stock_movements').where({ shop_id: cz.id }).orderBy('movement_id').first();
  const copy = { ...rowForInsert(row), claim_code: claim.code, movement_id: `${row.movement_id}-X` };
  await db('stock_movements').insert(copy);
  try {
    const read = (await get(t, `/claims/${claim.code}?market=sk`)).body.data;
    t.deepEqual(read.links.stockMovements, own.links.stockMovements);
  } finally {
    await db('stock_movements').where({ shop_id: cz.id, movement_id: copy.movement_id }).delete();
  }
});

// ---- One claim and its links ----

test('When a refunded withdrawal is read, then its items, order, credit note, return parcel and stock movements resolve to the records they name', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const row = await db('claims').where({ shop_id: shop.id, type: 'withdrawal', resolution: 'refund' }).orderBy('opened_at', 'desc').first('code', 'order_code', 'refund_with_vat');
  const res = await get(t, `/claims/${row.code}?market=sk`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const claim = res.body.data;

  const order = await get(t, `/orders/${claim.links.order.code}?market=sk`, await issueKey(db, { scopes: ['orders:read'] }));
  t.is(order.status, 200);
  for (const item of claim.items) {
    const line = order.body.data.items.find((l: any) => l.lineNo === item.lineNo);
    t.is(line.productCode, item.productCode);
    t.is(line.name, item.name);
    t.deepEqual(line.unitPriceWithVat, item.unitPriceWithVat);
  }
  const note = await db('documents').where({ shop_id: shop.id, code: claim.links.creditNote.code }).first('type', 'order_code', 'total_with_vat');
  t.deepEqual({ type: note.type, order: note.order_code }, { type: 'credit_note', order: row.order_code });
  t.is(Number(note.total_with_vat), -Number(row.refund_with_vat));
  t.deepEqual(claim.refunds.map((r: any) => [r.amountWithVat.amount, r.creditNoteCode]), [[row.refund_with_vat, claim.links.creditNote.code]]);

  const movements = await db('stock_movements').where({ shop_id: shop.id, claim_code: row.code }).orderBy('movement_id').pluck('movement_id');
  t.true(movements.length > 0);
  t.deepEqual(claim.links.stockMovements.map((m: any) => m.movementId).sort(), movements);
  t.deepEqual(claim.links.returnShipment, claim.returnShipment);
  t.is(claim.returnShipment.status, 'DELIVERED');
  const noOutbound = await db('shipments').where({ shop_id: shop.id, tracking_number: claim.returnShipment.trackingNumber }).first();
  t.falsy(noOutbound, 'a return parcel is never an outbound shipment');

  t.deepEqual(claim.timeline.map((s: any) => s.status.id), [1, 2, 3, 5]);
  t.is(claim.timeline[claim.timeline.length - 1].at, claim.closedAt);
  t.deepEqual(claim.emails.map((e: any) => e.templateId), ['claim-received', 'send-goods', 'goods-received', 'claim-resolved']);
  t.true(claim.emails.every((e: any) => e.subject.includes(row.code)));
  t.is(claim.processId, 1);
  t.is(claim.customerRequest.type, 'refund');
});

test.serial('When the claim\'s credit note is issued at the very instant the claim opened, then it is the claim\'s link; 1 ms earlier it is not', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(db, 'demo', 'sk');
  // A refunded claim whose order has exactly one credit note in its shop: moving that note moves the link alone.
  const { rows: [pick] } = await db.raw(`
    select c.code, d.code as note_code, d.issued_at
    from claims c join documents d on d.shop_id = c.shop_id and d.order_code = c.order_code and d.type = 'credit_note'
    where c.shop_id = ? and c.resolution = 'refund'
      and (select count(*) from documents o where o.shop_id = c.shop_id and o.order_code = c.order_code and o.type = 'credit_note') = 1
    order by c.code limit 1`, [shop.id]);
  t.truthy(pick, 'a refunded sk claim with a single credit note of its order');
  const before = (await get(t, `/claims/${encodeURIComponent(pick.code)}?market=sk`)).body.data;
  t.is(before.links.creditNote?.code, pick.note_code);
  const openedAt = new Date(before.openedAt);
  const linkWhenIssuedAt = async (issuedAt: Date) => {
    await db('documents').where({ shop_id: shop.id, code: pick.note_code }).update({ issued_at: issuedAt });
    const res = await get(t, `/claims/${encodeURIComponent(pick.code)}?market=sk`);
    t.is(res.status, 200, JSON.stringify(res.body));
    return res.body.data.links.creditNote;
  };
  try {
    const atOpening = await linkWhenIssuedAt(openedAt);
    t.is(atOpening?.code, pick.note_code, 'issued exactly at the opening: the claim\'s credit note');
    t.is(atOpening?.issuedAt, before.openedAt);
    t.is(await linkWhenIssuedAt(new Date(openedAt.getTime() - 1)), null, 'issued 1 ms before the opening: not the claim\'s');
  } finally {
    await db('documents').where({ shop_id: shop.id, code: pick.note_code }).update({ issued_at: pick.issued_at });
  }
});

test('When a claim of another shop or account is asked for, then 404 NOT_FOUND', async (t) => {
  const db = t.context.database.db;
  const cz = await shopOf(t.context.database.db, 'demo', 'cz');
  const acme = await shopOf(t.context.database.db, 'acme', 'sk');
  const ofCz = await db('claims').where({ shop_id: cz.id }).first('code');
  const ofAcme = await db('claims').where({ shop_id: acme.id }).first('code');
  t.is((await get(t, `/claims/${ofCz.code}?market=cz`)).status, 200);
  const skCodes = new Set(await db('claims').where({ shop_id: (await shopOf(t.context.database.db, 'demo', 'sk')).id }).pluck('code'));
  if (!skCodes.has(ofCz.code)) assertError(t, await get(t, `/claims/${ofCz.code}?market=sk`), 404, 'NOT_FOUND');
  if (!skCodes.has(ofAcme.code)) assertError(t, await get(t, `/claims/${ofAcme.code}?market=sk`), 404, 'NOT_FOUND');
  assertError(t, await get(t, '/claims/R000?market=sk'), 404, 'NOT_FOUND');
  assertError(t, await get(t, '/claims/R000/refund-readiness?market=sk'), 404, 'NOT_FOUND');
  // The acme tenant's key sees its own claim; the demo key cannot name acme's shop at all.
  const acmeKey = await issueKey(db, { account: 'acme', scopes: ['claims:read'] });
  t.is((await get(t, `/claims/${ofAcme.code}?market=sk`, acmeKey)).body.data.code, ofAcme.code);
  const shopKey = await issueKey(db, { scopes: ['claims:read'], shops: ['sk'] });
  assertError(t, await get(t, '/claims?market=cz', shopKey), 403, 'SHOP_FORBIDDEN');
});

// ---- Masking ----

test('When every claims response is searched, then no account number appears unmasked, and none is stored unmasked', async (t) => {
  const db = t.context.database.db;
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const withAccount = await db('claims').where({ shop_id: shop.id, refund_to: 'bank_account' }).whereNotNull('refund_account_masked').orderBy('opened_at', 'desc').limit(5).pluck('code');
  t.true(withAccount.length > 0, 'the demo has refunds to bank accounts');
  const paths = [
    '/claims?market=sk&limit=250', '/claims/statistics?market=sk', '/claims/settings?market=sk', '/claims/configuration?market=sk',
    '/claims/refund-options?market=sk', '/claims/refund-settings?market=sk', '/claims/routes?market=sk', '/claims/templates?market=sk',
    ...withAccount.flatMap((code: string) => [`/claims/${code}?market=sk`, `/claims/${code}/refund-readiness?market=sk`]),
  ];
  const accounts = await demoAccounts(t, shop.id);
  t.true(accounts.length >= withAccount.length && accounts.every((a) => containsIban(a)), 'the shop holds whole IBANs');
  let masked = 0;
  for (const path of paths) {
    const res = await get(t, path);
    t.is(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    const text = JSON.stringify(res.body);
    t.false(accounts.some((a) => text.includes(a) || text.includes(a.slice(4))), `${path} holds a whole account or its BBAN`);
    for (const [where, value] of strings(res.body)) {
      t.false(containsIban(value), `${path} ${where}: ${value}`);
      if (/^[A-Z]{2}\*{4}[0-9A-Z]{4}$/.test(value)) masked++;
    }
  }
  t.true(masked > withAccount.length, `masked accounts are shown (${masked})`);
  const settings = (await get(t, '/claims/refund-settings?market=sk')).body.data;
  t.true(settings.bankAccounts.length > 0 && settings.bankAccounts.every((a: any) => /^SK\*{4}\d{4}$/.test(a.account)));
  // Nothing in the claims tables holds a whole number either.
  const rows = [
    await db('claims').where({ shop_id: shop.id }).select('refund_account_masked', 'request_type', 'emails', 'rating_comment'),
    await db('claims_settings').where({ shop_id: shop.id }).select('settings'),
  ];
  const stored = JSON.stringify(rows);
  t.false(strings(rows).some(([, value]) => containsIban(value)));
  t.false(accounts.some((a) => stored.includes(a.slice(4))));
  await t.throwsAsync(db('claims').where({ shop_id: shop.id, code: withAccount[0] }).update({ refund_account_masked: 'SK3112000000198742637541' }), { message: /claims_refund_account_masked/ });
});

// ---- Personal data ----

test('When claims are read without personal-data:read, then customers carry only city and country, on REST and over MCP', async (t) => {
  const db = t.context.database.db;
  const key = await issueKey(db, { scopes: ['claims:read'] });
  const listed = await get(t, '/claims?market=sk&limit=5', key);
  const code = listed.body.data[0].code;
  const one = await get(t, `/claims/${code}?market=sk`, key);
  for (const claim of [...listed.body.data, one.body.data]) t.deepEqual(Object.keys(claim.customer).sort(), ['city', 'country']);
  const full = await get(t, `/claims/${code}?market=sk`);
  t.truthy(full.body.data.customer.email && full.body.data.customer.lastName && full.body.data.customer.street);

  const client = await connectModern(t.context.server, key);
  try {
    const mcpList = await client.callTool({ name: 'claims_list', arguments: { market: 'sk', limit: 5 } });
    const mcpOne = await client.callTool({ name: 'claims_get', arguments: { market: 'sk', claimCode: code } });
    const items = (mcpList.structuredContent as any).items;
    t.deepEqual(items, listed.body.data);
    t.deepEqual((mcpOne.structuredContent as any).data, one.body.data);
    t.false(JSON.stringify(mcpOne.content).includes(full.body.data.customer.email), 'nor in the text rendering');
  } finally {
    await client.close();
  }
});

// ---- Settings ----

test('When settings are read with claims:read only, then processes and tags come without the module; with claims-settings:read the module is there', async (t) => {
  const db = t.context.database.db;
  const readOnlyKey = await issueKey(db, { scopes: ['claims:read'] });
  const basic = await get(t, '/claims/settings?market=sk', readOnlyKey);
  t.is(basic.status, 200, JSON.stringify(basic.body));
  t.deepEqual(Object.keys(basic.body.data).sort(), ['processes', 'tags']);
  t.deepEqual(basic.body.data.processes.map((p: any) => [p.id, p.type]), [[1, 'withdrawal'], [2, 'complaint']]);
  t.true(basic.body.data.processes.every((p: any) => p.steps.length > 2 && p.statuses.length > 2 && p.deadlineDays > 0));
  for (const path of ['/claims/configuration', '/claims/refund-options', '/claims/refund-settings', '/claims/routes', '/claims/templates']) {
    assertError(t, await get(t, `${path}?market=sk`, readOnlyKey), 403, 'INSUFFICIENT_SCOPE');
  }

  const full = await get(t, '/claims/settings?market=sk');
  t.deepEqual(Object.keys(full.body.data).sort(), ['module', 'processes', 'tags']);
  const module = full.body.data.module;
  t.deepEqual((await get(t, '/claims/configuration?market=sk')).body.data, module.configuration);
  t.deepEqual((await get(t, '/claims/refund-options?market=sk')).body.data, module.refundOptions);
  t.deepEqual((await get(t, '/claims/refund-settings?market=sk')).body.data, module.refundSettings);
  t.deepEqual((await get(t, '/claims/routes?market=sk')).body.data, module.configuration.returnTransport);
  t.deepEqual((await get(t, '/claims/templates?market=sk')).body.data, module.templates);

  // Every tag and process a claim names is defined in the settings; every carrier profile of a route exists.
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const tagIds = new Set(full.body.data.tags.map((tag: any) => tag.id));
  const used: string[][] = await db('claims').where({ shop_id: shop.id }).pluck('tags');
  t.true(used.flat().length > 0 && used.flat().every((tag) => tagIds.has(tag)));
  const processIds = new Set(full.body.data.processes.map((p: any) => p.id));
  t.true((await db('claims').where({ shop_id: shop.id }).pluck('process_id')).every((id: number) => processIds.has(id)));
  const profiles = new Set(module.configuration.returnTransport.carrierProfiles.filter((p: any) => p.supportsReturns).map((p: any) => p.id));
  t.true(module.configuration.returnTransport.routes.every((r: any) => profiles.has(r.carrierProfileId)));
  const carriers = await db('carriers').where({ shop_id: shop.id }).select('profiles');
  const carrierProfileIds = new Set(carriers.flatMap((c: any) => c.profiles.map((p: any) => p.id)));
  t.true([...profiles].every((id) => carrierProfileIds.has(id)), 'return profiles are profiles of connected carriers');
});

// ---- Refund readiness ----

test('When refund readiness is read, then it carries the request, masked account, the variable symbol of the configured source, blockers and deletability', async (t) => {
  const db = t.context.database.db;
  // Shop `hu` is used by no other test here: one refunded claim is put back to "goods received", as before its refund.
  const shop = await shopOf(t.context.database.db, 'demo', 'hu');
  const options = (await get(t, '/claims/refund-options?market=hu')).body.data;
  const settings = (await get(t, '/claims/refund-settings?market=hu')).body.data;
  const claim = await db('claims as c').join('orders as o', function j() { this.on('o.shop_id', 'c.shop_id').andOn('o.code', 'c.order_code'); })
    .where({ 'c.shop_id': shop.id, 'c.refund_to': 'bank_account', 'c.resolution': 'refund', 'c.type': 'complaint' })
    .first('c.code', 'o.variable_symbol', 'c.refund_account_masked');
  t.truthy(claim, 'hu has a refunded complaint paid to an account');
  const refunded = await get(t, `/claims/${claim.code}/refund-readiness?market=hu`);
  t.is(refunded.status, 200, JSON.stringify(refunded.body));
  t.false(refunded.body.data.ready);
  t.deepEqual(refunded.body.data.blockers, ['The refund has already been decided.']);

  await db('claims').where({ shop_id: shop.id, code: claim.code }).update({ status_id: 3, status_name: 'Goods received', closed_at: null, resolution: null, refund_with_vat: null });
  const res = await get(t, `/claims/${claim.code}/refund-readiness?market=hu`);
  t.deepEqual({ ...res.body.data, deletable: undefined, deletableReason: undefined }, {
    code: claim.code,
    status: { id: 3, name: 'Goods received' },
    customerRequest: { type: 'refund', refundTo: 'bank_account', account: claim.refund_account_masked },
    account: claim.refund_account_masked,
    variableSymbol: options.variableSymbolSource === 'order' ? claim.variable_symbol : claim.code.replace(/\D/g, '').slice(-10),
    variableSymbolSource: options.variableSymbolSource,
    refundMode: settings.refundMode,
    amountWithVat: null,
    ready: true,
    blockers: [],
    deletable: undefined,
    deletableReason: undefined,
  });
  // Its credit note is still linked (the demo issued it), so it cannot be deleted.
  t.false(res.body.data.deletable);

  await db('claims').where({ shop_id: shop.id, code: claim.code }).update({ request_type: 'exchange', refund_to: null, refund_account_masked: null });
  const exchange = (await get(t, `/claims/${claim.code}/refund-readiness?market=hu`)).body.data;
  t.false(exchange.ready);
  t.deepEqual(exchange.blockers, ['The customer does not ask for a refund.']);
  t.is(exchange.account, null);

  // A claim with nothing linked yet can be deleted.
  const fresh = await db('claims').where({ shop_id: shop.id }).whereNull('closed_at').whereNull('return_delivered_at').first('code');
  if (fresh) t.true((await get(t, `/claims/${fresh.code}/refund-readiness?market=hu`)).body.data.deletable);
});

test('When the key lacks claims:read, then every claims call is 403 INSUFFICIENT_SCOPE', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['orders:read', 'claims-settings:read'] });
  for (const path of ['/claims?market=sk', '/claims/R1?market=sk', '/claims/statistics?market=sk', '/claims/settings?market=sk', '/claims/R1/refund-readiness?market=sk']) {
    assertError(t, await get(t, path, key), 403, 'INSUFFICIENT_SCOPE');
  }
});

test('When open claims are read, then the service lists exactly the open claims of the raw rows, with their deadlines, some still ahead', async (t) => {
  const shop = await shopOf(t.context.database.db, 'demo', 'sk');
  const raw: Array<{ code: string; deadline_at: Date | null }> = await t.context.database.db('claims').where({ shop_id: shop.id }).whereNull('closed_at').select('code', 'deadline_at');
  const served: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(t, `/claims?market=sk&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    served.push(...res.body.data);
    cursor = res.body.meta.hasMore ? res.body.meta.nextCursor : null;
  } while (cursor);
  const open = served.filter((c) => c.closedAt === null);
  t.deepEqual(open.map((c) => c.code).sort(byCode), raw.map((r) => r.code).sort(byCode));
  const deadlines = new Map(raw.map((r) => [r.code, r.deadline_at?.toISOString() ?? null]));
  for (const c of open) t.is(c.deadlineAt, deadlines.get(c.code), c.code);
  t.true(open.some((c) => c.deadlineAt !== null && Date.parse(c.deadlineAt) > TEST_NOW.getTime()), 'some open claim is still within its deadline');
});

test('When a claim\'s order code also has a credit note in another shop, then claims_get shows the credit note of the claim\'s own shop, never the other', async (t) => {
  const db = t.context.database.db;
  // Order codes are numbered per shop: the same code has credit notes in other shops (and in acme) too.
  const ambiguous: Array<{ code: string; market: string; shop_id: string; order_code: string; opened_at: Date }> = (await db.raw(`
    select c.code, s.code as market, c.shop_id, c.order_code, c.opened_at,
           (select d.shop_id from documents d where d.type = 'credit_note' and d.order_code = c.order_code and d.issued_at >= c.opened_at
             order by d.issued_at limit 1) <> c.shop_id as first_is_foreign
    from claims c join shops s on s.id = c.shop_id join accounts a on a.id = s.account_id
    where a.code = 'demo' and exists (select 1 from documents d where d.type = 'credit_note' and d.order_code = c.order_code and d.shop_id <> c.shop_id)
    order by c.code`)).rows;
  // Where the earliest credit note of that order code is another shop's, a read without shop_id would show it.
  t.true(ambiguous.some((c: any) => c.first_is_foreign), 'some claim whose earliest credit note by order code is another shop\'s');
  t.true(ambiguous.length >= 5, `claims whose order code has a credit note in another shop: ${ambiguous.length}`);
  let shownOwn = 0;
  for (const claim of ambiguous) {
    const own = await db('documents').where({ shop_id: claim.shop_id, order_code: claim.order_code, type: 'credit_note' })
      .where('issued_at', '>=', claim.opened_at).orderBy('issued_at').first('code');
    const res = await get(t, `/claims/${encodeURIComponent(claim.code)}?market=${claim.market}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    // The credit note is one of the claim's links (`data.links.creditNote`), as claims_get's output schema declares.
    t.is(res.body.data.links.creditNote?.code ?? null, own?.code ?? null, `${claim.market}/${claim.code}`);
    for (const refund of res.body.data.refunds) t.is(refund.creditNoteCode, own?.code ?? null, `${claim.market}/${claim.code} refund`);
    if (own) shownOwn += 1;
  }
  // The other side: claims of these order codes whose own shop issued a credit note show it (not only nulls).
  t.true(shownOwn > 0, 'some of these claims have their own shop\'s credit note');
});

type SyncShop = NonNullable<Awaited<ReturnType<typeof findSyncShop>>>;
type ShopClaim = NonNullable<ReturnType<typeof claimAt>>;

/** The sk demo shop and the first claim the shop holds now that `wanted` accepts and that is stored (its row as `stored` narrows). */
async function storedClaim(db: Knex, wanted: (claim: ShopClaim) => boolean, stored: (q: Knex.QueryBuilder) => Knex.QueryBuilder = (q) => q): Promise<{ shop: SyncShop; claim: ShopClaim | null }> {
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const { settings } = await db('shop_platform_settings').where({ shop_id: shop.id }).first('settings');
  const timeline = new OrderTimeline(settings.seed, shopDefinition('sk'), { orders: settings.orders, days: settings.days, endDate: new Date(settings.historyEnd) });
  for (const plan of timeline.plans(-Infinity, timeline.historyEndMs)) {
    const c = claimAt(plan, timeline.historyEndMs);
    if (c && wanted(c) && await stored(db('claims').where({ shop_id: shop.id, code: c.code })).first('id')) return { shop, claim: c };
  }
  return { shop, claim: null };
}

/**
 * The events of `eventType` a sync announces for `claim` when its stored row is first set to `row`; in a transaction
 * rolled back at the end, so the other tests read the claim as loaded.
 */
async function announcedWithStoredRow(db: Knex, shop: SyncShop, claim: ShopClaim, row: Record<string, unknown>, eventType: string): Promise<Array<{ data: { status_id: number }; occurred_at: Date }>> {
  const trx = await db.transaction();
  try {
    await trx('claims').where({ shop_id: shop.id, code: claim.code }).update(row);
    const from = await trx('outbox_events').max('id as id').first();
    const sink = new EventSink(trx, shop, 0);
    await applyClaims(trx, shop, [claim], sink);
    await sink.flush();
    return await trx('outbox_events').where('id', '>', from?.id ?? 0).where({ event_type: eventType, resource_id: claim.code }).select('data', 'occurred_at');
  } finally {
    await trx.rollback();
  }
}

test.serial('When a sync finds a claim one status further than stored, then only that change is announced, not the stored one again', async (t) => {
  const db = t.context.database.db;
  // A stored claim that went through at least two changes after opening, as the shop holds it now.
  const { shop, claim } = await storedClaim(db, (c) => c.statusHistory.length >= 3);
  if (!claim) return t.fail('the demo shop has a claim with three status changes');
  const history = claim.statusHistory;
  const [previous, last] = [history[history.length - 2]!, history[history.length - 1]!];
  // The stored row one change behind: the previous status, changed at that change's instant.
  const announced = await announcedWithStoredRow(db, shop, claim, { status_id: previous.statusId, status_changed_at: previous.at, closed_at: null, updated_at: previous.at }, 'claim.status_changed');
  t.deepEqual(announced.map((r) => [r.data.status_id, r.occurred_at.toISOString()]), [[last.statusId, last.at.toISOString()]]);
});

test.serial('When a sync finds a closed claim changed after it closed, then claim.closed is not announced again; a claim closing in this sync is announced once (P17)', async (t) => {
  const db = t.context.database.db;
  // Both closing statuses (P17: Resolved and Rejected), literal ids: a claim the shop holds as closed in it, stored closed.
  for (const closingStatus of [5, 6]) {
    const { shop, claim } = await storedClaim(db, (c) => Boolean(c.closedAt) && c.statusId === closingStatus && c.statusHistory.length >= 2, (q) => q.whereNotNull('closed_at'));
    if (!claim) return t.fail(`the demo shop has a claim closed in status ${closingStatus}`);
    const previous = claim.statusHistory[claim.statusHistory.length - 2]!;
    const closedAnnounced = async (row: Record<string, unknown>) => (await announcedWithStoredRow(db, shop, claim, row, 'claim.closed')).map((r) => r.occurred_at.toISOString());
    // Stored closed, only its last change older (the shop touched it after closing): no second claim.closed.
    t.deepEqual(await closedAnnounced({ updated_at: new Date(claim.updatedAt.getTime() - 60_000) }), [], `status ${closingStatus}`);
    // Stored one change before closing: claim.closed once, at the closing instant.
    t.deepEqual(await closedAnnounced({ status_id: previous.statusId, status_changed_at: previous.at, closed_at: null, updated_at: previous.at }), [claim.closedAt!.toISOString()], `status ${closingStatus}`);
  }
});
