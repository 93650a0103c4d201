/** Inventory: the stock of one item, with the evidence model its figure comes from (SPEC "Stock"). */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { getStockItem } from '../../queries/inventory.js';
import { market } from '../params.js';
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
