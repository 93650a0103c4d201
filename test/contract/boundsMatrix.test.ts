/**
 * The bounds matrix: every limit is tried AT the bound and ONE PAST it, over REST and MCP.
 *   Part 1 (generic): every bound declared in GET /openapi.json (query and path parameters) and in every MCP tool's
 *   inputSchema (tools/list with a key of every scope: reads and write tools) — minimum, maximum, exclusiveMinimum/
 *   Maximum, minLength, maxLength, minItems, maxItems, pattern (the quantifiers of each pattern, from PATTERNS), enum,
 *   const, and the key pattern of a map (propertyNames) — at any depth (array items, map values, oneOf branches).
 *   The value at the bound must not be refused with a validation error naming that parameter (another answer, e.g.
 *   not found, is fine); the value one past must be refused with the documented validation error (D3: HTTP 400 /
 *   MCP tool error with `INVALID_PARAMETER`, `LIMIT_OUT_OF_RANGE` for `limit`, D6) naming the parameter. Both ways:
 *   a value the schema allows that the server refuses is a failure, as is one the schema refuses that it accepts.
 *   The first test lists the bounds per capability and fails when a capability with a bound is missing from BASE,
 *   or a pattern from PATTERNS: a new capability, parameter or pattern joins by construction.
 *   A value at a bound answered with INTERNAL_ERROR fails too. COMPANIONS adds what a parameter needs beside it;
 *   NOT_A_BOUND lists refusals at a bound that are not about it (lookups, the shop platform's narrower rules, GM7).
 *   Part 2 (domain limits no schema states, written literally from SPEC/DECISIONS/docs/decisions.md): a search's
 *   `limit` 100/101 (D6), 50 real products in one proposal (content limits, "At most 50 products") and 51, every
 *   text field at its longest, a fixed discount of 0.01 created and 0.00 refused, the platform's coupon rules
 *   (coupons_capabilities) at and past each, monthly analytics 24/25 months, advertising history 6 months (SPEC
 *   Limits, N11), webhook endpoints per plan (start 5, growth 20, pro 50). The 366/367-day period is periodMatrix's.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { capabilities } from '../../src/capabilities/registry.js';
import type { Capability } from '../../src/capabilities/types.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { TEST_NOW } from '../helpers/constants.js';
import { createTestDatabase, rowForInsert, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { shopOf } from '../helpers/shops.js';
import { accountId, fakeDns, makeEndpoint, testSettings } from '../helpers/webhooks.js';
import { pool } from '../helpers/pool.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  temporal: TemporalAccess;
  key: string;
  client: ModernClient;
  samples: Record<string, string>;
  openapi: any;
  tools: Array<{ name: string; inputSchema: any }>;
}
const test = anyTest as TestFn<Context>;
type T = ExecutionContext<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const { db } = database;
  // Write tools reach the shop platforms and Temporal (proposals); the proposals' workflows are started on a task
  // queue no worker polls, so they stay waiting: this file only checks what the tools accept.
  const temporal: TemporalAccess = { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue: 'test-bounds-matrix' };
  const platforms = createPlatformRegistry({ db, wallClock: () => TEST_NOW });
  const server = await startTestServer(db, () => TEST_NOW, undefined, { platforms, temporal });
  const key = await issueKey(db);
  const client = await connectModern(server, key);
  const openapi = (await api(server, '/openapi.json')).body;
  const { tools } = await client.listTools();
  t.context = { database, server, temporal, key, client, samples: await sampleValues(db), openapi, tools: tools as Context['tools'] };
});

test.after.always(async (t) => {
  await t.context.client?.close();
  await t.context.server?.close();
  await t.context.temporal?.close();
  await t.context.database?.drop();
});

// --- the tables ------------------------------------------------------------------------------------------------------

/**
 * Every capability with a declared bound, with the arguments its calls start from: the required parameters come from
 * test/helpers/samples.ts, the rest of what the schema requires is generated from the schema (NAMED below), and these
 * overrides make a write tool's base call a plausible one. A capability with a bound missing here fails the first test.
 */
