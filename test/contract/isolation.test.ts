/**
 * Tenant and shop isolation over the whole registry (issue 22 point 1). Every read capability — its REST path with a
 * key and its MCP tool with a key and with an OAuth token — and every write tool that names a record is called
 *   1. as account `acme` with the identifiers and shop codes of account `demo`, and
 *   2. as a credential of `demo` limited to shop `cz` with the identifiers of shop `sk` and of shop `hu`, a `medusa`
 *      shop here (its synced rows; reads need no running Medusa);
 * each must answer with the documented refusal (SHOP_FORBIDDEN, SHOP_NOT_FOUND, a `*_NOT_FOUND` code, or an empty
 * list) and never with a byte of the other tenant's or shop's data. A capability that takes an identifier and is not
 * in MATRIX below fails the first test, so a new capability joins the matrix by construction.
 */
import type { ExecutionContext } from 'ava';
import anyTest, { type TestFn } from 'ava';
import { z } from 'zod';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { capabilities } from '../../src/capabilities/registry.js';
import { isListKind } from '../../src/capabilities/run.js';
import { isRestCapability, type Capability, type RestCapability } from '../../src/capabilities/types.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { TEST_NOW } from '../helpers/constants.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { mintOAuthToken } from '../helpers/oauthToken.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { sampleRule } from '../helpers/automations.js';

/**
 * Every capability that names a record, and what a foreign identifier gets:
 * - `refused`: the record belongs to `demo` (or to shop `sk`) only, so the answer is a refusal or an empty list;
 * - `own`: the identifier is a key every account has its own record under (an article key, a product code of the
 *   shared catalogue, a coupon code the caller may create): the caller's own record may answer, `demo`'s never.
 */
const MATRIX: Record<string, 'refused' | 'own'> = {
  'orders.get': 'refused',
  'shipping.shipmentDetail': 'refused',
  'products.get': 'own',
  'inventory.stock': 'own',
  'webhooks.endpoint': 'refused',
  'webhooks.deliveries': 'refused',
  'invoices.get': 'refused',
  'documents.pdf': 'refused',
  'inventory.availability': 'own',
  'customers.get': 'refused',
  'claims.get': 'refused',
  'claims.refundReadiness': 'refused',
  'affiliate.partnersGet': 'refused',
  'affiliate.campaignsGet': 'refused',
  'affiliate.conversionsGet': 'refused',
  'affiliate.linksGenerate': 'refused',
  'suppliers.get': 'refused',
  'automations.get': 'refused',
  'automations.runs': 'refused',
  'products.content': 'own',
  'categories.content': 'own',
  'coupons.get': 'own',
  'coupons.activationLink': 'own',
  'coupons.activationStatus': 'own',
  'chatbot.conversation': 'refused',
  'affiliate.articlesGet': 'own',
  'affiliate.documentContent': 'own',
  'affiliate.signature': 'refused',
  'availabilities.draft': 'refused',
  'products.content_draft': 'refused',
  'categories.content_draft': 'refused',
  'claims.config_draft': 'refused',
  // Write tools
  'automations.update_draft': 'refused',
  'coupons.ensure': 'own',
  'coupons.update': 'own',
  'coupons.remove': 'own',
  'affiliate.discountCodes.ensure': 'refused',
  'affiliate.partnersSetState': 'refused',
  'affiliate.codeRequestsDecide': 'refused',
  'affiliate.articlesCreate': 'own',
  'affiliate.articlesUpdate': 'own',
  'affiliate.articlesSetState': 'own',
  'affiliate.campaignsUpdate': 'refused',
  'affiliate.documentsUpdate': 'own',
  'products.content_propose': 'own',
  'categories.content_propose': 'own',
  'availabilities.propose': 'own',
};

/** Required parameters that never name a record; any other required parameter is taken for an identifier. */
const NOT_IDENTIFIERS = new Set(['market', 'markets', 'from', 'to', 'documentType', 'rule', 'changes', 'discount', 'action', 'decision', 'name', 'reward',
  'translations', 'page', 'language', 'event', 'clientRequestId', 'expectedVersion', 'enabled', 'target']);

/** Identifiers of the account's records (not of one shop's). */
const ACCOUNT_LEVEL_IDS = new Set(['partnerId', 'supplierId', 'endpointId', 'workflowId', 'articleKey', 'documentKey']);

