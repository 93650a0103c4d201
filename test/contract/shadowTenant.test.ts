/**
 * The shadow-tenant oracle (a metamorphic relation over the whole registry): every read of shop `cz` of account `demo`
 * answers byte for byte as before once every row of `cz` also exists, under the same codes and with perturbed values
 * (money + 1, a marker in names and titles), in a new shop of account `acme` and in a new shop of `demo` itself
 * (test/helpers/shadowTenant.ts). A query that lost its `shop_id` or `account_id` condition finds the second row under
 * the code, or sums it in, and the answer changes. The isolation matrix cannot see that: the demo data never repeats a
 * code across shops or accounts.
 *
 * Every read capability is called before and after over REST (a key of all demo's shops and a key limited to `cz`) and
 * over MCP (the same two keys), with the samples of test/helpers/samples.ts taken from `cz`; the application's pages of
 * shop data are read by a person limited to `cz` and by one of all shops. A read missing from the comparison fails the
 * first test, so a new capability joins by construction.
 */
import type { ExecutionContext } from 'ava';
import anyTest, { type TestFn } from 'ava';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { capabilities } from '../../src/capabilities/registry.js';
import { isRestCapability, type Capability } from '../../src/capabilities/types.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { FormClient, makePerson } from '../helpers/application.js';
import { sampleRule } from '../helpers/automations.js';
import { TEST_NOW } from '../helpers/constants.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { SHADOW_EXCLUDED, shadowShop, type ShadowCopy } from '../helpers/shadowTenant.js';
import { shopId } from '../helpers/shops.js';
import { pool } from '../helpers/pool.js';

const ACME_MARKER = ' SHADOW-ACME';
const DEMO_MARKER = ' SHADOW-DEMO';
/** The new shops' codes (free in both accounts): acme's own code so that it is seen wherever shop codes are listed. */
const NEW_SHOP = 'at';
const ACME_SHOP = 'xq';
/** What of the acme copy an answer to demo must never contain: its marker, and its shop code as a JSON string or cell. */
const ACME_TRACES = [ACME_MARKER.trim(), `"${ACME_SHOP}"`, `>${ACME_SHOP}<`, `${ACME_SHOP}, `, `, ${ACME_SHOP}<`];

/**
 * Account-wide reads (no market) whose answer for a caller of all demo's shops legitimately changes when demo gets a
 * second copy of cz: they list or count something of every shop of the account. For them only the acme copy must stay
 * out (its marker absent); every other read must answer byte for byte as before.
 */
const ACCOUNT_WIDE_MAY_CHANGE = new Set([
  'stores.list', // lists every shop of the account: the new shop `at` joins the list
  'stores.integrationStatus', // one entry per shop: `at` joins
  'account.entitlements', // counts the account's shops against the plan
  'account.connection', // names the shops the credential reaches: `at` joins
  'affiliate.portal', // the affiliate portal of each shop of the account: `at` has one (copied from cz)
  'automations.options', // the shops a rule may name: `at` joins
]);

/**
 * Reads of one shop whose answer shows, by design, the same record in the account's other shops the caller may see:
 * a customer is a pseudonym of the account, and its directory entry gives its figures in every visible shop (SPEC
 * "customers": shops, lifetime counts and revenue; `/customers/{customerKey}` per-shop breakdown). For a caller of all
 * shops they gain demo's copy `at`; never acme's. For the key limited to cz they must not change at all.
 */
const SAME_ACCOUNT_VIEW = new Set(['customers.list', 'customers.get']);

/** The application's pages that show every shop of the account to a person of all shops (no shop filter), or a customer's shops. */
const PAGES_ACCOUNT_VIEW = [/^\/app\/affiliate\/payouts/, /^\/app\/customers/];

/** Reads not called, and why (none may be left out silently). */
const NOT_CALLED: Record<string, string> = {};

interface Context {
  database: TestDatabase;
  server: TestServer;
  samples: Record<string, string>;
  keys: Record<'all' | 'cz', string>;
  before: Map<string, string>;
  after: Map<string, string>;
  pagesBefore: Map<string, string>;
  pagesAfter: Map<string, string>;
  copies: ShadowCopy[];
  clients: FormClient[];
}
const test = anyTest as TestFn<Context>;

const reads = capabilities.filter((c) => c.kind !== 'write' && (isRestCapability(c) || c.mcpTool !== null));

/** The arguments of a read: the samples of cz (account-wide records as the shared samples give them). */
function argsOf(capability: Capability, samples: Record<string, string>): Record<string, unknown> {
  if (capability.name === 'automations.validate_draft') return { rule: sampleRule() };
  return sampleArgs(capability, samples);
}

