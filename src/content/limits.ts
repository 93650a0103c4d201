/** Limits of content the service reads and proposes; the policy reports them and the proposal tools (later) enforce them. */
export const CONTENT_LIMITS = {
  /** Longest text per field, in characters. */
  maxFieldLength: { description: 20_000, shortDescription: 2_000, descriptionBottom: 20_000, metaTitle: 255, metaDescription: 500 },
  /** Most products or categories one proposal may change. */
  maxEntitiesPerProposal: 50,
  /** Hours a proposal waits for a person's decision before it expires. */
  proposalExpiryHours: 168, // D30: seven days
} as const;
