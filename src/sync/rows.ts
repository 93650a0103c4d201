/**
 * Platform records as database rows, written once: the demo loader (COPY) and the sync (upserts) both use these, so
 * a record loaded as history and the same record read by a later sync are byte-identical rows — a re-sync of
 * unchanged data finds nothing to change.
 */
import { formatMinor } from '../records/money.js';
import type {
  PlatformClaim, PlatformDocument, PlatformOrder, PlatformSearchConsoleProperty, PlatformSearchConsoleRun, PlatformShipment,
  PlatformStockItem, PlatformStockMovement, PlatformArticle, PlatformAvailability, PlatformCategoryTexts, PlatformContentCapabilities,
  PlatformProductTexts, PlatformCoupon,
} from '../platforms/types.js';
import type { TrackingEvent } from '../records/types.js';
import { maskAccount } from '../claims/accounts.js';
import { CLAIM_STATUSES } from '../records/statuses.js';

const CLAIM_STATUS_NAMES = new Map<number, string>(Object.values(CLAIM_STATUSES).map((s) => [s.id, s.name]));

/** A row as knex inserts it; a jsonb value is given as its JSON text, a text[] as an array of strings. */
export type Row = Record<string, string | number | boolean | Date | null | string[]>;

/** Values of a row in the order of `columns` (for COPY, where a text[] is written as an array literal). */
export function rowValues(row: Row, columns: readonly string[]): Array<string | number | boolean | Date | null> {
  return columns.map((c) => {
    const v = row[c];
    if (v === undefined) throw new Error(`Row has no column ${c}`);
    return Array.isArray(v) ? `{${v.join(',')}}` : v;
  });
}

export function orderRow(shopId: string, o: PlatformOrder): Row {
  const c = o.customer;
  return {
    shop_id: shopId, code: o.code, created_at: o.createdAt, updated_at: o.updatedAt, status_id: o.statusId, status_name: o.statusName,
    status_changed_at: o.statusChangedAt, paid: o.paid, paid_at: o.paidAt, currency: o.currency,
    total_with_vat: formatMinor(o.totalWithVatMinor), total_without_vat: formatMinor(o.totalWithoutVatMinor), total_vat: formatMinor(o.totalVatMinor),
    shipping_with_vat: formatMinor(o.shippingWithVatMinor), eur_rate: o.eurRate.toFixed(6), payment_method: o.paymentMethod,
    shipping_method: o.shippingMethod, variable_symbol: o.variableSymbol, customer_email_hash: o.customerEmailHash,
    customer_first_name: c.firstName, customer_last_name: c.lastName, customer_company: c.company, customer_email: c.email,
    customer_phone: c.phone, customer_street: c.street, customer_city: c.city, customer_zip: c.zip, customer_country: c.country,
    coupon_code: o.couponCode, discount_with_vat: formatMinor(o.discounts.reduce((sum, d) => sum + d.amountWithVatMinor, 0)),
  };
}

/** The order's lines: its goods, then its discount lines (no product, quantity 1, negative prices). */
export function orderItemRows(orderId: string | number, o: PlatformOrder): Row[] {
  const goods = o.items.map((it) => ({
    order_id: orderId, line_no: it.lineNo, kind: 'product', product_code: it.productCode, name: it.name, quantity: it.quantity,
    unit_price_with_vat: formatMinor(it.unitPriceWithVatMinor), unit_price_without_vat: formatMinor(it.unitPriceWithoutVatMinor),
    vat_rate: it.vatRate, purchase_price_without_vat: it.purchasePriceWithoutVatMinor === null ? null : formatMinor(it.purchasePriceWithoutVatMinor),
    coupon_code: null,
  }));
  const discounts = o.discounts.map((d, i) => ({
    order_id: orderId, line_no: o.items.length + 1 + i, kind: 'discount', product_code: null, name: d.name, quantity: 1,
    unit_price_with_vat: formatMinor(d.amountWithVatMinor), unit_price_without_vat: formatMinor(d.amountWithoutVatMinor),
    vat_rate: d.vatRate, purchase_price_without_vat: null, coupon_code: d.couponCode,
  }));
  return [...goods, ...discounts];
}

export function shipmentRow(shopId: string, s: PlatformShipment): Row {
  return {
    shop_id: shopId, order_code: s.orderCode, carrier_code: s.carrierCode, tracking_number: s.trackingNumber, country: s.country,
    status: s.status, outcome: s.outcome, created_at: s.createdAt, updated_at: s.updatedAt, handed_over_at: s.handedOverAt, delivered_at: s.deliveredAt,
  };
}