const BASE: Record<string, Record<string, unknown>> = {
  // reads: the samples suffice
  'affiliate.articlesGet': {}, 'affiliate.campaignsList': {}, 'affiliate.campaignsGet': {}, 'affiliate.codeRequests': {}, 'affiliate.conversionsList': {},
  'affiliate.conversionsGet': {}, 'affiliate.discountCodes': {}, 'affiliate.documentContent': {}, 'affiliate.linksGenerate': {}, 'affiliate.partnersList': {},
  'affiliate.partnersGet': {}, 'affiliate.payouts': {}, 'affiliate.signatures': {}, 'affiliate.signature': {}, 'affiliate.statistics': {}, 'affiliate.summary': {},
  'affiliate.variables': {}, 'analytics.advertising': {}, 'analytics.channels': {}, 'analytics.comparison': {}, 'analytics.monthly': {}, 'analytics.orderCoverage': {},
  'analytics.orderHeatmap': {}, 'analytics.overview': {}, 'analytics.revenueSources': {}, 'analytics.seo': {}, 'automations.list': {}, 'automations.get': {},
  'automations.runs': {}, 'automations.options': {}, 'availabilities.list': {}, 'availabilities.draft': {}, 'categories.content_draft': {},
  'products.content_draft': {}, 'categories.list': {}, 'categories.content': {}, 'chatbot.conversations': {}, 'chatbot.conversation': {}, 'chatbot.outcomes': {},
  'chatbot.stats': {}, 'chatbot.topics': {}, 'claims.list': {}, 'claims.get': {}, 'claims.refundReadiness': {}, 'claims.config_draft': {}, 'claims.configuration': {},
  'claims.refundOptions': {}, 'claims.refundSettings': {}, 'claims.routes': {}, 'claims.settings': {}, 'claims.statistics': {}, 'claims.templates': {},
  'content.articles': {}, 'coupons.list': {}, 'coupons.get': {}, 'coupons.activationLink': {}, 'coupons.activationStatus': {}, 'coupons.capabilities': {},
  'credit_notes.search': {}, 'customers.list': {}, 'customers.get': {}, 'customers.performance': {}, 'documents.list': {}, 'documents.pdf': {},
  'inventory.availability': {}, 'inventory.movements': {}, 'inventory.stock': {}, 'invoices.search': {}, 'invoices.get': {}, 'orders.list': {}, 'orders.get': {},
  'products.content_policy': {}, 'products.search': {}, 'products.get': {}, 'products.content': {}, 'reports.financialSummary': {}, 'sales.orderPerformance': {},
  'sales.productPerformance': {}, 'searchConsole.query': {}, 'searchConsole.status': {}, 'shipping.carriers': {}, 'shipping.shipments': {},
  'shipping.shipmentDetail': {}, 'shipping.stats': {}, 'suppliers.list': {}, 'suppliers.get': {}, 'webhooks.endpoint': {}, 'webhooks.deliveries': {},
  // write tools
  'affiliate.articlesCreate': { key: 'bounds-article' },
  'affiliate.articlesSetState': { key: 'getting-started', enabled: true },
  'affiliate.articlesUpdate': { key: 'getting-started', language: 'en', title: 'Getting started' },
  'affiliate.campaignsCreate': { name: 'Bounds campaign', reward: { type: 'percent', percent: 10 } },
  'affiliate.campaignsUpdate': { name: 'Bounds campaign' },
  'affiliate.codeRequestsDecide': { requestId: '1', decision: 'reject', reason: 'Bounds test' },
  'affiliate.discountCodes.ensure': { code: 'BOUNDS1', discount: { type: 'percent', percent: 10 } },
  'affiliate.documentsUpdate': { key: 'partner-agreement', enabled: true },
  'affiliate.emailTemplatesUpdate': { event: 'account_approved', language: 'en', subject: 'Welcome' },
  'affiliate.partnersSetState': { action: 'return_to_waiting' },
  'affiliate.portalPagesUpdate': { page: 'login', language: 'en', html: '<p>Welcome</p>' },
  'affiliate.settingsUpdate': { name: 'Bounds programme' },
  'automations.create_draft': { clientRequestId: 'bounds-1', rule: {} },
  'automations.update_draft': { expectedVersion: 1, rule: {} },
  'availabilities.propose': { entries: [{ id: 'no-such-entry', name: 'Skladom' }] },
  'categories.content_propose': { categories: [{ guid: 'no-such-category', fingerprint: '0'.repeat(64), fields: { metaTitle: 'x' } }] },
  'claims.settings_propose': { refundOptions: { refundCouponValidityDays: 30 } },
  'coupons.ensure': { markets: ['sk'], code: 'BOUNDS2', discount: { type: 'percent', percent: 10 } },
  'coupons.remove': { code: 'NO-SUCH-COUPON' },
  'coupons.update': { code: 'NO-SUCH-COUPON', changes: { name: 'Bounds' } },
  'products.content_propose': { products: [{ code: 'no-such-product', fingerprint: '0'.repeat(64), fields: { metaTitle: 'x' } }] },
};

/**
 * Parameters that go with the one tried (or with one of its values), so that the call is the bound's and not another
 * rule's: `to` needs `from` (C1), a product link needs `productCode` (affiliate_links_generate), a `chosen` campaign its
 * partners, a rejection or suspension a reason, `restoreDefault` no new wording. `undefined` removes a base parameter.
 */
type Samples = Record<string, string>;
type Companion = Record<string, unknown>;
const COMPANIONS: Record<string, Companion> = {
  to: { from: '2026-09-01' },
  purchaseTo: { purchaseFrom: '2026-09-01' },
  productCode: { target: 'product' },
  categoryGuid: { target: 'category' },
  'target=product': { productCode: (s: Samples) => s.code },
  'target=category': { categoryGuid: (s: Samples) => s.guid },
  partnerIds: { availability: 'chosen' },
  'availability=chosen': { partnerIds: (s: Samples) => [s.partnerId] },
  'action=reject': { reason: 'Bounds test' },
  'action=suspend': { reason: 'Bounds test' },
  restoreDefault: { title: undefined, slug: undefined, html: undefined },
};

/** Values the generator gives a parameter of this name (the shop, its currency, a programme language). */
const NAMED: Record<string, unknown> = { market: 'sk', markets: ['sk'], shop: 'sk', currency: 'EUR', language: 'en', percent: 10 };

/**
 * Every pattern a parameter declares, with values at its bounds (the ends of each quantifier) that it accepts and
 * values one past them that it refuses; `ofLength` makes a matching string of a given length (for a pattern beside
 * minLength/maxLength). A new pattern fails the first test until it is added here.
 */
