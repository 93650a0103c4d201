/**
 * Custom search attributes of the service's workflows (issue 27 point 3): delivery workflows carry account, shop,
 * endpoint, event type and status, so the Temporal UI finds "endpoint 42, retrying". Registered by the dev server of
 * `npm start` and of the test orchestrator (temporalDevServer.ts); a production cluster registers them once
 * (docs/webhooks.md). Imported by workflow code too (only @temporalio/common).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const webhookSearchAttributes = {
  account: defineSearchAttributeKey('WebhookAccount', SearchAttributeType.KEYWORD),
  shop: defineSearchAttributeKey('WebhookShop', SearchAttributeType.KEYWORD),
  endpoint: defineSearchAttributeKey('WebhookEndpointId', SearchAttributeType.KEYWORD),
  eventType: defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('WebhookDeliveryStatus', SearchAttributeType.KEYWORD),
} as const;

/** A delivery workflow's status as the UI filters it: waiting for its next attempt, held by a pause or plan, or ended. */
export type WebhookWorkflowStatus = 'RETRYING' | 'ATTEMPTING' | 'HELD' | 'SENT' | 'FAILED' | 'SKIPPED';

/** `--search-attribute` values for `temporal server start-dev` (every attribute above, by name and type). */
export const devServerSearchAttributes: string[] = Object.values(webhookSearchAttributes).map((key) => `${key.name}=Keyword`);