export function trackingEventRows(shipmentId: string | number, events: TrackingEvent[]): Row[] {
  return events.map((e) => ({
    shipment_id: shipmentId, occurred_at: e.occurredAt, status: e.status, description: e.description, location: e.location, is_delivery: e.isDelivery,
  }));
}

export function documentRow(shopId: string, d: PlatformDocument): Row {
  const c = d.customer;
  return {
    shop_id: shopId, type: d.type, code: d.code, order_code: d.orderCode, issued_at: d.issuedAt, tax_date: d.taxDate, due_date: d.dueDate,
    currency: d.currency, total_with_vat: formatMinor(d.totalWithVatMinor), total_without_vat: formatMinor(d.totalWithoutVatMinor),
    total_vat: formatMinor(d.totalVatMinor), variable_symbol: d.variableSymbol, customer_email_hash: d.customerEmailHash, related_code: d.relatedCode,
    ...documentContentColumns(d), ...documentStateColumns(d),
    customer_first_name: c.firstName, customer_last_name: c.lastName, customer_company: c.company, customer_email: c.email,
    customer_phone: c.phone, customer_street: c.street, customer_city: c.city, customer_zip: c.zip, customer_country: c.country,
  };
}

/** The issued content of a document beyond its amounts: lines and VAT per rate as decimal strings (D4), issue date. */
function documentContentColumns(d: PlatformDocument): Row {
  const lines = d.lines.map((l) => ({
    lineNo: l.lineNo, kind: l.kind, productCode: l.productCode, name: l.name, quantity: l.quantity.toFixed(3),
    unitPriceWithVat: formatMinor(l.unitPriceWithVatMinor), totalWithVat: formatMinor(l.totalWithVatMinor),
    totalWithoutVat: formatMinor(l.totalWithoutVatMinor), vatRate: l.vatRate.toFixed(2),
  }));
  const vat = d.vatBreakdown.map((v) => ({ vatRate: v.vatRate.toFixed(2), base: formatMinor(v.baseMinor), vat: formatMinor(v.vatMinor), total: formatMinor(v.totalMinor) }));
  return { issue_date: d.issueDate, payment_method: d.paymentMethod, lines: JSON.stringify(lines), vat_breakdown: JSON.stringify(vat), pdf_available: d.pdfAvailable };
}

/** The columns of a document that move after its issue; a sync compares and updates only these. */
export function documentStateColumns(d: PlatformDocument): Row {
  return { lifecycle: d.lifecycle, source_state: d.sourceState, valid: d.valid, updated_at: d.updatedAt };
}

export function claimRow(shopId: string, c: PlatformClaim): Row {
  const r = c.returnShipment;
  return {
    shop_id: shopId, code: c.code, order_code: c.orderCode, type: c.type, reason: c.reason, opened_at: c.openedAt, updated_at: c.updatedAt,
    status_id: c.statusId, status_name: c.statusName, status_changed_at: c.statusChangedAt, closed_at: c.closedAt, resolution: c.resolution,
    currency: c.currency, refund_with_vat: c.refundWithVatMinor === null ? null : formatMinor(c.refundWithVatMinor), items: JSON.stringify(c.items),
    return_carrier_code: r?.carrierCode ?? null, return_tracking_number: r?.trackingNumber ?? null, return_status: r?.status ?? null,
    return_created_at: r?.createdAt ?? null, return_delivered_at: r?.deliveredAt ?? null, customer_email_hash: c.customerEmailHash,
    ...claimDetailColumns(c),
  };
}

/** The claim's columns added with issue 10 (migration 009); the account number is masked before it reaches a row (CC2). */
function claimDetailColumns(c: PlatformClaim): Row {
  const account = c.customerRequest.bankAccount;
  return {
    status_history: JSON.stringify(c.statusHistory.map((s) => ({ statusId: s.statusId, name: CLAIM_STATUS_NAMES.get(s.statusId) ?? null, at: s.at.toISOString() }))),
    process_id: c.processId, deadline_at: c.deadline, tags: c.tags, request_type: c.customerRequest.type, refund_to: c.customerRequest.refundTo,
    refund_account_masked: account === null ? null : maskAccount(account, account.slice(0, 2)), rating: c.rating, rating_comment: c.ratingComment,
    emails: JSON.stringify(c.emails.map((e) => ({ templateId: e.templateId, subject: e.subject, sentAt: e.sentAt.toISOString() }))),
  };
}

