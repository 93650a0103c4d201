/**
 * Reads of claims and returns, always within one shop: listing, one claim with everything linked to it, statistics
 * computed in SQL, refund readiness, and the claims module's settings. Account numbers are read only in their masked
 * column (`refund_account_masked`, settings hold masked accounts only): no query here can return a whole number.
 */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { claimsSettingsSchema, type ClaimsSettings } from '../claims/settings.js';
import { money } from '../money.js';
import { iso, keysetPage, toPage, wherePeriod } from './keyset.js';

export const CLAIM_TYPES = ['withdrawal', 'complaint'] as const;
export type ClaimType = (typeof CLAIM_TYPES)[number];

// Explicit columns, the customer's from the claim's order (the order holds the one copy of personal data).
const claimColumns = [
  'c.id', 'c.code', 'c.order_code', 'c.type', 'c.reason', 'c.process_id', 'c.opened_at', 'c.updated_at', 'c.status_id', 'c.status_name',
  'c.status_changed_at', 'c.closed_at', 'c.deadline_at', 'c.resolution', 'c.currency', 'c.refund_with_vat', 'c.tags', 'c.request_type',
  'c.refund_to', 'c.refund_account_masked', 'c.rating', 'c.rating_comment', 'c.return_carrier_code', 'c.return_tracking_number',
  'c.return_status', 'c.return_created_at', 'c.return_delivered_at', 'c.customer_email_hash',
  'o.id as order_id', 'o.created_at as order_created_at', 'o.variable_symbol as order_variable_symbol',
  'o.customer_first_name', 'o.customer_last_name', 'o.customer_company', 'o.customer_email', 'o.customer_phone', 'o.customer_street',
  'o.customer_zip', 'o.customer_city', 'o.customer_country',
];

type ClaimRow = Record<string, any> & { id: string; opened_at: Date };

function claimsQuery(db: Db, shopId: string) {
  return db('claims as c')
    .leftJoin('orders as o', function joinOrder() {
      this.on('o.shop_id', '=', 'c.shop_id').andOn('o.code', '=', 'c.order_code');
    })
    .where('c.shop_id', shopId);
}

function toClaim(row: ClaimRow) {
  const currency = row.currency.trim();
  return {
    code: row.code,
    type: row.type as ClaimType,
    reason: row.reason,
    processId: row.process_id,
    status: { id: row.status_id, name: row.status_name },
    openedAt: row.opened_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    statusChangedAt: row.status_changed_at.toISOString(),
    closedAt: iso(row.closed_at),
    deadlineAt: iso(row.deadline_at),
    resolution: row.resolution,
    currency,
    refundWithVat: row.refund_with_vat === null ? null : money(row.refund_with_vat, currency),
    orderCode: row.order_code,
    order: row.order_id ? { code: row.order_code, createdAt: row.order_created_at.toISOString() } : null,
    tags: row.tags ?? [],
    customerRequest: row.request_type === null ? null : {
      type: row.request_type,
      refundTo: row.refund_to,
      account: row.refund_account_masked,
    },
    rating: row.rating === null ? null : { score: row.rating, comment: row.rating_comment },
    returnShipment: row.return_tracking_number === null ? null : {
      carrierCode: row.return_carrier_code,
      trackingNumber: row.return_tracking_number,
      status: row.return_status,
      createdAt: iso(row.return_created_at),
      deliveredAt: iso(row.return_delivered_at),
    },
    customerEmailHash: row.customer_email_hash?.trim() ?? null,
    customer: {
      firstName: row.customer_first_name ?? null,
      lastName: row.customer_last_name ?? null,
      company: row.customer_company ?? null,
      email: row.customer_email ?? null,
      phone: row.customer_phone ?? null,
      street: row.customer_street ?? null,
      zip: row.customer_zip ?? null,
      city: row.customer_city ?? null,
      country: row.customer_country?.trim() ?? null,
    },
  };
}

export interface ClaimFilters {
  status?: number;
  type?: ClaimType;
}

