/**
 * The affiliate programme's MCP-only writes (SPEC.md "MCP-only write and validation tools", issue 13): partner
 * decisions and code requests (which e-mail the partner through the outbox, D30), non-financial settings, portal pages,
 * help articles, e-mail templates, campaigns and the document policy. Commission approval, payouts, the commission base,
 * document wording and deleting articles are never possible here (SPEC "Not available over MCP").
 */
import { z } from 'zod';
import type { CapabilityContext } from '../context.js';
import { AppError } from '../../errors.js';
import { CONTENT_LANGUAGES } from '../../affiliate/content.js';
import { PARTNER_EMAIL_EVENTS } from '../../affiliate/writes/emails.js';
import { decideCodeRequest, PARTNER_ACTIONS, setPartnerState } from '../../affiliate/writes/partners.js';
import {
  createArticle, createCampaign, DOCUMENT_APPLIES_TO, DOCUMENT_CONFIRM_WHEN, FINANCIAL_SETTINGS, financialSettingsRefused, PORTAL_PAGES, setArticleState, updateArticle,
  updateCampaign, updateDocumentPolicy, updateEmailTemplate, updatePortalPage, updateSettings,
} from '../../affiliate/writes/programme.js';
import { market } from '../params.js';
import type { FieldScopes } from '../projection.js';
import { defineCapability, type ToolAnnotations } from '../types.js';
import { affiliateCampaignsGet, affiliateSettings } from './affiliate.js';
import { affiliateArticlesGet, affiliateDocumentsList, affiliateEmailTemplates } from './affiliateContent.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const id = (what: string) => z.string().regex(/^\d{1,18}$/, `a ${what} id (digits)`);
const reason = z.string().min(1).max(1000);
const html = (what: string) => z.string().max(50_000).describe(`${what}: HTML, sanitised before it is stored (scripts, styles, event handlers and javascript: links are removed). \`{{variables}}\` stay as written.`);
const contentLanguage = z.enum(CONTENT_LANGUAGES).describe('The programme language (`sk` or `en`).');
const articleKey = z.string().regex(/^[a-z0-9][a-z0-9-]{1,63}$/, 'lower-case letters, digits and hyphens').describe('Article key, as `key` in affiliate_articles_list.');

/** Changes the programme's own records, overwriting what was there; repeating it changes nothing more. */
const overwrite: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
/** A one-time decision that e-mails the partner: not repeatable (the second call finds the new state), and it reaches outside the service. */
const decision: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
/** Adds a record; a second call with the same key is refused rather than adding another. */
const additive: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Switches a record on or off; reversible and repeatable. */
const toggle: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const variableFields = {
  variables: z.array(z.string()).describe('Canonical names of the registry variables the stored text uses.'),
  unknownVariables: z.array(z.string()).describe('`{{…}}` names the variables registry does not know; stored as written and rendered as written (fix them or expect them verbatim).'),
  variablesNotOnSurface: z.array(z.string()).describe('Known variables this kind of text does not fill (see /affiliate/variables `surfaces`).'),
};
const sanitisedField = z.boolean().describe('True when sanitising changed the HTML (something not allowed was removed).');

/** A rendered subject may carry the partner's name: personal data (SPEC: partner contacts only with personal-data:read). */
const emailFieldScopes: FieldScopes = { 'email.subject': 'personal-data:read' };

const emailSchema = z.object({
  emailId: z.string().describe('The e-mail in the outbox (the application\'s E-mails page).'),
  event: z.string(),
  status: z.enum(['queued', 'sent', 'failed', 'skipped']).describe('`queued`: waits for the sender (stays so while SMTP is not configured); `skipped`: recorded but never sent (`reason`).'),
  language: z.string().nullable(),
  subject: z.string().optional().describe('As rendered for the partner (it may carry their name): needs `personal-data:read`, absent without it. The address is never returned.'),
  reason: z.string().nullable(),
  attachments: z.array(z.object({
    documentKey: z.string(), language: z.string(), version: z.number().int(), fileName: z.string(),
    kind: z.enum(['published_text', 'signed_copy']).describe('The published wording, or the partner\'s signed copy when the policy keeps one.'),
  })).describe('Documents attached according to the document policy (the agreement with an approval).'),
  notAttached: z.array(z.object({ documentKey: z.string(), reason: z.string() })),
});

