/** Reports and sales: the financial summary of a period and revenue per order, in EUR at each record's sync-time rate. */
import { z } from 'zod';
import { moneySchema } from '../../money.js';
import { COGS_COVERAGE_MIN, financialSummary } from '../../queries/reports.js';
import { orderPerformance, productPerformance } from '../../queries/sales.js';
import { cursor, from, limit, market, pageMeta, to } from '../params.js';
import type { FieldScopes } from '../projection.js';
import { defineCapability, readOnly } from '../types.js';

const needsPrices = 'Needs `purchase-prices:read`; absent without it.';
const eurMoney = moneySchema.describe('EUR, converted per record at the exchange rate stored at its sync time (D23).');
const coverageRule = `\`cogs\` is null when fewer than ${COGS_COVERAGE_MIN * 100} % of the period's product lines have a known purchase price (\`cogsCoverage\` < ${COGS_COVERAGE_MIN}); then \`grossProfit\`, \`grossMargin\` and \`resultAfterCosts\` are absent — never a wrong profit.`;

const summarySchema = z.object({
  currency: z.literal('EUR'),
  orders: z.number().int().describe('Orders created in the period, cancelled ones excluded.'),
  cancelledOrders: z.number().int().describe('Cancelled orders of the period; in no other figure.'),
  revenueWithVat: eurMoney.describe('Order totals with VAT (goods, shipping, coupon discounts), EUR.'),
  revenueWithoutVat: eurMoney,
  vat: eurMoney,
  averageOrderValue: eurMoney.nullable().describe('revenueWithVat / orders; null without orders.'),
  discounts: eurMoney.describe('Coupon discount lines with VAT (zero or negative), already inside the revenue.'),
  cogs: eurMoney.nullable().optional().describe(`Cost of goods: known purchase prices at order time, scaled to the goods revenue of the lines without one. ${coverageRule} ${needsPrices}`),
  cogsCoverage: z.number().min(0).max(1).nullable().optional().describe(`Share of product lines with a known purchase price, 4 decimals; null without lines. ${needsPrices}`),
  productLines: z.number().int().optional().describe(needsPrices),
  pricedLines: z.number().int().optional().describe(needsPrices),
  grossProfit: eurMoney.optional().describe(`revenueWithoutVat - cogs. Absent when cogs is null. ${needsPrices}`),
  grossMargin: z.number().nullable().optional().describe(`grossProfit / revenueWithoutVat in percent, 2 decimals. ${needsPrices}`),
  shipping: eurMoney.optional().describe(`Shipping charged on the orders, with VAT: the shop stores no carrier cost, so this stands in for it. ${needsPrices}`),
  companyCosts: eurMoney.optional().describe(`Monthly company costs prorated by the days of each month inside the period. ${needsPrices}`),
  resultAfterCosts: eurMoney.optional().describe(`grossProfit - shipping - companyCosts: a management figure, not accounting profit. Absent when cogs is null. ${needsPrices}`),
});

const priceFields: FieldScopes = Object.fromEntries(
  ['cogs', 'cogsCoverage', 'productLines', 'pricedLines', 'grossProfit', 'grossMargin', 'shipping', 'companyCosts', 'resultAfterCosts'].map((f) => [f, 'purchase-prices:read']),
);

/** The period's financial summary of a shop in EUR; purchase-price based fields only with their scope. */
export const reportsFinancialSummary = defineCapability({
  name: 'reports.financialSummary',
  summary: 'Period summary in EUR: revenue, VAT, orders, AOV; with purchase prices also cost of goods, gross profit, margin, costs, result.',
  description: `Answers "what did I sell and earn": finished figures of the shop \`market\` for the period (default: the current month in the shop's time zone; at most 366 days), in EUR converted per order at the rate stored at its sync time. Revenue with and without VAT, VAT, orders and average order value; cancelled orders are excluded. With \`purchase-prices:read\` also cost of goods (\`cogs\`), \`cogsCoverage\`, \`grossProfit\`, \`grossMargin\`, \`shipping\`, \`companyCosts\` and \`resultAfterCosts\`. ${coverageRule} Not paginated. For single orders use sales_order_performance; for products sales_product_performance.`,
  path: '/reports/financial-summary',
  scope: 'reports:read',
  mcpTool: 'reports_financial_summary',
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object({ market, from: from.optional(), to: to.optional() }).strict(),
  result: summarySchema,
  fieldScopes: priceFields,
  annotations: readOnly,
  handler: ({ ctx, period }) => financialSummary(ctx.db, ctx.shop!.id, period!),
});

