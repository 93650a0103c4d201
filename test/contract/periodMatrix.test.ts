/**
 * The period and pagination matrix over the registry: metamorphic relations every read must satisfy.
 *   1. Narrowing: a list read for a narrow period N equals the rows of a wide period W whose documented date lies in
 *      N's first..last day (inclusive, shop time zone), and N's first and last days are both represented.
 *   2. Additivity: each additive figure of a summary over A..C equals its value over A..B plus B+1..C; a summary's
 *      count equals the rows of its list dated in the period (the same date column); `previous_period` equals the
 *      capability called for the preceding period of the same length.
 *   3. Pagination: walking every paginated list with limit=1 (the last page exactly full) and with a limit that
 *      leaves a partial last page gives the records of one large page in the same order, over REST and MCP.
 *   4. 366 days accepted, 367 refused, a reversed period refused, for every capability with a period, both sides.
 * A capability with a period rule, or a paginated list, missing from the maps below fails the first test, so a new
 * one joins the matrix by construction. Expected values are the other call's answer or the SPEC's numbers.
 */
import type { ExecutionContext } from 'ava';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import crypto from 'node:crypto';
import { capabilities } from '../../src/capabilities/registry.js';
import { isRestCapability, type Capability } from '../../src/capabilities/types.js';
import { isPaginated } from '../../api/mcp/tools.js';
import { appTest, type AppContext } from '../helpers/app.js';
import { TEST_NOW } from '../helpers/constants.js';
import { rowForInsert } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { daysBefore, todayIn } from '../helpers/oracles.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { api } from '../helpers/server.js';
import { shopOf } from '../helpers/shops.js';
import { pool } from '../helpers/pool.js';

/** The planted conversation (shop sk, Europe/Bratislava): 1 Nov 10:00 to 4 Nov 10:00 local time. */
const RESUMED_CONVERSATION = { startedAt: '2026-11-01T09:00:00.000Z', lastActivityAt: '2026-11-04T09:00:00.000Z' };

interface Extra {
  samples: Record<string, string>;
  timeZone: string;
  today: string;
  /** The last day of the wide period per capability when it is not today (products: the newest product's day). */
  wideEnd: Record<string, string>;
}

