/**
 * Proposals (D29, issue 13): the four kinds, their states exactly as SPEC.md "Change proposals (drafts)" names them,
 * and how a finished write maps to a final state per kind.
 */
import { CONTENT_LIMITS } from '../content/limits.js';

export const proposalKinds = ['availabilities', 'product_texts', 'category_texts', 'claims_settings'] as const;
export type ProposalKind = (typeof proposalKinds)[number];

/** The state a proposal starts in, per kind (SPEC: `pending`; "awaiting approval"; "waiting"). */
export const INITIAL_STATUS: Record<ProposalKind, string> = {
  availabilities: 'pending',
  product_texts: 'awaiting_approval',
  category_texts: 'awaiting_approval',
  claims_settings: 'waiting',
};

/** Every state a kind can be in. */
export const STATUSES: Record<ProposalKind, readonly string[]> = {
  availabilities: ['pending', 'writing', 'executed', 'partial', 'failed', 'rejected', 'expired'],
  product_texts: ['awaiting_approval', 'written', 'written_with_warnings', 'rejected', 'expired'],
  category_texts: ['awaiting_approval', 'written', 'rejected', 'expired'],
  claims_settings: ['waiting', 'written', 'rejected', 'expired'],
};

export const allStatuses = [...new Set(Object.values(STATUSES).flat())];

/** True for a state from which nothing moves any more. */
export function isFinal(status: string): boolean {
  return !['pending', 'writing', 'awaiting_approval', 'waiting'].includes(status);
}

/** How long a proposal waits for a person (D30: 7 days). */
export const PROPOSAL_EXPIRY_MS = CONTENT_LIMITS.proposalExpiryHours * 3_600_000;

export type ItemStatus = 'pending' | 'written' | 'unchanged' | 'failed';

export interface ItemOutcome {
  status: ItemStatus;
  /** Shop warnings of a written item (e.g. markup the shop removed). */
  warnings: string[];
}

/**
 * The final state after the write, per kind: the dictionary distinguishes all, some and none written; product texts
 * say when the shop warned (markup stripped, or an item could not be written); category texts and claims settings
 * have only `written` in SPEC, and their per-item results tell what failed (decision PR3).
 */
export function finalStatus(kind: ProposalKind, outcomes: readonly ItemOutcome[]): string {
  const failed = outcomes.filter((o) => o.status === 'failed').length;
  if (kind === 'availabilities') return failed === 0 ? 'executed' : failed === outcomes.length ? 'failed' : 'partial';
  if (kind === 'product_texts') return failed > 0 || outcomes.some((o) => o.warnings.length > 0) ? 'written_with_warnings' : 'written';
  return 'written';
}

export const PRODUCT_TEXT_FIELDS = ['description', 'shortDescription', 'metaTitle', 'metaDescription'] as const;
export const CATEGORY_TEXT_FIELDS = ['description', 'descriptionBottom', 'metaTitle', 'metaDescription'] as const;
export type TextField = (typeof PRODUCT_TEXT_FIELDS)[number] | (typeof CATEGORY_TEXT_FIELDS)[number];

/** Fields in the order reads list them (jsonb does not keep key order). */
const FIELD_ORDER = ['description', 'shortDescription', 'descriptionBottom', 'metaTitle', 'metaDescription', 'name', 'meaning', 'onStockHours', 'deliveryHours', 'value'];
export function orderedFields(fields: readonly string[]): string[] {
  const rank = (f: string) => (FIELD_ORDER.includes(f) ? FIELD_ORDER.indexOf(f) : FIELD_ORDER.length);
  return [...fields].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Column of each text field in `products` / `categories`. */
export const TEXT_COLUMNS: Record<TextField, string> = {
  description: 'description', shortDescription: 'short_description', descriptionBottom: 'description_bottom', metaTitle: 'meta_title', metaDescription: 'meta_description',
};

/** Availability-entry fields a proposal may change, with their columns. */
export const AVAILABILITY_FIELDS = { name: 'name', meaning: 'meaning', onStockHours: 'on_stock_hours', deliveryHours: 'delivery_hours' } as const;
export type AvailabilityField = keyof typeof AVAILABILITY_FIELDS;

/** Claims settings a proposal may change: non-financial options of the refund flow and the claim form (never bank accounts). */
export const CLAIMS_SETTING_PATHS = [
  'refundOptions.variableSymbolSource', 'refundOptions.refundCouponValidityDays', 'refundOptions.couponInForm', 'refundOptions.askAccountNumber',
  'configuration.form.enabled', 'configuration.form.requiresOrderNumber', 'configuration.form.allowsPhotos',
] as const;
export type ClaimsSettingPath = (typeof CLAIMS_SETTING_PATHS)[number];

/** The workflow id of a proposal. */
export const proposalWorkflowId = (draftId: string) => `proposal-${draftId}`;

export const DRAFT_ID_PATTERN = /^prp_[0-9a-f]{16}$/;
