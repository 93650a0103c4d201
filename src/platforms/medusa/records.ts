/** Medusa's Admin API resources mapped to the port's records (the domain's, src/records). */
import crypto from 'node:crypto';
import { ORDER_STATUSES, type CountryCode, type Currency, type ShipmentStatus, type StatusChange, type TrackingEvent } from '../../records/index.js';
import type {
  ContentTexts, PlatformCategory, PlatformContentCapabilities, PlatformCoupon, PlatformOrder, PlatformProduct, PlatformProductTexts,
  PlatformShipment, PlatformStockItem,
} from '../types.js';

// Resources as the Admin API returns them (the fields the adapter reads; docs/medusa.md).
export interface MedusaAddress {
  first_name: string | null; last_name: string | null; company: string | null; phone: string | null; address_1: string | null;
  city: string | null; postal_code: string | null; country_code: string | null;
}
export interface MedusaPayment { id: string; amount: number; provider_id: string; captured_at: string | null; canceled_at: string | null }
export interface MedusaFulfillment {
  id: string; provider_id: string | null; location_id: string; created_at: string; updated_at: string; shipped_at: string | null;
  delivered_at: string | null; canceled_at: string | null; labels?: Array<{ tracking_number: string | null }>;
}
export interface MedusaLineItem {
  id: string; title: string; product_title: string | null; variant_title: string | null; variant_sku: string | null; variant_id: string | null;
  quantity: number; unit_price: number; is_tax_inclusive: boolean; tax_lines?: Array<{ rate: number }>;
  adjustments?: Array<{ code: string | null; amount: number }>;
}
export interface MedusaOrder {
  id: string; display_id: number; status: string; payment_status: string; fulfillment_status: string; currency_code: string;
  email: string | null; created_at: string; updated_at: string; canceled_at: string | null; sales_channel_id: string | null;
  total: number; tax_total: number; shipping_total: number; discount_total: number;
  items?: MedusaLineItem[]; shipping_address?: MedusaAddress | null; shipping_methods?: Array<{ name: string }>;
  payment_collections?: Array<{ payments?: MedusaPayment[] }>; fulfillments?: MedusaFulfillment[];
}
export interface MedusaPrice { currency_code: string; amount: number; updated_at?: string }
export interface MedusaVariant {
  id: string; title: string; sku: string | null; ean: string | null; product_id: string; created_at: string; updated_at: string; prices?: MedusaPrice[];
}
export interface MedusaProduct {
  id: string; title: string; status: string; description: string | null; metadata: Record<string, unknown> | null; created_at: string;
  updated_at: string; variants?: MedusaVariant[]; categories?: Array<{ id: string }>;
}
export interface MedusaCategory { id: string; name: string; parent_category_id: string | null; rank: number; created_at: string; updated_at: string }
export interface MedusaInventoryItem {
  id: string; sku: string | null;
  location_levels?: Array<{ location_id: string; stocked_quantity: number; reserved_quantity: number; available_quantity: number; updated_at: string }>;
}
export interface MedusaPromotion {
  id: string; code: string; status: string; is_automatic: boolean; limit?: number | null; created_at: string; updated_at: string;
  application_method?: { type: 'percentage' | 'fixed'; target_type: string; value: number; currency_code: string | null } | null;
  campaign?: { name: string; starts_at: string | null; ends_at: string | null; budget?: { type: string; limit: number | null } | null } | null;
}

/** The fields an order read asks for: the defaults leave out who bought, in which currency and channel. */
export const ORDER_FIELDS = [
  '+customer_id', '+email', '+currency_code', '+sales_channel_id', '+created_at', '+updated_at', '+canceled_at', '+total', '+tax_total',
  '+shipping_total', '+discount_total', '*items', '*items.tax_lines', '*items.adjustments', '*shipping_address', '*shipping_methods',
  '*payment_collections', '*payment_collections.payments', '*fulfillments', '*fulfillments.labels',
].join(',');

/** Medusa amounts are decimals in major units; the service keeps integer minor units (D4). */
export const toMinor = (amount: number | null | undefined): number => Math.round(Number(amount ?? 0) * 100);
const date = (iso: string) => new Date(iso);
const latest = (values: Array<string | null | undefined>): Date | null => {
  const times = values.filter((v): v is string => !!v).map((v) => Date.parse(v));
  return times.length ? new Date(Math.max(...times)) : null;
};
const upper = <T extends string>(code: string | null | undefined, fallback: string): T => (code ?? fallback).toUpperCase() as T;