const test = appTest<Extra>({}, async ({ database }) => {
  const db = database.db;
  const samples = await sampleValues(db);
  const sk = await shopOf(db, 'demo', 'sk');
  // Three records of each list that has fewer, as copies with the same creation instant (ties the keyset must break).
  const endpointId = samples.endpointId;
  const delivery = await db('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('id').first();
  for (let i = 0; i < 4; i++) await db('webhook_deliveries').insert({ ...rowForInsert(delivery), event_id: crypto.randomUUID() });
  const automation = await db('automations').where({ workflow_id: samples.workflowId }).first();
  for (let i = 0; i < 4; i++) {
    await db('automations').insert({ ...rowForInsert(automation, ['id', 'markets']), markets: automation.markets, workflow_id: `aut_pe_${i}`, client_request_id: `pe-${i}`, enabled: false });
  }
  const run = await db('automation_runs').where({ automation_id: automation.id }).orderBy('id').first();
  for (let i = 0; i < 4; i++) {
    await db('automation_runs').insert({ ...rowForInsert(run), run_workflow_id: `${run.run_workflow_id}-pe-${i}`, event_id: crypto.randomUUID() });
  }
  for (const type of ['invoice', 'credit_note']) {
    const document = await db('documents').where({ shop_id: sk.id, type }).orderBy('id').first();
    for (const planted of PLANTED_DOCUMENTS) {
      await db('documents').insert({
        ...rowForInsert(document, ['id', 'business_date', 'number_search', 'customer_search']), code: `${document.code}-${planted.suffix}`,
        tax_date: planted.taxDate, issue_date: planted.issueDate, issued_at: new Date(planted.issuedAt),
      });
    }
  }
  // A chatbot conversation resumed days later: started on 1 Nov, last active on 4 Nov (the demo's conversations last
  // minutes, so without it no period separates the start from the last activity).
  const conversation = await db('chatbot_conversations').where({ shop_id: sk.id }).orderBy('id').first();
  await db('chatbot_conversations').insert({
    ...rowForInsert(conversation, ['id', 'product_codes']), product_codes: conversation.product_codes, session_id: crypto.randomUUID(),
    started_at: new Date(RESUMED_CONVERSATION.startedAt), last_activity_at: new Date(RESUMED_CONVERSATION.lastActivityAt),
  });
  // Products are not created every day: the wide period ends on the newest product's day (SQL over the demo data).
  const newestProduct = await db.raw(`select to_char(max(created_at) at time zone ?, 'YYYY-MM-DD') as day from products where shop_id = ?`, [sk.timeZone, sk.id]);
  return { samples, timeZone: sk.timeZone, today: todayIn(sk.timeZone, TEST_NOW), wideEnd: { 'products.search': newestProduct.rows[0].day } };
});
type T = ExecutionContext<AppContext & Extra>;

/**
 * The documented date field of each list with a period rule (the sentence that documents it beside it).
 * `instant` fields are ISO timestamps read as calendar days in the shop's time zone (SPEC D5: "`from`/`to` are
 * calendar dates in the shop's time zone"); `date` fields are calendar dates already.
 */
const DATE_FIELD: Record<string, { field: string; kind: 'instant' | 'date' }> = {
  // orders_list: "Without `from`/`to` all orders are listed; `todayOnly` limits to today": the order's creation.
  'orders.list': { field: 'createdAt', kind: 'instant' },
  // shipping_shipments: "the shipments of the shop `market` created in the period".
  'shipping.shipments': { field: 'createdAt', kind: 'instant' },
  // products_search: "all products of the shop `market` ... optionally created within `from`/`to`".
  'products.search': { field: 'createdAt', kind: 'instant' },
  // SPEC: "`businessDate` (invoice, credit note): the date that placed the document in a period: tax date, or issue
  // date when the tax date is empty".
  'invoices.search': { field: 'businessDate', kind: 'date' },
  'credit_notes.search': { field: 'businessDate', kind: 'date' },
  // documents: "`from`/`to` restrict `businessDate`".
  'documents.list': { field: 'businessDate', kind: 'date' },
  // inventory_movements: "`from`/`to` restrict when the movement happened".
  'inventory.movements': { field: 'occurredAt', kind: 'instant' },
  // claims_list: "the claims ... opened in the period".
  'claims.list': { field: 'openedAt', kind: 'instant' },
  // affiliate_conversions_list: "optionally in a period (order time, shop time zone; default all)".
  'affiliate.conversionsList': { field: 'orderedAt', kind: 'instant' },
  // affiliate_payouts_list: "optionally in a period (when drawn up; default all)".
  'affiliate.payouts': { field: 'createdAt', kind: 'instant' },
  // chatbot conversations: "most recently active first, optionally those active in a period": the last activity.
  'chatbot.conversations': { field: 'lastActivityAt', kind: 'instant' },
  // search-console rows: "one per day, query, page, country and device ... newest day first".
  'searchConsole.query': { field: 'day', kind: 'date' },
};

/**
 * A second narrow period where planted documents sit on its edges with an issue date a day after their tax date (the
 * demo issues every document on its tax date, so no other period separates `businessDate` from the issue date):
 * one with tax date 31 Oct (inside) issued 1 Nov, one with tax date 19 Oct (outside) issued 20 Oct.
 */
const PLANTED_NARROW: Record<string, { from: string; to: string }> = {
  'invoices.search': { from: '2026-10-20', to: '2026-10-31' },
  'credit_notes.search': { from: '2026-10-20', to: '2026-10-31' },
  'documents.list': { from: '2026-10-20', to: '2026-10-31' },
};
const PLANTED_DOCUMENTS = [
  { suffix: 'PE1', taxDate: '2026-10-31', issueDate: '2026-11-01', issuedAt: '2026-11-01T08:00:00.000Z' },
  { suffix: 'PE2', taxDate: '2026-10-19', issueDate: '2026-10-20', issuedAt: '2026-10-20T08:00:00.000Z' },
];

/** Extra arguments that keep a wide walk small; the relation holds under any fixed filter. */
const LIST_FILTERS: Record<string, Record<string, string>> = {
  'searchConsole.query': { device: 'mobile', country: 'svk' },
};

/** Filters that keep a paging walk short (inventory moves about 40 items a day); rows of W are filtered alike. */
const PAGING_FILTERS: Record<string, Record<string, string>> = {
  'inventory.movements': { origin: 'claim' },
};

/**
 * The additive figures of each summary with a period: counts, sums of money (in cents) and quantities. Paths are
 * `a.b`, `list[key].field` (a keyed array; a key missing in one part counts 0) or `list[key]` (the item is money).
 * Left out everywhere: averages, medians, percentiles, rates, shares and ratios (not additive), distinct counts
 * (customers, queries, partners active in the period) and states of today (partners per state).
 */
const ADDITIVE: Record<string, string[]> = {
  'shipping.stats': ['shipments.total', 'shipments.delivered', 'shipments.returned', 'shipments.failed', 'shipments.inTransit', 'shipments.cancelled',
    'delivery.measured', 'countries[country].shipments', 'countries[country].delivered', 'carriers[carrierCode].shipments', 'carriers[carrierCode].delivered',
    'carriers[carrierCode].returned', 'carriers[carrierCode].failed', 'carriers[carrierCode].inTransit'],
  'claims.statistics': ['claims.total', 'claims.open', 'claims.closed', 'statuses[status.id].count', 'types[type].count', 'resolutions[resolution].count',
    'resolutionTime.measured', 'ratings.rated', 'ratings.distribution[score].count', 'reasons[reason].count'],
  // companyCosts left out: a month's costs are prorated by day and rounded once per call.
  'reports.financialSummary': ['orders', 'cancelledOrders', 'revenueWithVat', 'revenueWithoutVat', 'vat', 'discounts', 'productLines', 'pricedLines', 'shipping'],
  'customers.performance': ['totals.ordersCount', 'totals.revenueByCurrency[currency]'],
  'sales.orderPerformance': ['totals.orders', 'totals.revenueWithVat', 'totals.revenueWithoutVat'],
  'sales.productPerformance': ['totals.quantity', 'totals.revenueWithoutVat', 'totals.revenueWithVat', 'totals.lines', 'totals.unmappedLines'],
  'affiliate.summary': ['clicks', 'conversions.total', 'conversions.bySource.click', 'conversions.bySource.coupon', 'conversions.byState.pending',
    'conversions.byState.approved', 'conversions.byState.paid', 'conversions.byState.rejected', 'revenueWithVat', 'commissions.pending', 'commissions.approved',
    'commissions.paid', 'commissions.rejected'],
  'affiliate.statistics': ['sources[source].conversions', 'sources[source].commission', 'sources[source].revenueWithVat', 'partnerRanking[partnerId].clicks',
    'partnerRanking[partnerId].conversions', 'partnerRanking[partnerId].commission', 'partnerRanking[partnerId].revenueWithVat'],
  'analytics.overview': ['visits', 'orders', 'revenueWithVat', 'trackedOrders', 'aiAssistants.visits', 'aiAssistants.orders', 'aiAssistants.revenueWithVat'],
  'analytics.channels': ['channels[channel].visits', 'channels[channel].orders', 'channels[channel].revenueWithVat', 'untracked.orders', 'untracked.revenueWithVat',
    'totals.visits', 'totals.orders', 'totals.revenueWithVat', 'totals.trackedOrders'],
  'analytics.comparison': ['current.visits', 'current.orders', 'current.revenueWithVat'],
  'analytics.orderCoverage': ['orders', 'trackedOrders', 'untrackedOrders', 'revenueWithVat', 'trackedRevenueWithVat'],
  'analytics.orderHeatmap': ['orders', 'cells[weekday,hour].orders'],
  'analytics.revenueSources': ['revenueWithVat', 'orders', 'channels[channel].orders', 'channels[channel].revenueWithVat', 'channels[channel].visits'],
  'analytics.advertising': ['platforms[platform].spend', 'platforms[platform].clicks', 'platforms[platform].impressions', 'platforms[platform].conversions',
    'platforms[platform].conversionValue', 'spend', 'clicks', 'clicksInWebAnalytics', 'conversions', 'conversionValue', 'revenueWithVat', 'orders'],
  'chatbot.outcomes': ['conversations', 'measured', 'unmeasured', 'knownOutcome', 'unknownOutcome', 'resolved', 'unresolved', 'botError'],
  'chatbot.stats': ['bubble.shown', 'bubble.opened', 'bubble.conversationsStarted', 'conversations.total', 'conversations.messages', 'outcomes.resolved',
    'outcomes.unresolved', 'outcomes.botError', 'outcomes.unknown', 'outcomes.unmeasured', 'ratings.count'],
  'chatbot.topics': ['conversations', 'topics[topic].conversations', 'topics[topic].resolved', 'topics[topic].notResolved'],
  // Totals over every query of the period (the rows are the top `limit` only).
  'analytics.seo': ['totals.clicks', 'totals.impressions'],
};

/**
 * A summary's count against the rows of its list whose documented date lies in the period: it catches a summary
 * counting by another date column than its list (additivity holds for any column).
 */
const SUMMARY_VS_LIST: Array<{ summary: string; list: string; listField: string; figure: (data: any) => number; why: string }> = [
  { summary: 'shipping.stats', list: 'shipping.shipments', listField: 'createdAt', figure: (d) => d.shipments.total + d.shipments.cancelled,
    why: 'shipping_stats: "the shipments of the shop CREATED in the period"; cancelled ones "reported separately and counted nowhere else"' },
  { summary: 'claims.statistics', list: 'claims.list', listField: 'openedAt', figure: (d) => d.claims.total, why: 'claims_statistics: "the claims OPENED in the period"' },
  { summary: 'affiliate.summary', list: 'affiliate.conversionsList', listField: 'orderedAt', figure: (d) => d.conversions.total, why: 'affiliate_summary: "Conversions count by order time"' },
  { summary: 'chatbot.outcomes', list: 'chatbot.conversations', listField: 'startedAt', figure: (d) => d.conversations, why: 'chatbot outcomes: "conversations ... started in a period"' },
  { summary: 'reports.financialSummary', list: 'orders.list', listField: 'createdAt', figure: (d) => d.orders + d.cancelledOrders, why: 'financial summary: the orders of the period, cancelled ones apart' },
];

/** Capabilities that report the preceding period of the same length, and the fields to compare with a direct call. */
const PREVIOUS_PERIOD: Record<string, { args: Record<string, string>; previous: (d: any) => any; current: (d: any) => any }> = {
  // analytics.comparison: "`previous_period` (the same number of days just before, default)".
  'analytics.comparison': {
    args: { compareTo: 'previous_period' },
    previous: (d) => d.previous,
    current: (d) => d.current,
  },
  // analytics_advertising: "the previous period of the same length for comparison".
  'analytics.advertising': {
    args: {},
    previous: (d) => ({ from: d.comparison.from, to: d.comparison.to, spend: d.comparison.spend, revenueWithVat: d.comparison.revenueWithVat, roas: d.comparison.roas, mer: d.comparison.mer, cpa: d.comparison.cpa }),
    current: (d) => ({ from: d.from, to: d.to, spend: d.spend, revenueWithVat: d.revenueWithVat, roas: d.roas, mer: d.mer, cpa: d.cpa }),
  },
};

/** Lists a wide walk leaves out of narrowing: none; every list with a period is in DATE_FIELD. */
const periodLists = capabilities.filter((c) => c.period && c.kind === 'list' && isRestCapability(c));
const periodSummaries = capabilities.filter((c) => c.period && c.kind === 'summary');
const periodCapabilities = capabilities.filter((c) => c.period && c.kind !== 'write');
const pagedLists = capabilities.filter((c) => c.kind !== 'write' && isPaginated(c));
/** Summaries that page their own rows by cursor (`meta.nextCursor`), with `totals` of the whole period on every page. */
const pagedSummaries = capabilities.filter((c) => c.kind === 'summary' && 'cursor' in c.params.shape);
const SUMMARY_ROWS: Record<string, string> = {
  'customers.performance': 'customers',
  'sales.orderPerformance': 'orders',
  'sales.productPerformance': 'products',
};
/**
 * The rows of a paged summary add up to its `totals` "of the WHOLE period": a count of rows and sums of additive row
 * fields (shop sk has one currency, so a customer is one row). Rows and totals are computed apart, so a period or
 * filter applied to one only shows here.
 */
const ROWS_TO_TOTALS: Record<string, Array<{ total: string; rows: (row: any) => unknown }>> = {
  'customers.performance': [{ total: 'customers', rows: () => 1 }, { total: 'ordersCount', rows: (r) => r.ordersCount }, { total: 'revenueByCurrency[currency]', rows: (r) => r.revenue }],
  'sales.orderPerformance': [{ total: 'orders', rows: () => 1 }, { total: 'revenueWithVat', rows: (r) => r.revenueWithVat }, { total: 'revenueWithoutVat', rows: (r) => r.revenueWithoutVat }],
  'sales.productPerformance': [{ total: 'products', rows: () => 1 }, { total: 'quantity', rows: (r) => r.quantity }, { total: 'revenueWithVat', rows: (r) => r.revenueWithVat },
    { total: 'revenueWithoutVat', rows: (r) => r.revenueWithoutVat }, { total: 'lines', rows: (r) => r.lines }],
};

// --- calls ---------------------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  code: string | null;
  items: any[] | null;
  data: any;
  hasMore: boolean | null;
  nextCursor: string | null;
  period: any;
  text: string;
}

