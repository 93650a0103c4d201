/** Shipping: connected carriers, shipments with tracking, and delivery statistics of one shop. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { getShipment, listCarriers, listShipments, SHIPMENT_OUTCOMES, shipmentStats } from '../../queries/shipping.js';
import { from, listParams, market, to } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const carrierParam = z.string().min(1).max(64).describe('Carrier code, e.g. `packeta`; the codes come from shipping_carriers (GET /shipping/carriers).');

const carrierSchema = z.object({
  code: z.string().describe('Carrier code, used as `carrierCode` on shipments and as the `carrier` filter.'),
  name: z.string(),
  profiles: z.array(z.record(z.string(), z.unknown())).describe('The carrier\'s profiles (services) as the shop stores them, e.g. `{id, name, service}`.'),
  connectedAt: timestamp.describe('When the shop connected the carrier; ISO 8601 UTC with milliseconds.'),
});

const shipmentSchema = z.object({
  shipmentId: z.string().describe('Shipment id (digits); use it with shipping_shipment_detail.'),
  orderCode: z.string().describe('Order number in the shop.'),
  carrierCode: z.string(),
  trackingNumber: z.string(),
  country: z.string().describe('Destination country, ISO 3166-1 alpha-2.'),
  status: z.string().describe('Latest carrier status, e.g. `IN_TRANSIT`, `DELIVERED`.'),
  outcome: z.enum(SHIPMENT_OUTCOMES).describe('Outcome group: delivered, returned, failed, in_transit, cancelled.'),
  createdAt: timestamp,
  handedOverAt: timestamp.nullable().describe('Hand-over to the carrier; null when unknown.'),
  deliveredAt: timestamp.nullable().describe('Delivery; null when not delivered (yet).'),
});

const trackingEventSchema = z.object({
  occurredAt: timestamp,
  status: z.string(),
  description: z.string(),
  location: z.string().nullable(),
  isDelivery: z.boolean().describe('True for a delivery scan; a shipment may have more than one, the first counts for delivery time.'),
});

const rate = z.number().min(0).max(1).nullable()
  .describe('delivered / (delivered + returned + failed), rounded to 4 decimals; in-transit and cancelled shipments are not in it. Null when no shipment is settled.');
const hours = z.number().nullable();

const deliveryTimesSchema = z.object({
  measured: z.number().int().describe('Shipments with both a hand-over time and a delivery tracking event; only these are in the median and p90.'),
  medianHours: hours.describe('Median hours from hand-over to the first delivery tracking event, 2 decimals; null when `measured` is 0.'),
  p90Hours: hours.describe('90th percentile (continuous) of the same, 2 decimals; null when `measured` is 0.'),
});

const statsSchema = z.object({
  shipments: z.object({
    total: z.number().int().describe('Shipments created in the period, excluding cancelled ones.'),
    delivered: z.number().int(),
    returned: z.number().int(),
    failed: z.number().int(),
    inTransit: z.number().int().describe('Not settled yet: neither success nor failure.'),
    cancelled: z.number().int().describe('Reported separately; not part of `total`, the rate or the delivery times.'),
  }),
  deliveryRate: rate,
  delivery: deliveryTimesSchema,
  countries: z.array(z.object({
    country: z.string().describe('Destination country, ISO 3166-1 alpha-2.'),
    shipments: z.number().int().describe('Shipments to this country, excluding cancelled ones.'),
    delivered: z.number().int(),
    deliveryRate: rate,
    medianHours: hours.describe('Median delivery hours for this country; null when none was measured.'),
  })).describe('Per destination country, most shipments first.'),
  carriers: z.array(z.object({
    carrierCode: z.string(),
    carrierName: z.string().nullable().describe('Null when the carrier is no longer connected.'),
    shipments: z.number().int().describe('Shipments of this carrier, excluding cancelled ones.'),
    delivered: z.number().int(),
    returned: z.number().int(),
    failed: z.number().int(),
    inTransit: z.number().int(),
    deliveryRate: rate,
    delivery: deliveryTimesSchema,
    countries: z.array(z.string()).describe('Destination countries this carrier served, alphabetical.'),
  })).describe('Per carrier, most shipments first.'),
});

/** Lists the carriers a shop has connected, with their profiles and without credentials. */
export const shippingCarriers = defineCapability({
  name: 'shipping.carriers',
  summary: 'Connected carriers and their profiles, without credentials.',
  description: 'Returns every carrier the shop `market` has connected (code, name, profiles, when connected), ordered by code, in one response: the set is small, so it is not paginated (`hasMore` is always false). Carrier credentials are never returned. Use the codes as the `carrier` filter of shipping_shipments and shipping_stats.',
  path: '/shipping/carriers',
  scope: 'shipping:read',
  mcpTool: 'shipping_carriers',
  kind: 'list',
  market: 'required',
  params: z.object({ market }).strict(),
  result: carrierSchema,
  annotations: readOnly,
  handler: ({ ctx }) => listCarriers(ctx.db, ctx.shop!.id),
});