function requireShop(ctx: CapabilityContext) {
  if (!ctx.shop) throw new AppError('MISSING_PARAMETER', 'This call needs `market`.', { param: 'market' });
  return ctx.shop;
}

/** Approves, rejects, suspends or returns a partner to waiting; approval and rejection e-mail the partner. */
export const affiliatePartnersSetState = defineCapability({
  name: 'affiliate.partnersSetState',
  summary: 'Partner decision: approve, reject, suspend, return to waiting; approval sends the e-mail with the agreement.',
  description: 'Moves a partner along one allowed transition: `approve` (from waiting or suspended), `reject` (from waiting; needs `reason`), `suspend` (from approved; needs `reason`), `return_to_waiting` (from rejected or suspended). Any other move is STATE_CONFLICT with `details.allowedFrom`. Approval queues the "Account approved" e-mail in the partner\'s language with the documents the document policy attaches (the agreement); rejection queues "Account rejected" with the reason. `market` is the shop whose name, portal and links the e-mail uses. The answer names the e-mail (see the application\'s E-mails page).',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_partners_set_state',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    partnerId: id('partner').describe('Partner id, as `partnerId` in affiliate_partners_list.'),
    action: z.enum(PARTNER_ACTIONS),
    reason: reason.optional().describe('Required for `reject` and `suspend`; kept as the partner\'s state reason and told to a rejected partner.'),
  }).strict(),
  result: z.object({
    partnerId: z.string(), handle: z.string(), previousState: z.string(), state: z.enum(['waiting', 'approved', 'rejected', 'suspended']),
    stateReason: z.string().nullable(), stateChangedAt: timestamp, email: emailSchema.nullable().describe('The e-mail queued (approve, reject); null for suspend and return to waiting, which send none.'),
  }),
  fieldScopes: emailFieldScopes,
  annotations: decision,
  handler: async ({ params, ctx }) => setPartnerState(ctx.db, { accountId: ctx.caller.account.id, shop: requireShop(ctx), now: ctx.now() }, params),
});

/** Approves (reserving the code) or rejects (with a reason) a partner's request for a custom discount code. */
export const affiliateCodeRequestsDecide = defineCapability({
  name: 'affiliate.codeRequestsDecide',
  summary: 'Decides a code request: approval reserves the code; rejection requires a reason; the partner is e-mailed.',
  description: 'Decides a pending request from affiliate_code_requests_list. `approve` reserves the code for the partner in this shop (no other partner can then be given it, case-insensitively; a code already held by another partner, an approved request or an existing coupon is CODE_ALREADY_RESERVED) — the coupon itself is made with affiliate_discount_codes_ensure. `reject` needs `reason`, which the partner is told. Either way the partner gets the "code request decided" e-mail with the decision. A request already decided is STATE_CONFLICT.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_code_requests_decide',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    requestId: id('request').describe('`requestId` from affiliate_code_requests_list.'),
    decision: z.enum(['approve', 'reject']),
    reason: reason.optional().describe('Required to reject (the partner is told it); optional note with an approval.'),
  }).strict(),
  result: z.object({
    requestId: z.string(), partnerId: z.string(), partnerHandle: z.string(), requestedCode: z.string(), state: z.enum(['approved', 'rejected']),
    reason: z.string().nullable(), decidedAt: timestamp,
    reservation: z.object({ code: z.string(), reservedAt: timestamp }).nullable().describe('The code held for the partner (approval only).'),
    email: emailSchema,
  }),
  fieldScopes: emailFieldScopes,
  annotations: decision,
  handler: async ({ params, ctx }) => decideCodeRequest(ctx.db, { accountId: ctx.caller.account.id, shop: requireShop(ctx), now: ctx.now() }, params),
});