const orderRow = z.object({
  orderCode: z.string(),
  createdAt: z.string().describe('ISO 8601 UTC with milliseconds.'),
  status: z.string(),
  totalWithVat: moneySchema.describe('The order total in its own currency.'),
  eurRate: z.number().describe('EUR per unit of the order currency, stored at sync time (D23).'),
  revenueWithVat: eurMoney,
  revenueWithoutVat: eurMoney,
  cost: eurMoney.nullable().optional().describe(`Purchase cost of the goods; null when a product line has no purchase price. ${needsPrices}`),
  profit: eurMoney.nullable().optional().describe(`revenueWithoutVat - cost; null when cost is. ${needsPrices}`),
  margin: z.number().nullable().optional().describe(`profit / revenueWithoutVat in percent, 2 decimals. ${needsPrices}`),
});

/** Revenue per order in EUR for a period, with the whole period's totals on every page. */
export const salesOrderPerformance = defineCapability({
  name: 'sales.orderPerformance',
  summary: 'Revenue per order in EUR with whole-period totals; with purchase prices also cost, profit and margin per order.',
  description: `Returns the orders of the shop \`market\` created in the period (default: the current month, shop time zone; at most 366 days), newest first, each with its revenue in EUR at its stored rate, and \`totals\` of the WHOLE period (not just the page) on every page. Cancelled orders are left out. With \`purchase-prices:read\` each order also has \`cost\`, \`profit\` and \`margin\` (null when a line lacks a purchase price) and the totals carry cogs and gross profit under the financial summary's rule: ${coverageRule} Paginate with \`meta.nextCursor\` sent back as \`cursor\`.`,
  path: '/sales/order-performance',
  scope: 'reports:read',
  mcpTool: 'sales_order_performance',
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object({ market, from: from.optional(), to: to.optional(), limit: limit.optional(), cursor: cursor.optional() }).strict(),
  result: z.object({
    orders: z.array(orderRow).describe('This page, newest first.'),
    totals: z.object({
      orders: z.number().int(),
      revenueWithVat: eurMoney,
      revenueWithoutVat: eurMoney,
      averageOrderValue: eurMoney.nullable(),
      cogs: eurMoney.nullable().optional().describe(needsPrices),
      cogsCoverage: z.number().nullable().optional().describe(needsPrices),
      grossProfit: eurMoney.optional().describe(needsPrices),
      grossMargin: z.number().nullable().optional().describe(needsPrices),
    }).describe('Over the whole period.'),
  }),
  meta: pageMeta,
  fieldScopes: {
    'orders[].cost': 'purchase-prices:read',
    'orders[].profit': 'purchase-prices:read',
    'orders[].margin': 'purchase-prices:read',
    'totals.cogs': 'purchase-prices:read',
    'totals.cogsCoverage': 'purchase-prices:read',
    'totals.grossProfit': 'purchase-prices:read',
    'totals.grossMargin': 'purchase-prices:read',
  },
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => orderPerformance(ctx, 'sales.orderPerformance', period!, params, page.after),
});

