/**
 * The filter matrix: every filter parameter of every read does what it says, over REST and over MCP.
 *
 * Driven by the capability registry. Every parameter of a read's params schema that is not one of the shared ones
 * (market, from, to, limit, cursor, todayOnly, query) and not the record identifier (a path parameter, or a required
 * parameter of a `get`) must be in FILTERS (a predicate over a returned item: the item field it filters, written
 * literally) or in NOT_FILTERS (with why it selects no records). A new filter fails the first test until it joins.
 *   - enum/boolean filters: called with each value; every item satisfies the predicate; the result is exactly the
 *     unfiltered result narrowed by the predicate (a metamorphic oracle), each value has records (rows are built here
 *     where the demo data lacks them), and the union over the values is the unfiltered result where the filter is total;
 *   - free-value filters: a value from the data gives exactly the rows raw SQL over the tables expects, a value matching
 *     nothing gives an empty list (200), an invalid value gives 400 INVALID_PARAMETER, and the bound is declared alike
 *     in /openapi.json and in the tool's inputSchema;
 *   - searches (`query`, and the customer directory's `search`): a value of each documented field, taken from the rows,
 *     finds its record, every hit contains the text in a documented field, and a text matching nothing finds nothing.
 */
import type { ExecutionContext } from 'ava';
import crypto from 'node:crypto';
import { z } from 'zod';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { capabilities } from '../../src/capabilities/registry.js';
import { isListKind } from '../../src/capabilities/run.js';
import type { Capability } from '../../src/capabilities/types.js';
import { appTest, type AppContext } from '../helpers/app.js';
import { rowForInsert } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { sampleValues } from '../helpers/samples.js';
import { api } from '../helpers/server.js';
import { shopOf, type ShopInfo } from '../helpers/shops.js';
import { TEST_NOW } from '../helpers/constants.js';
import { pool } from '../helpers/pool.js';

type Item = Record<string, any>;
type Args = Record<string, unknown>;

/** The parameters every tool shares (api/mcp/compactSchema.ts SHARED_PARAMS), written here as the brief states them. */
const SHARED = new Set(['market', 'from', 'to', 'limit', 'cursor', 'todayOnly', 'query']);

/** A period wide enough for the demo history's last months (D5: at most 366 days), for the reads with a default of 30 days. */
const PERIOD = { from: '2026-06-01', to: '2026-11-20' };

interface Prepared {
  sk: ShopInfo;
  accountId: string;
  samples: Record<string, string>;
  mcp: ModernClient;
  openapi: any;
  tools: Map<string, any>;
}

const test = appTest<Prepared>({}, async ({ database, server, key }) => {
  const db = database.db;
  const sk = await shopOf(db, 'demo', 'sk');
  const samples = await sampleValues(db);
  await seedMissingValues(db, sk, samples);
  const mcp = await connectModern(server, key);
  const openapi = (await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json());
  const tools = new Map((await mcp.listTools()).tools.map((tool) => [tool.name, tool.inputSchema]));
  return { sk, accountId: sk.accountId, samples, mcp, openapi, tools };
});
test.after.always(async (t) => {
  await t.context.mcp?.close();
});
type Ctx = AppContext & Prepared;

/** `rowForInsert`, with the Postgres array columns of `table` kept as arrays (rowForInsert writes them as JSON). */
async function own(db: Ctx['database']['db'], table: string, row: Record<string, unknown>): Promise<Record<string, unknown>> {
  const arrays: string[] = (await db.raw(`select column_name from information_schema.columns where table_schema = 'public' and table_name = ? and data_type = 'ARRAY'`, [table]))
    .rows.map((r: { column_name: string }) => r.column_name);
  return { ...rowForInsert(row), ...Object.fromEntries(arrays.filter((c) => c in row).map((c) => [c, row[c]])) };
}

/**
 * Rows for the enum values the demo data lacks, copied from a real row with `rowForInsert`: one webhook delivery in
 * each status beside the sample endpoint's SENT one, and one automation run in each status of the sample automation.
 */
async function seedMissingValues(db: Ctx['database']['db'], sk: ShopInfo, samples: Record<string, string>): Promise<void> {
  const delivery = await db('webhook_deliveries').where({ endpoint_id: samples.endpointId }).first('*');
  for (const [i, status] of ['PENDING', 'FAILED', 'SKIPPED'].entries()) {
    await db('webhook_deliveries').insert({ ...await own(db, 'webhook_deliveries', delivery), event_id: crypto.randomUUID(), status, created_at: new Date(Date.UTC(2026, 10, 19, 10, i)) });
  }
  const automation = await db('automations').where({ workflow_id: samples.workflowId }).first('id');
  const run = await db('automation_runs').where({ automation_id: automation.id }).first('*');
  if (!run) throw new Error('the sample automation has no run to copy');
  for (const status of ['pending', 'running', 'waiting', 'completed', 'not_matched', 'cancelled', 'failed']) {
    if (await db('automation_runs').where({ automation_id: automation.id, status }).first('id')) continue;
    await db('automation_runs').insert({ ...await own(db, 'automation_runs', run), run_workflow_id: `${run.run_workflow_id}-${status}`, event_id: crypto.randomUUID(), status });
  }
  // The demo automations are all published and disabled: a draft, and a published one switched on.
  const sample = await db('automations').where({ workflow_id: samples.workflowId }).first('*');
  await db('automations').insert([
    { ...await own(db, 'automations', sample), workflow_id: 'aut_filtermatrixdr01', client_request_id: null, state: 'draft', enabled: false, published_version: null, published_at: null, enabled_at: null },
    { ...await own(db, 'automations', sample), workflow_id: 'aut_filtermatrixen01', client_request_id: null, state: 'published', enabled: true },
  ]);
  // The demo payouts are all paid: one requested, one approved and one cancelled beside them (other months).
  const payout = await db('affiliate_payouts').where({ shop_id: sk.id }).orderBy('id').first('*');
  for (const [i, state] of ['requested', 'approved', 'cancelled'].entries()) {
    await db('affiliate_payouts').insert({ ...await own(db, 'affiliate_payouts', payout), state, period_to: `2020-0${i + 1}-28`, paid_at: null });
  }
  // Coupons: one not started yet (scheduled), and an active used coupon given a limit its orders reach (used up).
  const coupon = await db('coupons').where({ shop_id: sk.id, enabled: true }).orderBy('id').first('*');
  await db('coupons').insert({ ...await own(db, 'coupons', coupon), code: 'FILTERSCHEDULED', valid_from: new Date('2027-01-01T00:00:00Z'), valid_until: null });
  const used = await db.raw(`select c.id, count(o.id)::int as uses from coupons c join orders o on o.shop_id = c.shop_id and o.coupon_code = c.code and o.created_at <= ?
    where c.shop_id = ? and c.enabled and c.usage_limit is null and (c.valid_until is null or c.valid_until > ?) and (c.valid_from is null or c.valid_from <= ?)
    group by c.id order by c.id limit 1`, [TEST_NOW, sk.id, TEST_NOW, TEST_NOW]);
  if (!used.rows.length) throw new Error('no active coupon of sk used by an order');
  await db('coupons').where({ id: used.rows[0].id }).update({ usage_limit: used.rows[0].uses });
}

