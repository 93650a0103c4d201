/** Reports and sales: the financial summary of a period and revenue per order, in EUR at each record's sync-time rate. */
import { z } from 'zod';
import { moneySchema } from '../../money.js';
import { COGS_COVERAGE_MIN, financialSummary } from '../../queries/reports.js';
import { orderPerformance } from '../../queries/sales.js';
import { cursor, from, limit, market, to } from '../params.js';
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
  description: `Returns the orders of the shop \`market\` created in the period (default: the current month, shop time zone; at most 366 days), newest first, each with its revenue in EUR at its stored rate, and \`totals\` of the WHOLE period (not just the page) on every page. Cancelled orders are left out. With \`purchase-prices:read\` each order also has \`cost\`, \`profit\` and \`margin\` (null when a line lacks a purchase price) and the totals carry cogs and gross profit under the financial summary's rule: ${coverageRule} Paginate with \`data.nextCursor\` sent back as \`cursor\`.`,
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
    hasMore: z.boolean(),
    nextCursor: z.string().nullable(),
  }),
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
