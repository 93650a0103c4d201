/**
 * Proposals (D29, issue 13): the four MCP tools that prepare a change a person approves in the application
 * (availability dictionary, product texts, category texts, claims settings), and the four REST drafts paths that
 * show a proposal's state, its preview and, after approval, the result per item.
 */
import { z } from 'zod';
import { CONTENT_LIMITS } from '../../content/limits.js';
import { AppError } from '../../errors.js';
import { createAvailabilityProposal, createClaimsProposal, createTextProposal, type ProposalAuthor } from '../../proposals/create.js';
import { CLAIMS_SETTING_PATHS, proposalWorkflowId, allStatuses, type ProposalKind } from '../../proposals/model.js';
import { getDraft, type DraftView } from '../../proposals/queries.js';
import { startProposalWorkflow } from '../../temporal/proposals.js';
import { logger } from '../../logger.js';
import type { CapabilityContext } from '../context.js';
import { market } from '../params.js';
import { defineCapability, type ToolAnnotations } from '../types.js';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a lower-case SHA-256 hex digest');
const value = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');

const draftSchema = z.object({
  draftId: z.string().describe('The proposal id, e.g. `prp_0123456789abcdef`; its Temporal workflow is `proposal-<draftId>`.'),
  kind: z.enum(['availabilities', 'product_texts', 'category_texts', 'claims_settings']),
  market: z.string().describe('The shop.'),
  status: z.enum(allStatuses as [string, ...string[]]).describe('Availability dictionary: `pending`, `writing`, `executed`, `partial`, `failed`, `rejected`, `expired`. Product texts: `awaiting_approval`, `written`, `written_with_warnings`, `rejected`, `expired`. Category texts: `awaiting_approval`, `written`, `rejected`, `expired`. Claims settings: `waiting`, `written`, `rejected`, `expired`.'),
  writeMode: z.enum(['proposals', 'autonomous']).describe('The AI write mode it was prepared under (D13); `autonomous` texts are written without waiting for a person.'),
  note: z.string().nullable(),
  createdBy: z.string(),
  createdAt: timestamp,
  expiresAt: timestamp.describe('Undecided by then, the proposal becomes `expired` (D30: 7 days).'),
  decision: z.object({ decision: z.enum(['approve', 'reject']), by: z.string(), reason: z.string().nullable(), at: timestamp }).nullable(),
  finishedAt: timestamp.nullable(),
  items: z.array(z.object({
    entity: z.enum(['product', 'category', 'availability', 'claims_settings']),
    id: z.string().describe('Product code, category guid, availability id, or the setting\'s path.'),
    name: z.string().nullable(),
    preview: z.array(z.object({
      field: z.string(),
      before: value.describe('The current value when the proposal was prepared.'),
      after: value.describe('The proposed value.'),
      beforeHash: sha256Hex.nullable().describe('For texts: SHA-256 of the current text (as content reads return it).'),
      afterHash: sha256Hex.nullable().describe('For texts: SHA-256 of the proposed text (the shop may store less, see `result.afterHash`).'),
    })).describe('The change field by field against the current value.'),
    status: z.enum(['pending', 'written', 'unchanged', 'failed']).describe('After approval: `written`, `unchanged` (the shop kept the text as it was), or `failed` (see `result.error`).'),
    result: z.object({
      stored: z.record(z.string(), value).nullable().describe('What the shop stored per field.'),
      afterHash: z.record(z.string(), sha256Hex).nullable().describe('For texts: SHA-256 of what the shop stored, per field (the `after_hash` of the content event).'),
      warnings: z.array(z.string()).describe('Shop warnings, e.g. markup the shop removed.'),
      error: z.object({ code: z.string(), message: z.string() }).nullable(),
      eventId: z.string().nullable().describe('The content-change event of this write; null when no text really changed.'),
    }).nullable().describe('The result of the write; null until the item is written.'),
  })),
});

// Each call stores a new proposal (not idempotent); the shop changes only after a person approves.
const proposalWrite: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const dictionaryProposalWrite: ToolAnnotations = { ...proposalWrite, openWorldHint: true };
// Texts may be written at once in autonomous mode, replacing the shop's current text: an overwrite (destructive).
const textProposalWrite: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

