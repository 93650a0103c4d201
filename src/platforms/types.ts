/**
 * The shop-platform port (D20, docs/platforms.md): how the service reads a shop back-end's changes and applies the few
 * writes it makes. It is written in the domain's records (src/records: money in integer minor units, ISO codes, Dates);
 * each adapter (src/platforms/<name>/) maps its platform's API into them and declares what it can do.
 */
import type { Knex } from 'knex';
import type {
  AdSpend, Article, Availability, Category, CategoryTexts, Claim, CompanyCost, ContentCapabilities, Coupon, DocumentRecord, Order, OrderTracking,
  Product, ProductTexts, SearchConsoleDay, SearchConsoleProperty, SearchConsoleRun, Shipment, StockItem, StockMovement, VisitDay,
} from '../records/types.js';
import type { DocumentType } from '../records/types.js';

/** Data areas a sync pulls, in the order a run pulls them (an order exists before its documents and shipments). */
export const SYNC_AREAS = [
  'products', 'orders', 'documents', 'shipments', 'claims', 'stock', 'search_console', 'company_costs', 'catalogue', 'web_analytics', 'coupons',
  'search_console_data',
] as const;
export type SyncArea = (typeof SYNC_AREAS)[number];

/** One connected shop as an adapter sees it. */
export interface PlatformShop {
  id: string;
  accountCode: string;
  code: string;
  platform: string;
  timeZone: string;
  /** Shop currency (ISO 4217). */
  currency?: string;
  /** Platform-specific connection settings, never secrets (for `demo`: seed and history window). */
  settings: Record<string, unknown>;
  /** The decrypted connection credentials (only in the worker's memory, never logged); null when the platform needs none. */
  credentials?: PlatformCredentials | null;
}

export type PlatformOrder = Omit<Order, 'shipments'>;
/** An outbound shipment; return shipments of claims are part of the claim, never a shipment. */
export type PlatformShipment = Shipment & { orderCode: string };
/** A document as the shop shows it at the read's end: issued content, lines, VAT per rate, buyer and current state. */
export type PlatformDocument = DocumentRecord;
export type PlatformClaim = Claim;
export type PlatformStockMovement = StockMovement;
export type PlatformStockItem = StockItem;
export type PlatformSearchConsoleRun = SearchConsoleRun;
export type PlatformSearchConsoleProperty = SearchConsoleProperty;
/** A monthly company cost (issue 9): the result after costs of the financial summary. */
export type PlatformCompanyCost = CompanyCost;
/** What the platform lets the service write: text fields per entity, and whether the availability dictionary is manageable (and why not). */
export type PlatformContentCapabilities = ContentCapabilities;
export type PlatformAvailability = Availability;
export type PlatformProductTexts = ProductTexts;
export type PlatformCategoryTexts = CategoryTexts;
export type PlatformArticle = Article;
/** One record of the catalogue area: the platform's content capabilities, a dictionary entry, texts, or an article. */
export type CatalogueRecord =
  | { kind: 'capabilities'; capabilities: PlatformContentCapabilities }
  | { kind: 'availability'; availability: PlatformAvailability }
  | { kind: 'category'; category: PlatformCategoryTexts }
  | { kind: 'product'; product: PlatformProductTexts }
  | { kind: 'article'; article: PlatformArticle };
/** Web analytics and advertising (issue 9): a day of visits, a tracked order, a day of ad spend. */
export type PlatformWebAnalytics =
  | { kind: 'visits'; day: VisitDay }
  | { kind: 'tracking'; tracking: OrderTracking }
  | { kind: 'ads'; day: string; rows: AdSpend[] };
/** A coupon as the shop stores it (issue 10); fixed amounts in the shop currency. */
export type PlatformCoupon = Omit<Coupon, 'partnerIndex'> & { partnerIndex: number | null };

/** A product category as the shop has it. */
export type PlatformCategory = Category;
/** A sellable product (for platforms with variants: one variant) with its price in the shop currency. */
export type PlatformProduct = Product;

