/** The affiliate programme's content: help articles, e-mail templates, legal documents, electronic signatures, variables. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { checkText, VARIABLE_SURFACES, VARIABLES } from '../../affiliate/variables.js';
import {
  getArticle, getDocumentContent, getSignature, listArticles, listDocuments, listEmailTemplates, listLackingSignatures, listSignatures,
} from '../../queries/affiliateContent.js';
import { cursor, limit } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const language = z.string().regex(/^[a-z]{2}$/, 'a two-letter language code').describe('Language code, e.g. `sk` or `en`; default: all languages.');
const contentKey = (what: string) => z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, `a ${what} key`);
const articleStatus = z.enum(['default', 'custom', 'missing']).describe('`default`: the built-in wording; `custom`: the account\'s own; `missing`: no text in this language.');

/** Lists the partner portal's help articles. */
export const affiliateArticlesList = defineCapability({
  name: 'affiliate.articlesList',
  summary: 'Partner-portal help articles: key, default/custom, enabled, order, per-language status.',
  description: 'Returns the help articles of the partner portal in display order (few, not paginated): key, whether a default article or the account\'s own, enabled, position, and per language its title, slug and status (default wording, custom, missing). Account-wide. For the wording use affiliate_articles_get.',
  path: '/affiliate/articles',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_articles_list',
  kind: 'list',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    key: z.string(), isDefault: z.boolean(), enabled: z.boolean(), position: z.number().int(),
    languages: z.array(z.object({ language: z.string(), title: z.string().nullable(), slug: z.string(), status: articleStatus })),
    updatedAt: timestamp,
  }),
  annotations: readOnly,
  handler: ({ ctx }) => listArticles(ctx.db, ctx.caller.account.id),
});

/** Reads one help article's HTML wording. */
export const affiliateArticlesGet = defineCapability({
  name: 'affiliate.articlesGet',
  summary: 'One help article, HTML wording in all or one language, variables not substituted.',
  description: 'Returns one help article by `articleKey` (`key` in affiliate_articles_list) with its HTML wording in every language or in `language`, `{{variables}}` left as written; each translation names the registry variables it uses and any it uses that the registry does not know (affiliate variables: /affiliate/variables).',
  path: '/affiliate/articles/{articleKey}',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_articles_get',
  kind: 'get',
  market: 'none',
  params: z.object({ articleKey: contentKey('article').describe('Article key, as `key` in affiliate_articles_list.'), language: language.optional() }).strict(),
  result: z.object({
    key: z.string(), isDefault: z.boolean(), enabled: z.boolean(), position: z.number().int(),
    translations: z.array(z.object({
      language: z.string(), title: z.string().nullable(), slug: z.string(), html: z.string().nullable().describe('HTML; variables not substituted.'), status: articleStatus,
      variables: z.array(z.string()).describe('Canonical names of the registry variables the text uses.'),
      unknownVariables: z.array(z.string()).describe('Variables the text uses that the registry does not know (rendered as written).'),
    })),
    updatedAt: timestamp,
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const article = await getArticle(ctx.db, ctx.caller.account.id, params.articleKey, params.language);
    if (!article) throw new AppError('NOT_FOUND', `No help article \`${params.articleKey}\`.`, { param: 'articleKey' });
    return article;
  },
});

/** Lists partner e-mail templates with the automatic attachments of "Account approved". */
export const affiliateEmailTemplates = defineCapability({
  name: 'affiliate.emailTemplates',
  summary: 'Partner e-mail templates per language and automatic attachments of the Account approved e-mail.',
  description: 'Returns the e-mails the programme sends partners, one per event and language (few, not paginated): subject and HTML body with variables unsubstituted, whether the event is enabled and whether the wording is customised. The `account_approved` templates list the documents attached automatically (the partner agreement, per the document policy).',
  path: '/affiliate/email-templates',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_email_templates_list',
  kind: 'list',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    event: z.string().describe('account_approved, account_rejected, conversion_approved, payout_paid, code_request_decided.'),
    language: z.string(), subject: z.string(), bodyHtml: z.string(), enabled: z.boolean(), customised: z.boolean(), updatedAt: timestamp,
    automaticAttachments: z.array(z.object({ documentKey: z.string(), title: z.string(), language: z.string(), version: z.number().int(), fileName: z.string().nullable() })),
  }),
  annotations: readOnly,
  handler: ({ ctx }) => listEmailTemplates(ctx.db, ctx.caller.account.id),
});