function restPath(capability: Capability, args: Record<string, unknown>): string {
  const path = capability.path!;
  const filled = path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k, v]) => v !== undefined && !path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  return `${filled}?${query}`;
}

async function viaRest(t: T, capability: Capability, args: Record<string, unknown>): Promise<Answer> {
  const res = await api(t.context.server, restPath(capability, args), t.context.key);
  const body = res.body ?? {};
  const list = Array.isArray(body.data);
  return {
    status: res.status, code: body.error?.code ?? null, items: list ? body.data : null, data: list ? null : body.data,
    hasMore: body.meta?.hasMore ?? null, nextCursor: body.meta?.nextCursor ?? null, period: body.meta?.period ?? null, text: JSON.stringify(body).slice(0, 400),
  };
}

async function viaMcp(client: ModernClient, capability: Capability, args: Record<string, unknown>): Promise<Answer> {
  const result = (await client.callTool({ name: capability.mcpTool!, arguments: args })) as { isError?: boolean; content?: Array<{ text?: string }>; structuredContent?: any };
  const text = JSON.stringify(result).slice(0, 400);
  if (result.isError) {
    let code: string | null;
    try { code = JSON.parse(result.content![0].text!).error.code; } catch { code = null; }
    return { status: 400, code, items: null, data: null, hasMore: null, nextCursor: null, period: null, text };
  }
  const s = result.structuredContent ?? {};
  return { status: 200, code: null, items: s.items ?? null, data: s.data ?? null, hasMore: s.hasMore ?? null, nextCursor: s.nextCursor ?? null, period: s.period ?? null, text };
}

