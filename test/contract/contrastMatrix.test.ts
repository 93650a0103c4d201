/**
 * The contrast matrix: every read figure or list that depends on a status-like column (an order's status, a
 * commission's state, a shipment's outcome, a delivery's status, a partner's state, a conversation's outcome) is
 * read over data where EVERY value of that column occurs at once, so the right rule and a wrong one (a status dropped
 * from an IN list, a filter removed, a count over every status) give different answers.
 *   0. Discovery by construction: the SQL conditions on status-like columns in the read modules (`src/queries`,
 *      `src/rollups`) are scanned from the source text; each must be named by an entry of `CONTRAST` or by
 *      `ELSEWHERE` (with the file that proves it), and each named condition must still be in the source.
 *   1. One test per entry: rows of every value are planted in a shop of its own (`cm`, a new shop of account demo,
 *      so the figures are exactly the planted rows) or, for account-wide figures, compared with the answer before the
 *      planting; the capability is called over REST and MCP and compared with an oracle written here from the SPEC's
 *      rule (literal values, never imported from the code under test).
 * The planted data also holds what the demo never has: a customer with cancelled orders beside kept ones, a
 * cancelled shipment with a delivery scan, deliveries in every status beside PENDING ones, a partner in each state.
 */
import type { ExecutionContext } from 'ava';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import crypto from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { capabilities } from '../../src/capabilities/registry.js';
import type { Capability } from '../../src/capabilities/types.js';
import { knexRunner, rebuildShopRollups } from '../../src/rollups/orders.js';
import { refreshShippingDays } from '../../src/rollups/shipping.js';
import { appTest, type AppContext } from '../helpers/app.js';
import { rowForInsert } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { pool } from '../helpers/pool.js';
import { ensureSampleWebhook } from '../helpers/webhooks.js';
import { api } from '../helpers/server.js';
import { shopOf } from '../helpers/shops.js';

/** The planted day (shop cm, Europe/Bratislava like sk) and the period of one day around it. */
const DAY = '2026-11-10';
const PERIOD = { from: DAY, to: DAY };
/** Local 10:00 + `hour` on DAY, as an instant (Bratislava is UTC+1 in November). */
const at = (hour: number, minute = 0) => new Date(Date.UTC(2026, 10, 10, 9 + hour, minute));

/** Customer pseudonyms of the planted orders: MIXED has an order in every status, CANCELLED_ONLY one cancelled order. */
const MIXED = 'c'.repeat(63) + '1';
const CANCELLED_ONLY = 'c'.repeat(63) + '2';

/**
 * The planted orders of shop cm, one per order status of the SPEC (New, Processing, Shipped, Delivered, Cancelled,
 * Returned), all of customer MIXED, an hour apart; then one cancelled order of CANCELLED_ONLY. Only a cancelled order
 * is left out of orders, revenue, averages and customers (SPEC: cancelled orders count as `cancelledOrders` only; a
 * returned order stays an order). The four first carry the partner's discount code and a conversion each.
 */
const ORDERS = [
  { code: 'CM-1', statusId: 1, statusName: 'New', withVat: '120.00', withoutVat: '100.00', customer: MIXED, hour: 0 },
  { code: 'CM-2', statusId: 2, statusName: 'Processing', withVat: '240.00', withoutVat: '200.00', customer: MIXED, hour: 1 },
  { code: 'CM-3', statusId: 3, statusName: 'Shipped', withVat: '360.00', withoutVat: '300.00', customer: MIXED, hour: 2 },
  { code: 'CM-4', statusId: 4, statusName: 'Delivered', withVat: '480.00', withoutVat: '400.00', customer: MIXED, hour: 3 },
  { code: 'CM-5', statusId: 5, statusName: 'Cancelled', withVat: '600.00', withoutVat: '500.00', customer: MIXED, hour: 4 },
  { code: 'CM-6', statusId: 6, statusName: 'Returned', withVat: '720.00', withoutVat: '600.00', customer: MIXED, hour: 5 },
  { code: 'CM-7', statusId: 5, statusName: 'Cancelled', withVat: '999.00', withoutVat: '832.50', customer: CANCELLED_ONLY, hour: 6 },
];

/** The conversions of the four first orders, one per commission state (order CM-n ↔ commission 12 × n). */
const CONVERSIONS = [
  { order: 'CM-1', state: 'pending', commission: '12.00' },
  { order: 'CM-2', state: 'approved', commission: '24.00' },
  { order: 'CM-3', state: 'paid', commission: '36.00' },
  { order: 'CM-4', state: 'rejected', commission: '48.00' },
];

/** One shipment per outcome; each handed over at 10:00 and, where a scan is planted, delivered `hours` later. */
const SHIPMENTS = [
  { order: 'CM-1', outcome: 'delivered', status: 'DELIVERED', deliveredAfterHours: 24 },
  { order: 'CM-2', outcome: 'returned', status: 'RETURNED', deliveredAfterHours: null },
  { order: 'CM-3', outcome: 'failed', status: 'FAILED', deliveredAfterHours: null },
  { order: 'CM-4', outcome: 'in_transit', status: 'IN_TRANSIT', deliveredAfterHours: null },
  // A cancelled shipment WITH a delivery scan: its time must not enter the delivery times.
  { order: 'CM-5', outcome: 'cancelled', status: 'CANCELLED', deliveredAfterHours: 2 },
];