function identifierParams(capability: Capability): string[] {
  const schema = z.toJSONSchema(capability.params, { io: 'input', unrepresentable: 'any' }) as { required?: string[] };
  return (schema.required ?? []).filter((name) => !NOT_IDENTIFIERS.has(name));
}

interface Context {
  database: TestDatabase;
  server: TestServer;
  samples: Record<string, string>;
  /** Strings that only `demo` (or only its shop `sk`) has: ids and codes of sample records, the account's name. */
  demoMarkers: string[];
  skMarkers: string[];
  /** Shop-record ids of demo's shop hu, a `medusa` shop here (issue 28 point 5), and the strings only it has. */
  huSamples: Record<string, string>;
  huMarkers: string[];
  writeArgs: Record<string, Record<string, unknown>>;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const db = database.db;
  const platforms = createPlatformRegistry({ db, wallClock: () => TEST_NOW });
  const server = await startTestServer(db, () => TEST_NOW, undefined, { platforms });
  const sk = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id', 's.name', 's.base_url');
  // Codes numbered per shop (orders, documents, claims) and pseudonyms may exist in another shop or tenant too; the
  // samples used here are records of sk whose code no other shop of any account has, so a 200 can only be a leak.
  const uniqueOf = async (table: string, column: string, where: Record<string, unknown> = {}, shopId: string = sk.id): Promise<string> => {
    const row = await db(`${table} as x`).where({ 'x.shop_id': shopId, ...where })
      .whereNotExists(db(`${table} as y`).whereRaw(`y.${column} = x.${column}`).whereNot('y.shop_id', shopId))
      .orderBy(`x.${column}`).first(`x.${column} as value`);
    if (!row) throw new Error(`no ${table}.${column} of shop ${shopId} unique to it`);
    return String(row.value).trim();
  };
  const base = await sampleValues(db);
  const invoiceCode = await uniqueOf('documents', 'code', { 'x.type': 'invoice', 'x.pdf_available': true });
  const samples: Record<string, string> = {
    ...base,
    orderCode: await uniqueOf('orders', 'code'),
    invoiceCode, 'documents.pdf:code': invoiceCode,
    claimCode: await uniqueOf('claims', 'code', { 'x.resolution': 'refund' }),
    customerKey: await uniqueOf('orders', 'customer_email_hash'),
    sessionId: await uniqueOf('chatbot_conversations', 'session_id'),
  };
  // Markers: record ids and codes only demo's shop sk has (numeric ids are unique per record; short values left out).
  // Shop names and URLs are no markers: the demo generator writes them into every tenant's texts alike.
  const shopRecords = ['orderCode', 'invoiceCode', 'claimCode', 'customerKey', 'sessionId', 'campaignId', 'conversionId', 'signatureId',
    'availabilities.draft:draftId', 'products.content_draft:draftId', 'categories.content_draft:draftId', 'claims.config_draft:draftId'];
  const accountRecords = ['endpointId', 'workflowId', 'partnerId', 'supplierId'];
  const markers = (names: string[]) => names.map((name) => samples[name]).filter((v) => v && v.length >= 6);
  const demoAccount = (await db('accounts').where({ code: 'demo' }).first('name')).name as string;
  // Demo's shop hu becomes a Medusa shop: its synced rows stay, only the platform differs (reads need no running Medusa).
  const hu = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'hu' }).first('s.id');
  await db('shops').where({ id: hu.id }).update({ platform: 'medusa' });
  await db('shop_platform_settings').where({ shop_id: hu.id }).update({ platform: 'medusa' });
  const huSamples: Record<string, string> = {
    orderCode: await uniqueOf('orders', 'code', {}, hu.id),
    invoiceCode: await uniqueOf('documents', 'code', { 'x.type': 'invoice', 'x.pdf_available': true }, hu.id),
    claimCode: await uniqueOf('claims', 'code', { 'x.resolution': 'refund' }, hu.id),
    customerKey: await uniqueOf('orders', 'customer_email_hash', {}, hu.id),
  };
  huSamples['documents.pdf:code'] = huSamples.invoiceCode;
  const huMarkers = Object.values(huSamples).filter((v) => v.length >= 6);
  const demoMarkers = [...new Set([...markers([...shopRecords, ...accountRecords]), ...huMarkers, demoAccount])];
  // Partners, suppliers, endpoints and automations are the account's, not a shop's: a cz-only credential may see them.
  const skMarkers = markers(shopRecords);
  const product = await db('products').where({ shop_id: sk.id }).orderBy('id').first('code');
  const category = await db('categories').where({ shop_id: sk.id }).orderBy('id').first('guid');
  const availability = await db('availabilities').where({ shop_id: sk.id }).orderBy('position').first('availability_id');
  const codeRequest = await db('affiliate_code_requests').where({ shop_id: sk.id }).orderBy('id').first('id');
  const fingerprint = 'a'.repeat(64);
  const writeArgs: Record<string, Record<string, unknown>> = {
    'automations.update_draft': { workflowId: samples.workflowId, expectedVersion: 1, rule: sampleRule() },
    'coupons.ensure': { markets: ['sk'], code: samples.couponCode, discount: { type: 'percent', percent: 10 } },
    'coupons.update': { market: 'sk', code: samples.couponCode, changes: { name: 'Isolation' } },
    'coupons.remove': { market: 'sk', code: samples.couponCode },
    'affiliate.discountCodes.ensure': { market: 'sk', partnerId: samples.partnerId, code: 'ISOLATIONX', discount: { type: 'percent', percent: 10 } },
    'affiliate.partnersSetState': { market: 'sk', partnerId: samples.partnerId, action: 'suspend', reason: 'isolation test' },
    'affiliate.codeRequestsDecide': { market: 'sk', requestId: String(codeRequest?.id ?? '1'), decision: 'reject', reason: 'isolation test' },
    'affiliate.articlesCreate': { key: samples.articleKey, translations: { sk: { title: 'T', slug: 'isolation', html: '<p>x</p>' }, en: { title: 'T', slug: 'isolation', html: '<p>x</p>' } } },
    'affiliate.articlesUpdate': { key: samples.articleKey, language: 'en', title: 'Isolation' },
    'affiliate.articlesSetState': { key: samples.articleKey, enabled: true },
    'affiliate.campaignsUpdate': { market: 'sk', campaignId: samples.campaignId, name: 'Isolation' },
    'affiliate.documentsUpdate': { key: samples.documentKey, enabled: true },
    'products.content_propose': { market: 'sk', products: [{ code: product.code, fingerprint, fields: { metaTitle: 'Isolation' } }] },
    'categories.content_propose': { market: 'sk', categories: [{ guid: category.guid, fingerprint, fields: { metaTitle: 'Isolation' } }] },
    'availabilities.propose': { market: 'sk', entries: [{ id: String(availability.availability_id), name: 'Isolation' }] },
  };
  t.context = { database, server, samples, demoMarkers, skMarkers, huSamples, huMarkers, writeArgs };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