/** Changes the programme's non-financial settings; a financial field is refused. */
export const affiliateSettingsUpdate = defineCapability({
  name: 'affiliate.settingsUpdate',
  summary: 'Non-financial settings: name, registration, auto-approval, contact person, colours, privacy policy link.',
  description: 'Changes the programme\'s non-financial settings: `name`, `autoApprovePartners`, `contactPerson`, `colours`, `privacyPolicyUrl`, and per shop whether the portal\'s `registration` is open (closing needs `closedReason`, shown on the portal). Financial settings (commissions and the commission base, the click window, the payout minimum, referrals) are never changed over MCP: naming any of them refuses the call (FINANCIAL_SETTING_READ_ONLY) and nothing changes. Returns the settings as affiliate_settings reads them.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_settings_update',
  kind: 'write',
  market: 'none',
  params: z.object({
    name: z.string().min(1).max(200).optional(),
    autoApprovePartners: z.boolean().optional().describe('Approve new partners without a person\'s decision.'),
    contactPerson: z.object({ name: z.string().min(1).max(200).nullable().optional(), email: z.email().max(254).nullable().optional() }).strict().optional(),
    colours: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,39}$/), z.string().regex(/^#[0-9a-fA-F]{6}$/, 'a colour #RRGGBB')).optional()
      .describe('Portal colours by name, e.g. {"primaryColour": "#0B6E4F"}; replaces the whole set.'),
    privacyPolicyUrl: z.url({ protocol: /^https$/ }).max(2000).nullable().optional(),
    registration: z.array(z.object({
      shop: z.string().min(1).max(32).describe('Shop code.'), open: z.boolean(), closedReason: z.string().min(1).max(500).optional(),
    }).strict()).min(1).max(20).optional().describe('Whether each shop\'s portal takes new registrations.'),
  }).strict(),
  refusedParams: { names: FINANCIAL_SETTINGS, error: financialSettingsRefused },
  result: z.object({
    settings: affiliateSettings.result,
    registration: z.array(z.object({ market: z.string(), registration: z.object({ open: z.boolean(), closedReason: z.string().nullable() }) })),
  }),
  annotations: overwrite,
  handler: async ({ params, ctx }) => updateSettings(ctx.db, ctx.caller, ctx.now(), params),
});

/** Sets one public portal page's custom text in one language (sanitised), or restores the built-in wording. */
export const affiliatePortalPagesUpdate = defineCapability({
  name: 'affiliate.portalPagesUpdate',
  summary: 'Custom public portal texts in one language (login/register/dashboard, privacy notice, programme description); HTML sanitised.',
  description: 'Sets the custom text of one page of the shop\'s public partner portal in one language: `html` (sanitised; published unless `publish: false`, which keeps it as a draft) or `restoreDefault: true` (back to the built-in wording). The answer has the stored HTML, whether sanitising changed it, and the variables the registry does not know.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_portal_pages_update',
  kind: 'write',
  market: 'required',
  params: z.object({
    market,
    page: z.enum(PORTAL_PAGES),
    language: z.string().regex(/^[a-z]{2}$/, 'a two-letter language code').describe('The page\'s language, e.g. `sk` or `en`.'),
    html: html('The page text').optional(),
    publish: z.boolean().optional().describe('Default true; false stores it as a draft.'),
    restoreDefault: z.literal(true).optional().describe('Instead of `html`: back to the built-in wording.'),
  }).strict(),
  result: z.object({
    market: z.string(), language: z.string(), page: z.string(), status: z.enum(['published', 'draft', 'default']), html: z.string().nullable(),
    sanitised: sanitisedField, ...variableFields, updatedAt: timestamp,
  }),
  annotations: overwrite,
  handler: async ({ params, ctx }) => updatePortalPage(ctx.db, requireShop(ctx), ctx.now(), params),
});

const translationInput = z.object({
  title: z.string().min(1).max(200),
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'lower-case letters, digits and hyphens'),
  html: html('The article body'),
}).strict();

const articleResult = z.object({ article: affiliateArticlesGet.result, sanitised: sanitisedField, ...variableFields });

/** Creates a custom help article in every programme language at once. */
export const affiliateArticlesCreate = defineCapability({
  name: 'affiliate.articlesCreate',
  summary: 'Creates a custom help article in all languages at once; HTML sanitised.',
  description: 'Creates a custom help article of the partner portal with its title, slug and HTML body in every programme language at once (`sk` and `en`; one missing is MISSING_PARAMETER), enabled unless `enabled: false`, placed last. A key already used is ALREADY_EXISTS. The answer has the article, whether sanitising changed anything, and the variables the registry does not know.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_articles_create',
  kind: 'write',
  market: 'none',
  params: z.object({
    key: articleKey,
    translations: z.object(Object.fromEntries(CONTENT_LANGUAGES.map((l) => [l, translationInput])) as Record<(typeof CONTENT_LANGUAGES)[number], typeof translationInput>).strict()
      .describe('The article in every programme language.'),
    enabled: z.boolean().optional(),
  }).strict(),
  result: articleResult,
  annotations: additive,
  handler: async ({ params, ctx }) => createArticle(ctx.db, ctx.caller.account.id, ctx.now(), params),
});