/** Every record of a list for `args`, walking its cursor with `limit`; the pages as seen. */
async function walk(call: (args: Record<string, unknown>) => Promise<Answer>, args: Record<string, unknown>, limit: number): Promise<{ items: any[]; pages: Answer[]; error?: string }> {
  const items: any[] = [];
  const pages: Answer[] = [];
  let cursor: string | null = null;
  do {
    const answer = await call({ ...args, limit, ...(cursor ? { cursor } : {}) });
    if (answer.status !== 200 || !answer.items) return { items, pages, error: `${answer.status} ${answer.code}: ${answer.text}` };
    pages.push(answer);
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (pages.length > 400) return { items, pages, error: 'more than 400 pages' };
  } while (cursor);
  return { items, pages };
}

function baseArgs(t: T, capability: Capability): Record<string, unknown> {
  return { ...sampleArgs(capability, t.context.samples), ...(LIST_FILTERS[capability.name] ?? {}) };
}

const dayFormatters = new Map<string, Intl.DateTimeFormat>();
/** The calendar day of a record's date field in the shop's time zone. */
function dayOf(value: string, kind: 'instant' | 'date', timeZone: string): string {
  if (kind === 'date') return value.slice(0, 10);
  let f = dayFormatters.get(timeZone);
  if (!f) dayFormatters.set(timeZone, (f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })));
  return f.format(new Date(value));
}

const addDays = (date: string, days: number) => daysBefore(date, -days);

/** Every problem of a test, reported together at its end (ava shows only the first failed assertion). */
function report(t: T, problems: string[]): void {
  t.deepEqual(problems, [], problems.slice(0, 40).join('\n'));
}

// --- 0: coverage ---------------------------------------------------------------------------------------------------

test('Every list with a period has its date field here, every summary with a period its additive figures', (t) => {
  t.deepEqual(periodLists.map((c) => c.name).filter((name) => !DATE_FIELD[name]), [], 'add the list with its documented date field to DATE_FIELD');
  t.deepEqual(periodSummaries.map((c) => c.name).filter((name) => !ADDITIVE[name]), [], 'add the summary with its additive figures to ADDITIVE');
  t.true(periodLists.length >= 12 && periodSummaries.length >= 19 && pagedLists.length >= 19, `${periodLists.length} ${periodSummaries.length} ${pagedLists.length}`);
});

// --- 1: narrowing --------------------------------------------------------------------------------------------------

/** Rows of the wide period W per list, read once (W: 60 days ending today, or the list's own end). */
const wideRows = new Map<string, Promise<{ period: { from: string; to: string }; items: any[] }>>();
function wideOf(t: T, capability: Capability): Promise<{ period: { from: string; to: string }; items: any[] }> {
  let rows = wideRows.get(capability.name);
  if (!rows) {
    const to = t.context.wideEnd[capability.name] ?? t.context.today;
    const period = { from: daysBefore(to, 59), to };
    rows = walk((a) => viaRest(t, capability, a), { ...baseArgs(t, capability), ...period }, 250).then((w) => {
      if (w.error) throw new Error(`${capability.name} wide walk: ${w.error}`);
      return { period, items: w.items };
    });
    wideRows.set(capability.name, rows);
  }
  return rows;
}

/** Picks N inside W (neither of W's end days) whose first and last days hold records of W. */
function narrowOf(days: string[], wide: { from: string; to: string }): { from: string; to: string } | null {
  const inner = [...new Set(days)].filter((d) => d > wide.from && d < wide.to).sort();
  if (inner.length === 0) return null;
  return { from: inner[Math.floor(inner.length / 3)], to: inner[Math.floor((2 * inner.length) / 3)] };
}