const note = z.string().trim().min(1).max(1000).optional().describe('Why the change is proposed; the person deciding sees it.');

function authorOf(ctx: CapabilityContext): ProposalAuthor {
  return {
    accountId: ctx.caller.account.id, shop: ctx.shop!, writeMode: ctx.caller.writeMode,
    createdBy: `${ctx.caller.credentialType === 'oauth' ? 'oauth' : 'key'}:${ctx.caller.credentialId}`,
  };
}

function requireWritePath(ctx: CapabilityContext): void {
  if (!ctx.temporal || !ctx.platforms) throw new AppError('WRITES_UNAVAILABLE', 'This service instance cannot run proposals (no Temporal client or platform adapters).');
}

/**
 * Starts the stored proposal's workflow; an autonomous text proposal is awaited (up to 20 s) so the answer carries
 * what was written. A failed start leaves the proposal stored without a workflow: the reconcile path starts it.
 */
async function started(ctx: CapabilityContext, draftId: string, kind: ProposalKind): Promise<DraftView> {
  try {
    const client = await ctx.temporal!.client();
    await startProposalWorkflow(ctx.db, client, draftId, ctx.temporal!.taskQueue);
    if (ctx.caller.writeMode === 'autonomous' && (kind === 'product_texts' || kind === 'category_texts')) {
      const handle = client.workflow.getHandle(proposalWorkflowId(draftId));
      await Promise.race([handle.result(), new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
    }
  } catch (error) {
    logger.warn({ err: error, draftId }, 'proposal workflow not started; the reconcile path will start it');
  }
  return getDraft(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes, draftId, kind);
}

const textFields = <F extends readonly string[]>(fields: F) => z.object(Object.fromEntries(fields.map((f) => [f, z.string().max(CONTENT_LIMITS.maxFieldLength[f as keyof typeof CONTENT_LIMITS.maxFieldLength])
  .optional().describe(`New text (HTML where the shop allows it); at most ${CONTENT_LIMITS.maxFieldLength[f as keyof typeof CONTENT_LIMITS.maxFieldLength]} characters. An empty string clears the field.`)])) as Record<F[number], z.ZodOptional<z.ZodString>>).strict();

const PRODUCT_FIELDS = ['description', 'shortDescription', 'metaTitle', 'metaDescription'] as const;
const CATEGORY_FIELDS = ['description', 'descriptionBottom', 'metaTitle', 'metaDescription'] as const;
const fingerprintParam = sha256Hex.describe('The `fingerprint` you read with the content tool; a different current fingerprint is STALE_FINGERPRINT (the text changed since).');

/** Proposes new product texts; a person approves them in the application (autonomous mode: written at once). */
export const productsContentPropose = defineCapability({
  name: 'products.content_propose',
  summary: 'Proposes product texts (description, short description, SEO title and description); written after a person approves.',
  description: `Prepares a change of product texts in the shop \`market\`: for each product its \`code\`, the \`fingerprint\` read with products_content_get and the fields to replace. Everything is checked before anything is stored: an unknown product is PROPOSAL_TARGET_NOT_FOUND, a field the platform does not write FIELD_NOT_WRITABLE (see products_content_policy), a text over the limit TEXT_TOO_LONG, a changed text STALE_FINGERPRINT, nothing to change PROPOSAL_EMPTY. Returns the draft with a field-by-field preview. With AI write mode \`proposals\` the proposal waits (\`awaiting_approval\`) for a person in the application and expires after 7 days; with \`autonomous\` it is written at once and recorded as a proposal executed in autonomous mode. The shop may strip markup: \`result\` shows what it stored. At most ${CONTENT_LIMITS.maxEntitiesPerProposal} products. Read the state with GET /catalog/product-content-drafts/{draftId}.`,
  path: null,
  scope: 'product-content:read',
  mcpTool: 'products_content_propose',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    products: z.array(z.object({ code: z.string().min(1).max(128).describe('Product code.'), fingerprint: fingerprintParam, fields: textFields(PRODUCT_FIELDS) }).strict())
      .min(1).max(CONTENT_LIMITS.maxEntitiesPerProposal),
    note,
  }).strict(),
  result: draftSchema,
  annotations: textProposalWrite,
  handler: async ({ params, ctx }) => {
    requireWritePath(ctx);
    const draftId = await createTextProposal(ctx.db, authorOf(ctx), 'product', params.products.map((p) => ({ id: p.code, fingerprint: p.fingerprint, fields: p.fields })), params.note ?? null, ctx.now());
    return started(ctx, draftId, 'product_texts');
  },
});