/** Lists the programme's legal documents with policy, versions, readiness and acceptance. */
export const affiliateDocumentsList = defineCapability({
  name: 'affiliate.documentsList',
  summary: 'Programme documents: confirmation policy, signed copy, e-mail attachment, versions per language, readiness, acceptance counts.',
  description: 'Returns the programme\'s legal documents (few, not paginated): the policy (who it applies to, when partners confirm it, whether a signed copy is kept, whether it is attached to the approval e-mail, enabled), per language the current version and open drafts, readiness with its reasons, and acceptance counts (signatures, of the current version, partners lacking one). The wording: /affiliate/documents/{documentKey}/content; the signatures: /affiliate/signatures.',
  path: '/affiliate/documents',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_documents_list',
  kind: 'list',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({
    key: z.string(), title: z.string(),
    policy: z.object({
      appliesTo: z.string().describe('all_partners or influencers.'), confirmWhen: z.string().describe('registration, first_payout or never.'),
      signedCopy: z.boolean(), emailAttachment: z.boolean(), enabled: z.boolean(),
    }),
    languages: z.array(z.object({
      language: z.string(), currentVersion: z.number().int().nullable(), publishedAt: timestamp.nullable(), versions: z.number().int(), openDrafts: z.number().int(),
    })),
    readiness: z.object({ ready: z.boolean(), reasons: z.array(z.string()) }),
    acceptance: z.object({ signatures: z.number().int(), ofCurrentVersion: z.number().int(), partnersLacking: z.number().int() }),
  }),
  annotations: readOnly,
  handler: ({ ctx }) => listDocuments(ctx.db, ctx.caller.account.id),
});

const versionView = z.object({
  version: z.number().int(), status: z.enum(['draft', 'published', 'superseded']),
  storedText: z.string().describe('The text as stored, variables unsubstituted.'), publicText: z.string().describe('The text as the portal shows it publicly.'),
  fingerprints: z.object({ textSha256: z.string(), pdfSha256: z.string().nullable() }),
  source: z.string().describe('upload or editor.'),
  pdf: z.record(z.string(), z.unknown()).nullable().describe('PDF metadata (file name, pages, bytes, sha256; `uploadedAs` pdf or html for wording uploaded in the application); null when the version has no PDF.'),
  createdAt: timestamp, publishedAt: timestamp.nullable(),
});