/** D22: lower-case hex SHA-256 of the trimmed, lower-cased e-mail. */
export function emailHash(email: string | null): string {
  return crypto.createHash('sha256').update((email ?? '').trim().toLowerCase()).digest('hex');
}

/** Captured payments make an order paid; Medusa computes `payment_status` from them. */
const PAID_STATES = new Set(['captured', 'partially_refunded', 'refunded']);

/**
 * The order's status history from Medusa's own timestamps (Medusa keeps no history of statuses): New at creation,
 * Processing at the first fulfilment, Shipped at the last shipment, Delivered at the last delivery, Cancelled at
 * cancellation, each only up to where the order stands. The instants never move, so a re-read announces nothing twice.
 */
export function orderStatusHistory(o: MedusaOrder): StatusChange[] {
  const history: StatusChange[] = [{ statusId: ORDER_STATUSES.new.id, at: date(o.created_at) }];
  const live = (o.fulfillments ?? []).filter((f) => !f.canceled_at);
  const fulfilledAt = latest(live.map((f) => f.created_at));
  const shippedAt = latest(live.map((f) => f.shipped_at));
  const deliveredAt = latest(live.map((f) => f.delivered_at));
  const fs = o.fulfillment_status;
  if (fulfilledAt && fs !== 'not_fulfilled') history.push({ statusId: ORDER_STATUSES.processing.id, at: fulfilledAt });
  if (shippedAt && ['shipped', 'partially_shipped', 'delivered', 'partially_delivered'].includes(fs)) history.push({ statusId: ORDER_STATUSES.shipped.id, at: shippedAt });
  if (deliveredAt && fs === 'delivered') history.push({ statusId: ORDER_STATUSES.delivered.id, at: deliveredAt });
  if (o.status === 'canceled') history.push({ statusId: ORDER_STATUSES.cancelled.id, at: o.canceled_at ? date(o.canceled_at) : date(o.updated_at) });
  return history;
}

const STATUS_NAMES = new Map<number, string>(Object.values(ORDER_STATUSES).map((s) => [s.id, s.name]));

export function payments(o: MedusaOrder): MedusaPayment[] {
  return (o.payment_collections ?? []).flatMap((c) => c.payments ?? []);
}

/** When the order became paid (its last capture), or null while it is not. */
export function paidAt(o: MedusaOrder): Date | null {
  return PAID_STATES.has(o.payment_status) ? latest(payments(o).map((p) => p.captured_at)) ?? date(o.updated_at) : null;
}

export function toOrder(o: MedusaOrder, eurRates: Record<string, number>): PlatformOrder {
  const currency = upper<Currency>(o.currency_code, 'EUR');
  const eurRate = currency === 'EUR' ? 1 : eurRates[currency];
  if (!(eurRate > 0)) throw new Error(`No EUR rate for ${currency} in the shop's platform settings (eurRates); order ${o.display_id} cannot be stored`);
  const history = orderStatusHistory(o);
  const current = history[history.length - 1];
  const a = o.shipping_address ?? null;
  const total = toMinor(o.total);
  const vat = toMinor(o.tax_total);
  // Item ids are ULIDs: sorted, the lines keep the order they were added in.
  const lines = [...(o.items ?? [])].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const items = lines.map((it, i) => {
    const rate = (it.tax_lines ?? []).reduce((sum, l) => sum + Number(l.rate), 0);
    const unit = toMinor(it.unit_price);
    const withVat = it.is_tax_inclusive ? unit : Math.round((unit * (100 + rate)) / 100);
    return {
      lineNo: i + 1, productCode: it.variant_sku ?? it.variant_id ?? it.id,
      name: it.product_title && it.variant_title ? variantName({ title: it.product_title }, { title: it.variant_title }) : it.title, quantity: Number(it.quantity),
      unitPriceWithVatMinor: withVat, unitPriceWithoutVatMinor: Math.round((withVat * 100) / (100 + rate)), vatRate: rate, purchasePriceWithoutVatMinor: null,
    };
  });
  // A promotion's discount is spread over the items as adjustments; the order keeps one line per code.
  const byCode = new Map<string, number>();
  for (const it of o.items ?? []) for (const adj of it.adjustments ?? []) if (adj.code) byCode.set(adj.code, (byCode.get(adj.code) ?? 0) + toMinor(adj.amount));
  const discounts = [...byCode].map(([code, amount]) => ({ couponCode: code, name: code, vatRate: 0, amountWithVatMinor: -amount, amountWithoutVatMinor: -amount }));
  const paid = paidAt(o);
  return {
    code: String(o.display_id), currency, totalWithVatMinor: total, totalWithoutVatMinor: total - vat, totalVatMinor: vat,
    shippingWithVatMinor: toMinor(o.shipping_total), eurRate, paymentMethod: payments(o)[0]?.provider_id ?? 'none',
    shippingMethod: o.shipping_methods?.[0]?.name ?? 'none', variableSymbol: String(o.display_id), customerEmailHash: emailHash(o.email),
    customer: {
      firstName: a?.first_name ?? '', lastName: a?.last_name ?? '', company: a?.company || null, email: o.email ?? '', phone: a?.phone ?? '',
      street: a?.address_1 ?? '', city: a?.city ?? '', zip: a?.postal_code ?? '', country: upper<CountryCode>(a?.country_code, 'XX'),
    },
    items, couponCode: discounts[0]?.couponCode ?? null, discounts,
    createdAt: date(o.created_at), updatedAt: date(o.updated_at), statusId: current.statusId, statusName: STATUS_NAMES.get(current.statusId)!,
    statusChangedAt: current.at, statusHistory: history, paid: paid !== null, paidAt: paid,
  };
}

