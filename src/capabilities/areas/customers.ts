/** Customers: the directory (customers:read, fields by scope) and pseudonymous performance (reports:read). */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { getCustomer, listCustomers } from '../../queries/customers.js';
import { customerPerformance } from '../../queries/customerPerformance.js';
import { GENDER_CONFIDENCE_THRESHOLD } from '../../customers/gender.js';
import { cursor, dateParam, from, limit, market, pageMeta, to } from '../params.js';
import { resolvePeriod } from '../period.js';
import type { FieldScopes } from '../projection.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const moneyByCurrency = z.array(moneySchema).describe('Money per currency (D4): one entry per currency, never a single number.');
export const customerKeyParam = z.string().regex(/^[0-9a-f]{64}$/, 'a customerKey (64 lower-case hex digits)')
  .describe('Pseudonym: SHA-256 of the trimmed, lower-cased e-mail (D22); equals `customerEmailHash` of orders and documents.');

const needsPersonal = 'Needs `personal-data:read`; absent without it.';
const needsReports = 'Needs `reports:read`; absent without it.';

const directoryEntry = z.object({
  customerKey: z.string().describe('Pseudonym (D22); the same value as `customerEmailHash` on orders and documents and as `customerKey` in customers_performance.'),
  shops: z.array(z.string()).describe('Codes of the shops (among those this credential may see) where this customer ordered.'),
  country: z.string().nullable().describe('Country of the customer\'s latest order in this shop, ISO 3166-1 alpha-2.'),
  language: z.object({
    code: z.string().describe('Language of the shop the customer ordered from.'),
    source: z.literal('store_locale').describe('Always `store_locale`: the shop\'s language, not the customer\'s own choice.'),
  }),
  ordersCount: z.number().int().describe('Lifetime orders in this shop, every status (never changes with a period).'),
  cancelledOrdersCount: z.number().int().describe('Of `ordersCount`, the cancelled ones; they are in no revenue figure.'),
  firstOrderAt: timestamp.describe('First order in this shop (lifetime).'),
  lastOrderAt: timestamp.describe('Latest order in this shop (lifetime).'),
  firstName: z.string().nullable().optional().describe(`From the latest order. ${needsPersonal}`),
  lastName: z.string().nullable().optional().describe(needsPersonal),
  company: z.string().nullable().optional().describe(needsPersonal),
  email: z.string().nullable().optional().describe(needsPersonal),
  phone: z.string().nullable().optional().describe(needsPersonal),
  marketingGender: z.enum(['male', 'female', 'unknown']).optional()
    .describe(`INFERRED from the first name with a name data set, never stated by the customer: present it as inferred. Absent for a company customer. ${needsPersonal}`),
  genderSource: z.enum(['name_inference', 'unknown']).optional().describe(`\`name_inference\`, or \`unknown\` when the name is not in the data set. ${needsPersonal}`),
  genderConfidence: z.number().min(0).max(1).optional()
    .describe(`Share of the name's bearers (in the customer's country when known there) of the inferred gender, 2 decimals; below ${GENDER_CONFIDENCE_THRESHOLD} the gender is \`unknown\`. ${needsPersonal}`),
  revenue: moneyByCurrency.optional().describe(`Lifetime revenue with VAT in this shop, cancelled orders excluded (never changes with a period). ${needsReports}`),
  averageOrder: moneyByCurrency.optional().describe(`revenue / non-cancelled orders, per currency. ${needsReports}`),
  lifetimeRevenue: moneyByCurrency.optional().describe(`LTV: lifetime revenue with VAT over every shop in \`shops\`, per currency. ${needsReports}`),
  lifetimeAverageOrder: moneyByCurrency.optional().describe(`lifetimeRevenue / non-cancelled orders over those shops, per currency. ${needsReports}`),
  periodFrom: z.string().optional().describe('Only with `purchaseFrom`/`purchaseTo`: first day of the purchase period.'),
  periodTo: z.string().optional().describe('Only with `purchaseFrom`/`purchaseTo`: last day of the purchase period.'),
  periodOrdersCount: z.number().int().optional().describe('Only with a purchase period: orders (every status) in it; next to the lifetime fields, never instead of them.'),
  periodRevenueByCurrency: moneyByCurrency.optional().describe(`Only with a purchase period: revenue with VAT in it, cancelled orders excluded. ${needsReports}`),
});