/** The REST call for the same arguments: path parameters in the path, the rest in the query. */
function restPath(capability: RestCapability, args: Record<string, unknown>): string {
  const path = capability.path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k]) => !capability.path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  return `${path}?${query}`;
}

interface Outcome {
  /** HTTP status for REST, 200 or the error's status for MCP. */
  status: number;
  code: string | null;
  /** The records of a list (null for other kinds). */
  items: unknown[] | null;
  text: string;
}

async function viaRest(t: ExecutionContext<Context>, capability: RestCapability, args: Record<string, unknown>, key: string): Promise<Outcome> {
  const res = await api(t.context.server, restPath(capability, args), key);
  const text = JSON.stringify(res.body ?? '');
  return { status: res.status, code: res.body?.error?.code ?? null, items: res.status === 200 && isListKind(capability) ? res.body.data : null, text };
}

async function viaMcp(client: ModernClient, capability: Capability, args: Record<string, unknown>): Promise<Outcome> {
  const result = (await client.callTool({ name: capability.mcpTool!, arguments: args })) as { isError?: boolean; content?: Array<{ text?: string }>; structuredContent?: any };
  const text = JSON.stringify(result);
  if (result.isError) {
    const error = JSON.parse(result.content![0].text!).error;
    return { status: 400, code: error.code, items: null, text };
  }
  return { status: 200, code: null, items: isListKind(capability) ? result.structuredContent.items : null, text };
}