/** A page of a shop's claims opened in the period, newest first, optionally of one status and type. */
export async function listClaims(db: Db, shopId: string, period: Period | null, filters: ClaimFilters, page: PageRequest) {
  const q = claimsQuery(db, shopId).select(claimColumns);
  if (filters.status !== undefined) q.where('c.status_id', filters.status);
  if (filters.type !== undefined) q.where('c.type', filters.type);
  wherePeriod(q, 'c.opened_at', period);
  const rows: ClaimRow[] = await keysetPage(q, 'c.opened_at', 'c.id', page);
  const result = toPage(rows, page, (r) => r.opened_at, toClaim);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/** One claim with its goods, links (order, credit note, return shipment, stock movements), refunds, timeline and e-mails. */
export async function getClaim(db: Db, shopId: string, code: string) {
  const row: ClaimRow | undefined = await claimsQuery(db, shopId)
    .select([...claimColumns, 'c.items', 'c.status_history', 'c.emails'])
    .where('c.code', code)
    .first();
  if (!row) return null;
  const claim = toClaim(row);
  const lines: Array<{ lineNo: number; productCode: string; quantity: number }> = row.items ?? [];
  const orderLines: Array<{ line_no: number; name: string; unit_price_with_vat: string; vat_rate: string }> = row.order_id
    ? await db('order_items').where({ order_id: row.order_id }).whereIn('line_no', lines.map((l) => l.lineNo)).select('line_no', 'name', 'unit_price_with_vat', 'vat_rate')
    : [];
  const byLine = new Map(orderLines.map((l) => [l.line_no, l]));
  // The credit note of a refunded claim: the order's credit note issued after the claim was opened.
  const creditNote: { code: string; issued_at: Date; total_with_vat: string; currency: string } | undefined = row.order_code === null ? undefined : await db('documents')
    .where({ shop_id: shopId, order_code: row.order_code, type: 'credit_note' })
    .where('issued_at', '>=', row.opened_at)
    .orderBy('issued_at')
    .first('code', 'issued_at', 'total_with_vat', 'currency');
  const movements: Array<{ movement_id: string; item_code: string; kind: string; quantity: string; occurred_at: Date }> = await db('stock_movements')
    .where({ shop_id: shopId, claim_code: row.code })
    .orderBy([{ column: 'occurred_at' }, { column: 'movement_id' }])
    .select('movement_id', 'item_code', 'kind', 'quantity', 'occurred_at');
  const history: Array<{ statusId: number; name?: string; at: string }> = row.status_history ?? [];
  const emails: Array<{ templateId: string; subject: string; sentAt: string }> = row.emails ?? [];
  return {
    ...claim,
    items: lines.map((l) => {
      const line = byLine.get(l.lineNo);
      return {
        lineNo: l.lineNo,
        productCode: l.productCode,
        name: line?.name ?? null,
        quantity: String(l.quantity),
        unitPriceWithVat: line ? money(line.unit_price_with_vat, claim.currency) : null,
      };
    }),
    links: {
      order: claim.order,
      creditNote: creditNote ? { code: creditNote.code, issuedAt: creditNote.issued_at.toISOString(), totalWithVat: money(creditNote.total_with_vat, creditNote.currency) } : null,
      returnShipment: claim.returnShipment,
      stockMovements: movements.map((m) => ({ movementId: m.movement_id, productCode: m.item_code, kind: m.kind, quantity: m.quantity, occurredAt: m.occurred_at.toISOString() })),
    },
    refunds: claim.refundWithVat === null ? [] : [{
      amountWithVat: claim.refundWithVat,
      refundTo: claim.customerRequest?.refundTo ?? null,
      account: claim.customerRequest?.refundTo === 'bank_account' ? claim.customerRequest.account : null,
      decidedAt: claim.closedAt,
      creditNoteCode: creditNote?.code ?? null,
    }],
    timeline: history.map((h) => ({ status: { id: h.statusId, name: h.name ?? null }, at: h.at })),
    emails,
  };
}

/** The shop's claims settings document, or null when the shop has none. */
export async function getClaimsSettings(db: Db, shopId: string): Promise<ClaimsSettings | null> {
  const row = await db('claims_settings').where({ shop_id: shopId }).first('settings');
  return row ? claimsSettingsSchema.parse(row.settings) : null;
}

/** What a refund of one claim needs: the request, the masked account, the payment reference, the mode, deletability. */
export async function refundReadiness(db: Db, shopId: string, code: string) {
  const claim = await getClaim(db, shopId, code);
  if (!claim) return null;
  const settings = await getClaimsSettings(db, shopId);
  const row = await db('orders').where({ shop_id: shopId, code: claim.orderCode }).first('variable_symbol');
  const source = settings?.refundOptions.variableSymbolSource ?? 'order';
  const variableSymbol = source === 'claim' ? claim.code.replace(/\D/g, '').slice(-10) || null : row?.variable_symbol ?? null;
  const request = claim.customerRequest;
  const blockers: string[] = [];
  if (!request || request.type !== 'refund') blockers.push('The customer does not ask for a refund.');
  if (request?.refundTo === 'bank_account' && !request.account) blockers.push('The customer has not given an account number.');
  if (claim.status.id === 1 || claim.status.id === 2) blockers.push('The goods have not been received yet.');
  if (claim.resolution === 'rejected') blockers.push('The claim was rejected.');
  if (claim.refunds.length > 0) blockers.push('The refund has already been decided.');
  const linked = claim.links.creditNote !== null || claim.links.stockMovements.length > 0 || claim.refunds.length > 0;
  return {
    code: claim.code,
    status: claim.status,
    customerRequest: request,
    account: request?.refundTo === 'bank_account' ? request.account : null,
    variableSymbol,
    variableSymbolSource: source,
    refundMode: settings?.refundSettings.refundMode ?? null,
    amountWithVat: claim.refunds[0]?.amountWithVat ?? null,
    ready: blockers.length === 0,
    blockers,
    deletable: !linked,
    deletableReason: linked ? 'A credit note, stock movement or refund is linked to the claim.' : null,
  };
}

// ---- Statistics ----

const num = (value: string | null): number | null => (value === null ? null : Number(value));

/**
 * Figures over the claims OPENED in the period, in SQL: counts by state, status, type, resolution and reason,
 * resolution time (opening → closing, closed claims only) as median and p90 in hours, and ratings.
 */
export async function claimStatistics(db: Db, shopId: string, period: Period | null) {
  const base = db('claims').where({ shop_id: shopId });
  wherePeriod(base, 'opened_at', period);
  const hours = (fraction: number) => `round((percentile_cont(${fraction}) within group (order by (extract(epoch from (closed_at - opened_at)) * 1000)::float8) filter (where closed_at is not null) / 3600000.0::float8)::numeric, 2)`;
  const totals = await db.with('pc', base.clone().select('*')).from('pc').first(db.raw(`
      count(*)::int as total,
      count(*) filter (where closed_at is null)::int as open,
      count(*) filter (where closed_at is not null)::int as closed,
      count(*) filter (where closed_at is not null)::int as measured,
      ${hours(0.5)} as median_hours,
      ${hours(0.9)} as p90_hours,
      count(rating)::int as rated,
      round(avg(rating)::numeric, 2) as average_rating`));
  const grouped = async (column: string) => (await db.with('pc', base.clone().select('*')).from('pc')
    .select(db.raw(`${column} as key, count(*)::int as count`))
    .groupBy(column)
    .orderByRaw(`count(*) desc, ${column} collate "C"`)) as Array<{ key: string | number | null; count: number }>;
  const [statuses, types, resolutions, reasons, ratings] = await Promise.all([
    db.with('pc', base.clone().select('*')).from('pc').select(db.raw('status_id as id, max(status_name) as name, count(*)::int as count'))
      .groupBy('status_id').orderBy('status_id') as Promise<Array<{ id: number; name: string; count: number }>>,
    grouped('type'),
    grouped('resolution'),
    grouped('reason'),
    db.with('pc', base.clone().select('*')).from('pc').whereNotNull('rating').select(db.raw('rating as score, count(*)::int as count'))
      .groupBy('rating').orderBy('rating') as Promise<Array<{ score: number; count: number }>>,
  ]);
  return {
    claims: { total: totals.total, open: totals.open, closed: totals.closed },
    statuses: statuses.map((s) => ({ status: { id: s.id, name: s.name }, count: s.count })),
    types: types.map((t) => ({ type: t.key as ClaimType, count: t.count })),
    resolutions: resolutions.filter((r) => r.key !== null).map((r) => ({ resolution: r.key as string, count: r.count })),
    resolutionTime: { measured: totals.measured, medianHours: num(totals.median_hours), p90Hours: num(totals.p90_hours) },
    ratings: { rated: totals.rated, average: num(totals.average_rating), distribution: ratings.map((r) => ({ score: r.score, count: r.count })) },
    reasons: reasons.filter((r) => r.key !== null).map((r) => ({ reason: r.key as string, count: r.count })),
  };
}
