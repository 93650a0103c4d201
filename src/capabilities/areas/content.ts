/** Catalogue content of one shop: product and category texts with hashes, the content policy, the availability dictionary, articles. */
import { z } from 'zod';
import { CONTENT_LIMITS } from '../../content/limits.js';
import { AppError } from '../../errors.js';
import { getCategoryContent, getContentCapabilities, getProductContent, listAvailabilities, searchArticles } from '../../queries/content.js';
import { limit, market } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const field = z.object({
  value: z.string().nullable().describe('The text as the shop stores it (HTML where the shop allows it); null when empty.'),
  hash: sha256Hex.describe('SHA-256 of the UTF-8 text; a missing value is the hash of the empty string. The same value content-change events carry.'),
  writable: z.boolean().describe('Whether the shop\'s platform lets the service write this field (through an approved proposal).'),
});
const fingerprintField = sha256Hex.describe('SHA-256 over the lines `field:hash` of all fields in the order listed; changes exactly when a field does.');
const PRODUCT_FIELD_NAMES = ['description', 'shortDescription', 'metaTitle', 'metaDescription'] as const;
const CATEGORY_FIELD_NAMES = ['description', 'descriptionBottom', 'metaTitle', 'metaDescription'] as const;
const REASONS = ['PLATFORMA', 'BEZ_ROZSIRENIA', 'PROSTREDIE'] as const;