/** Reads one legal document's wording per language with its drafts. */
export const affiliateDocumentContent = defineCapability({
  name: 'affiliate.documentContent',
  summary: 'One legal document per language: stored and public text, version, fingerprints, source, PDF metadata, open drafts.',
  description: 'Returns one programme document by `documentKey` (`key` in /affiliate/documents) in every language or in `language`: the current version (stored text, public text, version, SHA-256 fingerprints of text and PDF, source, PDF metadata), the open drafts, and the superseded versions\' fingerprints.',
  path: '/affiliate/documents/{documentKey}/content',
  scope: 'affiliate:read',
  mcpTool: null,
  kind: 'get',
  market: 'none',
  params: z.object({ documentKey: contentKey('document').describe('Document key, as `key` in /affiliate/documents.'), language: language.optional() }).strict(),
  result: z.object({
    key: z.string(), title: z.string(),
    languages: z.array(z.object({
      language: z.string(), current: versionView.nullable(), openDrafts: z.array(versionView),
      history: z.array(z.object({ version: z.number().int(), publishedAt: timestamp.nullable(), textSha256: z.string() })),
    })),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const document = await getDocumentContent(ctx.db, ctx.caller.account.id, params.documentKey, params.language);
    if (!document) throw new AppError('NOT_FOUND', `No programme document \`${params.documentKey}\`.`, { param: 'documentKey' });
    return document;
  },
});

const fingerprints = z.object({ textSha256: z.string(), pdfSha256: z.string().nullable() });
const signatureBase = {
  signatureId: z.string(), partnerId: z.string(), partnerHandle: z.string(), documentKey: z.string(), documentTitle: z.string(),
  version: z.number().int(), language: z.string(), market: z.string().nullable().describe('The shop whose portal it was signed on.'),
  signedAt: timestamp, method: z.string().describe('click_wrap or typed_name.'), verification: z.string().describe('email_link or sms_code.'),
  fingerprints, state: z.string().describe('`valid`; the record never changes, also after the document gets a new version.'),
};
const signedItem = z.object({ status: z.literal('signed'), ...signatureBase });
const lackingItem = z.object({
  status: z.literal('lacking'), partnerId: z.string(), partnerHandle: z.string(), partnerState: z.string(), documentKey: z.string(), documentTitle: z.string(),
  currentVersion: z.number().int().describe('The version the partner has not signed.'), language: z.string(),
});

/** Lists the electronic signatures (newest first) or the partners lacking one. */
export const affiliateSignatures = defineCapability({
  name: 'affiliate.signatures',
  summary: 'Electronic signatures (who, document, version, language, shop, time, method, verification, fingerprints, state) and partners lacking one.',
  description: 'With `status=signed` (default): the electronic signatures of programme documents, newest first, paginated by cursor — partner, document, version, language, shop, time, method, verification, fingerprints, state; read-only and immutable. With `status=lacking`: the approved or waiting partners without a signature of the current version of a document they must confirm (one response). A key restricted to shops sees the signatures made on them.',
  path: '/affiliate/signatures',
  scope: 'affiliate:read',
  mcpTool: null,
  kind: 'list',
  market: 'none',
  params: z.object({
    status: z.enum(['signed', 'lacking']).optional().describe('`signed` (default): signatures; `lacking`: partners lacking a signature.'),
    limit: limit.optional(), cursor: cursor.optional(),
  }).strict(),
  result: z.discriminatedUnion('status', [signedItem, lackingItem]),
  annotations: readOnly,
  handler: async ({ params, ctx, page }) => {
    if (params.status === 'lacking') {
      if (params.cursor !== undefined) throw new AppError('INVALID_PARAMETER_COMBINATION', '`status=lacking` is one response; it takes no `cursor`.', { params: ['status', 'cursor'] });
      return (await listLackingSignatures(ctx.db, ctx.caller.account.id)).map((r) => ({ status: 'lacking' as const, ...r }));
    }
    const result = await listSignatures(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes, page);
    return { ...result, items: result.items.map((r) => ({ status: 'signed' as const, ...r })) };
  },
});

/** Reads one signature with the signed text and the values snapshot. */
export const affiliateSignature = defineCapability({
  name: 'affiliate.signature',
  summary: 'One electronic signature with signed text and value snapshot; immutable record.',
  description: 'Returns one electronic signature by `signatureId` with the text exactly as signed (variables filled in) and the snapshot of the values used. The record is immutable: a new version of the document does not change it.',
  path: '/affiliate/signatures/{signatureId}',
  scope: 'affiliate:read',
  mcpTool: null,
  kind: 'get',
  market: 'none',
  params: z.object({ signatureId: z.string().regex(/^\d{1,18}$/, 'a signature id (digits)').describe('Signature id, as `signatureId` in /affiliate/signatures.') }).strict(),
  result: z.object({ ...signatureBase, signedText: z.string(), valuesSnapshot: z.record(z.string(), z.string()) }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const signature = await getSignature(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes, params.signatureId);
    if (!signature) throw new AppError('NOT_FOUND', `No signature \`${params.signatureId}\`.`, { param: 'signatureId' });
    return signature;
  },
});

/** The registry of content and e-mail variables, with an optional check of a text. */
export const affiliateVariables = defineCapability({
  name: 'affiliate.variables',
  summary: 'Registry of content and e-mail variables; optional check of a text for unknown variables.',
  description: 'Returns every variable that portal texts, help articles, e-mails and documents may use as `{{name}}`: canonical name, aliases, type, surfaces where it is filled in, an example and a description; optionally only those of one `surface`. With `text`, also checks the text: which variables it uses (with their canonical names) and which the registry does not know (they would render as written).',
  path: '/affiliate/variables',
  scope: 'affiliate:read',
  mcpTool: null,
  kind: 'get',
  market: 'none',
  params: z.object({
    surface: z.enum(VARIABLE_SURFACES).optional().describe('Only variables filled in on this surface.'),
    text: z.string().min(1).max(4000).optional().describe('A text to check for variables, e.g. a draft article body.'),
  }).strict(),
  result: z.object({
    variables: z.array(z.object({
      name: z.string(), aliases: z.array(z.string()), type: z.enum(['string', 'money', 'percent', 'url', 'date', 'integer']),
      surfaces: z.array(z.enum(VARIABLE_SURFACES)), example: z.string(), description: z.string(),
    })),
    check: z.object({
      used: z.array(z.object({ written: z.string(), canonical: z.string() })),
      unknown: z.array(z.string()).describe('Variables not in the registry.'),
      unavailableOnSurface: z.array(z.string()).describe('Known variables the chosen `surface` does not fill in.'),
    }).nullable().describe('Present when `text` is given; null otherwise.'),
  }),
  annotations: readOnly,
  handler: async ({ params }) => {
    const variables = VARIABLES.filter((v) => params.surface === undefined || v.surfaces.includes(params.surface)).map((v) => ({ ...v, aliases: [...v.aliases], surfaces: [...v.surfaces] }));
    if (params.text === undefined) return { variables, check: null };
    const checked = checkText(params.text);
    const unavailable = params.surface === undefined ? [] : checked.used.filter((u) => !VARIABLES.find((v) => v.name === u.canonical)!.surfaces.includes(params.surface!)).map((u) => u.written);
    return { variables, check: { used: checked.used, unknown: checked.unknown, unavailableOnSurface: unavailable } };
  },
});
