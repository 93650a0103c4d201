/** Every workflow of the service; the worker's `workflowsPath` points at the compiled form of this file. */
export { loadDemoDataWorkflow } from './demoData.js';
export { reconcileSyncSchedulesWorkflow, shopEventSyncWorkflow, shopSyncWorkflow } from './shopSync.js';
export { webhookDeliveryWorkflow } from './webhookDelivery.js';
export { webhookEndpointWorkflow } from './webhookEndpoint.js';
export { webhookDispatcherPartitionWorkflow, webhookDispatcherWorkflow, webhookLogRetentionWorkflow } from './webhookDispatcher.js';
export { automationConsumerWorkflow } from './automationConsumer.js';
export { automationRunWorkflow } from './automationRun.js';
export { proposalWorkflow } from './proposal.js';
export { affiliateBulkDecisionWorkflow, affiliateMonthlyPayoutsWorkflow, affiliatePayoutRunWorkflow } from './affiliate.js';
export { customerExportWorkflow } from './customerExport.js';
