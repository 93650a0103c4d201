/** The capability registry: every capability, once. REST routes, MCP tools, /capabilities and /openapi.json come from this list. */
import type { Capability } from './types.js';
import { accountConnection, accountEntitlements } from './areas/account.js';
import { categoriesList, productsGet, productsSearch } from './areas/catalogue.js';
import { inventoryStock } from './areas/inventory.js';
import { ordersGet, ordersList } from './areas/orders.js';
import { shippingCarriers, shippingShipmentDetail, shippingShipments, shippingStats } from './areas/shipping.js';
import { storesIntegrationStatus, storesList } from './areas/stores.js';
import {
  affiliateCampaignsGet, affiliateCampaignsList, affiliateCodeRequests, affiliateConversionsGet, affiliateConversionsList, affiliateDiscountCodes,
  affiliateLinksGenerate, affiliatePartnersGet, affiliatePartnersList, affiliatePayouts, affiliatePortal, affiliateSettings, affiliateStatisticsCapability,
  affiliateSummaryCapability,
} from './areas/affiliate.js';
import { suppliersGet, suppliersList } from './areas/suppliers.js';
import {
  chatbotConversation, chatbotConversations, chatbotOutcomesCapability, chatbotStatsCapability, chatbotTopicsCapability,
} from './areas/chatbot.js';
import {
  affiliateArticlesGet, affiliateArticlesList, affiliateDocumentContent, affiliateDocumentsList, affiliateEmailTemplates, affiliateSignature,
  affiliateSignatures, affiliateVariables,
} from './areas/affiliateContent.js';
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
  affiliateSettings,
  affiliatePortal,
  affiliatePartnersList,
  affiliatePartnersGet,
  affiliateCampaignsList,
  affiliateCampaignsGet,
  affiliateConversionsList,
  affiliateConversionsGet,
  affiliateDiscountCodes,
  affiliateCodeRequests,
  affiliatePayouts,
  affiliateSummaryCapability,
  affiliateStatisticsCapability,
  affiliateLinksGenerate,
  suppliersList,
  suppliersGet,
  chatbotConversations,
  chatbotConversation,
  chatbotOutcomesCapability,
  chatbotStatsCapability,
  chatbotTopicsCapability,
  affiliateArticlesList,
  affiliateArticlesGet,
  affiliateEmailTemplates,
  affiliateDocumentsList,
  affiliateDocumentContent,
  affiliateSignatures,
  affiliateSignature,
  affiliateVariables,
];

/** Capabilities by their MCP tool name. */
export const capabilitiesByTool = new Map(capabilities.filter((c) => c.mcpTool).map((c) => [c.mcpTool as string, c]));