const productRow = z.object({
  productCode: z.string(),
  name: z.string().describe('Name on the order lines.'),
  mapped: z.boolean().describe('False when the code did not match the shop\'s catalogue (counted in `unmappedLines`).'),
  quantity: z.string().describe('Invoiced minus credited quantity, decimal string.'),
  revenueWithoutVat: eurMoney.describe('Line prices without VAT of invoices minus credit notes, EUR at the order\'s stored rate.'),
  revenueWithVat: eurMoney,
  lines: z.number().int().describe('Document lines of this product in the period (invoiced and credited).'),
  creditedLines: z.number().int().describe('Of `lines`, those taken back by credit notes.'),
  purchaseCostWithoutVat: eurMoney.nullable().optional()
    .describe(`Purchase cost at document time: the purchase price the shop stored on each matched order line, times quantity; null when a line has none (never a partial cost). ${needsPrices}`),
  marginWithoutVat: eurMoney.nullable().optional().describe(`revenueWithoutVat - purchaseCostWithoutVat; null when the cost is. ${needsPrices}`),
  marginPercent: z.number().nullable().optional().describe(`In percent of revenueWithoutVat, 2 decimals. ${needsPrices}`),
});

/** Sales per product from the period's invoices and credit notes, with totals; purchase cost and margin with their scope. */
export const salesProductPerformance = defineCapability({
  name: 'sales.productPerformance',
  summary: 'Sales per product from invoices and credit notes with totals; with purchase prices also cost at time of sale and margin. Period required.',
  description: `Answers "which products sell and earn": per product of the shop \`market\`, the invoiced minus credited quantity and revenue (EUR at each order's stored rate) of the documents whose business date (tax date, else issue date) lies in the REQUIRED period \`from\`..\`to\` (at most 366 days), highest revenue first, in pages (\`meta.nextCursor\`), with \`totals\` of the whole period and \`unmappedLines\` (lines whose product code did not match the catalogue). A credit note that reverses a whole order takes back all its lines; one that refunds a claim takes back the claim's lines. With \`purchase-prices:read\` also \`purchaseCostWithoutVat\` (the purchase price stored on the matched order line at the time of sale), \`marginWithoutVat\` and \`marginPercent\`; a product with a line lacking a price has null cost and margin, and the totals' margin covers only products with a known cost (\`costedRevenueWithoutVat\`).`,
  path: '/sales/product-performance',
  scope: 'reports:read',
  mcpTool: 'sales_product_performance',
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth', required: true },
  params: z.object({ market, from, to, limit: limit.optional(), cursor: cursor.optional() }).strict(),
  result: z.object({
    products: z.array(productRow).describe('This page, highest revenue first.'),
    totals: z.object({
      products: z.number().int(),
      quantity: z.string(),
      revenueWithoutVat: eurMoney,
      revenueWithVat: eurMoney,
      lines: z.number().int(),
      unmappedLines: z.number().int(),
      productsWithoutCost: z.number().int().optional().describe(needsPrices),
      purchaseCostWithoutVat: eurMoney.optional().describe(`Sum over products with a known cost. ${needsPrices}`),
      costedRevenueWithoutVat: eurMoney.optional().describe(`Revenue of those products. ${needsPrices}`),
      marginWithoutVat: eurMoney.optional().describe(`costedRevenueWithoutVat - purchaseCostWithoutVat. ${needsPrices}`),
      marginPercent: z.number().nullable().optional().describe(needsPrices),
    }).describe('Over the whole period.'),
    unmappedLines: z.number().int().describe('Document lines of the period that did not match the catalogue.'),
  }),
  meta: pageMeta,
  fieldScopes: {
    'products[].purchaseCostWithoutVat': 'purchase-prices:read',
    'products[].marginWithoutVat': 'purchase-prices:read',
    'products[].marginPercent': 'purchase-prices:read',
    'totals.productsWithoutCost': 'purchase-prices:read',
    'totals.purchaseCostWithoutVat': 'purchase-prices:read',
    'totals.costedRevenueWithoutVat': 'purchase-prices:read',
    'totals.marginWithoutVat': 'purchase-prices:read',
    'totals.marginPercent': 'purchase-prices:read',
  },
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => productPerformance(ctx, 'sales.productPerformance', period!, params, page.after),
});