const REFUSALS = /^(SHOP_FORBIDDEN|SHOP_NOT_FOUND|[A-Z_]*NOT_FOUND)$/;

/** The outcome is the documented refusal: a refusal code, or an empty list; and it carries none of `markers`. */
function assertIsolated(t: ExecutionContext<Context>, label: string, outcome: Outcome, expectation: 'refused' | 'own' | 'any', markers: string[], args: Record<string, unknown>): void {
  // A value the caller sent may come back in the refusal's message ("No order `X` in shop `sk`"): that is no leak.
  const sent = JSON.stringify(args);
  const leaked = markers.filter((m) => outcome.text.includes(m) && !sent.includes(m));
  const problems = problemsOf(t);
  if (leaked.length > 0) problems.push(`${label}: the other side's ${leaked.join(', ')} in the answer: ${outcome.text.slice(0, 300)}`);
  if (expectation === 'refused') {
    const refused = (outcome.code !== null && REFUSALS.test(outcome.code)) || (outcome.items !== null && outcome.items.length === 0);
    if (!refused) problems.push(`${label}: expected a refusal or an empty list, got ${outcome.status} ${outcome.code}: ${outcome.text.slice(0, 300)}`);
  }
}

/** Every problem of a test, reported together at its end (ava shows only the first failed assertion). */
const problemLists = new WeakMap<object, string[]>();
function problemsOf(t: ExecutionContext<Context>): string[] {
  if (!problemLists.has(t)) problemLists.set(t, []);
  return problemLists.get(t)!;
}

const reads = capabilities.filter((c) => c.kind !== 'write' && (isRestCapability(c) || c.mcpTool !== null));

/** The sample arguments of a read; null for a read that names no record and has no sample (automations_validate_draft's rule). */
function readArgs(t: ExecutionContext<Context>, capability: Capability, overrides: Record<string, string> = {}): Record<string, unknown> | null {
  try {
    return sampleArgs(capability, { ...t.context.samples, ...overrides });
  } catch (error) {
    if (identifierParams(capability).length === 0) return null;
    throw error;
  }
}
const writes = capabilities.filter((c) => c.kind === 'write');

test('When demo reads its Medusa shop hu with hu\'s identifiers, then it gets hu\'s records (the shop the matrix refuses to others is a real one)', async (t) => {
  const key = await issueKey(t.context.database.db, { account: 'demo' });
  const shop = await t.context.database.db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'hu' }).first('s.platform');
  t.is(shop.platform, 'medusa');
  const order = await api(t.context.server, `/orders/${encodeURIComponent(t.context.huSamples.orderCode)}?market=hu`, key);
  t.is(order.status, 200, JSON.stringify(order.body));
  t.is(order.body.data.code, t.context.huSamples.orderCode);
  const claim = await api(t.context.server, `/claims/${encodeURIComponent(t.context.huSamples.claimCode)}?market=hu`, key);
  t.is(claim.status, 200, JSON.stringify(claim.body));
  t.is(claim.body.data.code, t.context.huSamples.claimCode);
});

test('Every capability that takes an identifier is in the isolation matrix, and the matrix names no capability that does not exist', (t) => {
  const takingIds = capabilities.filter((c) => identifierParams(c).length > 0).map((c) => c.name).sort();
  t.deepEqual(takingIds.filter((name) => !(name in MATRIX)), [], 'capabilities taking an identifier but missing from MATRIX');
  t.deepEqual(Object.keys(MATRIX).filter((name) => !takingIds.includes(name)).sort(), [], 'MATRIX entries that are no capability taking an identifier');
  t.true(writes.filter((c) => identifierParams(c).length > 0).every((c) => c.name in t.context.writeArgs), 'arguments for every write tool in MATRIX');
});