const directoryFieldScopes: FieldScopes = {
  firstName: 'personal-data:read',
  lastName: 'personal-data:read',
  company: 'personal-data:read',
  email: 'personal-data:read',
  phone: 'personal-data:read',
  marketingGender: 'personal-data:read',
  genderSource: 'personal-data:read',
  genderConfidence: 'personal-data:read',
  revenue: 'reports:read',
  averageOrder: 'reports:read',
  lifetimeRevenue: 'reports:read',
  lifetimeAverageOrder: 'reports:read',
  periodRevenueByCurrency: 'reports:read',
};

const purchaseFrom = dateParam.describe('Purchase activity filter: only customers with at least one order on or after this day (shop time zone, inclusive). Not a filter on the first or last order date.');
const customerSearch = z.string().trim().min(2).max(100)
  .describe('Customers whose `customerKey` starts with this text or, only with `personal-data:read`, whose name, company or e-mail contains it (case-insensitive).');
const purchaseTo = dateParam.describe('Purchase activity filter: last day (inclusive); defaults to today when only `purchaseFrom` is given.');

/** Lists the shop's customers (one row per pseudonym), newest activity first, with scope-dependent fields. */
export const customersList = defineCapability({
  name: 'customers.list',
  summary: 'Customer directory of one shop: shops, language, lifetime counts and revenue by currency, optional purchase period.',
  description: 'Returns the customers of the shop `market` as staff see them on the Customers screen: one row per customer pseudonym (`customerKey`), newest activity first, in pages (send `nextCursor` back as `cursor` with the other parameters unchanged until `hasMore` is false). Lifetime fields (`ordersCount`, `revenue`, `lifetimeRevenue`, first and last order) never change with a period. With `purchaseFrom`/`purchaseTo` only customers with at least one order in that interval are listed (purchase activity, not the first or last order date), ordered by their latest order in it, and `periodFrom`, `periodTo`, `periodOrdersCount`, `periodRevenueByCurrency` appear next to the lifetime fields. Name, company, e-mail, phone and `marketingGender` need `personal-data:read`; money needs `reports:read`; a field without its scope is absent, not null. `marketingGender` is inferred from the first name, not stated by the customer. For ranking customers by revenue use customers_performance.',
  path: '/customers',
  scope: 'customers:read',
  mcpTool: 'customers_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market, search: customerSearch.optional(), purchaseFrom: purchaseFrom.optional(), purchaseTo: purchaseTo.optional(), limit: limit.optional(), cursor: cursor.optional() }).strict(),
  result: directoryEntry,
  fieldScopes: directoryFieldScopes,
  paramRules: [
    { code: 'MISSING_PARAMETER', rule: '`purchaseTo` needs `purchaseFrom`.' },
    { code: 'PERIOD_REVERSED', rule: '`purchaseFrom` must not be after `purchaseTo` (or today).' },
    { code: 'PERIOD_TOO_LONG', rule: '`purchaseFrom`..`purchaseTo` spans at most 366 days.' },
    { code: 'INVALID_PARAMETER', rule: '`purchaseFrom` and `purchaseTo` must be real calendar dates.' },
  ],
  annotations: readOnly,
  handler: ({ params, ctx, page }) => {
    if (params.purchaseFrom === undefined && params.purchaseTo !== undefined) {
      throw new AppError('MISSING_PARAMETER', '`purchaseTo` needs `purchaseFrom`.', { param: 'purchaseFrom' });
    }
    let purchase;
    try {
      purchase = params.purchaseFrom === undefined ? null
        : resolvePeriod({ from: params.purchaseFrom, to: params.purchaseTo }, { default: 'all' }, ctx.shop!.timeZone, ctx.now());
    } catch (error) {
      // The period rules are those of from/to; the error names the parameters this call takes.
      if (error instanceof AppError && error.details?.param) {
        const param = error.details.param === 'from' ? 'purchaseFrom' : 'purchaseTo';
        throw new AppError(error.code, error.message.replaceAll('`from`', '`purchaseFrom`').replaceAll('`to`', '`purchaseTo`'), { ...error.details, param });
      }
      throw error;
    }
    return listCustomers(ctx, { purchase, search: params.search ? { text: params.search, personal: ctx.caller.scopes.has('personal-data:read') } : null }, page);
  },
});