const quantity = (n: number | null) => (n === null ? null : n.toFixed(3));

export function stockItemRow(shopId: string, i: PlatformStockItem): Row {
  return {
    shop_id: shopId, code: i.code, sku: i.sku, source: i.source, quantity: quantity(i.quantity), physical: quantity(i.physical),
    reserved: quantity(i.reserved), available: quantity(i.available), updated_at: i.updatedAt,
  };
}

export function movementRow(shopId: string, m: PlatformStockMovement): Row {
  return {
    shop_id: shopId, movement_id: m.id, item_code: m.productCode, kind: m.kind, quantity: quantity(m.quantity), occurred_at: m.occurredAt,
    order_code: m.orderCode, claim_code: m.claimCode,
  };
}

export function searchConsoleRunRow(shopId: string, r: PlatformSearchConsoleRun): Row {
  return {
    shop_id: shopId, run_key: r.key, ran_at: r.ranAt, status: r.status, property: r.property, search_types: r.searchTypes, data_state: r.dataState,
    final_data_through: r.finalDataThrough, fresh_data_through: r.freshDataThrough, days_upserted: r.daysUpserted, revised_dates: r.revisedDates,
    sync_version: r.syncVersion, error: r.error, error_code: r.errorCode, last_successful_sync_at: r.lastSuccessfulSyncAt, retry_at: r.retryAt,
  };
}

export function searchConsolePropertyRow(shopId: string, p: PlatformSearchConsoleProperty): Row {
  return {
    shop_id: shopId, property: p.property, status: p.status, status_changed_at: p.statusChangedAt, last_sync_at: p.lastSyncAt,
    last_successful_sync_at: p.lastSuccessfulSyncAt, sync_version: p.syncVersion, final_data_through: p.finalDataThrough, fresh_data_through: p.freshDataThrough,
  };
}

/** The platform's content capabilities of a shop (one row per shop). */
export function contentCapabilitiesRow(shopId: string, c: PlatformContentCapabilities): Row {
  return {
    shop_id: shopId, product_fields: c.productFields, category_fields: c.categoryFields, availability_manageable: c.availabilityManageable,
    availability_reason: c.availabilityReason,
  };
}

export function availabilityRow(shopId: string, a: PlatformAvailability): Row {
  return {
    shop_id: shopId, availability_id: a.id, name: a.name, description: a.description, on_stock_hours: a.onStockHours, delivery_hours: a.deliveryHours,
    meaning: a.meaning, color: a.color, system: a.system, default_roles: a.defaultRoles, pairing_rows: a.pairingRows, position: a.position,
  };
}

/** A product's texts and availability, matched to the stored product by its code. */
export function productTextsRow(p: PlatformProductTexts): Row {
  return {
    code: p.code, availability_id: p.availabilityId, description: p.texts.description, short_description: p.texts.shortDescription,
    meta_title: p.texts.metaTitle, meta_description: p.texts.metaDescription, content_updated_at: p.updatedAt,
  };
}

export function categoryTextsRow(c: PlatformCategoryTexts): Row {
  return {
    guid: c.guid, description: c.texts.description, description_bottom: c.texts.descriptionBottom, meta_title: c.texts.metaTitle,
    meta_description: c.texts.metaDescription, content_updated_at: c.updatedAt,
  };
}

export function articleRow(shopId: string, a: PlatformArticle): Row {
  return {
    shop_id: shopId, article_id: a.id, kind: a.kind, title: a.title, text: a.text, url: a.url, preview_image_url: a.previewImageUrl,
    published_at: a.publishedAt, updated_at: a.updatedAt,
  };
}

/** A coupon as the service mirrors it (issue 10, migration 009). */
export function couponRow(shopId: string, c: PlatformCoupon): Row {
  const d = c.discount;
  return {
    shop_id: shopId, code: c.code, name: c.name, discount_type: d.type, discount_percent: d.type === 'percent' ? d.percent.toFixed(2) : null,
    discount_amount: d.type === 'fixed' ? formatMinor(d.amountMinor) : null, currency: c.currency,
    min_order_with_vat: c.minOrderMinor === null ? null : formatMinor(c.minOrderMinor), valid_from: c.validFrom, valid_until: c.validUntil,
    usage_limit: c.usageLimit, per_customer_limit: c.perCustomerLimit, category_guids: c.categoryGuids, product_codes: c.productCodes,
    enabled: c.enabled, disabled_at: c.disabledAt, created_at: c.createdAt, updated_at: c.updatedAt, partner_index: c.partnerIndex,
  };
}
