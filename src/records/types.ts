/**
 * The records the service syncs from a shop platform, in one neutral shape for every platform (D20): money in integer
 * minor units (D4), ISO codes, Dates at ms precision. Adapters map their platform's API into these. Pure types, no I/O.
 */
import type { CountryCode, Currency, ShipmentStatus } from './codes.js';

/** A product category as the shop has it. */
export interface Category {
  guid: string;
  name: string;
  parentGuid: string | null;
  position: number;
  /** The public address of the category's page in the shop, when the platform knows it (SPEC `canonical_url`). */
  url?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A sellable product (for platforms with variants: one variant) with its price in the shop currency. */
export interface Product {
  code: string;
  name: string;
  ean: string;
  plu: string | null;
  categoryGuid: string;
  currency: Currency;
  priceWithVatMinor: number;
  vatRate: number;
  /** Current card purchase price without VAT; null when the shop does not know it. */
  purchasePriceMinor: number | null;
  active: boolean;
  /** The public address of the product's page in the shop, when the platform knows it (SPEC `canonical_url`). */
  url?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrderItem {
  lineNo: number;
  productCode: string;
  name: string;
  quantity: number;
  unitPriceWithVatMinor: number;
  unitPriceWithoutVatMinor: number;
  vatRate: number;
  purchasePriceWithoutVatMinor: number | null;
}

export interface TrackingEvent {
  occurredAt: Date;
  status: ShipmentStatus;
  description: string;
  location: string | null;
  isDelivery: boolean;
}

export type ShipmentOutcome = 'delivered' | 'returned' | 'failed' | 'in_transit' | 'cancelled';

export interface Shipment {
  carrierCode: string;
  trackingNumber: string;
  country: CountryCode;
  status: ShipmentStatus;
  outcome: ShipmentOutcome;
  createdAt: Date;
  updatedAt: Date;
  handedOverAt: Date | null;
  /** Time of the first delivery tracking event (SPEC "shipping/stats"). */
  deliveredAt: Date | null;
  events: TrackingEvent[];
}

export interface Customer {
  firstName: string;
  lastName: string;
  company: string | null;
  email: string;
  phone: string;
  street: string;
  city: string;
  zip: string;
  country: CountryCode;
}

/** One entry of a status history: the status reached and when. */
export interface StatusChange {
  statusId: number;
  at: Date;
}

/** What an order is, whatever its state: amounts, methods, customer and items (shared by the plan and the generated order). */
export interface OrderContent {
  code: string;
  currency: Currency;
  totalWithVatMinor: number;
  totalWithoutVatMinor: number;
  totalVatMinor: number;
  shippingWithVatMinor: number;
  /** EUR per unit of the order currency on the order day (D23), 6 decimals. */
  eurRate: number;
  paymentMethod: string;
  shippingMethod: string;
  variableSymbol: string;
  customerEmailHash: string;
  customer: Customer;
  items: OrderItem[];
  /** The coupon the customer applied, if any (its discount is in `discounts` and already lowers the totals). */
  couponCode: string | null;
  /** Order-level discount lines (negative amounts), one per VAT rate; empty without a coupon. */
  discounts: DiscountLine[];
}

/** A discount line of an order: the part of a coupon's discount at one VAT rate; amounts are negative minor units. */
export interface DiscountLine {
  couponCode: string;
  name: string;
  vatRate: number;
  amountWithVatMinor: number;
  amountWithoutVatMinor: number;
}

export type CouponDiscount = { type: 'percent'; percent: number } | { type: 'fixed'; amountMinor: number } | { type: 'free_shipping' };

/** A coupon as the shop stores it; fixed amounts are in the shop currency. */
export interface Coupon {
  code: string;
  name: string;
  discount: CouponDiscount;
  currency: Currency;
  /** Goods total with VAT (of the goods the coupon applies to) below which the coupon does not apply. */
  minOrderMinor: number | null;
  validFrom: Date | null;
  /** Exclusive end of validity; null = no end. */
  validUntil: Date | null;
  /** Total uses allowed; null = unlimited. */
  usageLimit: number | null;
  perCustomerLimit: number | null;
  /** Restriction to categories / products; both empty = the whole shop. */
  categoryGuids: string[];
  productCodes: string[];
  /** The shop's own switch. */
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** When the shop switched it off (the change the sync sees), or null. */
  disabledAt: Date | null;
  /** For an affiliate partner's discount code: the index of the demo partner it belongs to; null for shop campaigns. */
  partnerIndex: number | null;
}

export interface Order extends OrderContent {
  createdAt: Date;
  updatedAt: Date;
  statusId: number;
  statusName: string;
  /** When the current status was reached. */
  statusChangedAt: Date;
  /** Every status the order has had so far, oldest first (the first is `New` at creation). */
  statusHistory: StatusChange[];
  paid: boolean;
  paidAt: Date | null;
  shipments: Shipment[];
}

export type DocumentType = 'invoice' | 'proforma' | 'credit_note';

/** An accounting document; once issued it does not change. Amounts of a credit note are negative. */
export interface Document {
  type: DocumentType;
  code: string;
  orderCode: string;
  issuedAt: Date;
  /** Tax date as a local calendar date; null for a proforma (D21). */
  taxDate: string | null;
  dueDate: string | null;
  currency: Currency;
  totalWithVatMinor: number;
  totalWithoutVatMinor: number;
  totalVatMinor: number;
  variableSymbol: string;
  customerEmailHash: string;
  /** The invoice a credit note corrects. */
  relatedCode: string | null;
}

export type ClaimType = 'withdrawal' | 'complaint';

export type ClaimResolution = 'refund' | 'repair' | 'rejected';

/** The goods the customer sends back for a claim: a return shipment belongs to the claim, never to `shipment.*`. */
export interface ReturnShipment {
  carrierCode: string;
  trackingNumber: string;
  status: 'CREATED' | 'DELIVERED';
  createdAt: Date;
  deliveredAt: Date | null;
}

export interface Claim {
  code: string;
  orderCode: string;
  type: ClaimType;
  reason: string;
  openedAt: Date;
  updatedAt: Date;
  statusId: number;
  statusName: string;
  statusChangedAt: Date;
  statusHistory: StatusChange[];
  closedAt: Date | null;
  resolution: ClaimResolution | null;
  currency: Currency;
  /** Refunded amount with VAT, set once a refund is decided. */
  refundWithVatMinor: number | null;
  items: Array<{ lineNo: number; productCode: string; quantity: number }>;
  returnShipment: ReturnShipment | null;
  customerEmailHash: string;
  /** The claims-module process the claim runs in, and its deadline. */
  processId: number;
  deadline: Date;
  tags: string[];
  /** What the customer asks for; `bankAccount` is the full IBAN as the shop holds it (the service stores it masked). */
  customerRequest: { type: 'refund' | 'exchange' | 'repair'; refundTo: 'bank_account' | 'original_payment' | 'coupon' | null; bankAccount: string | null };
  /** The customer's rating (1-5) and comment, given when the claim closes; null before or when not rated. */
  rating: number | null;
  ratingComment: string | null;
  /** E-mails the shop sent the customer, one per status change with a template, oldest first. */
  emails: Array<{ templateId: string; subject: string; sentAt: Date }>;
}

export type StockMovementKind = 'receipt' | 'sale' | 'return';

/** One stock movement of an item; `quantity` is signed (a sale is negative). */
export interface StockMovement {
  id: string;
  productCode: string;
  kind: StockMovementKind;
  quantity: number;
  occurredAt: Date;
  orderCode: string | null;
  claimCode: string | null;
}

export type StockSource = 'balance' | 'product_card';

/** Stock of one item as the shop reports it; a shop without a balance has only `quantity` (SPEC "Stock"). */
export interface StockItem {
  code: string;
  sku: string;
  /** The platform's own id of the inventory item where it has one apart from the code (Medusa's `iitem_…`): the event's `item_id`. */
  itemId?: string | null;
  source: StockSource;
  quantity: number;
  physical: number | null;
  reserved: number | null;
  available: number | null;
  updatedAt: Date;
}

export type SearchConsoleStatus = 'connected' | 'access_lost';

/** One archive sync of the shop's search-console property. */
export interface SearchConsoleRun {
  /** The local date of the run, unique per shop. */
  key: string;
  ranAt: Date;
  status: 'completed' | 'failed';
  property: string;
  searchTypes: string[];
  dataState: string;
  finalDataThrough: string | null;
  freshDataThrough: string | null;
  daysUpserted: number;
  revisedDates: string[];
  syncVersion: number;
  error: string | null;
  errorCode: string | null;
  lastSuccessfulSyncAt: Date | null;
  retryAt: Date | null;
}

/** The connection of the shop's search-console property with its history of states. */
export interface SearchConsoleProperty {
  property: string;
  status: SearchConsoleStatus;
  statusChangedAt: Date;
  statusHistory: Array<{ status: SearchConsoleStatus; at: Date }>;
  lastSyncAt: Date | null;
  lastSuccessfulSyncAt: Date | null;
  syncVersion: number | null;
  finalDataThrough: string | null;
  freshDataThrough: string | null;
}

/** One line of an accounting document: goods, shipping or a coupon's discount; amounts in minor units (negative on a credit note). */
export interface DocumentLine {
  lineNo: number;
  kind: 'product' | 'shipping' | 'discount';
  productCode: string | null;
  name: string;
  quantity: number;
  unitPriceWithVatMinor: number;
  totalWithVatMinor: number;
  totalWithoutVatMinor: number;
  vatRate: number;
}

/** The document's amounts at one VAT rate. */
export interface VatRateLine {
  vatRate: number;
  baseMinor: number;
  vatMinor: number;
  totalMinor: number;
}

/** Where a document stands: `issued`, `paid` (invoice), `settled` (proforma followed by its invoice), `partially_credited`/`credited` (invoice), `cancelled`. */
export type DocumentLifecycle = 'issued' | 'paid' | 'settled' | 'partially_credited' | 'credited' | 'cancelled';

/**
 * A document as the shop shows it at an instant: the issued content (never changes) plus its lines, VAT per rate,
 * the buyer, and its state, which moves with payment, settlement, credit notes and cancellation.
 */
export interface DocumentRecord extends Document {
  /** Issue date as a local calendar date of the shop. */
  issueDate: string;
  paymentMethod: string;
  lines: DocumentLine[];
  vatBreakdown: VatRateLine[];
  customer: Customer;
  lifecycle: DocumentLifecycle;
  /** The platform's own name of the state (`state in the source`). */
  sourceState: string;
  /** False once the shop cancelled (voided) the document. */
  valid: boolean;
  updatedAt: Date;
  /** Whether the shop has a printable form of the document (documents imported from outside accounting have none). */
  pdfAvailable: boolean;
}

export interface VisitRow {
  channel: string;
  source: string;
  referrer: string | null;
  device: string;
  landingPage: string;
  visits: number;
}

/** One local day of visits, reported the next morning. */
export interface VisitDay {
  day: string;
  reportedAt: Date;
  rows: VisitRow[];
}

export interface OrderTracking {
  orderCode: string;
  channel: string;
  source: string;
  referrer: string | null;
  device: string;
  landingPage: string;
  trackedAt: Date;
}

export interface AdSpend {
  platform: 'google_ads' | 'meta_ads';
  campaign: string;
  day: string;
  currency: string;
  spendMinor: number;
  budgetMinor: number;
  impressions: number;
  clicks: number;
  conversions: number;
  conversionValueMinor: number;
  /** EUR per unit of the currency on the day (D23). */
  eurRate: number;
  reportedAt: Date;
}

export const PRODUCT_TEXT_FIELDS = ['description', 'shortDescription', 'metaTitle', 'metaDescription'] as const;

export const CATEGORY_TEXT_FIELDS = ['description', 'descriptionBottom', 'metaTitle', 'metaDescription'] as const;

export type ProductTextField = (typeof PRODUCT_TEXT_FIELDS)[number];

export type CategoryTextField = (typeof CATEGORY_TEXT_FIELDS)[number];

export type AvailabilityReason = 'PLATFORMA' | 'BEZ_ROZSIRENIA' | 'PROSTREDIE';

/** What the shop's platform lets the service do with content (SPEC: `manageable`, `reason`; writable text fields). */
export interface ContentCapabilities {
  productFields: ProductTextField[];
  categoryFields: CategoryTextField[];
  availabilityManageable: boolean;
  availabilityReason: AvailabilityReason | null;
}

export interface Availability {
  id: string;
  name: string;
  description: string | null;
  onStockHours: number | null;
  deliveryHours: number | null;
  meaning: 'in_stock' | 'backorder' | 'preorder' | 'out_of_stock';
  color: string;
  system: boolean;
  defaultRoles: string[];
  pairingRows: number;
  position: number;
}

export interface ProductTexts {
  code: string;
  availabilityId: string;
  texts: Record<ProductTextField, string | null>;
  updatedAt: Date;
}

export interface CategoryTexts {
  guid: string;
  texts: Record<CategoryTextField, string | null>;
  updatedAt: Date;
}

export interface Article {
  id: string;
  kind: 'article' | 'page';
  title: string;
  text: string;
  url: string;
  previewImageUrl: string | null;
  publishedAt: Date;
  updatedAt: Date;
}

export interface CompanyCost {
  /** First day of the month, YYYY-MM-01. */
  month: string;
  category: string;
  currency: string;
  amountMinor: number;
  /** EUR per unit of the currency when the cost was booked (D23). */
  eurRate: number;
  bookedAt: Date;
}

export interface SearchConsoleRow {
  query: string;
  page: string;
  /** ISO 3166-1 alpha-3, lower case, as Search Console reports it. */
  country: string;
  device: 'desktop' | 'mobile' | 'tablet';
  clicks: number;
  impressions: number;
  /** Average position, 2 decimals. */
  position: number;
}

export interface SearchConsoleDay {
  day: string;
  dataState: 'fresh' | 'final';
  rows: SearchConsoleRow[];
}