test('Narrowing: a list for a narrow period is exactly the wide period\'s rows dated in it, first and last day included', async (t) => {
  const problems: string[] = [];
  const tz = t.context.timeZone;
  await pool(4, periodLists.map((capability) => async () => {
    const date = DATE_FIELD[capability.name];
    if (!date) return;
    const wide = await wideOf(t, capability);
    const dayOfRow = (row: any) => dayOf(String(row[date.field]), date.kind, tz);
    const outside = wide.items.filter((row) => dayOfRow(row) < wide.period.from || dayOfRow(row) > wide.period.to);
    if (outside.length > 0) problems.push(`${capability.name}: ${outside.length} rows of W ${wide.period.from}..${wide.period.to} dated outside it, e.g. ${outside[0][date.field]}`);
    const computed = narrowOf(wide.items.map(dayOfRow), wide.period);
    if (!computed) {
      problems.push(`${capability.name}: no records inside W ${wide.period.from}..${wide.period.to} to narrow to`);
      return;
    }
    for (const narrow of [computed, ...(PLANTED_NARROW[capability.name] ? [PLANTED_NARROW[capability.name]] : [])]) {
      const expected = wide.items.filter((row) => dayOfRow(row) >= narrow.from && dayOfRow(row) <= narrow.to);
      t.log(`${capability.name}: W ${wide.period.from}..${wide.period.to} ${wide.items.length} rows, N ${narrow.from}..${narrow.to} ${expected.length}`);
      const got = await walk((a) => viaRest(t, capability, a), { ...baseArgs(t, capability), ...narrow }, 250);
      if (got.error) {
        problems.push(`${capability.name} N ${narrow.from}..${narrow.to}: ${got.error}`);
        continue;
      }
      if (JSON.stringify(got.pages[0].period) !== JSON.stringify({ ...narrow, timeZone: tz })) problems.push(`${capability.name}: meta.period ${JSON.stringify(got.pages[0].period)} for ${narrow.from}..${narrow.to}`);
      if (JSON.stringify(got.items) !== JSON.stringify(expected)) {
        problems.push(`${capability.name} N ${narrow.from}..${narrow.to}: ${got.items.length} rows, W's rows dated in N ${expected.length}`);
      }
      for (const day of [narrow.from, narrow.to]) {
        if (!got.items.some((row) => dayOfRow(row) === day)) problems.push(`${capability.name}: day ${day} of N ${narrow.from}..${narrow.to} has rows in W but none in N`);
      }
    }
  }));
  report(t, problems);
});

// --- 2: additivity, summaries against lists, previous period --------------------------------------------------------

/** A figure's value as an integer: money in cents, decimal strings scaled by 1000, numbers as they are. */
function scalar(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && 'amount' in (value as object)) return Math.round(Number((value as { amount: string }).amount) * 100);
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  throw new Error(`not a figure: ${JSON.stringify(value)}`);
}

const at = (object: any, path: string): any => path.split('.').reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), object);

/** The values of one figure path: a single value under '', or one per key of a keyed array. */
function figure(data: any, path: string): Map<string, number> {
  const keyed = /^(.*?)\[([^\]]+)\](?:\.(.*))?$/.exec(path);
  if (!keyed) {
    const value = at(data, path);
    if (value === undefined) throw new Error(`no figure ${path} in ${JSON.stringify(data).slice(0, 200)}`);
    return new Map([['', scalar(value)]]);
  }
  const [, listPath, keyFields, field] = keyed;
  const list = at(data, listPath);
  if (!Array.isArray(list)) throw new Error(`no list ${listPath} in ${JSON.stringify(data).slice(0, 200)}`);
  return new Map(list.map((item: any) => [keyFields.split(',').map((k) => String(at(item, k))).join('/'), scalar(field ? at(item, field) : item)]));
}

test('Additivity: every additive figure over A..C is its value over A..B plus B+1..C', async (t) => {
  const problems: string[] = [];
  const c = t.context.today;
  const a = daysBefore(c, 59);
  const b = daysBefore(c, 25);
  await pool(4, periodSummaries.map((capability) => async () => {
    const paths = ADDITIVE[capability.name];
    if (!paths) return;
    const args = baseArgs(t, capability);
    const [whole, first, second] = await Promise.all([[a, c], [a, b], [addDays(b, 1), c]].map(([from, to]) => viaRest(t, capability, { ...args, from, to })));
    for (const [label, answer] of [['A..C', whole], ['A..B', first], ['B+1..C', second]] as const) {
      if (answer.status !== 200) problems.push(`${capability.name} ${label}: ${answer.status} ${answer.code} ${answer.text}`);
    }
    if ([whole, first, second].some((x) => x.status !== 200)) return;
    let nonZero = 0;
    for (const path of paths) {
      try {
        const [w, f, s] = [whole, first, second].map((x) => figure(x.data, path));
        for (const key of new Set([...w.keys(), ...f.keys(), ...s.keys()])) {
          const sum = (f.get(key) ?? 0) + (s.get(key) ?? 0);
          if ((w.get(key) ?? 0) !== sum) problems.push(`${capability.name} ${path}${key ? ` [${key}]` : ''}: A..C ${w.get(key) ?? 0} ≠ ${f.get(key) ?? 0} + ${s.get(key) ?? 0}`);
          if ((w.get(key) ?? 0) !== 0) nonZero++;
        }
      } catch (error) {
        problems.push(`${capability.name}: ${(error as Error).message}`);
      }
    }
    // A relation over zeros proves nothing: the demo data must give the capability figures in both parts.
    if (nonZero === 0) problems.push(`${capability.name}: every additive figure is 0 over ${a}..${c}`);
  }));
  // affiliate.statistics: its daily timeline over A..C is the two parts' timelines one after the other.
  const stats = capabilities.find((x) => x.name === 'affiliate.statistics')!;
  const [whole, first, second] = await Promise.all([[a, c], [a, b], [addDays(b, 1), c]].map(([from, to]) => viaRest(t, stats, { ...baseArgs(t, stats), from, to })));
  t.is(whole.data.timeline.length, 60);
  t.deepEqual(whole.data.timeline, [...first.data.timeline, ...second.data.timeline]);
  report(t, problems);
});