const PATTERNS: Record<string, { at: string[]; past: string[]; ofLength?: (n: number, i: number) => string | null }> = {
  // article and document keys: 1 + 0..63
  '^[a-z0-9][a-z0-9-]{0,63}$': { at: ['a', `a${'b'.repeat(63)}`], past: ['', `a${'b'.repeat(64)}`, '-a'] },
  // a new article's key: 1 + 1..63
  '^[a-z0-9][a-z0-9-]{1,63}$': { at: ['ab', `a${'b'.repeat(63)}`], past: ['a', `a${'b'.repeat(64)}`] },
  '^[a-z]{2}$': { at: ['en'], past: ['e', 'eng', 'EN'] },
  // ids: 1..18 digits
  '^\\d{1,18}$': { at: ['1', '9'.repeat(18)], past: ['', '9'.repeat(19), '1a'] },
  '^aut_[a-z0-9]{16}$': { at: [`aut_${'a'.repeat(16)}`], past: [`aut_${'a'.repeat(15)}`, `aut_${'a'.repeat(17)}`] },
  '^[0-9a-f]{64}$': { at: ['a'.repeat(64)], past: ['a'.repeat(63), 'a'.repeat(65), 'A'.repeat(64)] },
  '^\\d{4}-\\d{2}-\\d{2}$': { at: ['2026-10-01'], past: ['2026-10-1', '02026-10-01'] },
  // months: 2000..2999, 01..12
  '^2\\d{3}-(0[1-9]|1[0-2])$': { at: ['2025-01', '2025-12'], past: ['2025-00', '2025-13', '1999-12'] },
  '^[A-Za-z0-9-]{1,64}$': { at: ['a', 'a'.repeat(64)], past: ['', 'a'.repeat(65)] },
  '^[a-zA-Z]{3}$': { at: ['svk'], past: ['sv', 'svkk'] },
  // codes: 1..100 codes of 1..128 characters
  '^[^,]{1,128}(,[^,]{1,128}){0,99}$': {
    at: ['a', 'a'.repeat(128), Array.from({ length: 100 }, (_, i) => `c${i}`).join(',')],
    past: ['a'.repeat(129), Array.from({ length: 101 }, (_, i) => `c${i}`).join(','), 'a,,b', ''],
    ofLength: (n) => codesOfLength(n),
  },
  '^\\/(?!\\/)[A-Za-z0-9\\-._~/%]*$': { at: ['/', '/a-b/c_d~e.f%20'], past: ['', 'a', '//a', '/a b'], ofLength: (n) => (n >= 1 ? `/${'a'.repeat(n - 1)}` : '') },
  // money: 1..10 digits, 1..2 decimals
  '^\\d{1,10}(\\.\\d{1,2})?$': { at: ['1', '9999999999.99', '0.5'], past: ['99999999999', '1.001', '1.', '-1'] },
  '^[\\x21-\\x7e]+$': { at: ['!~'], past: ['a b', 'a\u007f'], ofLength: (n, i) => `${i}${'x'.repeat(Math.max(0, n - String(i).length))}`.slice(0, n) || null },
  '^#[0-9a-fA-F]{6}$': { at: ['#a1B2c3'], past: ['#a1b2c', '#a1b2c3d', 'a1b2c3'] },
  '^[a-z0-9][a-z0-9-]{0,99}$': { at: ['a', `a${'b'.repeat(99)}`], past: ['', `a${'b'.repeat(100)}`] },
  // a colour's name: 1 + 0..39
  '^[A-Za-z][A-Za-z0-9]{0,39}$': { at: ['a', `a${'b'.repeat(39)}`], past: ['', `a${'b'.repeat(40)}`, '1a'] },
  // e-mail (beside maxLength 254)
  "^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$": {
    at: ['a@example.com'], past: ['a@example', 'a@@example.com'],
    ofLength: (n) => (n >= 13 ? `${'a'.repeat(n - 12)}@example.com` : null),
  },
};

/** `n` characters of comma-separated codes of at most 128 characters (null when 100 codes cannot be that long). */
function codesOfLength(n: number): string | null {
  if (n < 1 || n > 100 * 128 + 99) return null;
  const codes: string[] = [];
  let left = n;
  for (;;) {
    const take = Math.min(128, left);
    codes.push('a'.repeat(take));
    left -= take;
    if (left === 0) break;
    // A comma, and a code after it.
    left -= 1;
    if (left <= 0) return null;
  }
  const text = codes.join(',');
  return text.length === n ? text : null;
}

/**
 * Refusals at a bound that are not about the bound, by `details.reason`: the value kept to the schema and named no
 * record (a lookup, like "not found"), or the shop's platform takes less than the schema's platform-wide bound. The
 * latter are documented per tool ("within the platform's range (coupons_capabilities)", "read before creating") and
 * are tried at the platform's own bounds in Part 2.
 */
const NOT_A_BOUND: Array<{ param: RegExp; reason: RegExp; why: string }> = [
  { param: /(^|\.)categoryGuids$/, reason: /^unknown category$/, why: 'guids come from categories_list: a made-up guid names no category' },
  { param: /(^|\.)productCodes$/, reason: /^unknown product$/, why: 'codes come from products_search: a made-up code names no product' },
  { param: /^code$/, reason: /^the platform takes codes of \d+ to \d+ characters/, why: 'coupon code rules per platform (coupons_capabilities `codeRules`); Part 2' },
  { param: /(^|\.)discount\.percent$/, reason: /^the platform takes [\d.]+ to [\d.]+ %$/, why: 'percent range per platform (coupons_capabilities `percentRange`); Part 2' },
  { param: /(^|\.)categoryGuids$/, reason: /^at most \d+ categories$/, why: 'categories per coupon per platform (coupons_capabilities `restrictions.maxCategories`); Part 2' },
];

// --- walking the schemas -----------------------------------------------------------------------------------------------

type Step = { kind: 'prop'; name: string } | { kind: 'item' } | { kind: 'value' } | { kind: 'key' } | { kind: 'branch'; index: number };
type Schema = Record<string, any>;
interface Bound {
  surface: 'REST' | 'MCP';
  capability: Capability;
  /** The top-level parameter. */
  param: string;
  steps: Step[];
  /** The schema of the node the bound is on, and of its enclosing map for a key bound. */
  node: Schema;
  keyword: string;
  inPath: boolean;
  /** The whole input schema (MCP) for generating enclosing values. */
  root: Schema;
}

const KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'enum', 'const'];

function resolve(schema: Schema | undefined, root: Schema): Schema {
  let s = schema ?? {};
  while (s.$ref) s = root.$defs[String(s.$ref).split('/').pop()!];
  return s;
}

/** The schema of one branch of a oneOf, merged with what the object states outside the branches. */
function branchOf(schema: Schema, index: number, root: Schema): Schema {
  const branch = resolve(schema.oneOf[index], root);
  return { ...schema, oneOf: undefined, properties: { ...(schema.properties ?? {}), ...(branch.properties ?? {}) }, required: [...(schema.required ?? []), ...(branch.required ?? [])] };
}

function collect(schema: Schema, root: Schema, steps: Step[], visit: (node: Schema, steps: Step[], keyword: string) => void): void {
  const node = resolve(schema, root);
  for (const keyword of KEYWORDS) if (keyword in node) visit(node, steps, keyword);
  for (const [name, sub] of Object.entries(node.properties ?? {})) collect(sub as Schema, root, [...steps, { kind: 'prop', name }], visit);
  if (node.items) collect(node.items, root, [...steps, { kind: 'item' }], visit);
  if (node.additionalProperties && typeof node.additionalProperties === 'object' && Object.keys(node.additionalProperties).length > 0) {
    collect(node.additionalProperties, root, [...steps, { kind: 'value' }], visit);
  }
  if (node.propertyNames?.pattern) visit(node, [...steps, { kind: 'key' }], 'propertyNames');
  (node.oneOf ?? []).forEach((_: unknown, index: number) => {
    const branch = resolve(node.oneOf[index], root);
    for (const [name, sub] of Object.entries(branch.properties ?? {})) collect(sub as Schema, root, [...steps, { kind: 'branch', index }, { kind: 'prop', name }], visit);
  });
}