function restPath(capability: Capability & { path: string }, args: Record<string, unknown>): string {
  const path = capability.path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k]) => !capability.path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  return `${path}?${query}`;
}

/** Drops what differs from call to call by design: the request id (in REST meta and in MCP's error text). */
function stable(text: string): string {
  return text.replace(/(\\*)"requestId\1":\1"[^"\\]*\1"/g, '$1"requestId$1":$1"-$1"');
}

/** Every read over REST and MCP with both keys: label → the answer's stable text. */
async function callEverything(t: ExecutionContext<Context>): Promise<Map<string, string>> {
  const { server, samples, keys } = t.context;
  const out = new Map<string, string>();
  const tasks: Array<() => Promise<void>> = [];
  const clients: ModernClient[] = [];
  try {
    for (const [keyName, key] of Object.entries(keys)) {
      const client = await connectModern(server, key);
      clients.push(client);
      for (const capability of reads) {
        if (capability.name in NOT_CALLED) continue;
        const args = argsOf(capability, samples);
        if (isRestCapability(capability)) {
          tasks.push(async () => {
            const res = await api(server, restPath(capability, args), key);
            out.set(`${capability.name} REST ${keyName}`, stable(`${res.status} ${JSON.stringify(res.body ?? null)}`));
          });
        }
        if (capability.mcpTool) {
          tasks.push(async () => {
            const result = await client.callTool({ name: capability.mcpTool!, arguments: args });
            out.set(`${capability.name} MCP ${keyName}`, stable(JSON.stringify(result)));
          });
        }
      }
    }
    await pool(4, tasks);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  return out;
}

/** The application's pages of shop data, per person: label → the page's stable text (status and HTML). */
async function readPages(t: ExecutionContext<Context>): Promise<Map<string, string>> {
  const { samples } = t.context;
  const pages = [
    '/app/documents?market=cz', '/app/documents?market=cz&type=credit_note', '/app/documents?market=cz&type=proforma',
    `/app/documents?market=cz&type=invoice&query=${encodeURIComponent(samples.invoiceCode)}`,
    `/app/documents/cz/invoice/${encodeURIComponent(samples.invoiceCode)}`,
    '/app/customers?market=cz', `/app/customers/cz/${encodeURIComponent(samples.customerKey)}`,
    '/app/products?market=cz', `/app/products/cz/${encodeURIComponent(samples.code)}`,
    '/app/categories?market=cz', `/app/categories/cz/${encodeURIComponent(samples.guid)}`,
    '/app/affiliate/commissions?market=cz', '/app/affiliate/payouts', '/app/affiliate/partners',
  ];
  const out = new Map<string, string>();
  const [czOnly, allShops] = t.context.clients;
  await pool(4, [czOnly, allShops].flatMap((client, i) => pages.map((page) => async () => {
    const res = await client.get(page);
    out.set(`${i === 0 ? 'cz person' : 'all-shops person'} ${page}`, `${res.status} ${res.text.replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf"')}`);
  })));
  return out;
}

test.before(async (t) => {
  t.timeout(240_000);
  const database = await createTestDatabase();
  const db = database.db;
  const platforms = createPlatformRegistry({ db, wallClock: () => TEST_NOW });
  const server = await startTestServer(db, () => TEST_NOW, undefined, { platforms });
  Object.assign(t.context, { database, server });
  const cz = await shopId(db, 'demo', 'cz');
  // Samples of cz: the shop's own records; account-wide records (endpoint, automation, partner, supplier, signature,
  // articles) and the drafts (of sk: the platform of cz takes no meta titles) as the shared samples give them.
  const shared = await sampleValues(db);
  const first = async (table: string, column: string, where: Record<string, unknown> = {}, order = 'id', direction: 'asc' | 'desc' = 'asc') =>
    String((await db(table).where({ shop_id: cz, ...where }).orderBy(order, direction).first(column))[column]).trim();
  const product = await first('products', 'code');
  // An invoice with a credit note (its answer lists related documents, found by code).
  const invoiceCode = String((await db('documents as i').where({ 'i.shop_id': cz, 'i.type': 'invoice', 'i.pdf_available': true })
    .whereExists(db('documents as c').whereRaw('c.shop_id = i.shop_id').where('c.type', 'credit_note').whereRaw('c.related_code = i.code'))
    .orderBy('i.issued_at', 'desc').first('i.code')).code);
  const samples: Record<string, string> = {
    ...shared,
    market: 'cz',
    orderCode: await first('orders', 'code', {}, 'created_at', 'desc'),
    code: product,
    codes: `${product},NO-SUCH-ITEM`,
    shipmentId: await first('shipments', 'id', {}, 'created_at', 'desc'),
    guid: await first('categories', 'guid'),
    invoiceCode, 'documents.pdf:code': invoiceCode,
    customerKey: await first('orders', 'customer_email_hash', {}, 'created_at', 'desc'),
    claimCode: await first('claims', 'code', { resolution: 'refund' }, 'opened_at', 'desc'),
    couponCode: await first('coupons', 'code', {}, 'created_at'),
    campaignId: await first('affiliate_campaigns', 'id', { is_default: true }),
    conversionId: await first('affiliate_conversions', 'id'),
    sessionId: await first('chatbot_conversations', 'session_id', {}, 'last_activity_at', 'desc'),
  };
  const keys = { all: await issueKey(db, { account: 'demo' }), cz: await issueKey(db, { account: 'demo', shops: ['cz'] }) };
  // Two people of demo with every permission: one limited to shop cz, one of all shops.
  const clients: FormClient[] = [];
  for (const shops of [['cz'], null]) {
    const person = await makePerson(db, { role: 'owner', shops, permissions: ['personal-data', 'affiliate:manage'] });
    const client = new FormClient(server.baseUrl);
    const signIn = await client.signIn(person.email, person.password);
    if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`);
    clients.push(client);
  }
  Object.assign(t.context, { samples, keys, before: new Map(), after: new Map(), pagesBefore: new Map(), pagesAfter: new Map(), copies: [], clients });
  const started = Date.now();
  t.context.before = await callEverything(t as unknown as ExecutionContext<Context>);
  t.context.pagesBefore = await readPages(t as unknown as ExecutionContext<Context>);
  t.log(`reads before: ${Date.now() - started} ms`);
  t.context.copies = await shadowShop(db, { account: 'demo', shop: 'cz' }, [
    { account: 'acme', shop: ACME_SHOP, marker: ACME_MARKER },
    { account: 'demo', shop: NEW_SHOP, marker: DEMO_MARKER },
  ]);
  t.log(`shadow copies: ${Date.now() - started} ms`);
  t.context.after = await callEverything(t as unknown as ExecutionContext<Context>);
  t.context.pagesAfter = await readPages(t as unknown as ExecutionContext<Context>);
  t.log(`reads after: ${Date.now() - started} ms`);
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

test('Every read capability is in the comparison, over REST and MCP, and the lists name only real account-wide reads', (t) => {
  const missing = reads.filter((c) => !(c.name in NOT_CALLED)).flatMap((c) => [
    ...(isRestCapability(c) ? [`${c.name} REST all`, `${c.name} REST cz`] : []),
    ...(c.mcpTool ? [`${c.name} MCP all`, `${c.name} MCP cz`] : []),
  ]).filter((label) => !t.context.before.has(label) || !t.context.after.has(label));
  t.deepEqual(missing, []);
  const accountWide = new Set(reads.filter((c) => c.market === 'none').map((c) => c.name));
  t.deepEqual([...ACCOUNT_WIDE_MAY_CHANGE].filter((name) => !accountWide.has(name)), [], 'ACCOUNT_WIDE_MAY_CHANGE names only account-wide reads');
  t.deepEqual(Object.keys(NOT_CALLED).filter((name) => !reads.some((c) => c.name === name)), [], 'NOT_CALLED names only reads');
});

test('The shadow copies exist: every row of cz under the same codes in acme/at and demo/at, with values a leak would show', async (t) => {
  const db = t.context.database.db;
  const cz = await shopId(db, 'demo', 'cz');
  // The exclusion list names real tables only (a renamed table would otherwise be copied, or the entry go stale).
  const tables = new Set((await db.raw(`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)).rows.map((r: { table_name: string }) => r.table_name));
  t.deepEqual(Object.keys(SHADOW_EXCLUDED).filter((name) => !tables.has(name)), [], 'SHADOW_EXCLUDED names only tables');
  for (const copy of t.context.copies) {
    t.deepEqual(copy.skipped, {}, `no table left out of ${copy.account}/${copy.shop} for a unique key`);
    // Raw SQL oracle: the same order, document and claim codes and customer pseudonyms in the copy as in cz.
    for (const [table, column] of [['orders', 'code'], ['documents', 'code'], ['claims', 'code'], ['products', 'code'], ['coupons', 'code'], ['chatbot_conversations', 'session_id']]) {
      const r = (await db.raw(`select count(*)::int as n, count(*) filter (where exists (select 1 from ${table} y where y.shop_id = ? and y.${column} = x.${column}))::int as shared
        from ${table} x where x.shop_id = ?`, [copy.shopId, cz])).rows[0];
      t.true(r.n > 0, `${table} of cz`);
      t.is(r.shared, r.n, `every ${table}.${column} of cz also in ${copy.account}/${copy.shop}`);
    }
    const lines = (await db.raw(`select count(*)::int as n from order_items i join orders o on o.id = i.order_id where o.shop_id = ?`, [copy.shopId])).rows[0].n;
    const czLines = (await db.raw(`select count(*)::int as n from order_items i join orders o on o.id = i.order_id where o.shop_id = ?`, [cz])).rows[0].n;
    t.is(lines, czLines, `order lines of ${copy.account}/${copy.shop}`);
    const money = (await db.raw(`select count(*)::int as n from orders x join orders y on y.code = x.code and y.shop_id = ? where x.shop_id = ? and y.total_with_vat = x.total_with_vat + 1`, [copy.shopId, cz])).rows[0].n;
    t.is(money, Number((await db('orders').where({ shop_id: cz }).count({ n: '*' }))[0].n), 'every copied order costs 1 more');
  }
  // Through the service: the demo copy answers under cz's codes with its marker and other sums (the perturbation shows).
  const key = t.context.keys.all;
  const { samples } = t.context;
  for (const path of [`/orders/${encodeURIComponent(samples.orderCode)}`, `/invoices/${encodeURIComponent(samples.invoiceCode)}`, `/customers/${samples.customerKey}`]) {
    const [original, copy] = await Promise.all([api(t.context.server, `${path}?market=cz`, key), api(t.context.server, `${path}?market=${NEW_SHOP}`, key)]);
    t.is(copy.status, 200, JSON.stringify(copy.body));
    t.false(JSON.stringify(original.body).includes(DEMO_MARKER), path);
    t.true(JSON.stringify(copy.body).includes(DEMO_MARKER), `${path} of the copy shows its marker`);
  }
});

