/**
 * Custom search attributes of the service's workflows (issue 27 point 3): delivery workflows carry account, shop,
 * endpoint, event type and status, so the Temporal UI finds "endpoint 42, retrying". Registered by the dev server of
 * `npm start` and of the test orchestrator (temporalDevServer.ts); a production cluster registers them once
 * (docs/webhooks.md). Imported by workflow code too (only @temporalio/common).
 */
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes, type SearchAttributePair } from '@temporalio/common';

export const webhookSearchAttributes = {
  account: defineSearchAttributeKey('WebhookAccount', SearchAttributeType.KEYWORD),
  shop: defineSearchAttributeKey('WebhookShop', SearchAttributeType.KEYWORD),
  endpoint: defineSearchAttributeKey('WebhookEndpointId', SearchAttributeType.KEYWORD),
  eventType: defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('WebhookDeliveryStatus', SearchAttributeType.KEYWORD),
} as const;

/** A delivery workflow's status as the UI filters it: waiting for its next attempt, held by a pause or plan, or ended. */
export type WebhookWorkflowStatus = 'RETRYING' | 'ATTEMPTING' | 'HELD' | 'SENT' | 'FAILED' | 'SKIPPED';

/**
 * The other workflows' attributes (issue 29 point 5): the account and shop they act for, what kind of work it is and
 * its business key, so the UI finds "the proposals of shop sk still pending" or "automation 12's runs". Five generic
 * keys rather than one set per workflow type: a namespace holds at most 10 Keyword attributes (O13).
 */
export const opsSearchAttributes = {
  /** The account's code (`demo`). */
  account: defineSearchAttributeKey('OpsAccount', SearchAttributeType.KEYWORD),
  /** The shop's code (`sk`); absent for account-level work (automation runs of account events, payouts). */
  shop: defineSearchAttributeKey('OpsShop', SearchAttributeType.KEYWORD),
  /** `sync`, `proposal.<kind>` (`proposal.availabilities`, `proposal.product_texts`, …), `automation-run`, `affiliate-payout`. */
  kind: defineSearchAttributeKey('OpsKind', SearchAttributeType.KEYWORD),
  /** The business key: a proposal's draft id, an automation's id (`wf_…`), a payout run's month (`2026-11`). */
  key: defineSearchAttributeKey('OpsKey', SearchAttributeType.KEYWORD),
  /** A proposal's status: `pending` at start, upserted to its final status (`rejected`, `expired`, …) by the workflow. */
  status: defineSearchAttributeKey('OpsStatus', SearchAttributeType.KEYWORD),
} as const;

/** What a workflow is about: its account, shop (if any), kind and business key (docs/operations.md). */
export interface OpsLabels {
  /** Absent only for service-wide work: the monthly payout Schedule's run, which covers every account. */
  account?: string;
  shop?: string | null;
  kind: string;
  key?: string;
  status?: string;
}

/** The attributes of `labels`, for a workflow start, a Schedule's action or a child workflow (workflow code imports it too). */
export function opsAttributes(labels: OpsLabels): TypedSearchAttributes {
  const pairs: SearchAttributePair[] = [{ key: opsSearchAttributes.kind, value: labels.kind }];
  if (labels.account) pairs.push({ key: opsSearchAttributes.account, value: labels.account });
  if (labels.shop) pairs.push({ key: opsSearchAttributes.shop, value: labels.shop });
  if (labels.key) pairs.push({ key: opsSearchAttributes.key, value: labels.key });
  if (labels.status) pairs.push({ key: opsSearchAttributes.status, value: labels.status });
  return new TypedSearchAttributes(pairs);
}

/** `--search-attribute` values for `temporal server start-dev` (every attribute above, by name and type). */
export const devServerSearchAttributes: string[] = [...Object.values(webhookSearchAttributes), ...Object.values(opsSearchAttributes)].map((key) => `${key.name}=Keyword`);

/** Whether an error says the namespace lacks a search attribute (not registered on that cluster, or a test server). */
export function isUnknownSearchAttribute(error: unknown): boolean {
  return /search attribute/i.test(String((error as Error)?.message ?? '')) || /search attribute/i.test(String((error as { cause?: Error })?.cause?.message ?? ''));
}
