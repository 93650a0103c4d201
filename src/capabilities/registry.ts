/** The capability registry: every capability, once. REST routes, MCP tools, /capabilities and /openapi.json come from this list. */
import type { Capability } from './types.js';
import { accountConnection, accountEntitlements } from './areas/account.js';
import { categoriesList, productsGet, productsSearch } from './areas/catalogue.js';
import { inventoryStock } from './areas/inventory.js';
import { ordersGet, ordersList } from './areas/orders.js';
import { shippingCarriers, shippingShipmentDetail, shippingShipments, shippingStats } from './areas/shipping.js';
import { storesIntegrationStatus, storesList } from './areas/stores.js';
import { webhooksDeliveries, webhooksEndpoint, webhooksEndpoints, webhooksEvents } from './areas/webhooks.js';
import {
  claimsConfiguration, claimsGet, claimsList, claimsRefundOptions, claimsRefundReadiness, claimsRefundSettings, claimsRoutes, claimsSettings,
  claimsStatistics, claimsTemplates,
} from './areas/claims.js';
import { couponsActivationLink, couponsActivationStatus, couponsCapabilities, couponsGet, couponsList } from './areas/coupons.js';

export const capabilities: readonly Capability[] = [
  storesList,
  storesIntegrationStatus,
  accountConnection,
  accountEntitlements,
  ordersList,
  ordersGet,
  shippingCarriers,
  shippingShipments,
  shippingShipmentDetail,
  shippingStats,
  productsSearch,
  productsGet,
  categoriesList,
  inventoryStock,
  webhooksEvents,
  webhooksEndpoints,
  webhooksEndpoint,
  webhooksDeliveries,
  claimsList,
  claimsGet,
  claimsStatistics,
  claimsSettings,
  claimsRefundReadiness,
  claimsConfiguration,
  claimsRefundOptions,
  claimsRefundSettings,
  claimsRoutes,
  claimsTemplates,
  couponsList,
  couponsGet,
  couponsCapabilities,
  couponsActivationLink,
  couponsActivationStatus,
];

/** Capabilities by their MCP tool name. */
export const capabilitiesByTool = new Map(capabilities.filter((c) => c.mcpTool).map((c) => [c.mcpTool as string, c]));
