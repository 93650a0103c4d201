/** The capability registry: every capability, once. REST routes, MCP tools, /capabilities and /openapi.json come from this list. */
import { isRestCapability, type Capability, type RestCapability } from './types.js';
import { accountConnection, accountEntitlements } from './areas/account.js';
import { categoriesList, productsGet, productsSearch } from './areas/catalogue.js';
import { inventoryStock } from './areas/inventory.js';
import { ordersGet, ordersList } from './areas/orders.js';
import { shippingCarriers, shippingShipmentDetail, shippingShipments, shippingStats } from './areas/shipping.js';
import { storesIntegrationStatus, storesList } from './areas/stores.js';
import {
  automationsCatalog, automationsCreateDraft, automationsGet, automationsList, automationsOptions, automationsRuns, automationsTemplates,
  automationsUpdateDraft, automationsValidateDraft,
} from './areas/automations.js';
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
  automationsCatalog,
  automationsOptions,
  automationsTemplates,
  automationsList,
  automationsGet,
  automationsRuns,
  automationsValidateDraft,
  automationsCreateDraft,
  automationsUpdateDraft,
];

/** Capabilities by their MCP tool name. */
export const capabilitiesByTool = new Map(capabilities.filter((c) => c.mcpTool).map((c) => [c.mcpTool as string, c]));

/** The capabilities with a REST route (MCP-only tools such as writes have none). */
export const restCapabilities: readonly RestCapability[] = capabilities.filter(isRestCapability);
