/** Inventory: the stock of one item, with the evidence model its figure comes from (SPEC "Stock"). */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { getStockItem, getStockItems, listMovements } from '../../queries/inventory.js';
import { listParams, market } from '../params.js';
import { defineCapability, readOnly } from '../types.js';

const quantity = z.string().regex(/^-?\d+(\.\d+)?$/).describe('Decimal string.');

const stockSchema = z.object({
  code: z.string().describe('Item code (the product code in the shop).'),
  sku: z.string(),
  name: z.string().nullable().describe('Product name, when the item is in the catalogue.'),
  quantity: quantity.describe('The figure the shop sells from: available stock where the shop keeps a balance, otherwise the quantity on the product card. Decimal string; may be negative when the shop oversold.'),
  source: z.enum(['balance', 'product_card', 'variants']).describe('Where `quantity` comes from: the shop\'s stock balance, the product card, or the sum of the variants.'),
  physical: quantity.nullable().describe('Goods on hand; only where the shop keeps a balance, otherwise null (never estimated).'),
  available: quantity.nullable().describe('Available for sale = physical − reserved; only where the shop keeps a balance, otherwise null.'),
  reserved: quantity.nullable().describe('Reserved in orders not yet dispatched; only where the shop keeps a balance, otherwise null.'),
  updatedAt: z.string().describe('Last change of the figures in the shop; ISO 8601 UTC with milliseconds.'),
});

/** Reads the stock of one item of a shop. */
export const inventoryStock = defineCapability({
  name: 'inventory.stock',
  summary: 'Stock of one item with the source of the value.',
  description: 'Returns the stock of one item (`code`, the product code) of the shop `market`: `quantity` and `source` always; `physical`, `available` and `reserved` only where the shop keeps a stock balance — for a shop without one they are null, no on-hand figure is invented. The figures are as of the shop\'s last sync.',
  path: '/inventory/stock',
  scope: 'inventory:read',
  mcpTool: 'inventory_stock',
  kind: 'get',
  market: 'required',
  params: z.object({ market, code: z.string().min(1).max(128).describe('Item code (product code in the shop).') }).strict(),
  result: stockSchema,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const item = await getStockItem(ctx.db, ctx.shop!.id, params.code);
    if (!item) throw new AppError('NOT_FOUND', `No stock item \`${params.code}\` in shop \`${ctx.shop!.code}\`.`, { param: 'code' });
    return item;
  },
});

export const MAX_CODES = 100;

/** Reads the stock of up to 100 items of a shop at once. */
export const inventoryProductAvailability = defineCapability({
  name: 'inventory.availability',
  summary: 'Stock level of several items (`codes`).',
  description: `Returns the stock of up to ${MAX_CODES} items of the shop \`market\` at once (\`codes\`: comma-separated item codes, the product codes in the shop), each with the same fields as inventory_stock. Codes that do not exist in the shop are listed in \`notFound\` beside the found items, not an error. The figures are as of the shop's last sync.`,
  path: '/inventory/availability',
  scope: 'inventory:read',
  mcpTool: 'inventory_product_availability',
  kind: 'get',
  market: 'required',
  params: z.object({
    market,
    codes: z.string().max(MAX_CODES * 129 - 1).regex(new RegExp(`^[^,]{1,128}(,[^,]{1,128}){0,${MAX_CODES - 1}}$`), `1 to ${MAX_CODES} comma-separated item codes of 1..128 characters`)
      .describe(`Comma-separated item codes (product codes in the shop), 1 to ${MAX_CODES}, each 1..128 characters.`),
  }).strict(),
  result: z.object({
    items: z.array(stockSchema).describe('The items found, in the order asked.'),
    notFound: z.array(z.string()).describe('Codes asked for that the shop has no item of.'),
  }),
  annotations: readOnly,
  handler: ({ params, ctx }) => getStockItems(ctx.db, ctx.shop!.id, params.codes.split(',')),
});

/** Lists a shop's stock movements, newest first, by cursor. */
export const inventoryMovements = defineCapability({
  name: 'inventory.movements',
  summary: 'Stock movements: when, what, how much, kind, origin, order.',
  description: 'Returns the stock movements of the shop `market`, newest first, in pages (send `nextCursor` back as `cursor` with the other parameters unchanged): the item, the signed quantity (a sale is negative), the kind (`receipt`, `sale`, `return`), the origin (`order`: goods leaving or coming back with an order; `claim`: goods returned in a claim; `purchase`: a receipt from a supplier) with the order and claim numbers. Filters: `code` (item code), `kind`, `origin`, `orderCode`; `from`/`to` restrict when the movement happened (default: all).',
  path: '/inventory/movements',
  scope: 'inventory:read',
  mcpTool: 'inventory_movements',
  kind: 'list',
  market: 'required',
  period: { default: 'all' },
  params: z.object({
    ...listParams,
    code: z.string().min(1).max(128).optional().describe('Only movements of this item (product code in the shop).'),
    kind: z.enum(['receipt', 'sale', 'return']).optional().describe('Only movements of this kind.'),
    origin: z.enum(['order', 'claim', 'purchase']).optional().describe('Only movements of this origin.'),
    orderCode: z.string().min(1).max(64).optional().describe('Only movements caused by this order.'),
  }).strict(),
  result: z.object({
    movementId: z.string().describe('The shop\'s identifier of the movement.'),
    itemCode: z.string(),
    name: z.string().nullable().describe('Product name, when the item is in the catalogue.'),
    kind: z.enum(['receipt', 'sale', 'return']),
    quantity: quantity.describe('Signed decimal string: positive into stock, negative out of it.'),
    occurredAt: z.string().describe('ISO 8601 UTC with milliseconds.'),
    origin: z.enum(['order', 'claim', 'purchase']),
    orderCode: z.string().nullable(),
    claimCode: z.string().nullable(),
  }),
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) =>
    listMovements(ctx.db, ctx.shop!.id, { code: params.code, kind: params.kind, origin: params.origin, orderCode: params.orderCode }, period, page),
});