const byTool = new Map(capabilities.filter((c) => c.mcpTool).map((c) => [c.mcpTool!, c]));
const byName = new Map(capabilities.map((c) => [c.name, c]));

function boundsOf(t: T): Bound[] {
  const bounds: Bound[] = [];
  for (const item of Object.values(t.context.openapi.paths) as any[]) {
    const op = item.get;
    const capability = byName.get(op.operationId);
    if (!capability) continue;
    for (const parameter of op.parameters ?? []) {
      collect(parameter.schema, {}, [{ kind: 'prop', name: parameter.name }], (node, steps, keyword) => bounds.push({
        surface: 'REST', capability, param: parameter.name, steps, node, keyword, inPath: parameter.in === 'path', root: { type: 'object', properties: Object.fromEntries(op.parameters.map((p: any) => [p.name, p.schema])), required: op.parameters.filter((p: any) => p.required).map((p: any) => p.name) },
      }));
    }
  }
  for (const tool of t.context.tools) {
    const capability = byTool.get(tool.name);
    if (!capability) continue;
    collect(tool.inputSchema, tool.inputSchema, [], (node, steps, keyword) => {
      if (steps.length === 0) return;
      bounds.push({ surface: 'MCP', capability, param: (steps[0] as { name: string }).name, steps, node, keyword, inPath: false, root: tool.inputSchema });
    });
  }
  return bounds;
}

// --- values ------------------------------------------------------------------------------------------------------------

function firstType(node: Schema): string | undefined {
  return Array.isArray(node.type) ? node.type.find((x: string) => x !== 'null') : node.type;
}

/** A string of length n that the node's pattern (if any) accepts; distinct per i where the length allows. */
function stringOf(node: Schema, n: number, i = 0, name?: string): string | null {
  const named = name === undefined ? undefined : NAMED[name];
  if (typeof named === 'string' && named.length === n) return named;
  if (node.format === 'uri') return n >= 21 ? `https://example.com/${'a'.repeat(n - 20)}` : null;
  if (node.pattern) {
    const pattern = PATTERNS[node.pattern];
    if (!pattern?.ofLength) return null;
    return pattern.ofLength(n, i);
  }
  if (n === 0) return '';
  const tag = i.toString(36);
  return (tag + 'x'.repeat(n)).slice(0, n);
}

/** A valid value of a schema (the smallest plausible one), the `i`-th of a list where that matters. */
function generate(schema: Schema, root: Schema, i = 0, name?: string): unknown {
  const node = resolve(schema, root);
  if (name && NAMED[name] !== undefined) return NAMED[name];
  if ('const' in node) return node.const;
  if (node.enum) return node.enum.find((v: unknown) => v !== null);
  if (node.oneOf) return generate(branchOf(node, 0, root), root, i);
  if (node.anyOf) return generate(node.anyOf.find((b: Schema) => resolve(b, root).type !== 'null'), root, i);
  const type = firstType(node) ?? (node.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const prop of node.required ?? []) value[prop] = generate(node.properties?.[prop] ?? {}, root, i, prop);
      return value;
    }
    case 'array':
      return Array.from({ length: node.minItems ?? 0 }, (_, k) => generate(node.items ?? {}, root, k));
    case 'string': {
      if (node.pattern) return PATTERNS[node.pattern]?.at[0] ?? 'x';
      if (node.format === 'date') return '2026-10-01';
      if (node.format === 'date-time') return '2026-12-31T23:00:00.000Z';
      if (node.format === 'uri') return 'https://example.com/privacy';
      if (node.format === 'email') return 'a@example.com';
      const length = Math.min(Math.max(node.minLength ?? 1, 6), node.maxLength ?? 6);
      return stringOf(node, length, i);
    }
    case 'integer':
    case 'number':
      return node.minimum ?? (node.exclusiveMinimum !== undefined ? node.exclusiveMinimum + stepOf(node) : 1);
    case 'boolean':
      return true;
    default:
      return 'x';
  }
}