/** Lists a shop's shipments of a period, newest first, by cursor. */
export const shippingShipments = defineCapability({
  name: 'shipping.shipments',
  summary: 'Shipments of one shop with carrier, country, hand-over and delivery time, newest first.',
  description: 'Returns the shipments of the shop `market` created in the period (default: the last 30 days, including today, in the shop\'s time zone), newest first, optionally of one `carrier`. Paginated: send `nextCursor` back as `cursor` with all other parameters unchanged until `hasMore` is false. For figures (counts, delivery rate, median delivery time) use shipping_stats instead of adding up pages; for one shipment\'s tracking events use shipping_shipment_detail.',
  path: '/shipping/shipments',
  scope: 'shipping:read',
  mcpTool: 'shipping_shipments',
  kind: 'list',
  market: 'required',
  period: { default: 'last30days' },
  params: z.object({ ...listParams, carrier: carrierParam.optional() }).strict(),
  result: shipmentSchema,
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => listShipments(ctx.db, ctx.shop!.id, period, params.carrier, page),
});

/** Reads one shipment of a shop with all its tracking events. */
export const shippingShipmentDetail = defineCapability({
  name: 'shipping.shipmentDetail',
  summary: 'One shipment with all tracking events.',
  description: 'Returns one shipment of the shop `market` by its `shipmentId` (from shipping_shipments), with all its tracking events in chronological order. A shipment of another shop is not found.',
  path: '/shipping/shipments/{shipmentId}',
  scope: 'shipping:read',
  mcpTool: 'shipping_shipment_detail',
  kind: 'get',
  market: 'required',
  params: z.object({ market, shipmentId: z.string().regex(/^\d{1,18}$/, 'a shipment id (digits)').describe('Shipment id, as `shipmentId` in shipping_shipments.') }).strict(),
  result: shipmentSchema.extend({ trackingEvents: z.array(trackingEventSchema).describe('All tracking events, oldest first.') }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const shipment = await getShipment(ctx.db, ctx.shop!.id, params.shipmentId);
    if (!shipment) throw new AppError('NOT_FOUND', `No shipment \`${params.shipmentId}\` in shop \`${ctx.shop!.code}\`.`, { param: 'shipmentId' });
    return shipment;
  },
});

/** Summarises a shop's shipments of a period: counts, delivery rate, delivery times, per country and per carrier. */
export const shippingStats = defineCapability({
  name: 'shipping.stats',
  summary: 'Shipment counts, delivery rate, median and p90 delivery time, per country and per carrier.',
  description: 'Returns finished delivery statistics for the shipments of the shop `market` CREATED in the period (default: the last 30 days, including today, in the shop\'s time zone), optionally of one `carrier`: counts per outcome, the delivery rate (delivered / (delivered + returned + failed); in-transit shipments count as neither, cancelled ones are reported separately and counted nowhere else), and the median and 90th-percentile delivery time in hours, measured from hand-over to the carrier to the FIRST delivery tracking event (not from the order date). Shipments missing either point are left out of the times; `delivery.measured` says how many were counted. The same figures follow per destination country and per carrier. Not paginated. Use this instead of summing shipping_shipments pages.',
  path: '/shipping/stats',
  scope: 'shipping:read',
  mcpTool: 'shipping_stats',
  kind: 'summary',
  market: 'required',
  period: { default: 'last30days' },
  params: z.object({ market, from: from.optional(), to: to.optional(), carrier: carrierParam.optional() }).strict(),
  result: statsSchema,
  annotations: readOnly,
  handler: ({ params, ctx, period }) => shipmentStats(ctx.db, ctx.shop!.id, period, params.carrier),
});
