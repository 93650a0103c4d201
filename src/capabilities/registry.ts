/** The capability registry: every capability, once. REST routes, MCP tools, /capabilities and /openapi.json come from this list. */
import type { Capability } from './types.js';
import { accountConnection, accountEntitlements } from './areas/account.js';
import { categoriesList, productsGet, productsSearch } from './areas/catalogue.js';
import { customersGet, customersList, customersPerformance } from './areas/customers.js';
import { reportsFinancialSummary, salesOrderPerformance, salesProductPerformance } from './areas/reports.js';
import {
  analyticsAdvertisingCapability, analyticsChannelsCapability, analyticsComparisonCapability, analyticsMonthlyCapability,
  analyticsOrderCoverageCapability, analyticsOrderHeatmapCapability, analyticsOverviewCapability, analyticsRevenueSourcesCapability,
} from './areas/analytics.js';
import { analyticsSeoCapability, searchConsoleQueryCapability, searchConsoleStatusCapability } from './areas/searchConsole.js';
import { inventoryStock } from './areas/inventory.js';
import { ordersGet, ordersList } from './areas/orders.js';
import { shippingCarriers, shippingShipmentDetail, shippingShipments, shippingStats } from './areas/shipping.js';
import { storesIntegrationStatus, storesList } from './areas/stores.js';
import { webhooksDeliveries, webhooksEndpoint, webhooksEndpoints, webhooksEvents } from './areas/webhooks.js';

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
  // Customers, reports, sales, analytics (issue 9); performance before {customerKey} so its path wins.
  customersPerformance,
  customersList,
  customersGet,
  reportsFinancialSummary,
  salesOrderPerformance,
  salesProductPerformance,
  analyticsOverviewCapability,
  analyticsChannelsCapability,
  analyticsComparisonCapability,
  analyticsMonthlyCapability,
  analyticsOrderCoverageCapability,
  analyticsOrderHeatmapCapability,
  analyticsRevenueSourcesCapability,
  analyticsAdvertisingCapability,
  analyticsSeoCapability,
  searchConsoleStatusCapability,
  searchConsoleQueryCapability,
];

/** Capabilities by their MCP tool name. */
export const capabilitiesByTool = new Map(capabilities.filter((c) => c.mcpTool).map((c) => [c.mcpTool as string, c]));