/** A fulfilment is the order's shipment: created → handed over when shipped → delivered; a cancelled one ends there. */
export function toShipments(o: MedusaOrder): PlatformShipment[] {
  const country = upper<CountryCode>(o.shipping_address?.country_code, 'XX');
  return (o.fulfillments ?? []).map((f) => {
    const events: TrackingEvent[] = [{ occurredAt: date(f.created_at), status: 'CREATED', description: 'Fulfilment created', location: null, isDelivery: false }];
    if (f.shipped_at) events.push({ occurredAt: date(f.shipped_at), status: 'HANDED_OVER', description: 'Shipped', location: null, isDelivery: false });
    if (f.delivered_at) events.push({ occurredAt: date(f.delivered_at), status: 'DELIVERED', description: 'Delivered', location: null, isDelivery: true });
    if (f.canceled_at) events.push({ occurredAt: date(f.canceled_at), status: 'CANCELLED', description: 'Fulfilment cancelled', location: null, isDelivery: false });
    events.sort((x, y) => x.occurredAt.getTime() - y.occurredAt.getTime());
    const status: ShipmentStatus = events[events.length - 1].status;
    return {
      orderCode: String(o.display_id), carrierCode: f.provider_id ?? 'manual', trackingNumber: f.labels?.find((l) => l.tracking_number)?.tracking_number ?? f.id,
      country, status, outcome: f.canceled_at ? 'cancelled' : f.delivered_at ? 'delivered' : 'in_transit', createdAt: date(f.created_at),
      updatedAt: latest([f.updated_at, f.created_at, f.shipped_at, f.delivered_at, f.canceled_at])!, handedOverAt: f.shipped_at ? date(f.shipped_at) : null,
      deliveredAt: f.delivered_at ? date(f.delivered_at) : null, events,
    };
  });
}

export function toCategory(c: MedusaCategory): PlatformCategory {
  return { guid: c.id, name: c.name, parentGuid: c.parent_category_id, position: c.rank ?? 0, createdAt: date(c.created_at), updatedAt: date(c.updated_at) };
}

/** A variant's product code: its SKU (what orders and stock name it by), else its id. */
export const variantCode = (v: Pick<MedusaVariant, 'sku' | 'id'>): string => v.sku ?? v.id;

/** A variant's name: the product's title, then the variant's own (Medusa's variant titles often repeat the product's). */
export function variantName(p: Pick<MedusaProduct, 'title'>, v: Pick<MedusaVariant, 'title'>): string {
  return v.title.includes(p.title) ? v.title : `${p.title} ${v.title}`;
}