/** Proposes new category texts; a person approves them in the application (autonomous mode: written at once). */
export const categoriesContentPropose = defineCapability({
  name: 'categories.content_propose',
  summary: 'Proposes category texts (upper and lower description, SEO title and description); written after a person approves.',
  description: `Prepares a change of category texts in the shop \`market\`: for each category its \`guid\`, the \`fingerprint\` read with categories_content_get and the fields to replace. Checked before anything is stored (PROPOSAL_TARGET_NOT_FOUND, FIELD_NOT_WRITABLE, TEXT_TOO_LONG, STALE_FINGERPRINT, PROPOSAL_EMPTY). Returns the draft with a field-by-field preview. AI write mode \`proposals\`: waits (\`awaiting_approval\`) for a person, expires after 7 days; \`autonomous\`: written at once. At most ${CONTENT_LIMITS.maxEntitiesPerProposal} categories. Read the state with GET /catalog/category-content-drafts/{draftId}.`,
  path: null,
  scope: 'category-content:read',
  mcpTool: 'categories_content_propose',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    categories: z.array(z.object({ guid: z.string().min(1).max(64).describe('Category ID.'), fingerprint: fingerprintParam, fields: textFields(CATEGORY_FIELDS) }).strict())
      .min(1).max(CONTENT_LIMITS.maxEntitiesPerProposal),
    note,
  }).strict(),
  result: draftSchema,
  annotations: textProposalWrite,
  handler: async ({ params, ctx }) => {
    requireWritePath(ctx);
    const draftId = await createTextProposal(ctx.db, authorOf(ctx), 'category', params.categories.map((c) => ({ id: c.guid, fingerprint: c.fingerprint, fields: c.fields })), params.note ?? null, ctx.now());
    return started(ctx, draftId, 'category_texts');
  },
});

const hours = z.number().int().min(0).max(8760).nullable().optional();

/** Proposes changes of the availability dictionary; always waits for a person. */
export const availabilitiesPropose = defineCapability({
  name: 'availabilities.propose',
  summary: 'Proposes changes of availability-dictionary entries; written only after a person approves.',
  description: `Prepares a change of entries of the availability dictionary of the shop \`market\` (GET /availabilities): name, feed meaning, hours to stock and delivery hours of existing entries. The dictionary must be manageable (\`meta.manageable\`), else DICTIONARY_NOT_MANAGEABLE with the reason; an unknown id is PROPOSAL_TARGET_NOT_FOUND; nothing to change is PROPOSAL_EMPTY. Whatever the AI write mode, a person approves it in the application (status \`pending\` → \`writing\` → \`executed\`, \`partial\` or \`failed\`; or \`rejected\`, or \`expired\` after 7 days). Read it with GET /availabilities/drafts/{draftId}.`,
  path: null,
  scope: 'availabilities:draft',
  mcpTool: 'availabilities_propose',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    entries: z.array(z.object({
      id: z.string().min(1).max(64).describe('The entry\'s id from /availabilities.'),
      name: z.string().trim().min(1).max(100).optional(),
      meaning: z.enum(['in_stock', 'backorder', 'preorder', 'out_of_stock']).optional(),
      onStockHours: hours.describe('Hours until in stock; null clears it.'),
      deliveryHours: hours.describe('Delivery time in hours; null clears it.'),
    }).strict()).min(1).max(CONTENT_LIMITS.maxEntitiesPerProposal),
    note,
  }).strict(),
  result: draftSchema,
  annotations: dictionaryProposalWrite,
  handler: async ({ params, ctx }) => {
    requireWritePath(ctx);
    const draftId = await createAvailabilityProposal(ctx.db, authorOf(ctx), params.entries, params.note ?? null, ctx.now());
    return started(ctx, draftId, 'availabilities');
  },
});