/** What a free-value filter is called with: a value from the data and the keys of the items raw SQL expects for it. */
interface Sample {
  value: string | number;
  expected: string[];
}

interface FilterEntry {
  /** The item field the filter narrows, written literally. */
  match: (item: Item, value: any) => boolean;
  /** For a `get` or `summary`: the elements of the answer the filter applies to. */
  elements?: (data: any) => Item[];
  /** Free value: a value from the data with the keys raw SQL expects; a value matching nothing; an invalid one. */
  sample?: (t: ExecutionContext<Ctx>) => Promise<Sample>;
  none?: string;
  invalid?: string;
  /** Enum: the value the read uses without the parameter (the unfiltered answer is that value's, not the union). */
  defaultValue?: string;
  /** Enum, required parameter: the number of records over all values, by raw SQL. */
  totalBySql?: (t: ExecutionContext<Ctx>) => Promise<number>;
  /** Enum: the filter is tested under each of these arguments (e.g. every document type); a value needs records under one. */
  over?: Args[];
  /** Enum: a shorter period for a long history, so that the unfiltered answer is a few pages (every value has records in it). */
  period?: Args;
  /** Arguments the filter needs beside it (e.g. `purchaseTo` needs `purchaseFrom`), and beside the value matching nothing. */
  with?: Args;
  noneWith?: Args;
  /** Enum values with no records in the data, and why. */
  absent?: Record<string, string>;
}

/** The last weeks of the demo history: the period of the enum filters over long histories (documents, stock movements). */
const RECENT: Args = { from: '2026-10-01', to: '2026-11-20' };

/** Lifecycles differ by kind (a proforma is settled or cancelled, an invoice credited): the document filters run per kind. */
const DOCUMENT_TYPES: Args[] = [{ documentType: 'invoice' }, { documentType: 'proforma' }, { documentType: 'credit_note' }];

const rows = (result: { rows: Array<Record<string, unknown>> }, column: string): string[] => result.rows.map((r) => String(r[column]).trim());

/** `column` of the shop's records in PERIOD (the shop's calendar days, both inclusive). */
const inPeriod = (column: string) => `${column} >= (?::date)::timestamp at time zone ? and ${column} < ((?::date) + 1)::timestamp at time zone ?`;
const periodBindings = (sk: ShopInfo) => [PERIOD.from, sk.timeZone, PERIOD.to, sk.timeZone];

/**
 * (capability, parameter) → predicate. The comment above each is the sentence of SPEC.md or, where SPEC is silent, of
 * the parameter's own description in the registry (what /openapi.json and the tool list show).
 */