function stepOf(node: Schema): number {
  return firstType(node) === 'integer' ? 1 : node.multipleOf ?? 0.01;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

interface Case { label: string; value: unknown; accept: boolean }

/** The values at the bound (accepted) and one past it (refused); a bound whose values cannot be made is a problem. */
function casesOf(bound: Bound, i = 0): Case[] | string {
  const { node, keyword } = bound;
  const limit = node[keyword];
  const step = stepOf(node);
  const last = bound.steps[bound.steps.length - 1];
  const str = (n: number): Case['value'] | null => stringOf(node, n, i, last.kind === 'prop' ? last.name : undefined);
  const arr = (n: number) => Array.from({ length: n }, (_, k) => generate(node.items ?? {}, bound.root, k));
  const pair = (at: unknown, past: unknown, what: string): Case[] => [{ label: `${what} at ${describe(at)}`, value: at, accept: true }, { label: `${what} past ${describe(past)}`, value: past, accept: false }];
  switch (keyword) {
    case 'minimum': return pair(limit, round2(limit - step), 'minimum');
    case 'maximum': return pair(limit, round2(limit + step), 'maximum');
    case 'exclusiveMinimum': return pair(round2(limit + step), limit, 'exclusiveMinimum');
    case 'exclusiveMaximum': return pair(round2(limit - step), limit, 'exclusiveMaximum');
    case 'minLength': {
      const at = str(limit);
      if (at === null) return `no string of ${limit} characters for pattern ${node.pattern}`;
      // An empty path segment is another route (/orders/ is the list), never this parameter: only the bound is tried.
      if (limit === 0 || (limit === 1 && bound.inPath)) return [{ label: `minLength at ${describe(at)}`, value: at, accept: true }];
      return pair(at, str(limit - 1) ?? '', 'minLength');
    }
    case 'maxLength': {
      const at = str(limit);
      const past = str(limit + 1);
      if (at === null) return `maxLength ${limit} cannot be reached: pattern ${node.pattern} matches no string that long`;
      return pair(at, past ?? `${at}x`, 'maxLength');
    }
    case 'minItems': return limit === 0 ? [{ label: 'minItems at 0', value: [], accept: true }] : pair(arr(limit), arr(limit - 1), 'minItems');
    case 'maxItems': return pair(arr(limit), arr(limit + 1), 'maxItems');
    case 'pattern': {
      const pattern = PATTERNS[limit];
      if (!pattern) return `pattern ${limit} is not in PATTERNS`;
      return [...pattern.at.map((value) => ({ label: `pattern at ${describe(value)}`, value, accept: true })), ...pattern.past.map((value) => ({ label: `pattern past ${describe(value)}`, value, accept: false }))]
        // Beside minLength/maxLength, a pattern's value must keep to them (they are tried on their own).
        .filter((c) => c.accept || ((c.value as string).length >= (node.minLength ?? 0) && (c.value as string).length <= (node.maxLength ?? Infinity)))
        .filter((c) => c.accept || !bound.inPath || c.value !== '');
    }
    case 'propertyNames': {
      const pattern = PATTERNS[node.propertyNames.pattern];
      if (!pattern) return `key pattern ${node.propertyNames.pattern} is not in PATTERNS`;
      const entry = (key: unknown) => ({ [String(key)]: generate(node.additionalProperties ?? {}, bound.root) });
      return [...pattern.at.map((key) => ({ label: `key at ${describe(key)}`, value: entry(key), accept: true })), ...pattern.past.map((key) => ({ label: `key past ${describe(key)}`, value: entry(key), accept: false }))];
    }
    case 'enum': {
      const values = (limit as unknown[]).filter((v) => v !== null);
      return [...values.map((value) => ({ label: `enum ${describe(value)}`, value, accept: true })), { label: `enum past ${describe(`${values[0]}x`)}`, value: `${values[0]}x`, accept: false }];
    }
    case 'const':
      return pair(limit, typeof limit === 'boolean' ? !limit : `${limit}x`, 'const');
    default:
      return `unknown keyword ${keyword}`;
  }
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  if (typeof value === 'string' && value.length > 12) return `${value.length} chars`;
  if (Array.isArray(value)) return `${value.length} items`;
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** The base arguments of a capability: samples for what it requires, BASE's overrides, the schema's required rest. */
function baseOf(t: T, bound: Bound): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const required: string[] = bound.root.required ?? [];
  const values = t.context.samples;
  for (const name of required) {
    const sample = values[`${bound.capability.name}:${name}`] ?? values[name];
    if (sample !== undefined) args[name] = sample;
  }
  Object.assign(args, structuredClone(BASE[bound.capability.name] ?? {}));
  for (const name of required) if (args[name] === undefined) args[name] = generate(bound.root.properties[name], bound.root, 0, name);
  return args;
}

/** The arguments with `value` put at the bound's place, creating the enclosing objects, items and branches. */
function withValue(bound: Bound, base: Record<string, unknown>, value: unknown): { args: Record<string, unknown>; param: string } {
  const args = structuredClone(base);
  const names: string[] = [];
  let container: any = args;
  let schema: Schema = bound.root;
  const steps = bound.steps;
  for (let k = 0; k < steps.length; k++) {
    const step = steps[k];
    const last = k === steps.length - 1;
    schema = resolve(schema, bound.root);
    let slot: string | number;
    let child: Schema;
    if (step.kind === 'prop') {
      slot = step.name;
      child = schema.properties?.[step.name] ?? {};
    } else if (step.kind === 'item') {
      slot = 0;
      child = schema.items ?? {};
    } else if (step.kind === 'value') {
      slot = 'en';
      child = schema.additionalProperties ?? {};
    } else if (step.kind === 'key') {
      // The map itself is replaced by a one-entry map whose key is the value tried.
      return { args: replaceAt(args, names, value), param: names.join('.') };
    } else {
      continue;
    }
    names.push(String(slot));
    if (last) {
      container[slot] = value;
      break;
    }
    const next = steps[k + 1];
    let current = container[slot];
    const resolved = resolve(child, bound.root);
    if (next.kind === 'branch') {
      const branch = branchOf(resolved, next.index, bound.root);
      const constName = Object.entries(branch.properties).find(([, p]) => 'const' in resolve(p as Schema, bound.root))?.[0];
      const matches = current && typeof current === 'object' && (!constName || current[constName] === resolve(branch.properties[constName], bound.root).const);
      if (!matches) current = generate(branch, bound.root);
      child = branch;
    } else if (next.kind === 'item') {
      if (!Array.isArray(current) || current.length === 0) current = [generate(resolved.items ?? {}, bound.root)];
    } else if (current === null || typeof current !== 'object') {
      current = next.kind === 'value' ? {} : generate(resolved, bound.root);
    }
    container[slot] = current;
    container = current;
    schema = child;
  }
  return { args, param: names.join('.') };
}

function replaceAt(args: Record<string, unknown>, names: string[], value: unknown): Record<string, unknown> {
  let container: any = args;
  for (const name of names.slice(0, -1)) {
    container[name] ??= {};
    container = container[name];
  }
  container[names[names.length - 1]] = value;
  return args;
}

// --- calls ---------------------------------------------------------------------------------------------------------------

interface Answer { ok: boolean; status: number; code: string | null; param: string | null; reason: string | null; text: string }

async function viaRest(t: T, capability: Capability, args: Record<string, unknown>): Promise<Answer> {
  const path = capability.path!;
  const filled = path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k, v]) => v !== undefined && !path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await api(t.context.server, `${filled}?${query}`, t.context.key);
  const error = res.body?.error;
  return { ok: res.status === 200, status: res.status, code: error?.code ?? null, param: error?.details?.param ?? null, reason: error?.details?.reason ?? null, text: JSON.stringify(res.body ?? null).slice(0, 300) };
}