/** One conversation per outcome and one not measured (null). */
const CONVERSATIONS = [
  { outcome: 'resolved', topic: 'cm-topic' },
  { outcome: 'unresolved', topic: 'cm-topic' },
  { outcome: 'bot_error', topic: 'cm-topic' },
  { outcome: 'unknown', topic: 'cm-topic' },
  { outcome: null, topic: 'cm-topic' },
];

/** Webhook deliveries of one new endpoint: every status, PENDING ones created after the others. */
const DELIVERIES = [
  { status: 'FAILED', createdAt: '2026-11-20T08:00:00.000Z' },
  { status: 'SENT', createdAt: '2026-11-20T08:01:00.000Z' },
  { status: 'SKIPPED', createdAt: '2026-11-20T08:02:00.000Z' },
  { status: 'FAILED', createdAt: '2026-11-20T08:03:00.000Z' },
  { status: 'PENDING', createdAt: '2026-11-20T09:00:00.000Z' },
  { status: 'PENDING', createdAt: '2026-11-20T09:30:00.000Z' },
  { status: 'PENDING', createdAt: '2026-11-20T10:00:00.000Z' },
];

/** New partners of account demo, one per partner state; `approved` is the one with the conversions. */
const PARTNER_STATES = ['approved', 'waiting', 'suspended', 'rejected'] as const;

interface Extra {
  cm: string;
  partnerId: string;
  campaignId: string;
  endpointId: string;
  /** Answers read before the planting (account-wide figures are compared as differences). */
  before: { summary: any; campaign: any };
  mcp: ModernClient;
}