test('When account acme calls every read with demo\'s identifiers and shop codes (REST key, MCP key, MCP OAuth token), then it is refused or gets its own data, never demo\'s', async (t) => {
  t.timeout(600_000);
  const db = t.context.database.db;
  const key = await issueKey(db, { account: 'acme' });
  const token = await mintOAuthToken(db, t.context.server, { account: 'acme' });
  const overKey = await connectModern(t.context.server, key);
  const overToken = await connectModern(t.context.server, token);
  try {
    for (const capability of reads) {
      const args = readArgs(t, capability);
      if (!args) continue;
      const expectation = MATRIX[capability.name] ?? 'any';
      const variants: Array<[string, Record<string, unknown>]> = [['demo ids', args]];
      // A shop code only demo has (its Medusa shop): the account has no such shop; also with that shop's own ids.
      if (capability.market === 'required') variants.push(['shop hu', { ...args, market: 'hu' }], ['shop hu', { ...readArgs(t, capability, t.context.huSamples), market: 'hu' }]);
      for (const [variant, callArgs] of variants) {
        const expected = variant === 'shop hu' ? 'refused' : expectation;
        if (isRestCapability(capability)) {
          const outcome = await viaRest(t, capability, callArgs, key);
          assertIsolated(t, `${capability.name} REST key ${variant}`, outcome, expected, t.context.demoMarkers, callArgs);
          if (variant === 'shop hu' && outcome.code !== 'SHOP_NOT_FOUND') problemsOf(t).push(`${capability.name} REST shop hu: ${outcome.code}`);
        }
        if (capability.mcpTool) {
          for (const [credential, client] of [['key', overKey], ['OAuth token', overToken]] as const) {
            const outcome = await viaMcp(client, capability, callArgs);
            assertIsolated(t, `${capability.name} MCP ${credential} ${variant}`, outcome, expected, t.context.demoMarkers, callArgs);
            if (variant === 'shop hu' && outcome.code !== 'SHOP_NOT_FOUND') problemsOf(t).push(`${capability.name} MCP ${credential} shop hu: ${outcome.code}`);
          }
        }
      }
    }
  } finally {
    await overKey.close();
    await overToken.close();
  }
  t.deepEqual(problemsOf(t), []);
});

test('When a credential limited to shop cz calls every read with shop sk\'s identifiers, then sk is forbidden and cz answers without sk\'s records', async (t) => {
  t.timeout(600_000);
  const db = t.context.database.db;
  const key = await issueKey(db, { shops: ['cz'] });
  const token = await mintOAuthToken(db, t.context.server, { shops: ['cz'] });
  const overKey = await connectModern(t.context.server, key);
  const overToken = await connectModern(t.context.server, token);
  try {
    for (const capability of reads) {
      const args = readArgs(t, capability);
      if (!args) continue;
      // Partners and suppliers are the account's: a cz-only credential may read them in cz.
      const accountWide = identifierParams(capability).some((p) => ACCOUNT_LEVEL_IDS.has(p));
      const expectation = accountWide ? 'any' : MATRIX[capability.name] ?? 'any';
      // Account-wide records (webhook endpoints, automations, affiliate articles and documents) are not a shop's.
      const shopRecord = capability.market === 'required' || /draft$/.test(capability.name);
      if (!shopRecord) continue;
      const huArgs = capability.market === 'required' ? readArgs(t, capability, t.context.huSamples)! : args;
      const variants: Array<[string, Record<string, unknown>, 'refused' | 'own' | 'any']> = capability.market === 'required'
        ? [['market sk', args, 'refused'], ['sk ids in cz', { ...args, market: 'cz' }, expectation],
          // The Medusa shop hu: forbidden like any other shop outside the credential, and its ids answer nothing of it in cz.
          ['market hu', huArgs, 'refused'], ['hu ids in cz', { ...huArgs, market: 'cz' }, expectation]]
        : [['sk draft', args, 'refused']];
      for (const [variant, callArgs, expected] of variants) {
        const forbidden = variant === 'market sk' || variant === 'market hu';
        const markers = forbidden ? [] : variant === 'hu ids in cz' ? t.context.huMarkers : t.context.skMarkers;
        if (isRestCapability(capability)) {
          const outcome = await viaRest(t, capability, callArgs, key);
          assertIsolated(t, `${capability.name} REST key ${variant}`, outcome, expected, markers, callArgs);
          if (forbidden && outcome.code !== 'SHOP_FORBIDDEN') problemsOf(t).push(`${capability.name} REST ${variant}: ${outcome.code}`);
        }
        if (capability.mcpTool) {
          for (const [credential, client] of [['key', overKey], ['OAuth token', overToken]] as const) {
            const outcome = await viaMcp(client, capability, callArgs);
            assertIsolated(t, `${capability.name} MCP ${credential} ${variant}`, outcome, expected, markers, callArgs);
            if (forbidden && outcome.code !== 'SHOP_FORBIDDEN') problemsOf(t).push(`${capability.name} MCP ${credential} ${variant}: ${outcome.code}`);
          }
        }
      }
    }
  } finally {
    await overKey.close();
    await overToken.close();
  }
  t.deepEqual(problemsOf(t), []);
});