test('A summary counts the rows its list dates in the period (the same date column), over several periods', async (t) => {
  const problems: string[] = [];
  const tz = t.context.timeZone;
  await pool(3, SUMMARY_VS_LIST.map((relation) => async () => {
    const summary = capabilities.find((c) => c.name === relation.summary)!;
    const list = capabilities.find((c) => c.name === relation.list)!;
    const wide = await wideOf(t, list);
    const days = [...new Set(wide.items.map((row) => dayOf(String(row[relation.listField]), 'instant', tz)))].filter((d) => d > wide.period.from).sort();
    // Periods inside W: one day, a week, from a third of W to its end (today), and the planted conversation's first
    // day and its last three (the start and the last activity fall in different ones).
    const periods = [
      { from: '2026-11-01', to: '2026-11-01' },
      { from: '2026-11-02', to: '2026-11-04' },
      { from: days[Math.floor(days.length / 2)], to: days[Math.floor(days.length / 2)] },
      { from: days[Math.floor(days.length / 4)], to: addDays(days[Math.floor(days.length / 4)], 6) },
      { from: days[Math.floor(days.length / 3)], to: wide.period.to },
    ];
    for (const period of periods) {
      const answer = await viaRest(t, summary, { ...baseArgs(t, summary), ...period });
      if (answer.status !== 200) {
        problems.push(`${relation.summary} ${period.from}..${period.to}: ${answer.status} ${answer.code}`);
        continue;
      }
      const rows = wide.items.filter((row) => {
        const day = dayOf(String(row[relation.listField]), 'instant', tz);
        return day >= period.from && day <= period.to;
      }).length;
      if (relation.figure(answer.data) !== rows) problems.push(`${relation.summary} ${period.from}..${period.to}: ${relation.figure(answer.data)}, its list has ${rows} rows by ${relation.listField} (${relation.why})`);
    }
  }));
  report(t, problems);
});

test('previous_period is the capability called for the preceding period of the same length, ending the day before `from`', async (t) => {
  const problems: string[] = [];
  const today = t.context.today;
  // 30 days ending yesterday, and 7 days across a month's end: the previous period ends the day before `from`.
  const periods = [{ from: daysBefore(today, 30), to: daysBefore(today, 1) }, { from: '2026-10-28', to: '2026-11-03' }];
  await pool(4, Object.entries(PREVIOUS_PERIOD).flatMap(([name, rule]) => periods.map((period) => async () => {
    const capability = capabilities.find((c) => c.name === name)!;
    const length = Math.round((Date.parse(period.to) - Date.parse(period.from)) / 86_400_000) + 1;
    const previous = { from: daysBefore(period.from, length), to: daysBefore(period.from, 1) };
    const [current, direct] = await Promise.all([period, previous].map((p) => viaRest(t, capability, { ...baseArgs(t, capability), ...rule.args, ...p })));
    if (current.status !== 200 || direct.status !== 200) {
      problems.push(`${name}: ${current.status} ${current.code} / ${direct.status} ${direct.code}`);
      return;
    }
    const reported = rule.previous(current.data);
    const called = rule.current(direct.data);
    if (reported.from !== previous.from || reported.to !== previous.to) problems.push(`${name} ${period.from}..${period.to}: previous ${reported.from}..${reported.to}, expected ${previous.from}..${previous.to}`);
    if (JSON.stringify(reported) !== JSON.stringify(called)) problems.push(`${name} ${period.from}..${period.to}: previous ${JSON.stringify(reported)} ≠ called ${JSON.stringify(called)}`);
  })));
  report(t, problems);
});

/**
 * Averages are left out of additivity, but each is its period's sum over its count, rounded to the nearest cent (or
 * hundredth), never truncated: checked on the same answer, over six weeks, where about half the quotients round up.
 */
const AVERAGES: Record<string, Array<{ average: string; sum: string; count: string }>> = {
  'reports.financialSummary': [{ average: 'averageOrderValue', sum: 'revenueWithVat', count: 'orders' }],
  'analytics.overview': [{ average: 'averageOrderValue', sum: 'revenueWithVat', count: 'orders' }],
  'analytics.channels': [{ average: 'totals.averageOrderValue', sum: 'totals.revenueWithVat', count: 'totals.orders' }],
  'analytics.comparison': [{ average: 'current.averageOrderValue', sum: 'current.revenueWithVat', count: 'current.orders' }],
  'analytics.advertising': [{ average: 'averageOrderValue', sum: 'revenueWithVat', count: 'orders' }],
  'sales.orderPerformance': [{ average: 'totals.averageOrderValue', sum: 'totals.revenueWithVat', count: 'totals.orders' }],
  'chatbot.stats': [{ average: 'conversations.averageMessages', sum: 'conversations.messages', count: 'conversations.total' }],
};

/** round(sum / count) half away from zero, in the sum's unit (cents for money, hundredths for plain numbers). */
function roundedQuotient(sum: number, count: number): number {
  const magnitude = Math.floor((2 * Math.abs(sum) + count) / (2 * count));
  return sum < 0 ? -magnitude : magnitude;
}

test('An average is its period\'s sum over its count rounded to the nearest hundredth, over six weeks', async (t) => {
  const problems: string[] = [];
  const weeks = Array.from({ length: 6 }, (_, k) => ({ from: daysBefore(t.context.today, 7 * k + 6), to: daysBefore(t.context.today, 7 * k) }));
  let checked = 0;
  await pool(4, Object.entries(AVERAGES).flatMap(([name, rules]) => weeks.map((period) => async () => {
    const capability = capabilities.find((c) => c.name === name)!;
    const answer = await viaRest(t, capability, { ...baseArgs(t, capability), ...period });
    if (answer.status !== 200) {
      problems.push(`${name} ${period.from}..${period.to}: ${answer.status} ${answer.code}`);
      return;
    }
    for (const rule of rules) {
      const count = Number(at(answer.data, rule.count));
      const average = at(answer.data, rule.average);
      if (!count) continue;
      const sum = at(answer.data, rule.sum);
      // Money in cents; a plain count's average in hundredths.
      const expected = typeof sum === 'number' ? roundedQuotient(sum * 100, count) : roundedQuotient(scalar(sum), count);
      const got = typeof average === 'number' ? Math.round(average * 100) : scalar(average);
      checked++;
      if (got !== expected) problems.push(`${name} ${period.from}..${period.to}: ${rule.average} ${JSON.stringify(average)}, ${rule.sum}/${rule.count} rounds to ${expected / 100}`);
    }
  })));
  t.true(checked >= 35, `${checked} averages checked`);
  report(t, problems);
});