/** `rowForInsert`, keeping arrays of plain values as arrays (text[] columns) rather than JSON. */
function own(row: Record<string, unknown> | undefined, omit: string[] = ['id']): Record<string, unknown> {
  if (!row) throw new Error('own: no row to copy');
  const out = rowForInsert(row, omit);
  for (const [k, v] of Object.entries(row)) if (!omit.includes(k) && Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object')) out[k] = v;
  return out;
}

const test = appTest<Extra>({}, async (context) => {
  // A failure here is reported by every test (a failed before hook leaves ava waiting for its 3-minute timeout).
  try {
    return await plant(context);
  } catch (error) {
    return { setupError: String((error as Error).stack ?? error) } as unknown as Extra;
  }
});

async function plant(context: AppContext): Promise<Extra> {
  const db = context.database.db;
  const sk = await shopOf(db, 'demo', 'sk');
  const skShop = await db('shops').where({ id: sk.id }).first();
  const [{ id: cm }] = await db('shops').insert({ ...own(skShop), code: 'cm', name: 'Contrast shop', base_url: 'https://cm.example.test' }).returning('id');
  const cmId = String(cm);
  const chatbotSettings = await db('chatbot_settings').where({ shop_id: sk.id }).first();
  if (chatbotSettings) await db('chatbot_settings').insert({ ...own(chatbotSettings, []), shop_id: cmId });
  const skCampaign = await db('affiliate_campaigns').where({ shop_id: sk.id }).orderBy([{ column: 'is_default', order: 'desc' }, 'id']).first();
  const [{ id: campaignId }] = await db('affiliate_campaigns').insert({
    ...own(skCampaign), shop_id: cmId, name: 'Contrast campaign', availability: 'all', enabled: true, is_default: true,
  }).returning('id');
  const portal = await db('affiliate_portals').where({ shop_id: sk.id }).first();
  if (portal) await db('affiliate_portals').insert({ ...own(portal, ['id', 'custom_domain']), shop_id: cmId, address: `cm-${portal.address ?? 'portal'}` }).catch(() => undefined);

  // Account-wide figures before the planting.
  const before = {
    summary: (await rest(context, 'affiliate.summary', { market: 'cm', ...PERIOD })).data,
    campaign: null as any,
  };

  const skOrder = await db('orders').where({ shop_id: sk.id }).orderBy('id').first();
  const orderIds = new Map<string, string>();
  for (const o of ORDERS) {
    const [{ id }] = await db('orders').insert({
      ...own(skOrder), shop_id: cmId, code: o.code, created_at: at(o.hour), updated_at: at(o.hour), status_changed_at: at(o.hour),
      status_id: o.statusId, status_name: o.statusName, currency: 'EUR', eur_rate: 1, total_with_vat: o.withVat, total_without_vat: o.withoutVat,
      total_vat: (Number(o.withVat) - Number(o.withoutVat)).toFixed(2), shipping_with_vat: 0, discount_with_vat: 0,
      customer_email_hash: o.customer, coupon_code: o.code === 'CM-7' ? null : 'CMCODE', variable_symbol: o.code, paid: false, paid_at: null,
    }).returning('id');
    orderIds.set(o.code, String(id));
    await db('order_tracking').insert({ shop_id: cmId, order_code: o.code, channel: 'cm-channel', source: 'cm-source', device: 'desktop', landing_page: '/', tracked_at: at(o.hour) });
  }

  const skPartner = await db('affiliate_partners').where({ account_id: skShop.account_id }).orderBy('id').first();
  const partnerIds: Record<string, string> = {};
  for (const state of PARTNER_STATES) {
    const [{ id }] = await db('affiliate_partners').insert({
      ...own(skPartner, ['id', 'partner_index', 'referred_by_partner_id']), handle: `cm-${state}`, state, state_reason: state === 'approved' || state === 'waiting' ? null : 'contrast',
      email: `cm-${state}@example.test`,
    }).returning('id');
    partnerIds[state] = String(id);
  }
  const partnerId = partnerIds.approved;
  await db('affiliate_discount_codes').insert({ shop_id: cmId, partner_id: partnerId, code: 'CMCODE', created_at: at(0) });
  const skConversion = await db('affiliate_conversions').where({ shop_id: sk.id }).whereNull('payout_id').orderBy('id').first();
  for (const c of CONVERSIONS) {
    const o = ORDERS.find((x) => x.code === c.order)!;
    await db('affiliate_conversions').insert({
      ...own(skConversion), shop_id: cmId, order_id: orderIds.get(c.order), order_code: c.order, partner_id: partnerId, campaign_id: campaignId,
      source: 'coupon', click_id: null, coupon_code: 'CMCODE', ordered_at: at(o.hour), currency: 'EUR', commission_base: o.withoutVat,
      order_total_with_vat: o.withVat, commission: c.commission, commission_state: c.state, order_status_id: o.statusId, order_status_name: o.statusName,
      approved_at: c.state === 'approved' || c.state === 'paid' ? at(o.hour, 30) : null, payout_id: null, credit_note_code: null,
      manual_decision: null, manual_reason: null, decided_by_person_id: null, decided_at: null, updated_at: at(o.hour),
    });
  }

  for (const s of SHIPMENTS) {
    const handedOver = at(0);
    const [{ id }] = await db('shipments').insert({
      shop_id: cmId, order_code: s.order, carrier_code: 'cm-carrier', tracking_number: `CMTRACK-${s.outcome}`, country: 'SK', status: s.status,
      outcome: s.outcome, created_at: at(0), updated_at: at(1), handed_over_at: handedOver,
      delivered_at: s.deliveredAfterHours === null ? null : new Date(handedOver.getTime() + s.deliveredAfterHours * 3_600_000),
    }).returning('id');
    if (s.deliveredAfterHours !== null) {
      await db('shipment_tracking_events').insert({
        shipment_id: id, occurred_at: new Date(handedOver.getTime() + s.deliveredAfterHours * 3_600_000), status: 'DELIVERED', description: 'Delivered', location: null, is_delivery: true,
      });
    }
  }

  const skConversation = await db('chatbot_conversations').where({ shop_id: sk.id }).orderBy('id').first();
  for (const [i, c] of CONVERSATIONS.entries()) {
    await db('chatbot_conversations').insert({
      ...own(skConversation), shop_id: cmId, session_id: crypto.randomUUID(),
      started_at: at(i), last_activity_at: at(i, 5), topic: c.topic, outcome: c.outcome, rating: null,
    });
  }

  const skEndpoint = await db('webhook_endpoints').where({ id: await ensureSampleWebhook(db) }).first();
  const [{ id: endpointId }] = await db('webhook_endpoints').insert({
    ...own(skEndpoint), name: 'Contrast endpoint', url: 'https://cm-hooks.example.test/in', state: 'enabled', paused_at: null, pause_reason: null, consecutive_failures: 0,
  }).returning('id');
  for (const d of DELIVERIES) {
    await db('webhook_deliveries').insert({
      endpoint_id: endpointId, account_id: skShop.account_id, event_id: crypto.randomUUID(), event_type: 'order.created', store: 'sk', body: '{}',
      status: d.status, attempts: d.status === 'PENDING' ? 0 : 1, created_at: new Date(d.createdAt),
      completed_at: d.status === 'PENDING' ? null : new Date(d.createdAt), next_attempt_at: d.status === 'PENDING' ? new Date(d.createdAt) : null,
    });
  }

  // The rollups as the sync keeps them: rebuilt from the raw rows by the service's own rollup code.
  await rebuildShopRollups(db, cmId);
  await db.transaction(async (trx) => refreshShippingDays(knexRunner(trx), cmId, null));
  const mcp = await connectModern(context.server, context.key);
  return { cm: cmId, partnerId, campaignId: String(campaignId), endpointId: String(endpointId), before, mcp };
}
test.after.always(async (t) => { await t.context.mcp?.close(); });
type T = ExecutionContext<AppContext & Extra>;

// --- calls ------------------------------------------------------------------------------------------------------

const byName = new Map(capabilities.map((c) => [c.name, c]));

function restPath(capability: Capability, args: Record<string, unknown>): string {
  const path = capability.path!;
  const filled = path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k, v]) => v !== undefined && !path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  return `${filled}?${query}`;
}