/** Proposes a change of non-financial claims settings; always waits for a person. */
export const claimsSettingsPropose = defineCapability({
  name: 'claims.settings_propose',
  summary: 'Proposes a change of claims settings (refund options, claim form); written only after a person approves.',
  description: 'Prepares a change of the claims settings of the shop `market` (GET /claims/refund-options, /claims/configuration): refund options and the claim form\'s switches; never bank accounts or refund modes. Returns the draft with the preview per setting; nothing to change is PROPOSAL_EMPTY. Whatever the AI write mode, a person approves it in the application (status `waiting` → `written`, or `rejected`, or `expired` after 7 days). Read it with GET /claims/config-drafts/{draftId}.',
  path: null,
  scope: 'claims-settings:read',
  mcpTool: 'claims_settings_propose',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    refundOptions: z.object({
      variableSymbolSource: z.enum(['order', 'claim']).optional(),
      refundCouponValidityDays: z.number().int().min(1).max(3650).optional(),
      couponInForm: z.boolean().optional(),
      askAccountNumber: z.enum(['always', 'cash_on_delivery_and_transfer', 'never']).optional(),
    }).strict().optional(),
    form: z.object({ enabled: z.boolean().optional(), requiresOrderNumber: z.boolean().optional(), allowsPhotos: z.boolean().optional() }).strict().optional()
      .describe('Switches of the shop\'s claim form.'),
    note,
  }).strict(),
  result: draftSchema,
  annotations: proposalWrite,
  handler: async ({ params, ctx }) => {
    requireWritePath(ctx);
    const changes: Record<string, string | number | boolean | null> = {};
    for (const [k, v] of Object.entries(params.refundOptions ?? {})) if (v !== undefined) changes[`refundOptions.${k}`] = v;
    for (const [k, v] of Object.entries(params.form ?? {})) if (v !== undefined) changes[`configuration.form.${k}`] = v;
    const unknown = Object.keys(changes).filter((p) => !(CLAIMS_SETTING_PATHS as readonly string[]).includes(p));
    if (unknown.length) throw new AppError('INVALID_PARAMETER', `Unknown setting ${unknown[0]}.`, { param: unknown[0] });
    const draftId = await createClaimsProposal(ctx.db, authorOf(ctx), changes, params.note ?? null, ctx.now());
    return started(ctx, draftId, 'claims_settings');
  },
});

const draftIdParam = z.string().min(1).max(40).describe('The `draftId` a proposal tool returned.');

function draftRead(name: string, path: string, scope: 'products:read' | 'product-content:read' | 'category-content:read' | 'claims-settings:read', kind: ProposalKind, what: string) {
  return defineCapability({
    name,
    summary: `State of ${what}.`,
    description: `Returns ${what} by its \`draftId\`: \`status\`, the preview field by field and, after approval, the result per item (what the shop stored, warnings, errors, the content event). A proposal of a shop this credential may not see, of another kind or of another account is not found.`,
    path,
    scope,
    mcpTool: null,
    kind: 'get',
    market: 'none',
    params: z.object({ draftId: draftIdParam }).strict(),
    result: draftSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: ({ params, ctx }) => getDraft(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes, params.draftId, kind),
  });
}

/** Reads an availability-dictionary proposal. */
export const availabilitiesDraft = draftRead('availabilities.draft', '/availabilities/drafts/{draftId}', 'products:read', 'availabilities', 'an availability-dictionary change proposal');
/** Reads a product-text proposal. */
export const productContentDraft = draftRead('products.content_draft', '/catalog/product-content-drafts/{draftId}', 'product-content:read', 'product_texts', 'a product-text proposal');
/** Reads a category-text proposal. */
export const categoryContentDraft = draftRead('categories.content_draft', '/catalog/category-content-drafts/{draftId}', 'category-content:read', 'category_texts', 'a category-text proposal');
/** Reads a claims-settings proposal. */
export const claimsConfigDraft = draftRead('claims.config_draft', '/claims/config-drafts/{draftId}', 'claims-settings:read', 'claims_settings', 'a claims-settings change proposal');