const FILTERS: Record<string, FilterEntry> = {
  // SPEC Common request parameters: "`carrier` — string, carrier code — filter on `/shipping/shipments`".
  'shipping.shipments:carrier': {
    match: (item, value) => item.carrierCode === value,
    sample: async (t) => {
      const db = t.context.database.db;
      const { carrier_code: value } = await db('shipments').where({ shop_id: t.context.sk.id }).groupBy('carrier_code').orderByRaw('count(*) desc').first('carrier_code');
      const expected = await db.raw(`select id from shipments where shop_id = ? and carrier_code = ? and ${inPeriod('created_at')}`, [t.context.sk.id, value, ...periodBindings(t.context.sk)]);
      return { value, expected: rows(expected, 'id') };
    },
    none: 'no-such-carrier', invalid: 'x'.repeat(65),
  },
  // Registry: "Carrier code, e.g. `packeta`" — the statistics of that carrier's shipments only.
  'shipping.stats:carrier': {
    elements: (data) => data.carriers,
    match: (item, value) => item.carrierCode === value,
    sample: async (t) => {
      const db = t.context.database.db;
      const { carrier_code: value } = await db('shipments').where({ shop_id: t.context.sk.id }).groupBy('carrier_code').orderByRaw('count(*) desc').first('carrier_code');
      return { value, expected: [value] };
    },
    none: 'no-such-carrier', invalid: '',
  },
  // Registry: "Only deliveries in this status."
  'webhooks.deliveries:status': { match: (item, value) => item.status === value },
  // SPEC /documents: "accounting documents of one kind (invoices, proformas, credit notes)"; registry: "one kind per call".
  'documents.list:documentType': {
    match: (item, value) => item.documentType === value,
    totalBySql: async (t) => Number((await t.context.database.db('documents').where({ shop_id: t.context.sk.id }).count('* as n').first())!.n),
  },
  // Registry: "`valid`: only documents not cancelled in the shop; `cancelled`: only cancelled ones; `all` (default)."
  'documents.list:validity': { match: (item, value) => value === 'all' || item.valid === (value === 'valid'), defaultValue: 'all', over: DOCUMENT_TYPES, period: RECENT },
  // Registry: "Only documents in this state."
  'documents.list:lifecycle': {
    match: (item, value) => item.lifecycle === value, over: DOCUMENT_TYPES, period: RECENT,
  },
  // Registry: "Only movements of this item (product code in the shop)."
  'inventory.movements:code': {
    match: (item, value) => item.itemCode === value,
    sample: async (t) => {
      const db = t.context.database.db;
      const { item_code: value } = await db('stock_movements').where({ shop_id: t.context.sk.id }).groupBy('item_code').orderByRaw('count(*) desc, item_code').first('item_code');
      return { value, expected: rows(await db.raw('select movement_id from stock_movements where shop_id = ? and item_code = ?', [t.context.sk.id, value]), 'movement_id') };
    },
    none: 'NO-SUCH-ITEM', invalid: 'x'.repeat(129),
  },
  // Registry: "Only movements of this kind."
  'inventory.movements:kind': { match: (item, value) => item.kind === value, period: RECENT },
  // Registry: "Only movements of this origin." (`order`: an order's sale without a claim; `claim`; `purchase`: neither).
  'inventory.movements:origin': { match: (item, value) => item.origin === value, period: RECENT },
  // Registry: "Only movements caused by this order."
  'inventory.movements:orderCode': {
    match: (item, value) => item.orderCode === value,
    sample: async (t) => {
      const db = t.context.database.db;
      // An order with a claim's movement too: both belong to the order.
      const { order_code: value } = await db('stock_movements').where({ shop_id: t.context.sk.id }).whereNotNull('order_code')
        .groupBy('order_code').orderByRaw('count(claim_code) desc, count(*) desc, order_code').first('order_code');
      return { value, expected: rows(await db.raw('select movement_id from stock_movements where shop_id = ? and order_code = ?', [t.context.sk.id, value]), 'movement_id') };
    },
    none: 'NO-SUCH-ORDER', invalid: 'x'.repeat(65),
  },
  // SPEC Customer records 3: "The directory filter `purchaseFrom`/`purchaseTo` means purchase activity: the customer
  // has at least one order in the interval." (both inclusive, shop time zone).
  'customers.list:purchaseFrom': {
    match: (item, value) => item.periodFrom === value && item.periodOrdersCount >= 1,
    // Alone it runs to today (TEST_NOW's day); every day of the demo has orders, a later day is PERIOD_REVERSED.
    sample: async (t) => purchasers(t, '2026-11-10', '2026-11-20'),
    invalid: '2026-11-1',
  },
  'customers.list:purchaseTo': {
    match: (item, value) => item.periodTo === value && item.periodOrdersCount >= 1,
    with: { purchaseFrom: '2026-06-01' },
    sample: async (t) => ({ ...await purchasers(t, '2026-06-01', '2026-06-15'), value: '2026-06-15' }),
    // A January 2020 with no demo orders: nobody bought then.
    none: '2020-01-31', noneWith: { purchaseFrom: '2020-01-01' }, invalid: '2026-02-30x',
  },
  // Registry: "Customers whose `customerKey` starts with this text or, only with `personal-data:read`, whose name,
  // company or e-mail contains it (case-insensitive)." Searched in SEARCHES below, field by field.
  'customers.list:search': {
    match: (item, value) => customerMatches(item, value),
    sample: async (t) => {
      const db = t.context.database.db;
      const { key } = await db('customer_rollups').where({ shop_id: t.context.sk.id }).orderBy('customer_key').first(db.raw('trim(customer_key) as key'));
      const value = key.slice(0, 5);
      return { value, expected: rows(await db.raw(`select trim(cr.customer_key) as k from customer_rollups cr join orders o on o.id = cr.last_order_id
        where cr.shop_id = ? and (cr.customer_key like ? or lower(concat_ws(' ', o.customer_first_name, o.customer_last_name)) like ?
          or lower(o.customer_company) like ? or lower(o.customer_email) like ?)`, [t.context.sk.id, `${value}%`, `%${value}%`, `%${value}%`, `%${value}%`]), 'k') };
    },
    none: 'zzqqxx-nobody', invalid: 'x',
  },
  // Registry: "Only claims currently in this status id (see claims_settings)."
  'claims.list:status': {
    match: (item, value) => item.status.id === value,
    sample: async (t) => {
      const db = t.context.database.db;
      const { status_id: value } = await db('claims').where({ shop_id: t.context.sk.id }).groupBy('status_id').orderByRaw('count(*) desc').first('status_id');
      return { value, expected: rows(await db.raw('select code from claims where shop_id = ? and status_id = ?', [t.context.sk.id, value]), 'code') };
    },
    none: '999999', invalid: '0',
  },
  // Registry: "Only withdrawals or only complaints."
  'claims.list:type': { match: (item, value) => item.type === value },
  // Registry: "Only partners in this state."
  'affiliate.partnersList:state': { match: (item, value) => item.state === value },
  // Registry: "Only conversions whose commission is in this state."
  'affiliate.conversionsList:state': { match: (item, value) => item.commissionState === value },
  // Registry: "Only this partner's conversions."
  'affiliate.conversionsList:partnerId': {
    match: (item, value) => item.partnerId === value,
    sample: async (t) => {
      const db = t.context.database.db;
      const { partner_id: partner } = await db('affiliate_conversions').where({ shop_id: t.context.sk.id }).groupBy('partner_id').orderByRaw('count(*) desc').first('partner_id');
      return { value: String(partner), expected: rows(await db.raw('select id from affiliate_conversions where shop_id = ? and partner_id = ?', [t.context.sk.id, partner]), 'id') };
    },
    none: '999999999', invalid: 'abc',
  },
  // Registry: "Only conversions attributed by a click or by a discount code."
  'affiliate.conversionsList:source': { match: (item, value) => item.source === value },
  // Registry: "Only payouts in this state."
  'affiliate.payouts:state': { match: (item, value) => item.state === value },
  // Registry: "Only this dictionary."
  'automations.options:dictionary': { match: (item, value) => item.dictionary === value },
  // Registry: "Only automations in this state."
  'automations.list:state': { match: (item, value) => item.state === value },
  // Registry: "Only enabled (true) or disabled (false) automations."
  'automations.list:enabled': { match: (item, value) => item.enabled === value },
  // Registry: "Only runs in this status."
  'automations.runs:status': { match: (item, value) => item.status === value },
  // SPEC /content/articles: "blog articles and shop content"; registry: "`article`: blog articles; `page`: content pages of the shop."
  'content.articles:kind': { match: (item, value) => item.kind === value },
  // Registry: "Derived at the request's instant: `disabled` …, `expired` …, `scheduled` …, `used_up` …, `active`."
  'coupons.list:state': { match: (item, value) => item.state === value },
  // Registry: "`signed` (default): signatures; `lacking`: partners lacking a signature."
  'affiliate.signatures:status': { match: (item, value) => item.status === value, defaultValue: 'signed' },
  // Registry: "Only variables filled in on this surface."
  'affiliate.variables:surface': { elements: (data) => data.variables, match: (item, value) => item.surfaces.includes(value) },
  // Registry: "Language code, e.g. `sk` or `en`; default: all languages."
  'affiliate.articlesGet:language': {
    elements: (data) => data.translations,
    match: (item, value) => item.language === value,
    sample: async () => ({ value: 'en', expected: ['en'] }),
    none: 'xx', invalid: 'eng',
  },
  'affiliate.documentContent:language': {
    elements: (data) => data.languages,
    match: (item, value) => item.language === value,
    sample: async () => ({ value: 'en', expected: ['en'] }),
    none: 'xx', invalid: 'EN',
  },
  // SPEC /search-console/query: "by day, query, page, country, device"; registry: "Only rows of this search query (exact)."
  'searchConsole.query:searchQuery': {
    match: (item, value) => item.query === value,
    sample: (t) => searchConsoleSample(t, 'query'), none: 'no such query anywhere', invalid: 'x'.repeat(201),
  },
  // Registry: "Only rows of this page URL (exact)."
  'searchConsole.query:page': {
    match: (item, value) => item.page === value,
    sample: (t) => searchConsoleSample(t, 'page'), none: 'https://nowhere.example/none', invalid: 'x'.repeat(501),
  },
  // Registry: "Only rows of this country, ISO alpha-3."
  'searchConsole.query:country': {
    match: (item, value) => item.country === value.toLowerCase(),
    sample: (t) => searchConsoleSample(t, 'country'), none: 'xyz', invalid: 'sk',
  },
  'searchConsole.query:device': { match: (item, value) => item.device === value },
};