/** What one change batch of each area holds: records as they stand at the end of the read (`until`). */
export interface AreaRecords {
  /**
   * Categories and products that changed (platforms whose catalogue changes after the shop is connected; the demo
   * loads its catalogue with its history and reads nothing here).
   */
  products: { kind: 'category'; category: PlatformCategory } | { kind: 'product'; product: PlatformProduct };
  orders: PlatformOrder;
  documents: PlatformDocument;
  shipments: PlatformShipment;
  claims: PlatformClaim;
  /**
   * Movements first, then the items' current figures. A platform that reports no movements (Medusa) sets `announce` on
   * an item: when its figures changed, the change is one `inventory.stock_changed` of that kind at the item's `updatedAt`.
   */
  stock: { kind: 'movement'; movement: PlatformStockMovement } | { kind: 'item'; item: PlatformStockItem; announce?: string };
  /** Runs first, then the property's current connection. */
  search_console: { kind: 'run'; run: PlatformSearchConsoleRun } | { kind: 'property'; property: PlatformSearchConsoleProperty };
  company_costs: PlatformCompanyCost;
  /** Capabilities and the dictionary first (every read), then texts and articles that changed. */
  catalogue: CatalogueRecord;
  web_analytics: PlatformWebAnalytics;
  /** Every coupon the shop has at `until` (a small set), then the list of their codes: a code missing from it was removed. */
  coupons: { kind: 'coupon'; coupon: PlatformCoupon } | { kind: 'present'; codes: string[] };
  /** One delivered day of search-console rows (fresh or final). */
  search_console_data: SearchConsoleDay;
}

export interface ChangeRequest {
  /** Changes after this instant; null for a first read (backfill: everything the platform has). */
  since: Date | null;
  /** Changes up to and including this instant; records are returned as they stand at it. */
  until: Date;
  /** Where an interrupted read of the same (since, until) stopped: the `position` of the last batch applied. */
  resume: string | null;
  /** Records per batch (a batch may hold a few more, so that one order's records never span two batches). */
  limit: number;
}

/** One batch of changes and the position after it; applying it and storing the position is one transaction. */
export interface ChangeBatch<A extends SyncArea> {
  records: Array<AreaRecords[A]>;
  position: string;
}

export interface AvailabilityEntry {
  id: string;
  name: string;
  meaning: 'in_stock' | 'backorder' | 'preorder' | 'out_of_stock';
  onStockHours: number | null;
  deliveryHours: number | null;
}

/** Texts of a product or category; a missing field is left as it is. */
export type ContentTexts = Partial<Record<'description' | 'shortDescription' | 'descriptionBottom' | 'metaTitle' | 'metaDescription', string>>;

export interface CouponInput {
  code: string;
  discountPercent: number;
  validUntil: Date | null;
  /** The discount; when present it wins over `discountPercent` (coupon writes, issue 13). */
  discount?: PlatformCoupon['discount'];
  name?: string;
  validFrom?: Date | null;
  minOrderMinor?: number | null;
  usageLimit?: number | null;
  perCustomerLimit?: number | null;
  /** Restrictions; both empty = the whole shop. Absent = left as they are. */
  categoryGuids?: string[];
  productCodes?: string[];
  enabled?: boolean;
  /** The shop's internal note on the coupon (the affiliate programme writes whose partner code it is). */
  note?: string | null;
}

/** A coupon as the shop has it right now (read before a write: the preview's base and the stale check). */
export type PlatformCouponState = PlatformCoupon & { note: string | null };

/** Writes the service can make in a shop; a platform declares the ones it takes (`PlatformCapabilities.writes`). */
export const PLATFORM_WRITES = ['coupons', 'product_texts', 'category_texts', 'availability'] as const;
export type PlatformWrite = (typeof PLATFORM_WRITES)[number];

/** What a platform can do with coupons (SPEC `/coupons/capabilities`): a fact about its API, declared by its adapter. */
export interface CouponPlatformCapabilities {
  discountTypes: Array<'percent' | 'fixed' | 'free_shipping'>;
  percentRange: { min: number; max: number };
  fixedAmountCurrencies: 'shop_currency' | 'any';
  restrictions: { categories: boolean; products: boolean; minimumOrder: boolean; maxCategories: number; maxProducts: number };
  limits: { usageLimit: boolean; perCustomerLimit: boolean; validFrom: boolean; validUntil: boolean };
  codeRules: { minLength: number; maxLength: number; pattern: string; caseSensitive: boolean };
  couponFromLink: boolean;
  canDisable: boolean;
  canDelete: boolean;
}