/** Edits one language of a help article, or restores a default article's built-in wording in it. */
export const affiliateArticlesUpdate = defineCapability({
  name: 'affiliate.articlesUpdate',
  summary: 'Edits one language (title, slug, body) or restores default wording; returns unknown variables.',
  description: 'Changes one language of a help article: any of `title`, `slug`, `html` (sanitised), or `restoreDefault: true` to put back the built-in wording of a default article (a custom article has none: STATE_CONFLICT). The answer has the article in that language, whether sanitising changed anything, and the variables the registry does not know.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_articles_update',
  kind: 'write',
  market: 'none',
  params: z.object({
    key: articleKey,
    language: contentLanguage,
    title: z.string().min(1).max(200).optional(),
    slug: translationInput.shape.slug.optional(),
    html: html('The article body').optional(),
    restoreDefault: z.literal(true).optional().describe('Instead of an edit: the built-in wording of a default article.'),
  }).strict(),
  result: articleResult,
  annotations: overwrite,
  handler: async ({ params, ctx }) => updateArticle(ctx.db, ctx.caller.account.id, ctx.now(), params),
});

/** Enables or disables a help article in every language; articles are never deleted. */
export const affiliateArticlesSetState = defineCapability({
  name: 'affiliate.articlesSetState',
  summary: 'Enables or disables an article for all languages; default articles are disabled, never deleted.',
  description: 'Enables or disables a help article in every language. Nothing deletes an article over MCP: a default article that should not show is disabled (and can be enabled again with its wording intact).',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_articles_set_state',
  kind: 'write',
  market: 'none',
  params: z.object({ key: articleKey, enabled: z.boolean() }).strict(),
  result: z.object({ article: affiliateArticlesGet.result }),
  annotations: toggle,
  handler: async ({ params, ctx }) => setArticleState(ctx.db, ctx.caller.account.id, ctx.now(), params),
});

/** Edits a partner e-mail template in one language, or enables/disables its event. */
export const affiliateEmailTemplatesUpdate = defineCapability({
  name: 'affiliate.emailTemplatesUpdate',
  summary: 'Edits a partner e-mail template in one language (subject, body) or enables/disables an event.',
  description: 'Changes the e-mail of one event: `subject` (plain text) and/or `bodyHtml` (sanitised) in `language`, and/or `enabled` for the event in every language (a disabled event\'s e-mails are recorded in the outbox as skipped, never sent). The answer has the templates as affiliate_email_templates_list reads them, whether sanitising changed anything, and the variables the registry does not know.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_email_templates_update',
  kind: 'write',
  market: 'none',
  params: z.object({
    event: z.enum(PARTNER_EMAIL_EVENTS),
    language: contentLanguage.optional().describe('The template\'s language; required with `subject` or `bodyHtml`.'),
    subject: z.string().min(1).max(300).optional(),
    bodyHtml: html('The e-mail body').optional(),
    enabled: z.boolean().optional().describe('Sends (true) or stops (false) the event\'s e-mails in every language.'),
  }).strict(),
  result: z.object({ templates: z.array(affiliateEmailTemplates.result), sanitised: sanitisedField, ...variableFields }),
  annotations: overwrite,
  handler: async ({ params, ctx }) => updateEmailTemplate(ctx.db, ctx.caller.account.id, ctx.now(), params),
});

const reward = z.discriminatedUnion('type', [
  z.object({ type: z.literal('percent'), percent: z.number().gt(0).max(100).multipleOf(0.01).describe('Commission in percent of the commission base.') }).strict(),
  z.object({ type: z.literal('fixed'), amount: z.number().gt(0).max(1_000_000).multipleOf(0.01).describe('Commission per conversion in the shop\'s currency.') }).strict(),
]).describe('The campaign\'s reward, always stated by the caller (never defaulted).');

