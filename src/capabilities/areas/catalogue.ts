/** The catalogue of one shop: products (listing and search on one path), one product, categories. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { getProduct, listCategories, listProducts, searchProducts } from '../../queries/catalogue.js';
import { listParams, market, query } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const productSchema = z.object({
  code: z.string().describe('Product code in the shop.'),
  name: z.string(),
  ean: z.string().nullable(),
  plu: z.string().nullable(),
  category: z.object({ guid: z.string(), name: z.string().nullable() }).nullable(),
  priceWithVat: moneySchema.describe('Current card price with VAT.'),
  vatRate: z.string().describe('VAT rate in percent, decimal string.'),
  purchasePrice: moneySchema.nullable().optional().describe('Current card purchase price without VAT; null when unknown. Needs `purchase-prices:read`; absent without it.'),
  active: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const productFieldScopes = { purchasePrice: 'purchase-prices:read' } as const;

/** Lists a shop's products newest first, or searches them by name, code, EAN or PLU when `query` is given. */
export const productsSearch = defineCapability({
  name: 'products.search',
  summary: 'Products of a shop: listing, or search by name, code, EAN or PLU.',
  description: 'Without `query`: all products of the shop `market`, newest first, in pages (send `nextCursor` back as `cursor`), optionally created within `from`/`to`. With `query`: a search by name, code, EAN or PLU ordered by relevance (exact code/EAN/PLU first), at most `limit` records (default 20, max 100), not paginated and not restricted by period — `query` with `cursor`, `from` or `to` is an error. To read the entire catalogue use the listing.',
  path: '/products',
  scope: 'products:read',
  mcpTool: 'products_search',
  kind: 'list',
  market: 'required',
  period: { default: 'all' },
  searchParam: 'query',
  params: z.object({ ...listParams, query: query.optional() }).strict(),
  result: productSchema,
  fieldScopes: productFieldScopes,
  annotations: readOnly,
  handler: async ({ params, ctx, period, page }) => {
    if (params.query !== undefined) return searchProducts(ctx.db, ctx.shop!.id, params.query, page.limit);
    return listProducts(ctx.db, ctx.shop!.id, period, page);
  },
});

/** Reads one product with its category and card price. */
export const productsGet = defineCapability({
  name: 'products.get',
  summary: 'One product with category and card price.',
  description: 'Returns one product of the shop `market` by its code, with category, card price and (with `purchase-prices:read`) the current purchase price.',
  path: '/products/{code}',
  scope: 'products:read',
  mcpTool: 'products_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, code: z.string().min(1).max(128).describe('Product code in the shop.') }).strict(),
  result: productSchema,
  fieldScopes: productFieldScopes,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const product = await getProduct(ctx.db, ctx.shop!.id, params.code);
    if (!product) throw new AppError('NOT_FOUND', `No product \`${params.code}\` in shop \`${ctx.shop!.code}\`.`, { param: 'code' });
    return product;
  },
});

/** Lists a shop's categories with product counts. */
export const categoriesList = defineCapability({
  name: 'categories.list',
  summary: 'Categories with product counts.',
  description: 'Returns every category of the shop `market` (the whole tree in one response: use `parentGuid` to nest) with the number of products directly in it.',
  path: '/categories',
  scope: 'products:read',
  mcpTool: 'categories_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market }).strict(),
  result: z.object({
    guid: z.string().describe('Category ID in the shop.'),
    name: z.string(),
    parentGuid: z.string().nullable(),
    position: z.number().int(),
    productsCount: z.number().int(),
  }),
  annotations: readOnly,
  handler: ({ ctx }) => listCategories(ctx.db, ctx.shop!.id),
});