async function viaMcp(t: T, capability: Capability, args: Record<string, unknown>): Promise<Answer> {
  const result = (await t.context.client.callTool({ name: capability.mcpTool!, arguments: args })) as { isError?: boolean; content?: Array<{ text?: string }> };
  const text = JSON.stringify(result).slice(0, 300);
  if (!result.isError) return { ok: true, status: 200, code: null, param: null, reason: null, text };
  try {
    const error = JSON.parse(result.content![0].text!).error;
    return { ok: false, status: 400, code: error.code, param: error.details?.param ?? null, reason: error.details?.reason ?? null, text };
  } catch {
    return { ok: false, status: 0, code: null, param: null, reason: null, text };
  }
}

const call = (t: T, bound: Bound, args: Record<string, unknown>) => (bound.surface === 'REST' ? viaRest(t, bound.capability, args) : viaMcp(t, bound.capability, args));

/** Codes of a refused parameter (D3, D6). */
const VALIDATION = ['INVALID_PARAMETER', 'MISSING_PARAMETER', 'UNKNOWN_PARAMETER', 'LIMIT_OUT_OF_RANGE'];

/** Whether an error's `details.param` names the parameter tried (or the list or object it is in). */
function names(param: string | null, tried: string): boolean {
  if (!param) return false;
  return param === tried || tried.startsWith(`${param}.`) || param.startsWith(`${tried}.`);
}

function report(t: T, problems: string[]): void {
  t.deepEqual(problems, [], problems.slice(0, 60).join('\n'));
}

// --- Part 1 ----------------------------------------------------------------------------------------------------------------

test.serial('Every capability with a declared bound is in BASE, and every declared pattern in PATTERNS', (t) => {
  const bounds = boundsOf(t);
  const per = new Map<string, Set<string>>();
  for (const b of bounds) {
    const key = `${b.capability.name} (${b.surface})`;
    if (!per.has(key)) per.set(key, new Set());
    per.get(key)!.add(`${b.steps.map((s) => (s.kind === 'prop' ? s.name : s.kind === 'item' ? '[]' : s.kind === 'value' ? '{}' : s.kind === 'key' ? '{key}' : `|${s.index}`)).join('.')} ${b.keyword}`);
  }
  for (const [key, list] of [...per].sort()) t.log(`${key}: ${[...list].join(', ')}`);
  const missing = [...new Set(bounds.map((b) => b.capability.name))].filter((name) => !(name in BASE));
  t.deepEqual(missing, [], 'add the capability with its base arguments to BASE');
  const patterns = [...new Set(bounds.flatMap((b) => (b.keyword === 'pattern' ? [b.node.pattern] : b.keyword === 'propertyNames' ? [b.node.propertyNames.pattern] : [])))];
  t.deepEqual(patterns.filter((p) => !PATTERNS[p]), [], 'add the pattern with values at and past its bounds to PATTERNS');
  // Every REST operation and every tool with parameters is walked (a walk that found nothing would pass anything).
  t.true(bounds.filter((b) => b.surface === 'REST').length >= 250 && bounds.filter((b) => b.surface === 'MCP').length >= 300, `${bounds.length} bounds`);
  t.log(`${bounds.length} bounds: ${bounds.filter((b) => b.surface === 'REST').length} REST, ${bounds.filter((b) => b.surface === 'MCP').length} MCP`);
});