/** Parameters that select no records, and why (they shape, compute or address the answer). */
const NOT_FILTERS: Record<string, string> = {
  'analytics.comparison:compareTo': 'chooses the period compared with, every figure is over all records',
  'analytics.monthly:fromMonth': 'the first month of the period (a period, like from/to)',
  'analytics.monthly:toMonth': 'the last month of the period (a period, like from/to)',
  'analytics.seo:by': 'groups the rows by query or by page; both groupings cover every row',
  'affiliate.linksGenerate:productCode': 'an input of the link generated (its target product)',
  'affiliate.linksGenerate:categoryGuid': 'an input of the link generated (its target category)',
  'affiliate.linksGenerate:campaignId': 'an input of the link generated (the campaign it tracks under)',
  'coupons.activationLink:path': 'an input of the link generated (the page it opens)',
  'affiliate.variables:text': 'a text to check for variables, not a filter of the registry',
  'automations.validate_draft:rule': 'the rule document to validate',
};

/** The sort key of a record: compared between calls and against the keys raw SQL gives. */
const KEYS: Record<string, (item: Item) => string> = {
  'shipping.shipments': (i) => i.shipmentId,
  'shipping.stats': (i) => i.carrierCode,
  'webhooks.deliveries': (i) => i.deliveryId,
  'documents.list': (i) => `${i.documentType}:${i.code}`,
  'inventory.movements': (i) => i.movementId,
  'customers.list': (i) => i.customerKey,
  'claims.list': (i) => i.code,
  'affiliate.partnersList': (i) => i.partnerId,
  'affiliate.conversionsList': (i) => i.conversionId,
  'affiliate.payouts': (i) => i.payoutId,
  'automations.options': (i) => `${i.dictionary}:${i.value}`,
  'automations.list': (i) => i.workflowId,
  'automations.runs': (i) => i.runWorkflowId,
  'content.articles': (i) => i.id,
  'coupons.list': (i) => i.code,
  'affiliate.signatures': (i) => (i.status === 'signed' ? `s:${i.signatureId}` : `l:${i.partnerId}:${i.documentKey}`),
  'affiliate.variables': (i) => i.name,
  'affiliate.articlesGet': (i) => i.language,
  'affiliate.documentContent': (i) => i.language,
  'searchConsole.query': (i) => `${i.day}|${i.query}|${i.page}|${i.country}|${i.device}`,
};

async function purchasers(t: ExecutionContext<Ctx>, from: string, to: string): Promise<Sample> {
  const result = await t.context.database.db.raw(`select distinct trim(o.customer_email_hash) as k from orders o join shops s on s.id = o.shop_id
    where o.shop_id = ? and (o.created_at at time zone s.time_zone)::date between ?::date and ?::date`, [t.context.sk.id, from, to]);
  return { value: from, expected: rows(result, 'k') };
}