// --- 3: pagination -------------------------------------------------------------------------------------------------

/** Arguments giving each paged list between 3 and 40 records (a short period or filter picked from its data). */
async function pagingArgs(t: T, capability: Capability): Promise<Record<string, unknown>> {
  const filter = PAGING_FILTERS[capability.name] ?? {};
  const args = { ...baseArgs(t, capability), ...filter };
  const date = DATE_FIELD[capability.name];
  if (date) {
    const wide = await wideOf(t, capability);
    const days = wide.items.filter((row) => Object.entries(filter).every(([k, v]) => row[k] === v)).map((row) => dayOf(String(row[date.field]), date.kind, t.context.timeZone));
    const countIn = (f: string, to: string) => days.filter((d) => d >= f && d <= to).length;
    const sorted = [...new Set(days)].sort();
    // One day with 3 to 12 records if there is one; else a period grown back from the middle day until it holds 3.
    const day = sorted.find((d) => countIn(d, d) >= 3 && countIn(d, d) <= 12);
    if (day) return { ...args, from: day, to: day };
    const to = sorted[Math.floor(sorted.length / 2)];
    let from = to;
    while (countIn(from, to) < 3 && from > wide.period.from) from = daysBefore(from, 1);
    return { ...args, from, to };
  }
  if (capability.name === 'customers.list') {
    // Customers with an order on one day (purchase activity, SPEC rule 3).
    const orders = await wideOf(t, capabilities.find((c) => c.name === 'orders.list')!);
    const day = dayOf(orders.items[Math.floor(orders.items.length / 2)].createdAt, 'instant', t.context.timeZone);
    return { ...args, purchaseFrom: day, purchaseTo: day };
  }
  return args;
}

test('Pagination: walking every paged list by 1 and by a partial page gives one large page\'s records in order, over REST and MCP', async (t) => {
  const problems: string[] = [];
  const client = await connectModern(t.context.server, t.context.key);
  try {
    await pool(4, pagedLists.map((capability) => async () => {
      const args = await pagingArgs(t, capability);
      const sides: Array<[string, (a: Record<string, unknown>) => Promise<Answer>]> = [];
      if (isRestCapability(capability)) sides.push(['REST', (a) => viaRest(t, capability, a)]);
      if (capability.mcpTool) sides.push(['MCP', (a) => viaMcp(client, capability, a)]);
      for (const [side, call] of sides) {
        const all = await call({ ...args, limit: 250 });
        if (all.status !== 200 || !all.items) {
          problems.push(`${capability.name} ${side}: ${all.status} ${all.code} ${all.text}`);
          continue;
        }
        const n = all.items.length;
        if (all.hasMore !== false || all.nextCursor !== null) problems.push(`${capability.name} ${side}: one page of ${n} says hasMore ${all.hasMore}, nextCursor ${all.nextCursor}`);
        t.log(`${capability.name} ${side}: ${n} records`);
        if (n < 3 || n > 40) {
          problems.push(`${capability.name} ${side}: ${n} records for ${JSON.stringify(args)}; the walk needs 3..40`);
          continue;
        }
        const keys = new Set(all.items.map((item) => JSON.stringify(item)));
        if (keys.size !== n) problems.push(`${capability.name} ${side}: the one page repeats a record`);
        // limit 1: every page exactly full, the last one too; then a limit leaving a partial last page.
        const partial = [2, 3, 4, 5].find((l) => n % l !== 0 && Math.ceil(n / l) >= 2) ?? 2;
        for (const limit of [1, partial]) {
          const walked = await walk(call, args, limit);
          if (walked.error) {
            problems.push(`${capability.name} ${side} limit ${limit}: ${walked.error}`);
            continue;
          }
          if (JSON.stringify(walked.items) !== JSON.stringify(all.items)) {
            const seen = walked.items.map((item) => JSON.stringify(item));
            const repeated = seen.length - new Set(seen).size;
            const missing = [...keys].filter((k) => !seen.includes(k)).length;
            problems.push(`${capability.name} ${side} limit ${limit}: walked ${seen.length} records (${repeated} repeated, ${missing} missing) ≠ the one page's ${n}`);
          }
          if (walked.pages.length !== Math.ceil(n / limit)) problems.push(`${capability.name} ${side} limit ${limit}: ${walked.pages.length} pages for ${n} records`);
          walked.pages.forEach((page, i) => {
            const last = i === walked.pages.length - 1;
            if (page.hasMore !== !last || (page.nextCursor === null) !== last) problems.push(`${capability.name} ${side} limit ${limit} page ${i + 1}/${walked.pages.length}: hasMore ${page.hasMore}, nextCursor ${page.nextCursor === null ? 'null' : 'set'}`);
            if (!last && page.items!.length !== limit) problems.push(`${capability.name} ${side} limit ${limit} page ${i + 1}: ${page.items!.length} records`);
          });
        }
      }
    }));
  } finally {
    await client.close();
  }
  report(t, problems);
});