/** Bounds tried, by group of surface (the write tools apart: they change rows and take longer). */
async function tryBounds(t: T, select: (b: Bound) => boolean, concurrency = 4): Promise<void> {
  const problems: string[] = [];
  const bounds = boundsOf(t).filter(select);
  let tried = 0;
  const outcomes = new Map<string, number>();
  const tasks = bounds.flatMap((bound) => {
    const cases = casesOf(bound);
    const where = `${bound.surface} ${bound.capability.name}`;
    if (typeof cases === 'string') {
      problems.push(`${where} ${bound.param}: ${cases}`);
      return [];
    }
    return cases.map((c) => async () => {
      const base = baseOf(t, bound);
      const { args, param } = withValue(bound, base, c.value);
      {
        for (const companion of [COMPANIONS[bound.param], bound.steps.length === 1 ? COMPANIONS[`${bound.param}=${c.value}`] : undefined]) {
          for (const [name, value] of Object.entries(companion ?? {})) {
            if (value === undefined) delete args[name];
            else args[name] = typeof value === 'function' ? (value as (s: Samples) => unknown)(t.context.samples) : value;
          }
        }
      }
      const answer = await call(t, bound, args);
      tried++;
      const refusedHere = !answer.ok && answer.code !== null && VALIDATION.includes(answer.code) && names(answer.param, param)
        && !NOT_A_BOUND.some((n) => n.param.test(answer.param!) && n.reason.test(answer.reason ?? ''));
      if (c.accept) outcomes.set(answer.ok ? 'accepted' : answer.code!, (outcomes.get(answer.ok ? 'accepted' : answer.code!) ?? 0) + 1);
      if (c.accept && !answer.ok && [...VALIDATION, 'INVALID_PARAMETER_COMBINATION'].includes(answer.code!)) t.log(`at the bound, refused for another reason: ${where} ${param} ${c.label}: ${answer.code} ${answer.param ?? ''} ${answer.reason ?? ''}`);
      if (c.accept && (answer.code === 'INTERNAL_ERROR' || answer.status >= 500)) {
        problems.push(`${where} ${param} ${c.label}: a value the schema allows answered ${answer.status} ${answer.code}: ${answer.text}`);
      } else if (c.accept && refusedHere) {
        problems.push(`${where} ${param} ${c.label}: refused ${answer.code} although the schema allows it: ${answer.text}`);
      } else if (!c.accept) {
        const expected = bound.param === 'limit' ? 'LIMIT_OUT_OF_RANGE' : 'INVALID_PARAMETER';
        const statusOk = bound.surface === 'MCP' || answer.status === 400;
        if (!statusOk || answer.code !== expected || !names(answer.param, param)) {
          problems.push(`${where} ${param} ${c.label}: ${answer.status} ${answer.code} (${answer.param}), expected 400 ${expected} naming ${param}: ${answer.text}`);
        }
      }
    });
  });
  await pool(concurrency, tasks);
  t.log(`${bounds.length} bounds, ${tried} calls; answers at the bounds: ${[...outcomes].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  t.true(tried > 0);
  report(t, problems);
}

test.serial('REST: every declared bound of a query or path parameter is accepted at it and refused one past it', async (t) => {
  await tryBounds(t, (b) => b.surface === 'REST');
});

test.serial('MCP reads: every declared bound of an inputSchema is accepted at it and refused one past it', async (t) => {
  await tryBounds(t, (b) => b.surface === 'MCP' && b.capability.kind !== 'write');
});

test.serial('MCP write tools: every declared bound of an inputSchema, nested ones too, is accepted at it and refused one past it', async (t) => {
  // One call at a time: write tools change rows, and this test is about bounds, not races.
  await tryBounds(t, (b) => b.surface === 'MCP' && b.capability.kind === 'write', 1);
});

// --- Part 2: limits no schema states --------------------------------------------------------------------------------------

/** A tool call's answer or its D3 error. */
async function tool(t: T, name: string, args: Record<string, unknown>): Promise<{ data: any; error: { code: string; details?: any } | null }> {
  const result = (await t.context.client.callTool({ name, arguments: args })) as { isError?: boolean; content?: Array<{ text?: string }>; structuredContent?: any };
  if (result.isError) return { data: null, error: JSON.parse(result.content![0].text!).error };
  return { data: result.structuredContent?.data ?? result.structuredContent, error: null };
}

test.serial('A search returns at most 100: `limit` 100 is accepted and 101 refused with LIMIT_OUT_OF_RANGE, beside a listing\'s 250, over REST and MCP (D6)', async (t) => {
  const problems: string[] = [];
  // Listings that switch to a search with `query` (SPEC REST conventions 5): their schema says 250 (the listing's).
  const searches = capabilities.filter((c) => c.searchParam);
  t.deepEqual(searches.map((c) => c.name).sort(), ['credit_notes.search', 'invoices.search', 'products.search']);
  for (const capability of searches) {
    const base = { ...sampleArgs(capability, t.context.samples), query: 'a' };
    for (const [limit, accept] of [[100, true], [101, false], [250, false]] as const) {
      for (const surface of ['REST', 'MCP'] as const) {
        const answer = surface === 'REST' ? await viaRest(t, capability, { ...base, limit }) : await viaMcp(t, capability, { ...base, limit });
        const ok = accept ? answer.ok : answer.code === 'LIMIT_OUT_OF_RANGE' && answer.param === 'limit' && (surface === 'MCP' || answer.status === 400);
        if (!ok) problems.push(`${surface} ${capability.name} query with limit ${limit}: ${answer.status} ${answer.code}: ${answer.text}`);
      }
    }
    // Without `query` the same call is a listing: 250 at its bound.
    const listing = await viaRest(t, capability, { ...sampleArgs(capability, t.context.samples), limit: 250 });
    if (!listing.ok) problems.push(`REST ${capability.name} listing with limit 250: ${listing.status} ${listing.code}`);
  }
  report(t, problems);
});

test.serial('A proposal changes at most 50 records: 50 real products are one proposal, 51 are refused naming `products` (content limits, D29)', async (t) => {
  const { db } = t.context.database;
  const sk = await shopOf(db, 'demo', 'sk');
  const rows: Array<{ code: string }> = await db('products').where({ shop_id: sk.id }).orderBy('code').limit(51).select('code');
  t.is(rows.length, 51);
  const entries = await pool(4, rows.map((row, i) => async () => {
    const read = await api(t.context.server, `/products/${encodeURIComponent(row.code)}/content?market=sk`, t.context.key);
    t.is(read.status, 200, JSON.stringify(read.body).slice(0, 200));
    return { code: row.code, fingerprint: read.body.data.fingerprint as string, fields: { metaTitle: `Bounds ${i}` } };
  }));
  const fifty = await tool(t, 'products_content_propose', { market: 'sk', products: entries.slice(0, 50), note: 'fifty' });
  t.is(fifty.error, null, JSON.stringify(fifty.error));
  t.is(fifty.data?.items?.length, 50);
  t.is(fifty.data?.status, 'awaiting_approval');
  const fiftyOne = await tool(t, 'products_content_propose', { market: 'sk', products: entries, note: 'fifty-one' });
  t.like(fiftyOne.error, { code: 'INVALID_PARAMETER', details: { param: 'products' } });
  t.is((await db('proposals').where({ note: 'fifty-one' })).length, 0, 'nothing stored for 51');
  // Each text field the platform writes, at its longest (products_content_policy `limits.maxFieldLength`, as the tool's
  // schema declares them): the proposal is prepared, not TEXT_TOO_LONG. One character more is Part 1's.
  const policy = (await tool(t, 'products_content_policy', { market: 'sk' })).data;
  t.is(policy.limits.maxEntitiesPerProposal, 50);
  const longest = Object.fromEntries((policy.writableFields.product as string[]).map((field) => [field, 'x'.repeat(policy.limits.maxFieldLength[field])]));
  t.true(Object.keys(longest).length >= 1);
  const atLength = await tool(t, 'products_content_propose', { market: 'sk', products: [{ ...entries[50], fields: longest }], note: 'longest texts' });
  t.is(atLength.error, null, JSON.stringify(atLength.error));
  t.deepEqual(atLength.data?.items?.[0]?.preview?.map((p: { field: string; after: string }) => [p.field, p.after.length]).sort(), Object.entries(longest).map(([f, v]) => [f, v.length]).sort());
});

test.serial('A fixed discount is more than zero: 0.01 creates the coupon, 0.00 and 0 are refused naming `discount.amount`, in ensure and update', async (t) => {
  const ensure = (code: string, amount: string) => tool(t, 'coupons_ensure', { markets: ['sk'], code, discount: { type: 'fixed', amount, currency: 'EUR' } });
  const created = await ensure('BOUNDSFIX1', '0.01');
  t.is(created.error, null, JSON.stringify(created.error));
  t.is(created.data?.shops?.[0]?.outcome, 'created');
  for (const amount of ['0.00', '0']) {
    const refused = await ensure(`BOUNDSFIX0${amount.length}`, amount);
    t.like(refused.error, { code: 'INVALID_PARAMETER', details: { param: 'discount.amount' } }, amount);
  }
  const update = (amount: string) => tool(t, 'coupons_update', { market: 'sk', code: 'BOUNDSFIX1', changes: { discount: { type: 'fixed', amount, currency: 'EUR' } } });
  const preview = await update('0.02');
  t.is(preview.error, null, JSON.stringify(preview.error));
  t.like((await update('0.00')).error, { code: 'INVALID_PARAMETER', details: { param: 'changes.discount.amount' } });
});

test.serial('The shop platform\'s coupon rules (coupons_capabilities) hold at and one past each bound: code length, percent range, categories per coupon', async (t) => {
  const { db } = t.context.database;
  const caps = await tool(t, 'coupons_capabilities', { market: 'sk' });
  const { codeRules, percentRange, restrictions } = caps.data;
  t.log(JSON.stringify({ codeRules, percentRange, restrictions }));
  const problems: string[] = [];
  const ensure = async (label: string, args: Record<string, unknown>, refusedParam: string | null) => {
    const answer = await tool(t, 'coupons_ensure', { markets: ['sk'], discount: { type: 'percent', percent: 10 }, ...args });
    if (refusedParam === null && (answer.error || answer.data.shops[0].outcome !== 'created')) problems.push(`${label}: ${JSON.stringify(answer.error ?? answer.data.shops[0])}`);
    if (refusedParam !== null && (answer.error?.code !== 'INVALID_PARAMETER' || answer.error.details?.param !== refusedParam)) problems.push(`${label}: ${JSON.stringify(answer.error ?? answer.data)}, expected INVALID_PARAMETER on ${refusedParam}`);
  };
  const code = (n: number, tag: string) => `${tag}${'X'.repeat(n)}`.slice(0, n);
  await ensure(`code of ${codeRules.minLength}`, { code: code(codeRules.minLength, 'M') }, null);
  await ensure(`code of ${codeRules.minLength - 1}`, { code: code(codeRules.minLength - 1, 'N') }, 'code');
  await ensure(`code of ${codeRules.maxLength}`, { code: code(codeRules.maxLength, 'L') }, null);
  await ensure(`code of ${codeRules.maxLength + 1}`, { code: code(codeRules.maxLength + 1, 'K') }, 'code');
  await ensure(`percent ${percentRange.min}`, { code: 'BOUNDSPMIN', discount: { type: 'percent', percent: percentRange.min } }, null);
  await ensure(`percent ${percentRange.min - 0.01}`, { code: 'BOUNDSPLOW', discount: { type: 'percent', percent: Math.round((percentRange.min - 0.01) * 100) / 100 } }, 'discount.percent');
  await ensure(`percent ${percentRange.max}`, { code: 'BOUNDSPMAX', discount: { type: 'percent', percent: percentRange.max } }, null);
  const sk = await shopOf(db, 'demo', 'sk');
  // Shop sk has fewer categories than the platform's limit: copies of one (new guids) make the limit and one more.
  const categories = () => db('categories').where({ shop_id: sk.id }).orderBy('guid').limit(restrictions.maxCategories + 1).select('guid');
  const have = (await categories()).length;
  const first = await db('categories').where({ shop_id: sk.id }).orderBy('id').first();
  for (let i = have; i <= restrictions.maxCategories; i++) await db('categories').insert({ ...rowForInsert(first), guid: `${first.guid}-bounds-${i}` });
  const guids = (await categories()).map((r: { guid: string }) => r.guid);
  t.is(guids.length, restrictions.maxCategories + 1);
  await ensure(`${restrictions.maxCategories} categories`, { code: 'BOUNDSCATS', categoryGuids: guids.slice(0, restrictions.maxCategories) }, null);
  await ensure(`${restrictions.maxCategories + 1} categories`, { code: 'BOUNDSCATX', categoryGuids: guids }, 'categoryGuids');
  report(t, problems);
});

test.serial('Monthly analytics covers at most 24 months and advertising history 6 months: at and one past each (SPEC Limits, N11)', async (t) => {
  const monthly = byName.get('analytics.monthly')!;
  const advertising = byName.get('analytics.advertising')!;
  t.is(TEST_NOW.toISOString().slice(0, 10), '2026-11-20');
  const twentyFour = await viaRest(t, monthly, { market: 'sk', fromMonth: '2024-12', toMonth: '2026-11' });
  t.true(twentyFour.ok, twentyFour.text);
  const twentyFive = await viaRest(t, monthly, { market: 'sk', fromMonth: '2024-11', toMonth: '2026-11' });
  t.is(twentyFive.code, 'PERIOD_TOO_LONG', twentyFive.text);
  t.is(twentyFive.status, 400);
  // Six months back from 20 November 2026: 20 May 2026 is the first day there is.
  const sixMonths = await viaRest(t, advertising, { market: 'sk', from: '2026-05-20', to: '2026-06-01' });
  t.true(sixMonths.ok, sixMonths.text);
  const before = await viaRest(t, advertising, { market: 'sk', from: '2026-05-19', to: '2026-06-01' });
  t.like(before, { status: 400, code: 'INVALID_PARAMETER', param: 'from' });
});

test.serial('Webhook endpoints per plan: start 5, growth 20, pro 50 — the last one allowed is created, one more is PLAN_LIMIT_REACHED (SPEC Limits)', async (t) => {
  const { db } = t.context.database;
  const account = await accountId(db, 'acme');
  const settings = testSettings({ resolve: fakeDns({ 'hooks.example.com': ['93.184.215.14'] }).resolve });
  for (const [plan, limit] of [['start', 5], ['growth', 20], ['pro', 50]] as const) {
    await db('webhook_endpoints').where({ account_id: account }).whereNull('deleted_at').update({ deleted_at: TEST_NOW });
    await db('accounts').where({ id: account }).update({ plan_code: plan });
    for (let i = 1; i <= limit; i++) await makeEndpoint(db, settings, { url: `https://hooks.example.com/${plan}/${i}`, account: 'acme' });
    const past = await t.throwsAsync(makeEndpoint(db, settings, { url: `https://hooks.example.com/${plan}/${limit + 1}`, account: 'acme' }));
    t.like(past, { code: 'PLAN_LIMIT_REACHED', details: { limit, usage: limit } }, plan);
  }
});