async function searchConsoleSample(t: ExecutionContext<Ctx>, column: 'query' | 'page' | 'country'): Promise<Sample> {
  const db = t.context.database.db;
  const row = await db('search_console_rows').where({ shop_id: t.context.sk.id }).whereBetween('day', [PERIOD.from, PERIOD.to])
    .groupBy(column).orderByRaw(`count(*) asc, ${column}`).first(db.raw(`trim(${column}) as value`));
  if (!row) throw new Error('no search-console rows of sk in the period');
  const value = column === 'country' ? String(row.value).toUpperCase() : row.value;
  const expected = await db.raw(`select day::text || '|' || query || '|' || page || '|' || trim(country) || '|' || device as k from search_console_rows
    where shop_id = ? and day between ? and ? and trim(${column}) = ?`, [t.context.sk.id, PERIOD.from, PERIOD.to, row.value]);
  return { value, expected: rows(expected, 'k') };
}

function customerMatches(item: Item, text: string): boolean {
  const needle = text.toLowerCase();
  const name = [item.firstName, item.lastName].filter((v) => v !== null && v !== undefined).join(' ').toLowerCase();
  return item.customerKey.startsWith(needle) || name.includes(needle) || String(item.company ?? '').toLowerCase().includes(needle)
    || String(item.email ?? '').toLowerCase().includes(needle);
}

/** The arguments a capability is called with besides the filter: its shop, its parent record, a period where it has one by default. */
function baseArgs(t: ExecutionContext<Ctx>, capability: Capability): Args {
  const s = t.context.samples;
  const args: Args = {};
  if (capability.market === 'required') args.market = 'sk';
  if (capability.period?.default === 'last30days') Object.assign(args, PERIOD);
  if (capability.name === 'webhooks.deliveries') args.endpointId = s.endpointId;
  if (capability.name === 'automations.runs') args.workflowId = s.workflowId;
  if (capability.name === 'documents.list') args.documentType = 'invoice';
  if (capability.name === 'affiliate.articlesGet') args.articleKey = s.articleKey;
  if (capability.name === 'affiliate.documentContent') args.documentKey = s.documentKey;
  return args;
}

/** Parameters that are in neither table: a path parameter, a get's required identifier, or a shared one. */
function filterParams(capability: Capability): string[] {
  const schema = z.toJSONSchema(capability.params, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
  const pathParams = [...(capability.path ?? '').matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return Object.keys(schema.properties ?? {}).filter((name) => !SHARED.has(name) && !pathParams.includes(name)
    && !(capability.kind === 'get' && (schema.required ?? []).includes(name)));
}

function paramSchema(capability: Capability, param: string): Record<string, any> {
  const schema = z.toJSONSchema(capability.params, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, any> };
  return schema.properties[param];
}

const reads = capabilities.filter((c) => c.kind !== 'write');
const byName = new Map(reads.map((c) => [c.name, c]));

interface Answer {
  status: number;
  code: string | null;
  /** List items, or the elements of a get/summary's data. */
  items: Item[];
  data: any;
}

function restPath(capability: Capability, args: Args): string {
  const path = capability.path!.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k]) => !capability.path!.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  return `${path}?${query}`;
}

/** Every record the call answers, following `nextCursor` (REST) or `nextCursor` in structuredContent (MCP). */
async function callAll(t: ExecutionContext<Ctx>, capability: Capability, args: Args, via: 'rest' | 'mcp', elements?: (data: any) => Item[]): Promise<Answer> {
  const list = isListKind(capability);
  const shape = capability.params.shape as Record<string, unknown>;
  // D6: a search takes at most 100, a listing 250; a list without paging has no `limit`.
  const limit = capability.kind === 'search' || args.query !== undefined ? 100 : 250;
  const items: Item[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 60; page++) {
    const pageArgs: Args = { ...args, ...(list && 'limit' in shape ? { limit } : {}), ...(cursor ? { cursor } : {}) };
    let body: { data: any; next: string | null; status: number; code: string | null };
    if (via === 'rest') {
      const res = await api(t.context.server, restPath(capability, pageArgs), t.context.key);
      body = { data: res.body?.data, next: res.body?.meta?.nextCursor ?? null, status: res.status, code: res.body?.error?.code ?? null };
    } else {
      const result = (await t.context.mcp.callTool({ name: capability.mcpTool!, arguments: pageArgs })) as { isError?: boolean; content?: Array<{ text?: string }>; structuredContent?: any };
      if (result.isError) {
        const error = JSON.parse(result.content![0].text!).error;
        body = { data: null, next: null, status: 400, code: error.code };
      } else {
        const content = result.structuredContent;
        body = { data: list ? content.items : content.data, next: list ? content.nextCursor ?? null : null, status: 200, code: null };
      }
    }
    if (body.status !== 200) return { status: body.status, code: body.code, items: [], data: null };
    if (!list) return { status: 200, code: null, items: elements ? elements(body.data) : [body.data], data: body.data };
    items.push(...body.data);
    if (!body.next) return { status: 200, code: null, items, data: null };
    cursor = body.next;
  }
  throw new Error(`${capability.name}: more than 60 pages`);
}

