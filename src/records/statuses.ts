/**
 * The service's order and claim statuses. Every adapter maps its platform's states onto these ids (the demo numbers
 * them this way natively); rollups, attribution and the claims module read them. Pure values, no I/O.
 */

/** Order statuses, as a shop back-end numbers them. */
export const ORDER_STATUSES = {
  new: { id: 1, name: 'New' },
  processing: { id: 2, name: 'Processing' },
  shipped: { id: 3, name: 'Shipped' },
  delivered: { id: 4, name: 'Delivered' },
  cancelled: { id: 5, name: 'Cancelled' },
  returned: { id: 6, name: 'Returned' },
} as const;

/** Claim statuses; `closes` marks the statuses that close a claim. */
export const CLAIM_STATUSES = {
  new: { id: 1, name: 'New', closes: false },
  awaitingGoods: { id: 2, name: 'Awaiting goods', closes: false },
  goodsReceived: { id: 3, name: 'Goods received', closes: false },
  inAssessment: { id: 4, name: 'In assessment', closes: false },
  resolved: { id: 5, name: 'Resolved', closes: true },
  rejected: { id: 6, name: 'Rejected', closes: true },
} as const;

export { SHIPMENT_STATUSES, type ShipmentStatus } from './codes.js';