/** Reads a product's texts with their hashes, fingerprint and writability. */
export const productsContentGet = defineCapability({
  name: 'products.content',
  summary: 'Product texts (description, short description, SEO title and description) with fingerprint and writability.',
  description: 'Returns the texts of one product of the shop `market` by its code: `description`, `shortDescription`, `metaTitle`, `metaDescription`, each with its value, its `hash` (SHA-256 of the UTF-8 text; a missing value is the hash of the empty string) and whether the shop\'s platform lets the service write it; `fingerprint` covers all fields. Texts are as of the shop\'s last sync.',
  path: '/products/{code}/content',
  scope: 'product-content:read',
  mcpTool: 'products_content_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, code: z.string().min(1).max(128).describe('Product code in the shop.') }).strict(),
  result: z.object({
    code: z.string(),
    name: z.string(),
    availabilityId: z.string().nullable().describe('The product\'s entry of the availability dictionary (/availabilities).'),
    updatedAt: z.string().nullable().describe('When the shop last changed the texts.'),
    fingerprint: fingerprintField,
    fields: z.object(Object.fromEntries(PRODUCT_FIELD_NAMES.map((f) => [f, field])) as Record<(typeof PRODUCT_FIELD_NAMES)[number], typeof field>),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const content = await getProductContent(ctx.db, ctx.shop!.id, params.code);
    if (!content) throw new AppError('NOT_FOUND', `No product \`${params.code}\` in shop \`${ctx.shop!.code}\`.`, { param: 'code' });
    return content;
  },
});

/** Reads a category's texts with their hashes, fingerprint and writability. */
export const categoriesContentGet = defineCapability({
  name: 'categories.content',
  summary: 'Category texts (upper and lower description, SEO title and description) with fingerprint and writability.',
  description: 'Returns the texts of one category of the shop `market` by its ID (`guid` from categories_list): `description` (upper), `descriptionBottom` (lower), `metaTitle`, `metaDescription`, each with value, `hash` (SHA-256 of the UTF-8 text; missing = hash of the empty string) and writability; `fingerprint` covers all fields.',
  path: '/categories/{guid}/content',
  scope: 'category-content:read',
  mcpTool: 'categories_content_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, guid: z.string().min(1).max(64).describe('Category ID in the shop.') }).strict(),
  result: z.object({
    guid: z.string(),
    name: z.string(),
    updatedAt: z.string().nullable(),
    fingerprint: fingerprintField,
    fields: z.object(Object.fromEntries(CATEGORY_FIELD_NAMES.map((f) => [f, field])) as Record<(typeof CATEGORY_FIELD_NAMES)[number], typeof field>),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const content = await getCategoryContent(ctx.db, ctx.shop!.id, params.guid);
    if (!content) throw new AppError('NOT_FOUND', `No category \`${params.guid}\` in shop \`${ctx.shop!.code}\`.`, { param: 'guid' });
    return content;
  },
});

/** Tells, without calling the shop, what this access may do with product content. */
export const productsContentPolicy = defineCapability({
  name: 'products.content_policy',
  summary: 'Content policy: what this access may read and propose, which fields the platform writes, approval mode, limits, fingerprints.',
  description: 'Answers from the service\'s own records, without calling the shop: what the calling key may read (product and category texts) and propose, which text fields the shop\'s platform writes, the approval mode and whether autonomous writing is on (the key\'s AI write mode, D13: `read_only`, `proposals`, `autonomous`), whether the availability dictionary is manageable and why not, the limits of a proposal, and how hashes and fingerprints are computed.',
  path: '/product-content/policy',
  scope: 'product-content:read',
  mcpTool: 'products_content_policy',
  kind: 'summary',
  market: 'required',
  params: z.object({ market }).strict(),
  result: z.object({
    read: z.object({ products: z.boolean(), categories: z.boolean().describe('Needs `category-content:read`.') }),
    propose: z.object({ products: z.boolean(), categories: z.boolean(), availabilities: z.boolean().describe('Needs `availabilities:draft` and a manageable dictionary.') })
      .describe('What proposals this access may prepare: never with AI write mode `read_only`.'),
    writableFields: z.object({ product: z.array(z.enum(PRODUCT_FIELD_NAMES)), category: z.array(z.enum(CATEGORY_FIELD_NAMES)) }).describe('Text fields the shop\'s platform lets the service write.'),
    writeMode: z.enum(['read_only', 'proposals', 'autonomous']).describe('The AI write mode of this access (D13).'),
    approvalMode: z.enum(['none', 'person', 'policy']).describe('`person`: a person approves each proposal in the application; `policy`: autonomous writing within the policy; `none`: no writes.'),
    autonomousWriting: z.boolean(),
    availabilities: z.object({ manageable: z.boolean(), reason: z.enum(REASONS).nullable().describe('Why not: `PLATFORMA` (the platform does not allow it), `BEZ_ROZSIRENIA` (the shop lacks the extension), `PROSTREDIE` (a test environment).') }),
    limits: z.object({
      maxFieldLength: z.record(z.string(), z.number().int()),
      maxEntitiesPerProposal: z.number().int(),
      proposalExpiryHours: z.number().int(),
    }),
    fingerprints: z.object({ algorithm: z.literal('sha256'), fieldHash: z.string(), fingerprint: z.string() }),
  }),
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const caps = await getContentCapabilities(ctx.db, ctx.shop!.id);
    const scopes = ctx.caller.scopes;
    const mode = ctx.caller.writeMode;
    const writes = mode !== 'read_only';
    return {
      read: { products: scopes.has('product-content:read'), categories: scopes.has('category-content:read') },
      propose: {
        products: writes && caps.productFields.length > 0,
        categories: writes && scopes.has('category-content:read') && caps.categoryFields.length > 0,
        availabilities: writes && scopes.has('availabilities:draft') && caps.availabilityManageable,
      },
      writableFields: { product: caps.productFields as Array<(typeof PRODUCT_FIELD_NAMES)[number]>, category: caps.categoryFields as Array<(typeof CATEGORY_FIELD_NAMES)[number]> },
      writeMode: mode,
      approvalMode: mode === 'read_only' ? 'none' as const : mode === 'autonomous' ? 'policy' as const : 'person' as const,
      autonomousWriting: mode === 'autonomous',
      availabilities: { manageable: caps.availabilityManageable, reason: caps.availabilityManageable ? null : caps.availabilityReason },
      limits: { maxFieldLength: { ...CONTENT_LIMITS.maxFieldLength }, maxEntitiesPerProposal: CONTENT_LIMITS.maxEntitiesPerProposal, proposalExpiryHours: CONTENT_LIMITS.proposalExpiryHours },
      fingerprints: {
        algorithm: 'sha256' as const,
        fieldHash: 'SHA-256 of the field\'s UTF-8 text, lower-case hex; a missing value is the hash of the empty string.',
        fingerprint: 'SHA-256 of the lines `field:hash` joined by a newline, fields in the order the content read lists them.',
      },
    };
  },
});

/** Lists the shop's availability dictionary with whether it can be managed in the service. */
export const availabilitiesList = defineCapability({
  name: 'availabilities.list',
  summary: 'Availability dictionary of a shop.',
  description: 'Returns the availability dictionary of the shop `market` (the named states shoppers see, e.g. "in stock" — not stock levels): id, name, description, time to stock and delivery time in hours, `meaning` for shopping feeds, colour, whether a system entry, default roles and pairing rows. `meta.manageable` says whether the dictionary can be changed through the service and `meta.reason` why not (`PLATFORMA`, `BEZ_ROZSIRENIA`, `PROSTREDIE`).',
  path: '/availabilities',
  scope: 'products:read',
  mcpTool: null,
  kind: 'list',
  market: 'required',
  params: z.object({ market }).strict(),
  meta: z.object({
    manageable: z.boolean().describe('Whether the dictionary can be changed through the service (by an approved proposal).'),
    reason: z.enum(REASONS).nullable().describe('Why it cannot: `PLATFORMA`, `BEZ_ROZSIRENIA` or `PROSTREDIE`; null when manageable.'),
  }),
  result: z.object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    onStockHours: z.number().int().nullable().describe('Hours until the goods are in stock.'),
    deliveryHours: z.number().int().nullable().describe('Delivery time in hours.'),
    meaning: z.enum(['in_stock', 'backorder', 'preorder', 'out_of_stock']).describe('Meaning for a shopping feed.'),
    color: z.string().nullable().describe('Display colour, #rrggbb.'),
    system: z.boolean().describe('A system entry of the platform.'),
    defaultRoles: z.array(z.string()).describe('Default role(s) of the entry in the shop.'),
    pairingRows: z.number().int().describe('In how many availability-pairing rows the entry appears.'),
  }),
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const [items, caps] = await Promise.all([listAvailabilities(ctx.db, ctx.shop!.id), getContentCapabilities(ctx.db, ctx.shop!.id)]);
    return { items, hasMore: false, last: null, meta: { manageable: caps.availabilityManageable, reason: caps.availabilityManageable ? null : caps.availabilityReason } };
  },
});