/** Reads one directory customer with the per-shop breakdown. */
export const customersGet = defineCapability({
  name: 'customers.get',
  summary: 'One directory customer with the per-shop breakdown.',
  description: 'Returns one customer of the shop `market` by `customerKey` (from customers_list, or the `customerEmailHash` of an order), with the directory fields and `perShop`: orders, first and last order and revenue in each shop this credential may see. Fields follow the same scopes as customers_list. A customer who never ordered in `market` is not found.',
  path: '/customers/{customerKey}',
  scope: 'customers:read',
  mcpTool: 'customers_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, customerKey: customerKeyParam }).strict(),
  result: directoryEntry.extend({
    perShop: z.array(z.object({
      market: z.string(),
      currency: z.string().length(3),
      ordersCount: z.number().int(),
      cancelledOrdersCount: z.number().int(),
      firstOrderAt: timestamp,
      lastOrderAt: timestamp,
      revenue: moneyByCurrency.optional().describe(needsReports),
      averageOrder: moneyByCurrency.optional().describe(needsReports),
    })).describe('Per shop (among those this credential may see) where the customer ordered, by shop code.'),
  }),
  fieldScopes: { ...directoryFieldScopes, 'perShop[].revenue': 'reports:read', 'perShop[].averageOrder': 'reports:read' },
  annotations: readOnly,
  handler: ({ params, ctx }) => getCustomer(ctx, params.customerKey),
});

const performanceRow = z.object({
  customerKey: z.string().describe('Pseudonym (D22), joinable with customers_list and orders\' `customerEmailHash`. No name or contact exists in this view.'),
  currency: z.string().length(3),
  ordersCount: z.number().int().describe('Non-cancelled orders in the period (lifetime without a period).'),
  revenue: moneySchema.describe('Revenue with VAT of those orders in this currency.'),
  averageOrder: moneySchema,
  firstOrderAt: timestamp.describe('First non-cancelled order in the period.'),
  lastOrderAt: timestamp.describe('Latest non-cancelled order in the period.'),
  repeatPurchase: z.boolean().describe('True when the customer has 2 or more non-cancelled orders in the shop (lifetime).'),
  lifetimeOrdersCount: z.number().int().describe('Non-cancelled orders in the shop, lifetime.'),
  lifetimeValue: moneySchema.describe('LTV: lifetime revenue with VAT in the shop in this currency.'),
});

/** Ranks a shop's customers (pseudonyms only) by revenue, with whole-filter totals per currency. */
export const customersPerformance = defineCapability({
  name: 'customers.performance',
  summary: 'Pseudonymous customers ranked by revenue: orders, revenue, first and last order, repeat purchase, LTV.',
  description: 'Answers "who are my best customers": rows per (customer pseudonym, currency) of the shop `market`, highest revenue first, in pages, with `totals` over the whole filter (customers, orders, `revenueByCurrency`) on every page. Without `from`/`to` the figures are lifetime; with them, orders in that period (shop time zone, at most 366 days). Cancelled orders are never counted. There is no name or contact under any scope: join `customerKey` with customers_get when the credential has `customers:read`.',
  path: '/customers/performance',
  scope: 'reports:read',
  mcpTool: 'customers_performance',
  kind: 'summary',
  market: 'required',
  period: { default: 'all' },
  params: z.object({ market, from: from.optional(), to: to.optional(), limit: limit.optional(), cursor: cursor.optional() }).strict(),
  result: z.object({
    customers: z.array(performanceRow).describe('This page of rows, highest revenue first.'),
    totals: z.object({
      customers: z.number().int().describe('Distinct customers matching the filter.'),
      ordersCount: z.number().int(),
      revenueByCurrency: moneyByCurrency,
    }).describe('Over the whole filter, not only this page.'),
  }),
  meta: pageMeta,
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => customerPerformance(ctx, period, params, page.after),
});