/** A digest of every row of demo's own tables that a write tool could change (small tables; platform data is read-only). */
async function demoDigest(db: TestDatabase['db']): Promise<Record<string, string>> {
  const tables: string[] = (await db.raw(`
    select c.table_name from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
    where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.column_name in ('account_id', 'shop_id')
      and c.table_name in ('coupons', 'automations', 'proposals', 'proposal_items', 'affiliate_partners', 'affiliate_campaigns', 'affiliate_code_requests',
        'affiliate_discount_codes', 'affiliate_articles', 'affiliate_article_translations', 'affiliate_documents', 'demo_shop_writes', 'outbox_events')
    group by c.table_name order by c.table_name`)).rows.map((r: { table_name: string }) => r.table_name);
  const out: Record<string, string> = {};
  for (const table of tables) {
    const columns: string[] = (await db.raw(`select column_name from information_schema.columns where table_schema = 'public' and table_name = ?`, [table])).rows.map((r: { column_name: string }) => r.column_name);
    const filter = columns.includes('account_id')
      ? `account_id = (select id from accounts where code = 'demo')`
      : `shop_id in (select s.id from shops s join accounts a on a.id = s.account_id where a.code = 'demo')`;
    const r = await db.raw(`select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ${table} t where ${filter}`);
    out[table] = `${r.rows[0].n}:${r.rows[0].h}`;
  }
  return out;
}

test('When account acme calls every write tool with demo\'s identifiers (MCP key and OAuth token), then it is refused or acts on its own records, and demo\'s rows are unchanged', async (t) => {
  t.timeout(300_000);
  const db = t.context.database.db;
  const before = await demoDigest(db);
  t.true(Object.keys(before).length >= 5, `demo's tables found: ${Object.keys(before).join(', ')}`);
  const key = await issueKey(db, { account: 'acme', writeMode: 'proposals' });
  const token = await mintOAuthToken(db, t.context.server, { account: 'acme', writeMode: 'proposals' });
  for (const [credential, secret] of [['key', key], ['OAuth token', token]] as const) {
    const client = await connectModern(t.context.server, secret);
    try {
      for (const capability of writes.filter((c) => c.name in MATRIX)) {
        const outcome = await viaMcp(client, capability, t.context.writeArgs[capability.name]);
        if (outcome.code === 'INVALID_PARAMETER') problemsOf(t).push(`${capability.name}: the arguments must pass validation to test isolation: ${outcome.text.slice(0, 300)}`);
        assertIsolated(t, `${capability.name} MCP ${credential}`, outcome, MATRIX[capability.name], t.context.demoMarkers, t.context.writeArgs[capability.name]);
      }
    } finally {
      await client.close();
    }
  }
  t.deepEqual(problemsOf(t), []);
  t.deepEqual(await demoDigest(db), before, 'no row of demo changed');
});

test('When a credential limited to shop cz calls every shop write tool for shop sk, then it is SHOP_FORBIDDEN and sk is unchanged', async (t) => {
  const db = t.context.database.db;
  const before = await demoDigest(db);
  const key = await issueKey(db, { shops: ['cz'], writeMode: 'proposals' });
  const client = await connectModern(t.context.server, key);
  try {
    for (const capability of writes.filter((c) => c.name in MATRIX && c.market === 'required')) {
      const outcome = await viaMcp(client, capability, t.context.writeArgs[capability.name]);
      if (outcome.code !== 'SHOP_FORBIDDEN') problemsOf(t).push(`${capability.name}: ${outcome.code} ${outcome.text.slice(0, 300)}`);
    }
  } finally {
    await client.close();
  }
  t.deepEqual(problemsOf(t), []);
  t.deepEqual(await demoDigest(db), before, 'no row of demo changed');
});
