/**
 * The shop-platform adapter (D20): how the service reads a shop back-end's changes and applies the few writes it makes.
 * Records use one neutral shape for every platform (money in integer minor units, ISO codes, Dates); an adapter for a
 * real platform maps its API into them. The `demo` platform is the one that ships.
 */
import type {
  GeneratedCategory, GeneratedProduct, GeneratedClaim, GeneratedDocumentRecord, GeneratedOrder, GeneratedSearchConsoleProperty, GeneratedSearchConsoleRun, GeneratedShipment,
  GeneratedStockItem, GeneratedStockMovement, GeneratedCoupon,
} from './demo/types.js';
import type { GeneratedCompanyCost } from './demo/companyCosts.js';
import type { GeneratedAdSpend, GeneratedOrderTracking, GeneratedVisitDay } from './demo/analytics.js';
import type { GeneratedSearchConsoleDay } from './demo/searchConsoleRows.js';
import type {
  GeneratedArticle, GeneratedAvailability, GeneratedCategoryTexts, GeneratedContentCapabilities, GeneratedProductTexts,
} from './demo/content.js';

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
  /** Platform-specific connection settings (for `demo`: seed and history window). */
  settings: Record<string, unknown>;
}

export type PlatformOrder = Omit<GeneratedOrder, 'shipments'>;
/** An outbound shipment; return shipments of claims are part of the claim, never a shipment. */
export type PlatformShipment = GeneratedShipment & { orderCode: string };
/** A document as the shop shows it at the read's end: issued content, lines, VAT per rate, buyer and current state. */
export type PlatformDocument = GeneratedDocumentRecord;
export type PlatformClaim = GeneratedClaim;
export type PlatformStockMovement = GeneratedStockMovement;
export type PlatformStockItem = GeneratedStockItem;
export type PlatformSearchConsoleRun = GeneratedSearchConsoleRun;
export type PlatformSearchConsoleProperty = GeneratedSearchConsoleProperty;
/** A monthly company cost (issue 9): the result after costs of the financial summary. */
export type PlatformCompanyCost = GeneratedCompanyCost;
/** What the platform lets the service write: text fields per entity, and whether the availability dictionary is manageable (and why not). */
export type PlatformContentCapabilities = GeneratedContentCapabilities;
export type PlatformAvailability = GeneratedAvailability;
export type PlatformProductTexts = GeneratedProductTexts;
export type PlatformCategoryTexts = GeneratedCategoryTexts;
export type PlatformArticle = GeneratedArticle;
/** One record of the catalogue area: the platform's content capabilities, a dictionary entry, texts, or an article. */
export type CatalogueRecord =
  | { kind: 'capabilities'; capabilities: PlatformContentCapabilities }
  | { kind: 'availability'; availability: PlatformAvailability }
  | { kind: 'category'; category: PlatformCategoryTexts }
  | { kind: 'product'; product: PlatformProductTexts }
  | { kind: 'article'; article: PlatformArticle };
/** Web analytics and advertising (issue 9): a day of visits, a tracked order, a day of ad spend. */
export type PlatformWebAnalytics =
  | { kind: 'visits'; day: GeneratedVisitDay }
  | { kind: 'tracking'; tracking: GeneratedOrderTracking }
  | { kind: 'ads'; day: string; rows: GeneratedAdSpend[] };
/** A coupon as the shop stores it (issue 10); fixed amounts in the shop currency. */
export type PlatformCoupon = Omit<GeneratedCoupon, 'partnerIndex'> & { partnerIndex: number | null };

/** A product category as the shop has it. */
export type PlatformCategory = GeneratedCategory;
/** A sellable product (for platforms with variants: one variant) with its price in the shop currency. */
export type PlatformProduct = GeneratedProduct;

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
  search_console_data: GeneratedSearchConsoleDay;
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

/** A shop back-end as the service uses it: read changes per data area; write what later issues need. */
export interface ShopPlatformAdapter {
  readonly platform: string;
  readonly areas: readonly SyncArea[];
  /** The shop's current time as the platform sees it (the `until` of a sync run). */
  now(shop: PlatformShop): Date;
  /** Changes of one area in (since, until], in batches, each with the position to resume after it. */
  readChanges<A extends SyncArea>(shop: PlatformShop, area: A, request: ChangeRequest): AsyncIterable<ChangeBatch<A>>;
  /** Writes availability dictionary entries; returns them as the shop stored them. */
  writeAvailabilities(shop: PlatformShop, entries: AvailabilityEntry[]): Promise<AvailabilityEntry[]>;
  /** Writes product texts; returns what the shop stored (it may strip markup). */
  writeProductTexts(shop: PlatformShop, productCode: string, texts: ContentTexts): Promise<ContentTexts>;
  /** Writes category texts; returns what the shop stored. */
  writeCategoryTexts(shop: PlatformShop, categoryGuid: string, texts: ContentTexts): Promise<ContentTexts>;
  /** Creates or replaces a coupon. */
  saveCoupon(shop: PlatformShop, coupon: CouponInput): Promise<CouponInput>;
  /** Removes a coupon; false when the shop had no such coupon. */
  removeCoupon(shop: PlatformShop, code: string): Promise<boolean>;
  /** The coupon as the shop has it now (live, not the mirror), or null when the shop has no such coupon. */
  readCoupon(shop: PlatformShop, code: string): Promise<PlatformCouponState | null>;
}