/** Each variant with a price in the shop's currency is one product (a variant without one is not sold in this shop). */
export function toProducts(p: MedusaProduct, shopCurrency: string): PlatformProduct[] {
  return (p.variants ?? []).flatMap((v) => {
    const price = (v.prices ?? []).find((pr) => pr.currency_code.toUpperCase() === shopCurrency.toUpperCase());
    if (!price) return [];
    return [{
      code: variantCode(v), name: variantName(p, v), ean: v.ean ?? '', plu: null, categoryGuid: p.categories?.[0]?.id ?? '',
      currency: shopCurrency.toUpperCase() as Currency, priceWithVatMinor: toMinor(price.amount), vatRate: 0, purchasePriceMinor: null,
      active: p.status === 'published', createdAt: date(v.created_at), updatedAt: latest([v.updated_at, p.updated_at, price.updated_at])!,
    }];
  });
}

/** Product texts: `description` is Medusa's own field, the others live in the product's metadata under these keys. */
export const METADATA_KEYS = { shortDescription: 'short_description', metaTitle: 'meta_title', metaDescription: 'meta_description' } as const;

export function productTexts(p: MedusaProduct): ContentTexts {
  const texts: ContentTexts = {};
  if (p.description !== null) texts.description = p.description;
  for (const [field, key] of Object.entries(METADATA_KEYS) as Array<[keyof typeof METADATA_KEYS, string]>) {
    const value = p.metadata?.[key];
    if (typeof value === 'string') texts[field] = value;
  }
  return texts;
}

export function toProductTexts(p: MedusaProduct, shopCurrency: string): PlatformProductTexts[] {
  const t = productTexts(p);
  return toProducts(p, shopCurrency).map((product) => ({
    code: product.code,
    // Medusa has no availability dictionary: no product has an entry of one.
    availabilityId: null as unknown as string,
    texts: { description: t.description ?? null, shortDescription: t.shortDescription ?? null, metaTitle: t.metaTitle ?? null, metaDescription: t.metaDescription ?? null },
    updatedAt: date(p.updated_at),
  }));
}

/** What Medusa lets the service write: product texts (description + metadata); no category texts, no availability dictionary. */
export const MEDUSA_CAPABILITIES: PlatformContentCapabilities = {
  productFields: ['description', 'shortDescription', 'metaTitle', 'metaDescription'],
  categoryFields: [],
  availabilityManageable: false,
  availabilityReason: 'PLATFORMA',
};

/** Stock of one item summed over the shop's stock locations; null when the item has no level at any of them. */
export function toStockItem(item: MedusaInventoryItem, locationIds: ReadonlySet<string>): PlatformStockItem | null {
  const levels = (item.location_levels ?? []).filter((l) => locationIds.has(l.location_id));
  if (!levels.length) return null;
  const sum = (f: 'stocked_quantity' | 'reserved_quantity' | 'available_quantity') => levels.reduce((s, l) => s + Number(l[f]), 0);
  const code = item.sku ?? item.id;
  return {
    code, sku: code, itemId: item.id, source: 'balance', quantity: sum('available_quantity'), physical: sum('stocked_quantity'), reserved: sum('reserved_quantity'),
    available: sum('available_quantity'), updatedAt: latest(levels.map((l) => l.updated_at))!,
  };
}

/** A promotion with a code as a coupon: percentage or fixed amount; 100 % off shipping is free shipping; validity from its campaign. */
export function toCoupon(p: MedusaPromotion, shopCurrency: string): PlatformCoupon {
  const m = p.application_method;
  const discount: PlatformCoupon['discount'] = m?.target_type === 'shipping_methods' && m.type === 'percentage' && Number(m.value) === 100
    ? { type: 'free_shipping' }
    : m?.type === 'fixed' ? { type: 'fixed', amountMinor: toMinor(m.value) } : { type: 'percent', percent: Number(m?.value ?? 0) };
  const budget = p.campaign?.budget;
  return {
    code: p.code, name: p.campaign?.name ?? p.code, discount, currency: upper<Currency>(m?.currency_code, shopCurrency), minOrderMinor: null,
    validFrom: p.campaign?.starts_at ? date(p.campaign.starts_at) : null, validUntil: p.campaign?.ends_at ? date(p.campaign.ends_at) : null,
    usageLimit: p.limit ?? (budget?.type === 'usage' ? budget.limit ?? null : null), perCustomerLimit: null, categoryGuids: [], productCodes: [],
    enabled: p.status === 'active', createdAt: date(p.created_at), updatedAt: date(p.updated_at),
    disabledAt: p.status === 'active' ? null : date(p.updated_at), partnerIndex: null,
  };
}