const campaignFields = {
  name: z.string().min(1).max(120),
  attributionWindowDays: z.number().int().min(1).max(365).optional().describe('Click attribution window; default the programme\'s click window.'),
  availability: z.enum(['all', 'chosen']).optional().describe('`all` approved partners, or `chosen` ones (`partnerIds`).'),
  partnerIds: z.array(id('partner')).min(1).max(500).optional().describe('The partners of a `chosen` campaign (replaces the list).'),
  approval: z.enum(['manual', 'automatic']).optional().describe('Whether a person approves each conversion\'s commission.'),
  enabled: z.boolean().optional(),
  descriptions: z.record(z.string().regex(/^[a-z]{2}$/), html('Partner description').nullable()).optional()
    .describe('Partner-facing description per language (sanitised); null removes a language.'),
};

const campaignResult = z.object({ campaign: affiliateCampaignsGet.result, sanitised: sanitisedField, ...variableFields });

/** Creates a campaign on a shop; the reward must be given (never invented). */
export const affiliateCampaignsCreate = defineCapability({
  name: 'affiliate.campaignsCreate',
  summary: 'Creates a campaign on a shop: name, reward (never invented), attribution window, availability, conversion approval.',
  description: 'Creates a campaign on the shop: `name`, `reward` (percent of the commission base or a fixed amount in the shop\'s currency; required — the service never invents a reward, a missing one is MISSING_PARAMETER), attribution window (default the programme\'s click window), availability (`all` approved partners or `chosen` ones with `partnerIds`), conversion approval (default `manual`), enabled (default true) and partner descriptions per language. Returns the campaign as affiliate_campaigns_get reads it.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_campaigns_create',
  kind: 'write',
  market: 'required',
  params: z.object({ market, ...campaignFields, reward }).strict(),
  result: campaignResult,
  annotations: additive,
  handler: async ({ params, ctx }) => {
    const { market: _market, ...input } = params;
    return createCampaign(ctx.db, ctx.caller.account.id, requireShop(ctx), ctx.now(), input);
  },
});

/** Edits a campaign of a shop. */
export const affiliateCampaignsUpdate = defineCapability({
  name: 'affiliate.campaignsUpdate',
  summary: 'Edits name, reward, attribution window, availability, approval, enabling/disabling, partner description per language.',
  description: 'Changes a campaign of the shop: any of `name`, `reward` (given whole: type and value), `attributionWindowDays`, `availability` (switching to `chosen` needs `partnerIds`), `partnerIds` (replaces the list), `approval`, `enabled`, `descriptions` (per language; null removes one). Conversions already recorded keep their commission. Returns the campaign as affiliate_campaigns_get reads it.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_campaigns_update',
  kind: 'write',
  market: 'required',
  params: z.object({ market, campaignId: id('campaign').describe('`campaignId` from affiliate_campaigns_list.'), ...campaignFields, name: campaignFields.name.optional(), reward: reward.optional() }).strict(),
  result: campaignResult,
  annotations: overwrite,
  handler: async ({ params, ctx }) => {
    const { market: _market, ...input } = params;
    return updateCampaign(ctx.db, ctx.caller.account.id, requireShop(ctx), input);
  },
});

/** Changes a programme document's policy (never its wording). */
export const affiliateDocumentsUpdate = defineCapability({
  name: 'affiliate.documentsUpdate',
  summary: 'Programme document policy (who it applies to, when confirmed, signed copy, e-mail attachment, enabled).',
  description: 'Changes the policy of a programme document: `appliesTo`, `confirmWhen`, `signedCopy` (keep the partner\'s signed copy and attach it instead of the published text), `emailAttachment` (attach it to the "Account approved" e-mail), `enabled`. The wording is uploaded by a person in the application, never over MCP. Returns the document as affiliate_documents_list reads it.',
  path: null,
  scope: 'affiliate:write',
  mcpTool: 'affiliate_documents_update',
  kind: 'write',
  market: 'none',
  params: z.object({
    key: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'a document key').describe('`key` from affiliate_documents_list.'),
    appliesTo: z.enum(DOCUMENT_APPLIES_TO).optional(),
    confirmWhen: z.enum(DOCUMENT_CONFIRM_WHEN).optional(),
    signedCopy: z.boolean().optional(),
    emailAttachment: z.boolean().optional(),
    enabled: z.boolean().optional(),
  }).strict(),
  result: z.object({ document: affiliateDocumentsList.result }),
  annotations: overwrite,
  handler: async ({ params, ctx }) => updateDocumentPolicy(ctx.db, ctx.caller.account.id, params),
});