test('Summaries that page their rows: the rows add up to the totals, and pages give the same rows in order with the whole period\'s totals, over REST and MCP', async (t) => {
  const problems: string[] = [];
  const client = await connectModern(t.context.server, t.context.key);
  // One day with orders (the middle day of the orders' wide period): a few customers, orders and products.
  const orders = await wideOf(t, capabilities.find((c) => c.name === 'orders.list')!);
  const day = dayOf(orders.items[Math.floor(orders.items.length / 2)].createdAt, 'instant', t.context.timeZone);
  try {
    await pool(3, pagedSummaries.map((capability) => async () => {
      const rowsKey = SUMMARY_ROWS[capability.name];
      if (!rowsKey) return;
      const args = { ...baseArgs(t, capability), from: day, to: day };
      const sides: Array<[string, (a: Record<string, unknown>) => Promise<Answer>]> = [];
      const asList = (answer: Answer): Answer => ({ ...answer, items: answer.status === 200 ? answer.data?.[rowsKey] ?? null : null });
      sides.push(['REST', async (a) => asList(await viaRest(t, capability, a))]);
      if (capability.mcpTool) sides.push(['MCP', async (a) => asList(await viaMcp(client, capability, a))]);
      for (const [side, call] of sides) {
        const all = await call({ ...args, limit: 250 });
        if (all.status !== 200 || !all.items) {
          problems.push(`${capability.name} ${side}: ${all.status} ${all.code} ${all.text}`);
          continue;
        }
        const n = all.items.length;
        t.log(`${capability.name} ${side}: ${n} rows on ${day}`);
        if (all.hasMore !== false || all.nextCursor !== null) problems.push(`${capability.name} ${side}: one page of ${n} says hasMore ${all.hasMore}`);
        if (n < 3 || n > 40) {
          problems.push(`${capability.name} ${side}: ${n} rows on ${day}; the walk needs 3..40`);
          continue;
        }
        for (const { total, rows } of ROWS_TO_TOTALS[capability.name] ?? []) {
          const expected = [...figure(all.data.totals, total).values()].reduce((x, y) => x + y, 0);
          const summed = all.items.reduce((sum: number, row: any) => sum + scalar(rows(row)), 0);
          if (summed !== expected) problems.push(`${capability.name} ${side} ${day}: rows add up to ${summed} for totals.${total} ${expected}`);
        }
        const partial = [2, 3, 4, 5].find((l) => n % l !== 0) ?? 2;
        for (const limit of [1, partial]) {
          const walked = await walk(call, args, limit);
          if (walked.error) {
            problems.push(`${capability.name} ${side} limit ${limit}: ${walked.error}`);
            continue;
          }
          if (JSON.stringify(walked.items) !== JSON.stringify(all.items)) problems.push(`${capability.name} ${side} limit ${limit}: walked ${walked.items.length} rows ≠ the one page's ${n} (or another order)`);
          walked.pages.forEach((page, i) => {
            const last = i === walked.pages.length - 1;
            if (page.hasMore !== !last || (page.nextCursor === null) !== last) problems.push(`${capability.name} ${side} limit ${limit} page ${i + 1}/${walked.pages.length}: hasMore ${page.hasMore}`);
            if (JSON.stringify(page.data.totals) !== JSON.stringify(all.data.totals)) problems.push(`${capability.name} ${side} limit ${limit} page ${i + 1}: totals ${JSON.stringify(page.data.totals)} ≠ the whole period's`);
          });
        }
      }
    }));
  } finally {
    await client.close();
  }
  report(t, problems);
});

// --- 4: the longest period -------------------------------------------------------------------------------------------

test('366 days are accepted, 367 refused with PERIOD_TOO_LONG and a reversed period with PERIOD_REVERSED, over REST and MCP', async (t) => {
  const problems: string[] = [];
  const today = t.context.today;
  const client = await connectModern(t.context.server, t.context.key);
  try {
    // SPEC Limits: "longest period `from`-`to` | 366 days; longer is rejected"; "reversed period (`from` after `to`) | error".
    const cases: Array<[string, { from: string; to: string }, number, string | null]> = [
      ['366 days', { from: '2025-11-20', to: '2026-11-20' }, 200, null],
      ['367 days', { from: '2025-11-19', to: '2026-11-20' }, 400, 'PERIOD_TOO_LONG'],
      ['reversed', { from: today, to: daysBefore(today, 1) }, 400, 'PERIOD_REVERSED'],
    ];
    t.is(today, '2026-11-20');
    const tasks = periodCapabilities.flatMap((capability) => cases.flatMap(([label, period, status, code]) => {
      const sides: Array<[string, () => Promise<Answer>]> = [];
      const args = { ...baseArgs(t, capability), ...period };
      if (isRestCapability(capability)) sides.push(['REST', () => viaRest(t, capability, args)]);
      if (capability.mcpTool) sides.push(['MCP', () => viaMcp(client, capability, args)]);
      return sides.map(([side, call]) => async () => {
        let expectedStatus = status;
        let expectedCode = code;
        // analytics_advertising: "History reaches 6 months back: an earlier `from` is a 400" — 366 days reach further
        // (its own refusal, INVALID_PARAMETER on `from`); 367 days and a reversed period are refused as everywhere.
        if (capability.name === 'analytics.advertising' && label === '366 days') [expectedStatus, expectedCode] = [400, 'INVALID_PARAMETER'];
        const answer = await call();
        const statusOk = side === 'MCP' ? (expectedStatus === 200) === (answer.status === 200) : answer.status === expectedStatus;
        if (!statusOk || answer.code !== expectedCode) problems.push(`${capability.name} ${side} ${label}: ${answer.status} ${answer.code}, expected ${expectedStatus} ${expectedCode}: ${answer.text.slice(0, 200)}`);
        if (answer.status === 200 && JSON.stringify(answer.period) !== JSON.stringify({ ...period, timeZone: t.context.timeZone })) problems.push(`${capability.name} ${side} ${label}: period ${JSON.stringify(answer.period)}`);
      });
    }));
    await pool(4, tasks);
  } finally {
    await client.close();
  }
  report(t, problems);
});
