/** Codes every record uses: currencies, countries, shipment statuses. Pure values, no I/O (workflows import them). */

/** ISO 4217 currency code, e.g. `EUR`. */
export type Currency = string;
/** ISO 3166-1 alpha-2 country code, e.g. `SK`. */
export type CountryCode = string;

/** Shipment status strings carried by shipments and tracking events; adapters map their platform's states to these. */
export const SHIPMENT_STATUSES = [
  'CREATED', 'HANDED_OVER', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED', 'RETURNED', 'FAILED', 'CANCELLED',
] as const;
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number];