/** What a platform can do, declared once by its adapter; the service refuses the rest with PLATFORM_UNSUPPORTED. */
export interface PlatformCapabilities {
  /** Data areas the adapter syncs (a subset of SYNC_AREAS); the other areas stay empty for its shops. */
  areas: readonly SyncArea[];
  /** Writes the platform takes; the write methods of the port are called only for these. */
  writes: readonly PlatformWrite[];
  /** Its coupon rules; null exactly when `writes` lacks `coupons`. */
  coupons: CouponPlatformCapabilities | null;
  /** Accounting documents the platform issues; types it does not issue are absent from /documents, never invented. */
  documents: readonly DocumentType[];
}

/** One field of a platform's connection credentials, as the CLI and the application ask for it. */
export interface CredentialField {
  name: string;
  label: string;
  /** Secret fields are masked on input; every field is stored encrypted and never returned either way. */
  secret: boolean;
  /** Absent = required. */
  optional?: boolean;
}

/** Credentials as a person entered them (e.g. `{ baseUrl, apiKey }`): stored encrypted with SECRETS_KEY, never returned. */
export type PlatformCredentials = Record<string, string>;

/** A shop about to be connected: what the test connection checks before anything is saved. */
export interface ConnectionRequest {
  accountCode: string;
  shopCode: string;
  currency: string;
  timeZone: string;
  credentials: PlatformCredentials;
}

/** The outcome of a test connection; a refusal says why in words a person can act on. */
export type ConnectionCheck =
  | { ok: true; /** Platform-specific settings to store with the shop (never secrets), e.g. the demo's seed. */ settings: Record<string, unknown> }
  | { ok: false; reason: 'credentials_rejected' | 'unreachable' | 'invalid'; message: string };

/** A shop back-end as the service uses it: read changes per data area; write what later issues need. */
export interface ShopPlatformAdapter {
  readonly platform: string;
  readonly capabilities: PlatformCapabilities;
  /** The credentials a connection of this platform needs (empty: none). */
  readonly credentialFields: readonly CredentialField[];
  /** Checks that the platform answers with these credentials (nothing is saved by the service before this is ok). */
  verifyConnection(request: ConnectionRequest): Promise<ConnectionCheck>;
  /** The shop's current time as the platform sees it (the `until` of a sync run). */
  now(shop: PlatformShop): Date;
  /** Changes of one area in (since, until], in batches, each with the position to resume after it. */
  readChanges<A extends SyncArea>(shop: PlatformShop, area: A, request: ChangeRequest): AsyncIterable<ChangeBatch<A>>;
  /** Writes availability dictionary entries; returns them as the shop stored them (only with the `availability` write). */
  writeAvailabilities(shop: PlatformShop, entries: AvailabilityEntry[]): Promise<AvailabilityEntry[]>;
  /** Writes product texts; returns what the shop stored, which may strip markup (only with `product_texts`). */
  writeProductTexts(shop: PlatformShop, productCode: string, texts: ContentTexts): Promise<ContentTexts>;
  /** Writes category texts; returns what the shop stored (only with `category_texts`). */
  writeCategoryTexts(shop: PlatformShop, categoryGuid: string, texts: ContentTexts): Promise<ContentTexts>;
  /** Creates or replaces a coupon (only with `coupons`, as are the two below). */
  saveCoupon(shop: PlatformShop, coupon: CouponInput): Promise<CouponInput>;
  /** Removes a coupon; false when the shop had no such coupon. */
  removeCoupon(shop: PlatformShop, code: string): Promise<boolean>;
  /** The coupon as the shop has it now (live, not the mirror), or null when the shop has no such coupon. */
  readCoupon(shop: PlatformShop, code: string): Promise<PlatformCouponState | null>;
  /**
   * Optional, for a simulated platform only (the demo): in the transaction that applies a batch of orders, lets these
   * orders' simulated shoppers click and send beacons through the service's own tracking (src/affiliate/tracking, as a
   * client of the service would, AM1). Real platforms leave it out: their shoppers reach `/r/` and `/b` themselves.
   */
  simulateTrackedVisits?(trx: Knex.Transaction, shop: PlatformShop, orders: PlatformOrder[]): Promise<void>;
}
