/** Orders: stored orders of one shop with their items. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { getOrder, listOrders } from '../../queries/orders.js';
import { listParams, market, todayOnly } from '../params.js';
import { defineCapability, readOnly } from '../types.js';
import type { FieldScopes } from '../projection.js';

const orderItem = z.object({
  lineNo: z.number().int(),
  kind: z.enum(['product', 'discount']).describe('`product`: goods; `discount`: a coupon\'s discount at one VAT rate (negative prices, no product).'),
  productCode: z.string().nullable().describe('Product code in the shop; null for a line without a catalogue product (a discount).'),
  couponCode: z.string().nullable().describe('For a discount line, the coupon it comes from; null otherwise.'),
  name: z.string(),
  quantity: z.string().describe('Decimal string.'),
  unitPriceWithVat: moneySchema,
  unitPriceWithoutVat: moneySchema,
  vatRate: z.string().describe('VAT rate in percent, decimal string.'),
  purchasePriceWithoutVat: moneySchema.nullable().optional().describe('Purchase price per unit at the time of the order, as the shop stored it; null when unknown. Needs `purchase-prices:read`; absent without it. The current card price is `purchasePrice` in /products/{code}.'),
});

const customer = z.object({
  firstName: z.string().nullable().optional().describe('Needs `personal-data:read`.'),
  lastName: z.string().nullable().optional().describe('Needs `personal-data:read`.'),
  company: z.string().nullable().optional().describe('Needs `personal-data:read`.'),
  email: z.string().nullable().optional().describe('Needs `personal-data:read`.'),
  phone: z.string().nullable().optional().describe('Needs `personal-data:read`.'),
  street: z.string().nullable().optional().describe('Needs `personal-data:read`.'),
  zip: z.string().nullable().optional().describe('Needs `personal-data:read`.'),
  city: z.string().nullable(),
  country: z.string().nullable().describe('ISO 3166-1 alpha-2.'),
}).describe('Delivery customer. Without `personal-data:read` only `city` and `country` are present.');

export const orderSchema = z.object({
  code: z.string().describe('Order number in the shop.'),
  createdAt: z.string().describe('ISO 8601 UTC with milliseconds.'),
  updatedAt: z.string(),
  status: z.object({ id: z.number().int(), name: z.string() }),
  paid: z.boolean(),
  paidAt: z.string().nullable(),
  currency: z.string().length(3),
  totalWithVat: moneySchema,
  totalWithoutVat: moneySchema,
  totalVat: moneySchema,
  shippingWithVat: moneySchema,
  couponCode: z.string().nullable().describe('The coupon the customer applied, or null; read it with coupons_get.'),
  discountWithVat: moneySchema.describe('Sum of the discount lines with VAT (zero or negative); already included in the totals.'),
  paymentMethod: z.string(),
  shippingMethod: z.string(),
  variableSymbol: z.string().describe('Payment reference, at most 10 digits.'),
  customerEmailHash: z.string().describe('Pseudonym: SHA-256 of the trimmed, lower-cased e-mail; equals `customerKey` of the customer directory.'),
  customer,
  items: z.array(orderItem),
});

/** Personal data (SPEC "Customer records" rule 5) and purchase prices are removed without their scopes. */
const orderFieldScopes: FieldScopes = {
  'items[].purchasePriceWithoutVat': 'purchase-prices:read',
  'customer.firstName': 'personal-data:read',
  'customer.lastName': 'personal-data:read',
  'customer.company': 'personal-data:read',
  'customer.email': 'personal-data:read',
  'customer.phone': 'personal-data:read',
  'customer.street': 'personal-data:read',
  'customer.zip': 'personal-data:read',
};

/** Lists a shop's stored orders, newest first, by cursor. */
export const ordersList = defineCapability({
  name: 'orders.list',
  summary: 'Stored orders of one shop, newest first.',
  description: 'Returns the stored orders of one shop (`market`) with their items, newest first, in pages: send `nextCursor` back as `cursor` with the other parameters unchanged until `hasMore` is false. Without `from`/`to` all orders are listed; `todayOnly` limits to today in the shop\'s time zone. Use orders_get for one order by its code.',
  path: '/orders',
  scope: 'orders:read',
  mcpTool: 'orders_list',
  kind: 'list',
  market: 'required',
  period: { default: 'all', todayOnly: true },
  params: z.object({ ...listParams, todayOnly: todayOnly.optional() }).strict(),
  result: orderSchema,
  fieldScopes: orderFieldScopes,
  annotations: readOnly,
  handler: ({ ctx, period, page }) => listOrders(ctx.db, ctx.shop!.id, period, page),
});

/** Reads one stored order of a shop with its items. */
export const ordersGet = defineCapability({
  name: 'orders.get',
  summary: 'One stored order with items.',
  description: 'Returns one stored order of the shop `market` by its order number, with items. An order of another shop is not found.',
  path: '/orders/{orderCode}',
  scope: 'orders:read',
  mcpTool: 'orders_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, orderCode: z.string().min(1).max(64).describe('Order number in the shop.') }).strict(),
  result: orderSchema,
  fieldScopes: orderFieldScopes,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const order = await getOrder(ctx.db, ctx.shop!.id, params.orderCode);
    if (!order) throw new AppError('NOT_FOUND', `No order \`${params.orderCode}\` in shop \`${ctx.shop!.code}\`.`, { param: 'orderCode' });
    return order;
  },
});
