/** The capability registry: every capability, once. REST routes, MCP tools, /capabilities and /openapi.json come from this list. */
import { isRestCapability, type Capability, type RestCapability } from './types.js';
import { accountConnection, accountEntitlements } from './areas/account.js';
import { categoriesList, productsGet, productsSearch } from './areas/catalogue.js';
import { inventoryMovements, inventoryProductAvailability, inventoryStock } from './areas/inventory.js';
import { customersGet, customersList, customersPerformance } from './areas/customers.js';
import { reportsFinancialSummary, salesOrderPerformance, salesProductPerformance } from './areas/reports.js';
import {
  analyticsAdvertisingCapability, analyticsChannelsCapability, analyticsComparisonCapability, analyticsMonthlyCapability,
  analyticsOrderCoverageCapability, analyticsOrderHeatmapCapability, analyticsOverviewCapability, analyticsRevenueSourcesCapability,
} from './areas/analytics.js';
import { analyticsSeoCapability, searchConsoleQueryCapability, searchConsoleStatusCapability } from './areas/searchConsole.js';
import { ordersGet, ordersList } from './areas/orders.js';
import { shippingCarriers, shippingShipmentDetail, shippingShipments, shippingStats } from './areas/shipping.js';
import { storesIntegrationStatus, storesList } from './areas/stores.js';
import { availabilitiesList, categoriesContentGet, contentArticlesSearch, productsContentGet, productsContentPolicy } from './areas/content.js';
import { creditNotesSearch, documentsList, documentsPdf, invoicesGet, invoicesSearch } from './areas/documents.js';
import {
  affiliateCampaignsGet, affiliateCampaignsList, affiliateCodeRequests, affiliateConversionsGet, affiliateConversionsList, affiliateDiscountCodes,
  affiliateLinksGenerate, affiliatePartnersGet, affiliatePartnersList, affiliatePayouts, affiliatePortal, affiliateSettings, affiliateStatisticsCapability,
  affiliateSummaryCapability,
} from './areas/affiliate.js';
import { suppliersGet, suppliersList } from './areas/suppliers.js';
import {
  automationsCatalog, automationsCreateDraft, automationsGet, automationsList, automationsOptions, automationsRuns, automationsTemplates,
  automationsUpdateDraft, automationsValidateDraft,
} from './areas/automations.js';
import {
  chatbotConversation, chatbotConversations, chatbotOutcomesCapability, chatbotStatsCapability, chatbotTopicsCapability,
} from './areas/chatbot.js';
import {
  affiliateArticlesGet, affiliateArticlesList, affiliateDocumentContent, affiliateDocumentsList, affiliateEmailTemplates, affiliateSignature,
  affiliateSignatures, affiliateVariables,
} from './areas/affiliateContent.js';
import { webhooksDeliveries, webhooksEndpoint, webhooksEndpoints, webhooksEvents } from './areas/webhooks.js';
import {
  claimsConfiguration, claimsGet, claimsList, claimsRefundOptions, claimsRefundReadiness, claimsRefundSettings, claimsRoutes, claimsSettings,
  claimsStatistics, claimsTemplates,
} from './areas/claims.js';
import {
  affiliateArticlesCreate, affiliateArticlesSetState, affiliateArticlesUpdate, affiliateCampaignsCreate, affiliateCampaignsUpdate, affiliateCodeRequestsDecide,
  affiliateDocumentsUpdate, affiliateEmailTemplatesUpdate, affiliatePartnersSetState, affiliatePortalPagesUpdate, affiliateSettingsUpdate,
} from './areas/affiliateWrites.js';
import { couponsActivationLink, couponsActivationStatus, couponsCapabilities, couponsGet, couponsList } from './areas/coupons.js';
import { affiliateDiscountCodesEnsure, couponsEnsure, couponsRemove, couponsUpdate } from './areas/couponWrites.js';
import {
  availabilitiesDraft, availabilitiesPropose, categoriesContentPropose, categoryContentDraft, claimsConfigDraft, claimsSettingsPropose, productContentDraft,
  productsContentPropose,
} from './areas/proposals.js';

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
  invoicesSearch,
  invoicesGet,
  creditNotesSearch,
  documentsList,
  documentsPdf,
  inventoryProductAvailability,
  inventoryMovements,
  // Customers, reports, sales, analytics (issue 9); performance before {customerKey} so its path wins.
  customersPerformance,
  customersList,
  customersGet,
  reportsFinancialSummary,
  salesOrderPerformance,
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
  automationsCatalog,
  automationsOptions,
  automationsTemplates,
  automationsList,
  automationsGet,
  automationsRuns,
  automationsValidateDraft,
  automationsCreateDraft,
  automationsUpdateDraft,
  // Documents, stock and content (issue 8)
  availabilitiesList,
  productsContentGet,
  categoriesContentGet,
  productsContentPolicy,
  contentArticlesSearch,
  salesProductPerformance,
  analyticsOverviewCapability,
  analyticsChannelsCapability,
  analyticsComparisonCapability,
  analyticsMonthlyCapability,
  analyticsOrderCoverageCapability,
  analyticsOrderHeatmapCapability,
  analyticsRevenueSourcesCapability,
  analyticsAdvertisingCapability,
  couponsList,
  couponsGet,
  couponsCapabilities,
  couponsActivationLink,
  couponsActivationStatus,
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
  analyticsSeoCapability,
  searchConsoleStatusCapability,
  searchConsoleQueryCapability,
  // Coupon writes over MCP (issue 13)
  couponsEnsure,
  couponsUpdate,
  couponsRemove,
  affiliateDiscountCodesEnsure,
  // Affiliate writes (issue 13; MCP only).
  affiliatePartnersSetState,
  affiliateCodeRequestsDecide,
  affiliateSettingsUpdate,
  affiliatePortalPagesUpdate,
  affiliateArticlesCreate,
  affiliateArticlesUpdate,
  affiliateArticlesSetState,
  affiliateEmailTemplatesUpdate,
  affiliateCampaignsCreate,
  affiliateCampaignsUpdate,
  affiliateDocumentsUpdate,
  productsContentPropose,
  categoriesContentPropose,
  availabilitiesPropose,
  claimsSettingsPropose,
  availabilitiesDraft,
  productContentDraft,
  categoryContentDraft,
  claimsConfigDraft,
];

/** Capabilities by their MCP tool name. */
export const capabilitiesByTool = new Map(capabilities.filter((c) => c.mcpTool).map((c) => [c.mcpTool as string, c]));

/** The capabilities with a REST route (MCP-only tools such as writes have none). */
export const restCapabilities: readonly RestCapability[] = capabilities.filter(isRestCapability);