/** The interfaces a capability is served on. */
function interfacesOf(capability: Capability): Array<'rest' | 'mcp'> {
  return [...(capability.path ? ['rest' as const] : []), ...(capability.mcpTool ? ['mcp' as const] : [])];
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** The enum values of a parameter (a boolean: both). */
function enumValues(schema: Record<string, any>): unknown[] | null {
  if (Array.isArray(schema.enum)) return schema.enum;
  if (schema.type === 'boolean') return [true, false];
  return null;
}

test('Every filter parameter of every read is in FILTERS or NOT_FILTERS, and every entry names a parameter that exists', (t) => {
  const params = reads.flatMap((c) => filterParams(c).map((p) => `${c.name}:${p}`)).sort();
  const tabled = [...Object.keys(FILTERS), ...Object.keys(NOT_FILTERS)].sort();
  t.deepEqual(params.filter((p) => !tabled.includes(p)), [], 'filter parameters missing from FILTERS / NOT_FILTERS');
  t.deepEqual(tabled.filter((p) => !params.includes(p)), [], 'table entries naming no filter parameter of a read');
  t.deepEqual(Object.keys(FILTERS).filter((p) => Object.hasOwn(NOT_FILTERS, p)), [], 'an entry in both tables');
  for (const name of Object.keys(FILTERS)) {
    const [capability, param] = name.split(':');
    const values = enumValues(paramSchema(byName.get(capability)!, param));
    t.true(values !== null || FILTERS[name].sample !== undefined, `${name}: a free-value filter needs a sample from the data`);
    t.truthy(KEYS[capability], `${capability}: a key for its records`);
  }
});

const enumEntries = Object.entries(FILTERS).filter(([name]) => {
  const [capability, param] = name.split(':');
  return enumValues(paramSchema(byName.get(capability)!, param)) !== null;
});
const freeEntries = Object.entries(FILTERS).filter(([name]) => !enumEntries.some(([n]) => n === name));

test('When every enum or boolean filter is called with each of its values (REST and MCP), then it answers exactly the unfiltered records its predicate keeps, each value has records, and the values together are every record', async (t) => {
  t.timeout(180_000);
  const problems: string[] = [];
  const tasks = enumEntries.flatMap(([name, entry]) => {
    const [capabilityName, param] = name.split(':');
    const capability = byName.get(capabilityName)!;
    const values = enumValues(paramSchema(capability, param))!;
    const key = KEYS[capabilityName];
    // REST (where the capability has a path) is compared with the unfiltered answer; MCP then with REST value by value.
    return [async () => {
      const [first, ...others] = interfacesOf(capability);
      const counts = new Map<string, number>();
      const byValue = new Map<string, string[]>();
      for (const variant of entry.over ?? [{}]) {
        const label = `${name} ${first}${entry.over ? ` ${JSON.stringify(variant)}` : ''}`;
        const base = { ...baseArgs(t, capability), ...entry.period, ...variant };
        const required = base[param] !== undefined;
        const unfiltered = required ? null : await callAll(t, capability, base, first, entry.elements);
        if (unfiltered && unfiltered.status !== 200) {
          problems.push(`${label}: unfiltered ${unfiltered.status} ${unfiltered.code}`);
          return;
        }
        const union = new Set<string>();
        const answers = await Promise.all(values.map((value) => callAll(t, capability, { ...base, [param]: value }, first, entry.elements)));
        for (const [i, value] of values.entries()) {
          const answer = answers[i];
          if (answer.status !== 200) {
            problems.push(`${label}=${value}: ${answer.status} ${answer.code}`);
            continue;
          }
          counts.set(String(value), (counts.get(String(value)) ?? 0) + answer.items.length);
          const wrong = answer.items.filter((item) => !entry.match(item, value));
          if (wrong.length) problems.push(`${label}=${value}: ${wrong.length} of ${answer.items.length} items fail the predicate, e.g. ${JSON.stringify(wrong[0]).slice(0, 200)}`);
          const keys = sorted(answer.items.map(key));
          byValue.set(`${JSON.stringify(variant)}=${value}`, keys);
          // The unfiltered answer narrowed by the predicate (or, for the default value, the unfiltered answer itself).
          if (unfiltered && (entry.defaultValue === undefined || entry.defaultValue === value || entry.defaultValue === 'all')) {
            const expected = entry.defaultValue === value && entry.defaultValue !== 'all' ? sorted(unfiltered.items.map(key)) : sorted(unfiltered.items.filter((i) => entry.match(i, value)).map(key));
            if (JSON.stringify(keys) !== JSON.stringify(expected)) {
              problems.push(`${label}=${value}: ${keys.length} records, the unfiltered answer narrowed by the predicate has ${expected.length} (missing ${expected.filter((k) => !keys.includes(k)).slice(0, 3)}, extra ${keys.filter((k) => !expected.includes(k)).slice(0, 3)})`);
            }
          }
          for (const k of keys) union.add(k);
        }
        if (entry.defaultValue !== undefined && entry.defaultValue !== 'all') continue;
        if (unfiltered) {
          const all = sorted(unfiltered.items.map(key));
          if (JSON.stringify(sorted(union)) !== JSON.stringify(all)) problems.push(`${label}: the union over ${values.join(', ')} has ${union.size} records, the unfiltered answer ${all.length}`);
        } else if (entry.totalBySql) {
          const total = await entry.totalBySql(t);
          if (union.size !== total) problems.push(`${label}: the union over ${values.join(', ')} has ${union.size} records, the tables ${total}`);
        }
      }
      for (const value of values) {
        const n = counts.get(String(value)) ?? 0;
        if (n === 0 && !entry.absent?.[String(value)]) problems.push(`${name} ${first}=${value}: no records (the data must have some, or say why in \`absent\`)`);
        if (n > 0 && entry.absent?.[String(value)]) problems.push(`${name} ${first}=${value}: listed as absent but has ${n} records`);
      }
      for (const via of others) {
        for (const variant of entry.over ?? [{}]) {
          const base = { ...baseArgs(t, capability), ...entry.period, ...variant };
          await Promise.all(values.map(async (value) => {
            const answer = await callAll(t, capability, { ...base, [param]: value }, via, entry.elements);
            const keys = answer.status === 200 ? sorted(answer.items.map(key)) : [`${answer.status} ${answer.code}`];
            const expected = byValue.get(`${JSON.stringify(variant)}=${value}`);
            if (JSON.stringify(keys) !== JSON.stringify(expected)) problems.push(`${name} ${via}=${value}: ${keys.length} records, ${first} ${expected?.length}`);
          }));
        }
      }
    }];
  });
  await pool(6, tasks);
  t.deepEqual(problems, []);
});

test('When every free-value filter is given a value from the data, then it answers exactly the rows raw SQL expects; a value matching nothing answers an empty list; an invalid value is 400 INVALID_PARAMETER', async (t) => {
  t.timeout(180_000);
  const problems: string[] = [];
  const tasks = freeEntries.flatMap(([name, entry]) => {
    const [capabilityName, param] = name.split(':');
    const capability = byName.get(capabilityName)!;
    const key = KEYS[capabilityName];
    return interfacesOf(capability).map((via) => async () => {
      const label = `${name} ${via}`;
      const base = { ...baseArgs(t, capability), ...entry.with };
      const sample = await entry.sample!(t);
      if (sample.expected.length === 0) problems.push(`${label}: the sample value ${sample.value} has no rows (choose one the data has)`);
      const answer = await callAll(t, capability, { ...base, [param]: sample.value }, via, entry.elements);
      if (answer.status !== 200) {
        problems.push(`${label}=${sample.value}: ${answer.status} ${answer.code}`);
      } else {
        const wrong = answer.items.filter((item) => !entry.match(item, sample.value));
        if (wrong.length) problems.push(`${label}=${sample.value}: ${wrong.length} of ${answer.items.length} items fail the predicate, e.g. ${JSON.stringify(wrong[0]).slice(0, 200)}`);
        const keys = sorted(answer.items.map(key));
        const expected = sorted(sample.expected);
        if (JSON.stringify(keys) !== JSON.stringify(expected)) {
          problems.push(`${label}=${sample.value}: ${keys.length} records, raw SQL expects ${expected.length} (missing ${expected.filter((k) => !keys.includes(k)).slice(0, 3)}, extra ${keys.filter((k) => !expected.includes(k)).slice(0, 3)})`);
        }
      }
      if (entry.none !== undefined) {
        const none = await callAll(t, capability, { ...base, ...entry.noneWith, [param]: paramSchema(capability, param).type === 'integer' ? Number(entry.none) : entry.none }, via, entry.elements);
        if (none.status !== 200 || none.items.length !== 0) problems.push(`${label}=${entry.none}: expected 200 and nothing, got ${none.status} ${none.code} with ${none.items.length} records`);
      }
      if (entry.invalid !== undefined && via === 'rest') {
        const res = await api(t.context.server, restPath(capability, { ...base, [param]: entry.invalid }), t.context.key);
        if (res.status !== 400 || res.body?.error?.code !== 'INVALID_PARAMETER') problems.push(`${label}=${entry.invalid}: expected 400 INVALID_PARAMETER, got ${res.status} ${res.body?.error?.code}`);
      }
    });
  });
  await pool(6, tasks);
  t.deepEqual(problems, []);
});

/** The keywords that bound a parameter's values. */
const BOUNDS = ['type', 'enum', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'format'];
const boundsOf = (schema: Record<string, any> | undefined) => Object.fromEntries(BOUNDS.filter((k) => schema?.[k] !== undefined).map((k) => [k, schema![k]]));

test('Every filter\'s bound (its enum, length, pattern or range) is declared alike in /openapi.json and in the tool\'s inputSchema', (t) => {
  const problems: string[] = [];
  for (const name of Object.keys(FILTERS)) {
    const [capabilityName, param] = name.split(':');
    const capability = byName.get(capabilityName)!;
    const declared = boundsOf(paramSchema(capability, param));
    const limiting = Object.keys(declared).filter((k) => (k !== 'type' || declared.type === 'boolean' || declared.type === 'integer') && k !== 'format');
    if (limiting.length === 0) problems.push(`${name}: no bound in the params schema`);
    if (capability.path) {
      const operation = t.context.openapi.paths[capability.path]?.get;
      const parameter = operation?.parameters?.find((p: { name: string }) => p.name === param);
      const openapi = boundsOf(parameter?.schema);
      // The date-time/date regex may be left to `format`; every other bound must be there.
      for (const k of limiting) if (JSON.stringify(openapi[k]) !== JSON.stringify(declared[k])) problems.push(`${name}: /openapi.json ${k} ${JSON.stringify(openapi[k])}, params ${JSON.stringify(declared[k])}`);
    }
    if (capability.mcpTool) {
      const input = t.context.tools.get(capability.mcpTool);
      if (!input) {
        problems.push(`${name}: tool ${capability.mcpTool} not listed`);
        continue;
      }
      let property = input.properties?.[param];
      if (property?.$ref) property = input.$defs[String(property.$ref).replace('#/$defs/', '')];
      const tool = boundsOf(property);
      for (const k of limiting) {
        if (k === 'pattern' && declared.format) continue;
        if (JSON.stringify(tool[k]) !== JSON.stringify(declared[k])) problems.push(`${name}: ${capability.mcpTool} inputSchema ${k} ${JSON.stringify(tool[k])}, params ${JSON.stringify(declared[k])}`);
      }
    }
  }
  t.deepEqual(problems, []);
});

test('When an enum filter is given a value outside its enum, then REST answers 400 INVALID_PARAMETER', async (t) => {
  const problems: string[] = [];
  await pool(6, enumEntries.filter(([name]) => byName.get(name.split(':')[0])!.path).map(([name]) => async () => {
    const [capabilityName, param] = name.split(':');
    const capability = byName.get(capabilityName)!;
    const res = await api(t.context.server, restPath(capability, { ...baseArgs(t, capability), [param]: 'no_such_value' }), t.context.key);
    if (res.status !== 400 || res.body?.error?.code !== 'INVALID_PARAMETER') problems.push(`${name}=no_such_value: ${res.status} ${res.body?.error?.code}`);
  }));
  t.deepEqual(problems, []);
});

/** A search: the fields it documents, and for each a text of a real record and that record's key (raw SQL). */
interface SearchEntry {
  /** Whether the item contains the text in one of the documented fields. */
  contains: (item: Item, text: string) => boolean;
  probes: (t: ExecutionContext<Ctx>) => Promise<Array<{ field: string; text: string; key: string }>>;
  key: (item: Item) => string;
  /** The parameter carrying the text. */
  param: string;
  args?: Args;
}

const lower = (v: unknown) => String(v ?? '').toLowerCase();
const documentContains = (item: Item, text: string) => {
  const t = text.toLowerCase();
  return [item.code, item.orderCode, item.variableSymbol].some((v) => lower(v).includes(t))
    || lower([item.customer?.firstName, item.customer?.lastName].filter(Boolean).join(' ')).includes(t) || lower(item.customer?.company).includes(t);
};
async function documentProbes(t: ExecutionContext<Ctx>, type: string) {
  const db = t.context.database.db;
  const d = await db('documents').where({ shop_id: t.context.sk.id, type }).whereNotNull('variable_symbol').whereNotNull('order_code')
    .whereNotNull('customer_last_name').orderBy('id').first('code', 'order_code', 'variable_symbol', 'customer_last_name');
  // The variable symbol of the first document that shares it with no other document of its kind, so it is its own answer.
  return [
    { field: 'code', text: d.code, key: d.code },
    { field: 'orderCode', text: d.order_code, key: d.code },
    { field: 'variableSymbol', text: d.variable_symbol, key: d.code },
    { field: 'customer name', text: d.customer_last_name, key: d.code },
  ];
}

/**
 * SPEC REST conventions 5 and the tables of SPEC "Capabilities": products "search by name, code, EAN or PLU"; invoices
 * and credit notes by "document number, order number or variable symbol — and, with `personal-data:read`, the customer's
 * name or company"; content articles "by title or text"; the directory's `search` by key prefix, name, company or e-mail.
 */
const SEARCHES: Record<string, SearchEntry> = {
  'products.search': {
    param: 'query', key: (i) => i.code,
    contains: (item, text) => [item.name, item.code].some((v) => lower(v).includes(text.toLowerCase())) || item.ean === text || item.plu === text,
    probes: async (t) => {
      const db = t.context.database.db;
      const p = await db('products').where({ shop_id: t.context.sk.id }).whereNotNull('ean').whereNotNull('plu').orderBy('id').first('code', 'name', 'ean', 'plu');
      return [
        { field: 'code', text: p.code, key: p.code }, { field: 'name', text: p.name, key: p.code },
        { field: 'ean', text: p.ean, key: p.code }, { field: 'plu', text: p.plu, key: p.code },
      ];
    },
  },
  'invoices.search': { param: 'query', key: (i) => i.code, contains: documentContains, probes: (t) => documentProbes(t, 'invoice') },
  'credit_notes.search': { param: 'query', key: (i) => i.code, contains: documentContains, probes: (t) => documentProbes(t, 'credit_note') },
  'content.articles': {
    param: 'query', key: (i) => i.id,
    contains: (item, text) => lower(item.title).includes(text.toLowerCase()) || lower(item.text).includes(text.toLowerCase()),
    probes: async (t) => {
      const db = t.context.database.db;
      const a = await db('content_articles').where({ shop_id: t.context.sk.id }).orderBy('id').first('article_id', 'title', 'text');
      const word = String(a.text).split(/\s+/).filter((w) => w.length >= 6 && !String(a.title).toLowerCase().includes(w.toLowerCase())).slice(-1)[0];
      return [{ field: 'title', text: a.title, key: a.article_id }, { field: 'text', text: word, key: a.article_id }];
    },
  },
  'customers.list': {
    param: 'search', key: (i) => i.customerKey, contains: (item, text) => customerMatches(item, text),
    probes: async (t) => {
      const db = t.context.database.db;
      const c = await db('customer_rollups as cr').join('orders as o', 'o.id', 'cr.last_order_id').where('cr.shop_id', t.context.sk.id)
        .whereNotNull('o.customer_company').whereNotNull('o.customer_email').orderBy('cr.customer_key')
        .first(db.raw('trim(cr.customer_key) as key'), 'o.customer_first_name', 'o.customer_last_name', 'o.customer_company', 'o.customer_email');
      return [
        { field: 'customerKey', text: c.key.slice(0, 12), key: c.key },
        { field: 'name', text: `${c.customer_first_name} ${c.customer_last_name}`, key: c.key },
        { field: 'company', text: c.customer_company, key: c.key },
        { field: 'email', text: c.customer_email, key: c.key },
      ];
    },
  },
};

test('The searches are the capabilities with `query` or the directory\'s `search`', (t) => {
  const withQuery = reads.filter((c) => 'query' in (c.params.shape as object)).map((c) => c.name);
  t.deepEqual(sorted(withQuery), sorted(Object.keys(SEARCHES).filter((n) => SEARCHES[n].param === 'query')));
});

test('When every search is given a text of each documented field of a record, then it finds that record and every hit contains the text in a documented field; a text matching nothing finds nothing', async (t) => {
  t.timeout(180_000);
  const problems: string[] = [];
  const tasks = Object.entries(SEARCHES).flatMap(([name, entry]) => {
    const capability = byName.get(name)!;
    return interfacesOf(capability).map((via) => async () => {
      const base = baseArgs(t, capability);
      for (const probe of await entry.probes(t)) {
        const label = `${name} ${via} ${probe.field}=${probe.text}`;
        const answer = await callAll(t, capability, { ...base, [entry.param]: probe.text }, via);
        if (answer.status !== 200) {
          problems.push(`${label}: ${answer.status} ${answer.code}`);
          continue;
        }
        if (!answer.items.some((i) => entry.key(i) === probe.key)) problems.push(`${label}: ${probe.key} not found among ${answer.items.length}`);
        const wrong = answer.items.filter((i) => !entry.contains(i, probe.text));
        if (wrong.length) problems.push(`${label}: ${wrong.length} hits without the text, e.g. ${entry.key(wrong[0])}`);
      }
      const none = await callAll(t, capability, { ...base, [entry.param]: 'zzqqxxjj' }, via);
      if (none.status !== 200 || none.items.length !== 0) problems.push(`${name} ${via} nothing: ${none.status} ${none.code} ${none.items.length} hits`);
    });
  });
  await pool(6, tasks);
  t.deepEqual(problems, []);
});