test('After shadowing, every read of shop cz answers byte for byte as before, for a key of all shops and a key of cz (REST and MCP)', (t) => {
  const problems: string[] = [];
  for (const [label, before] of t.context.before) {
    const after = t.context.after.get(label) ?? '(not called)';
    const name = label.split(' ')[0];
    const capability = capabilities.find((c) => c.name === name)!;
    for (const trace of ACME_TRACES) if (after.includes(trace)) problems.push(`${label}: the acme copy leaked: ${excerpt(after, trace)}`);
    const mayChange = label.endsWith(' all') && (capability.market === 'none' ? ACCOUNT_WIDE_MAY_CHANGE.has(name) : SAME_ACCOUNT_VIEW.has(name));
    if (!mayChange && after !== before) problems.push(`${label}: changed: ${difference(before, after)}`);
  }
  t.deepEqual(problems, []);
});

test('After shadowing, the application\'s pages of shop cz are the same for a person of cz; a person of all shops never sees the acme copy', (t) => {
  const problems: string[] = [];
  for (const [label, before] of t.context.pagesBefore) {
    const after = t.context.pagesAfter.get(label)!;
    if (!/^200 /.test(before)) problems.push(`${label}: answered ${before.slice(0, 200)}`);
    for (const trace of ACME_TRACES) if (after.includes(trace)) problems.push(`${label}: the acme copy leaked: ${excerpt(after, trace)}`);
    // The all-shops person's shop picker gains the new shop `at`: that option aside, the page is the same, but for the
    // pages that show every shop of the account (or a customer's shops) to that person.
    const [person, path] = [label.startsWith('cz person') ? 'cz' : 'all', label.slice(label.indexOf(' /') + 1)];
    if (person === 'all' && PAGES_ACCOUNT_VIEW.some((pattern) => pattern.test(path))) continue;
    const normalise = (html: string) => html.replace(new RegExp(`<option value="${NEW_SHOP}"[^>]*>[^<]*</option>\\s*`, 'g'), '');
    if (normalise(after) !== normalise(before)) problems.push(`${label}: changed: ${difference(normalise(before), normalise(after))}`);
  }
  t.true(t.context.pagesBefore.size >= 20);
  t.deepEqual(problems, []);
});

function excerpt(text: string, marker: string): string {
  const i = text.indexOf(marker);
  return text.slice(Math.max(0, i - 150), i + 50);
}

/** Where two texts first differ, with a little context. */
function difference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at ${i}: before …${a.slice(Math.max(0, i - 80), i + 120)}… after …${b.slice(Math.max(0, i - 80), i + 120)}…`;
}
