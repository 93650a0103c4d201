/** Shapes of the demo generator's own data (catalogue, carriers); the synced records' shapes live in the domain (src/records). */
import type { CarrierProfile, Currency } from './catalogue.js';
import type { Category, Product } from '../../records/types.js';
export type {
  OrderItem as GeneratedOrderItem, TrackingEvent as GeneratedTrackingEvent, ShipmentOutcome, Shipment as GeneratedShipment, Customer as GeneratedCustomer, StatusChange, OrderContent, DiscountLine as GeneratedDiscountLine, CouponDiscount, Coupon as GeneratedCoupon, Order as GeneratedOrder, DocumentType, Document as GeneratedDocument, ClaimType, ClaimResolution, ReturnShipment as GeneratedReturnShipment, Claim as GeneratedClaim, StockMovementKind, StockMovement as GeneratedStockMovement, StockSource, StockItem as GeneratedStockItem, SearchConsoleStatus, SearchConsoleRun as GeneratedSearchConsoleRun, SearchConsoleProperty as GeneratedSearchConsoleProperty, DocumentLine as GeneratedDocumentLine, VatRateLine as GeneratedVatRateLine, DocumentLifecycle, DocumentRecord as GeneratedDocumentRecord,
} from '../../records/types.js';

/** The demo's categories are the domain's. */
export type GeneratedCategory = Category;

/** The demo's products are the domain's, with the demo's own (narrower) currency type. */
export interface GeneratedProduct extends Omit<Product, 'currency'> {
  currency: Currency;
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
