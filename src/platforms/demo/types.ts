/** Shapes of the demo generator's own data (catalogue, carriers); the synced records' shapes live in the domain (src/records). */
import type { CarrierProfile, Currency } from './catalogue.js';
export type {
  OrderItem as GeneratedOrderItem, TrackingEvent as GeneratedTrackingEvent, ShipmentOutcome, Shipment as GeneratedShipment, Customer as GeneratedCustomer, StatusChange, OrderContent, DiscountLine as GeneratedDiscountLine, CouponDiscount, Coupon as GeneratedCoupon, Order as GeneratedOrder, DocumentType, Document as GeneratedDocument, ClaimType, ClaimResolution, ReturnShipment as GeneratedReturnShipment, Claim as GeneratedClaim, StockMovementKind, StockMovement as GeneratedStockMovement, StockSource, StockItem as GeneratedStockItem, SearchConsoleStatus, SearchConsoleRun as GeneratedSearchConsoleRun, SearchConsoleProperty as GeneratedSearchConsoleProperty, DocumentLine as GeneratedDocumentLine, VatRateLine as GeneratedVatRateLine, DocumentLifecycle, DocumentRecord as GeneratedDocumentRecord,
} from '../../records/types.js';

export interface GeneratedCategory {
  guid: string;
  name: string;
  parentGuid: string | null;
  position: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface GeneratedProduct {
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
  createdAt: Date;
  updatedAt: Date;
}

export interface GeneratedCarrier {
  code: string;
  name: string;
  profiles: CarrierProfile[];
  /** Stand-in for encrypted API credentials; exists so tests can prove it is never exposed. */
  credentialsEncrypted: Buffer;
  connectedAt: Date;
}

export interface GeneratedCatalogue {
  categories: GeneratedCategory[];
  products: GeneratedProduct[];
  carriers: GeneratedCarrier[];
}

export interface GenerateOptions {
  orders: number;
  days: number;
  endDate: Date;
}