/** A capability over REST: `data` (a summary or a get) or `items` (a list, one page of 250). */
async function rest(context: AppContext, name: string, args: Record<string, unknown>): Promise<{ status: number; data: any; items: any[] | null; body: any }> {
  const capability = byName.get(name)!;
  const res = await api(context.server, restPath(capability, args), context.key);
  const body = res.body ?? {};
  if (res.status !== 200) throw new Error(`${name} ${JSON.stringify(args)}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return { status: res.status, data: Array.isArray(body.data) ? null : body.data, items: Array.isArray(body.data) ? body.data : null, body };
}

/** The same capability over MCP: `structuredContent.data` or `.items`. */
async function mcp(t: T, name: string, args: Record<string, unknown>): Promise<{ data: any; items: any[] | null }> {
  const capability = byName.get(name)!;
  const result = (await t.context.mcp.callTool({ name: capability.mcpTool!, arguments: args })) as { isError?: boolean; content?: Array<{ text?: string }>; structuredContent?: any };
  if (result.isError) throw new Error(`${name} over MCP: ${JSON.stringify(result.content).slice(0, 300)}`);
  return { data: result.structuredContent?.data ?? null, items: result.structuredContent?.items ?? null };
}

/** Reads a capability over REST and MCP (at most four calls at once) and returns the REST answer; MCP must agree. */
async function read(t: T, name: string, args: Record<string, unknown>, problems: string[]): Promise<any> {
  if (!byName.get(name)!.mcpTool) {
    const only = await rest(t.context, name, args);
    return only.items ?? only.data;
  }
  const [viaRest, viaMcp] = await pool(2, [() => rest(t.context, name, args), () => mcp(t, name, args)]);
  const restValue = viaRest.items ?? viaRest.data;
  const mcpValue = viaMcp.items ?? viaMcp.data;
  if (JSON.stringify(restValue) !== JSON.stringify(mcpValue)) problems.push(`${name}: REST and MCP differ: ${JSON.stringify(restValue).slice(0, 200)} / ${JSON.stringify(mcpValue).slice(0, 200)}`);
  return restValue;
}

/** Compares one figure with its oracle, collecting every difference of a test. */
function expect(problems: string[], what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function report(t: T, problems: string[]): void {
  t.deepEqual(problems, [], problems.slice(0, 40).join('\n'));
}

const eur = (amount: string) => ({ amount, currency: 'EUR' });

// --- discovery ----------------------------------------------------------------------------------------------------

/** A status-like column: `status`, `status_id`, `*_state`, `state`, `outcome`, `lifecycle`, `cancelled`, `is_*`, `enabled`. */
const COLUMN = String.raw`(?:\w+\.)?(?:\w*status\w*|\w*state|outcome|lifecycle|cancelled|is_\w+|enabled)`;
/** The shapes a condition on such a column takes in SQL text and in knex calls. */
const CONDITION_PATTERNS = [
  new RegExp(String.raw`${COLUMN}\s*(?:=|<>|!=|is distinct from|is not distinct from)\s*(?:'[^']*'|\$\{\s*[A-Z_]+\s*\}|\?)`, 'g'),
  new RegExp(String.raw`${COLUMN}\s+(?:not\s+)?in\s*\(\s*(?:'|\$\{)[^)]*\)`, 'gi'),
  new RegExp(String.raw`\.(?:where|whereNot|andWhere|orWhere)\(\s*'${COLUMN}'\s*,\s*(?:'[^']*'|[A-Z_]+)\s*\)`, 'g'),
  new RegExp(String.raw`\.(?:whereIn|whereNotIn)\(\s*'${COLUMN}'\s*,\s*\[[^\]]*\]\s*\)`, 'g'),
  new RegExp(String.raw`andOnVal\(\s*'${COLUMN}'\s*,\s*'[^']*'\s*,\s*'[^']*'\s*\)`, 'g'),
  new RegExp(String.raw`'?${COLUMN}'?\s*:\s*(?:'[^']*'|true|false)(?=\s*[,}])`, 'g'),
  // Counts kept beside each other (kept orders = all orders − cancelled ones) and a derived boolean.
  /orders_count\s*-\s*(?:\w+\.)?cancelled_count|orders_count\s*>\s*cancelled_count|\bnot\s+(?:o\.)?cancelled\b|filter \(where cancelled\)/g,
];
/** The read modules scanned: every read capability's queries and the rollups they read. */
const SCANNED = ['src/queries', 'src/rollups'];

/** Every status condition of the scanned source, as `queries/file.ts: <condition>` (comments left out). */
function conditionsInSource(): Set<string> {
  const found = new Set<string>();
  for (const dir of SCANNED) {
    for (const file of readdirSync(join(process.cwd(), dir)).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(process.cwd(), dir, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/ .*$/gm, '').replace(/-- .*$/gm, '');
      for (const pattern of CONDITION_PATTERNS) {
        for (const m of text.matchAll(pattern)) found.add(`${dir.replace(/^src\//, '')}/${file}: ${m[0].replace(/\s+/g, ' ')}`);
      }
    }
  }
  return found;
}

/**
 * Conditions on status-like columns proved elsewhere or that select no figure, each with its reason. A filter
 * parameter's value (`where('p.state', state)`) has no literal and is not matched; the filter matrix drives those.
 */
const ELSEWHERE: Record<string, string> = {
  "queries/affiliate.ts: r.state = 'pending'": 'an ORDER BY term (pending code requests first), not a selection',
  "queries/affiliateContent.ts: 'd.enabled': true": 'programme documents: the state matrix (document versions) and affiliateContent.test.ts',
  "queries/affiliateContent.ts: 'v.status': 'published'": 'the published version of a document: state matrix (draft, published, superseded × publish) and affiliateContent.test.ts',
  "queries/affiliateContent.ts: andOnVal('v.status', '=', 'published')": 'the same, for the signatures lacking (status=lacking): affiliateContent.test.ts',
  "queries/affiliateContent.ts: .whereIn('p.state', ['approved', 'waiting'])": 'partners who still have to sign (status=lacking): affiliateContent.test.ts',
  "queries/documents.ts: status: 'not_found'": 'a result tag of the PDF read, not a condition',
  "queries/documents.ts: status: 'ok'": 'a result tag of the PDF read, not a condition',
  "queries/documents.ts: status: 'unavailable'": 'a result tag of the PDF read, not a condition',
  "queries/searchConsole.ts: data_state = 'final'": 'the last final day of Search Console rows: searchConsole.test.ts (final and fresh rows)',
};

// --- the table ----------------------------------------------------------------------------------------------------

interface Entry {
  /** The rule, from the SPEC or the capability's documented field. */
  rule: string;
  /** The source conditions (as `conditionsInSource` names them) this entry proves. */
  conditions: string[];
  /** The capabilities read. */
  capabilities: string[];
  check: (t: T, problems: string[]) => Promise<void>;
}

const m = { market: 'cm' };

const CONTRAST: Record<string, Entry> = {
  'order status → rollups (summary, heat map)': {
    rule: 'SPEC N3: a cancelled order counts as cancelled, never in orders, revenue, VAT or the average order; every other status (New, Processing, Shipped, Delivered, Returned) is an order',
    conditions: [
      'rollups/orders.ts: o.status_id = ${CANCELLED_STATUS_ID}', 'rollups/orders.ts: not o.cancelled', 'rollups/orders.ts: not cancelled',
      'rollups/orders.ts: filter (where cancelled)',
    ],
    capabilities: ['reports.financialSummary', 'analytics.orderHeatmap'],
    async check(t, problems) {
      const summary = await read(t, 'reports.financialSummary', { ...m, ...PERIOD }, problems);
      // Kept: CM-1, 2, 3, 4, 6 (120 + 240 + 360 + 480 + 720 = 1920.00; without VAT 1600.00); cancelled: CM-5, CM-7.
      expect(problems, 'financialSummary.orders', summary.orders, 5);
      expect(problems, 'financialSummary.cancelledOrders', summary.cancelledOrders, 2);
      expect(problems, 'financialSummary.revenueWithVat', summary.revenueWithVat, eur('1920.00'));
      expect(problems, 'financialSummary.revenueWithoutVat', summary.revenueWithoutVat, eur('1600.00'));
      expect(problems, 'financialSummary.vat', summary.vat, eur('320.00'));
      expect(problems, 'financialSummary.averageOrderValue', summary.averageOrderValue, eur('384.00'));
      const heatmap = await read(t, 'analytics.orderHeatmap', { ...m, ...PERIOD }, problems);
      // The planted orders are at 10:00..16:00 local on a Tuesday; 14:00 (CM-5) and 16:00 (CM-7) are cancelled.
      expect(problems, 'orderHeatmap: the hours with orders', Object.keys(heatmapCells(heatmap)).sort(), ['10', '11', '12', '13', '15']);
    },
  },
  'order status → customers (directory, customer, performance)': {
    rule: 'A customer\'s revenue and average order are over non-cancelled orders (`revenue / non-cancelled orders`); `ordersCount` is every status, `cancelledOrdersCount` the cancelled of them; customers performance counts buyers with a non-cancelled order only',
    conditions: [
      'queries/customers.ts: orders_count - row.cancelled_count', 'queries/customers.ts: orders_count - f.cancelled_count',
      'queries/customerPerformance.ts: orders_count - cancelled_count', 'queries/customerPerformance.ts: orders_count - cr.cancelled_count',
      'queries/customerPerformance.ts: orders_count > cancelled_count',
      'queries/customerPerformance.ts: o.status_id <> ?', 'rollups/orders.ts: orders_count > cancelled_count',
    ],
    capabilities: ['customers.get', 'customers.list', 'customers.performance'],
    async check(t, problems) {
      const mixed = await read(t, 'customers.get', { ...m, customerKey: MIXED }, problems);
      expect(problems, 'customers.get MIXED ordersCount', mixed.ordersCount, 6);
      expect(problems, 'customers.get MIXED cancelledOrdersCount', mixed.cancelledOrdersCount, 1);
      expect(problems, 'customers.get MIXED revenue', mixed.revenue, [eur('1920.00')]);
      expect(problems, 'customers.get MIXED averageOrder (1920.00 / 5)', mixed.averageOrder, [eur('384.00')]);
      expect(problems, 'customers.get MIXED lifetimeAverageOrder', mixed.lifetimeAverageOrder, [eur('384.00')]);
      const list = await read(t, 'customers.list', { ...m, limit: 250 }, problems);
      const row = (key: string) => list.find((c: any) => c.customerKey === key);
      expect(problems, 'customers.list MIXED averageOrder', row(MIXED)?.averageOrder, [eur('384.00')]);
      expect(problems, 'customers.list MIXED revenue', row(MIXED)?.revenue, [eur('1920.00')]);
      const period = await read(t, 'customers.list', { ...m, purchaseFrom: DAY, purchaseTo: DAY, limit: 250 }, problems);
      expect(problems, 'customers.list with a purchase period: MIXED periodRevenueByCurrency', period.find((c: any) => c.customerKey === MIXED)?.periodRevenueByCurrency, [eur('1920.00')]);
      for (const args of [{ ...m, ...PERIOD }, { ...m, from: '2026-01-01', to: '2026-11-20' }]) {
        const performance = await read(t, 'customers.performance', args, problems);
        expect(problems, `customers.performance ${args.from}: customers`, performanceKeys(performance), [MIXED]);
        expect(problems, `customers.performance ${args.from}: MIXED`, performanceRow(performance, MIXED), { orders: 5, revenue: eur('1920.00') });
      }
    },
  },
  'order status → sales order performance and channels': {
    rule: 'The order performance lists and totals the period\'s orders that are not cancelled; a channel\'s orders and revenue leave cancelled orders out',
    conditions: ["queries/sales.ts: .whereNot('o.status_id', CANCELLED_STATUS_ID)", 'rollups/channels.ts: o.status_id <> ${CANCELLED_STATUS_ID}'],
    capabilities: ['sales.orderPerformance', 'analytics.channels'],
    async check(t, problems) {
      const orders = await read(t, 'sales.orderPerformance', { ...m, ...PERIOD, limit: 250 }, problems);
      expect(problems, 'sales.orderPerformance orders', (orders.orders ?? orders).map((o: any) => o.orderCode), ['CM-6', 'CM-4', 'CM-3', 'CM-2', 'CM-1']);
      const channels = await read(t, 'analytics.channels', { ...m, ...PERIOD }, problems);
      expect(problems, 'sales.orderPerformance totals', [orders.totals?.orders, orders.totals?.revenueWithVat], [5, eur('1920.00')]);
      expect(problems, 'analytics.channels cm-channel', channelFigures(channels), { orders: 5, revenue: '1920.00' });
    },
  },
  'commission state → affiliate figures': {
    rule: 'Revenue is the whole orders of the conversions not rejected; commissions are reported per state (pending, approved, paid, rejected); a commission total (campaign, timeline, sources, ranking) leaves rejected ones out',
    conditions: [
      "queries/affiliate.ts: cv.commission_state <> 'rejected'", "queries/affiliate.ts: cv.commission_state = 'pending'", "queries/affiliate.ts: cv.commission_state = 'approved'",
      "queries/affiliate.ts: cv.commission_state = 'paid'", "queries/affiliate.ts: cv.commission_state = 'rejected'", "queries/affiliate.ts: commission_state <> 'rejected'",
      "queries/affiliate.ts: commission_state = 'pending'", "queries/affiliate.ts: commission_state = 'approved'", "queries/affiliate.ts: commission_state = 'paid'",
      "queries/affiliate.ts: commission_state = 'rejected'", "queries/affiliate.ts: v.commission_state <> 'rejected'",
    ],
    capabilities: ['affiliate.summary', 'affiliate.statistics', 'affiliate.partnersGet', 'affiliate.partnersList', 'affiliate.campaignsGet'],
    async check(t, problems) {
      const commissions = { pending: eur('12.00'), approved: eur('24.00'), paid: eur('36.00'), rejected: eur('48.00') };
      const summary = await read(t, 'affiliate.summary', { ...m, ...PERIOD }, problems);
      expect(problems, 'affiliate.summary conversions.byState', summary.conversions?.byState, { pending: 1, approved: 1, paid: 1, rejected: 1 });
      expect(problems, 'affiliate.summary revenueWithVat (120 + 240 + 360)', summary.revenueWithVat, eur('720.00'));
      expect(problems, 'affiliate.summary commissions', summary.commissions, commissions);
      const statistics = await read(t, 'affiliate.statistics', { ...m, ...PERIOD }, problems);
      expect(problems, 'affiliate.statistics timeline', statistics.timeline, [{ date: DAY, clicks: 0, conversions: 4, commission: eur('72.00') }]);
      expect(problems, 'affiliate.statistics coupon source', statistics.sources?.find((s: any) => s.source === 'coupon'),
        { source: 'coupon', conversions: 4, commission: eur('72.00'), revenueWithVat: eur('720.00') });
      expect(problems, 'affiliate.statistics ranking', statistics.partnerRanking?.map((r: any) => [r.partnerId, r.conversions, r.commission, r.revenueWithVat]),
        [[t.context.partnerId, 4, eur('72.00'), eur('720.00')]]);
      const partner = await read(t, 'affiliate.partnersGet', { ...m, partnerId: t.context.partnerId }, problems);
      expect(problems, 'affiliate.partnersGet performance', partner.performance, { clicks: 0, conversions: 4, revenueWithVat: eur('720.00'), commissions });
      const partners = await read(t, 'affiliate.partnersList', { ...m, state: 'approved', limit: 250 }, problems);
      expect(problems, 'affiliate.partnersList performance', partners.find((p: any) => p.partnerId === t.context.partnerId)?.performance,
        { clicks: 0, conversions: 4, revenueWithVat: eur('720.00'), commissions });
      const campaign = await read(t, 'affiliate.campaignsGet', { ...m, campaignId: t.context.campaignId }, problems);
      expect(problems, 'affiliate.campaignsGet counts.conversions, commission', [campaign.counts?.conversions, campaign.counts?.commission], [4, eur('72.00')]);
    },
  },
  'order status → discount code revenue': {
    rule: 'A discount code\'s revenue is the whole orders that used it, cancelled and returned orders excluded (the documented field); its orders count every status',
    conditions: ['queries/affiliate.ts: o.status_id not in (${ORDER_STATUSES.cancelled.id}, ${ORDER_STATUSES.returned.id})'],
    capabilities: ['affiliate.discountCodes'],
    async check(t, problems) {
      const codes = await read(t, 'affiliate.discountCodes', { ...m }, problems);
      // CM-1..CM-6 used the code; CM-5 is cancelled and CM-6 returned: 120 + 240 + 360 + 480 (CM-4's commission was rejected, its order stands).
      expect(problems, 'affiliate.discountCodes CMCODE usage', codes.find((c: any) => c.code === 'CMCODE')?.usage, { orders: 6, conversions: 4, revenueWithVat: eur('1200.00') });
    },
  },
  'partner state → partner counts': {
    rule: 'The summary counts partners per state (approved, waiting, suspended, rejected); a campaign open to all counts the approved partners only',
    conditions: ["queries/affiliate.ts: 'p.state': 'approved'"],
    capabilities: ['affiliate.summary', 'affiliate.campaignsGet'],
    async check(t, problems) {
      const before = t.context.before.summary.partners;
      const after = (await read(t, 'affiliate.summary', { ...m, ...PERIOD }, problems)).partners;
      // One new partner in each state, one of them active in the period.
      expect(problems, 'affiliate.summary partners, after − before', {
        total: after.total - before.total, approved: after.approved - before.approved, waiting: after.waiting - before.waiting,
        suspended: after.suspended - before.suspended, rejected: after.rejected - before.rejected, activeInPeriod: after.activeInPeriod - before.activeInPeriod,
      }, { total: 4, approved: 1, waiting: 1, suspended: 1, rejected: 1, activeInPeriod: 1 });
      const campaign = await read(t, 'affiliate.campaignsGet', { ...m, campaignId: t.context.campaignId }, problems);
      expect(problems, 'affiliate.campaignsGet counts.partners (availability all = the approved partners)', campaign.counts?.partners, after.approved);
    },
  },
  'shipment outcome → shipping stats': {
    rule: 'SPEC shipping stats: cancelled shipments are counted only as `cancelled` (not in `total`, not in delivery times); the delivery rate is delivered / (delivered + returned + failed), in-transit ones left out',
    conditions: [
      "rollups/shipping.ts: s.outcome <> 'cancelled'", "rollups/shipping.ts: outcome <> 'cancelled'", "rollups/shipping.ts: outcome = 'delivered'",
      "rollups/shipping.ts: outcome = 'returned'", "rollups/shipping.ts: outcome = 'failed'", "rollups/shipping.ts: outcome = 'in_transit'", "rollups/shipping.ts: outcome = 'cancelled'",
    ],
    capabilities: ['shipping.stats'],
    async check(t, problems) {
      const stats = await read(t, 'shipping.stats', { ...m, ...PERIOD }, problems);
      expect(problems, 'shipping.stats shipments', stats.shipments, { total: 4, delivered: 1, returned: 1, failed: 1, inTransit: 1, cancelled: 1 });
      expect(problems, 'shipping.stats deliveryRate (1 / 3)', stats.deliveryRate, 0.3333);
      expect(problems, 'shipping.stats delivery (the cancelled shipment\'s 2 h left out)', stats.delivery, { measured: 1, medianHours: 24, p90Hours: 24 });
      expect(problems, 'shipping.stats carrier cm-carrier', stats.carriers?.map((c: any) => [c.carrierCode, c.shipments, c.inTransit, c.deliveryRate]), [['cm-carrier', 4, 1, 0.3333]]);
    },
  },
  'delivery status → endpoint queue': {
    rule: 'An endpoint\'s pending deliveries are those waiting for an attempt or a retry (status PENDING), not SENT, FAILED or SKIPPED ones; the oldest pending is the first PENDING one',
    conditions: ["queries/webhooks.ts: status: 'PENDING'"],
    capabilities: ['webhooks.endpoint', 'webhooks.endpoints'],
    async check(t, problems) {
      const endpoint = await read(t, 'webhooks.endpoint', { endpointId: t.context.endpointId }, problems);
      expect(problems, 'webhooks.endpoint queue', [endpoint.queue?.pendingDeliveries, endpoint.queue?.oldestPendingAt], [3, '2026-11-20T09:00:00.000Z']);
      const endpoints = await read(t, 'webhooks.endpoints', {}, problems);
      const mine = endpoints.find((e: any) => e.endpointId === t.context.endpointId || e.id === t.context.endpointId);
      expect(problems, 'webhooks.endpoints queue', [mine?.queue?.pendingDeliveries, mine?.queue?.oldestPendingAt], [3, '2026-11-20T09:00:00.000Z']);
    },
  },
  'conversation outcome → chatbot figures': {
    rule: 'Chatbot outcomes are counted per outcome (resolved, unresolved, bot error, unknown) with unmeasured conversations apart; "not resolved" is unresolved + bot error; the measured count leaves unmeasured ones out',
    conditions: [
      "queries/chatbot.ts: outcome = 'resolved'", "queries/chatbot.ts: outcome = 'unresolved'", "queries/chatbot.ts: outcome = 'bot_error'", "queries/chatbot.ts: outcome = 'unknown'",
      "queries/chatbot.ts: outcome in ('unresolved', 'bot_error')", "queries/chatbot.ts: c.outcome = 'unresolved'", "queries/chatbot.ts: c.outcome = 'bot_error'",
      "queries/chatbot.ts: c.outcome in ('unresolved', 'bot_error')",
    ],
    capabilities: ['chatbot.stats', 'chatbot.outcomes', 'chatbot.topics'],
    async check(t, problems) {
      const stats = await read(t, 'chatbot.stats', { ...m, ...PERIOD }, problems);
      expect(problems, 'chatbot.stats outcomes', stats.outcomes, { resolved: 1, unresolved: 1, botError: 1, unknown: 1, unmeasured: 1 });
      const outcomes = await read(t, 'chatbot.outcomes', { ...m, ...PERIOD }, problems);
      expect(problems, 'chatbot.outcomes counts', [outcomes.conversations, outcomes.measured, outcomes.unmeasured, outcomes.knownOutcome, outcomes.unknownOutcome, outcomes.resolved, outcomes.unresolved, outcomes.botError],
        [5, 4, 1, 3, 1, 1, 1, 1]);
      expect(problems, 'chatbot.outcomes resolution rate (resolved / known outcomes)', [outcomes.resolutionRate?.numerator, outcomes.resolutionRate?.denominator, outcomes.resolutionRate?.value], [1, 3, 0.3333]);
      const topics = await read(t, 'chatbot.topics', { ...m, ...PERIOD }, problems);
      expect(problems, 'chatbot.topics cm-topic', topics.topics?.map((x: any) => [x.topic, x.conversations, x.resolved, x.notResolved]), [['cm-topic', 5, 1, 2]]);
      // Every planted conversation lacks sourced answers, so all five are gap candidates; the outcome counts still split.
      expect(problems, 'chatbot.topics knowledge gap', topics.knowledgeGapCandidates?.map((x: any) => [x.topic, x.unresolved, x.botError]), [['cm-topic', 1, 1]]);
    },
  },
};

/** The customers of a customers_performance answer. */
function performanceRows(data: any): any[] {
  return Array.isArray(data) ? data : (data?.customers ?? data?.items ?? data?.rows ?? []);
}
function performanceKeys(data: any): string[] {
  return performanceRows(data).map((r: any) => r.customerKey).sort();
}
function performanceRow(data: any, key: string): unknown {
  const r = performanceRows(data).find((x: any) => x.customerKey === key);
  return r ? { orders: r.orders ?? r.ordersCount, revenue: Array.isArray(r.revenue) ? r.revenue[0] : r.revenue } : r;
}

/** Orders and revenue of the planted channel in an analytics_channels answer. */
function channelFigures(data: any): unknown {
  const rows: any[] = Array.isArray(data) ? data : (data?.channels ?? []);
  const row = rows.find((r: any) => r.channel === 'cm-channel' || r.source === 'cm-source');
  if (!row) return `no cm-channel in ${JSON.stringify(data).slice(0, 400)}`;
  return { orders: row.orders, revenue: row.revenueWithVat?.amount ?? row.revenue?.amount ?? row.revenue };
}

/** The non-empty hours of a heat map answer, hour → orders. */
function heatmapCells(data: any): Record<string, number> {
  const out: Record<string, number> = {};
  const visit = (x: any) => {
    if (Array.isArray(x)) { x.forEach(visit); return; }
    if (x && typeof x === 'object') {
      if (typeof x.hour === 'number' && typeof x.orders === 'number') { if (x.orders > 0) out[String(x.hour)] = (out[String(x.hour)] ?? 0) + x.orders; return; }
      Object.values(x).forEach(visit);
    }
  };
  visit(data);
  return out;
}

// --- tests --------------------------------------------------------------------------------------------------------

test('Every status condition of the read modules is proved by an entry or placed elsewhere with its reason', (t) => {
  const found = conditionsInSource();
  const named = new Set([...Object.values(CONTRAST).flatMap((e) => e.conditions), ...Object.keys(ELSEWHERE)]);
  t.deepEqual([...found].filter((c) => !named.has(c)).sort(), [], 'a status condition no entry proves: add an entry to CONTRAST (or ELSEWHERE with its reason)');
  t.deepEqual([...named].filter((c) => !found.has(c)).sort(), [], 'a named condition is no longer in the source: update the table');
  t.deepEqual(Object.values(CONTRAST).flatMap((e) => e.capabilities).filter((name) => !byName.has(name)), [], 'unknown capability');
  t.true(found.size >= 40, `${found.size} conditions found: the scan lost its patterns`);
});

for (const [name, entry] of Object.entries(CONTRAST)) {
  test(`${name}: ${entry.rule}`, async (t) => {
    t.is((t.context as any).setupError, undefined);
    const problems: string[] = [];
    await entry.check(t, problems);
    report(t, problems);
  });
}