/** Searches the shop's blog articles and content pages by title or text. */
export const contentArticlesSearch = defineCapability({
  name: 'content.articles',
  summary: 'Blog articles and shop content by title or text, with web address and preview image.',
  description: 'Searches the blog articles and content pages of the shop `market` by title or text (`query`), titles matching first, then by similarity; without `query` the newest first. At most `limit` records (default 20, max 100), not paginated. `kind` keeps only articles or only pages.',
  path: '/content/articles',
  scope: 'products:read',
  mcpTool: 'content_articles_search',
  kind: 'search',
  market: 'required',
  params: z.object({
    market,
    query: z.string().trim().min(1).max(200).optional().describe('Text to find in titles and texts (case-insensitive).'),
    kind: z.enum(['article', 'page']).optional().describe('`article`: blog articles; `page`: content pages of the shop.'),
    limit: limit.optional(),
  }).strict(),
  result: z.object({
    id: z.string(),
    kind: z.enum(['article', 'page']),
    title: z.string(),
    text: z.string().describe('The text as the shop publishes it (HTML).'),
    url: z.string().describe('Public web address.'),
    previewImageUrl: z.string().nullable(),
    publishedAt: z.string().nullable(),
    updatedAt: z.string(),
  }),
  annotations: readOnly,
  handler: ({ params, ctx, page }) => searchArticles(ctx.db, ctx.shop!.id, params.query, params.kind, page.limit),
});
