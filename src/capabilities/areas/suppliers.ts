/** Suppliers and purchasing: suppliers with contacts, offers matched to a shop's catalogue, and cost components. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { getSupplier, listSuppliers } from '../../queries/suppliers.js';
import { market } from '../params.js';
import type { FieldScopes } from '../projection.js';
import { defineCapability, readOnly } from '../types.js';

const costComponentSchema = z.object({
  kind: z.enum(['freight', 'duty', 'handling']),
  basis: z.enum(['per_order', 'per_unit', 'percent']).describe('per_order: an amount per purchase order; per_unit: per unit bought; percent: of the goods value.'),
  amount: moneySchema.nullable().describe('For per_order and per_unit.'),
  percent: z.string().nullable().describe('For percent, decimal string.'),
  note: z.string().nullable(),
});

const supplierSchema = z.object({
  supplierId: z.string(),
  code: z.string(),
  name: z.string().describe('Company name.'),
  country: z.string().describe('ISO 3166-1 alpha-2.'),
  currency: z.string().length(3).describe('Currency the supplier invoices in.'),
  defaultLeadTimeDays: z.number().int(),
  contact: z.object({ name: z.string().nullable(), email: z.string().nullable(), phone: z.string().nullable() })
    .optional().describe('Needs `personal-data:read`; absent without it. Bank and tax data are never returned.'),
  createdAt: z.string().describe('ISO 8601 UTC with milliseconds.'),
  counts: z.object({
    offers: z.number().int().describe('Offers for this shop.'),
    matchedProducts: z.number().int().describe('Distinct catalogue products of this shop the offers match.'),
    unmatchedOffers: z.number().int().describe('Offers naming a code the shop\'s catalogue does not have.'),
  }),
  costComponents: z.array(costComponentSchema).describe('Costs on top of the offer prices (freight, duty, handling).'),
});

const offerSchema = z.object({
  productCode: z.string().describe('The product code the offer names; a catalogue product of the shop when `matched`.'),
  matched: z.boolean(),
  productName: z.string().nullable().describe('Catalogue name; null when unmatched.'),
  supplierCode: z.string().describe('The supplier\'s own code for the item.'),
  price: moneySchema.optional().describe('Purchase price per unit without VAT, in the supplier\'s currency. Needs `purchase-prices:read`; absent without it.'),
  minQuantity: z.string().describe('Minimum order quantity, decimal string.'),
  leadTimeDays: z.number().int(),
  updatedAt: z.string(),
});

const supplierFieldScopes: FieldScopes = { contact: 'personal-data:read' };
/** An offer's price is a purchase price (SPEC "Scope-to-data rules"). */
const supplierWithOffersFieldScopes: FieldScopes = { ...supplierFieldScopes, 'offers[].price': 'purchase-prices:read' };
const supplierIdParam = z.string().regex(/^\d{1,18}$/, 'a supplier id (digits)').describe('Supplier id, as `supplierId` in suppliers_list.');

/** Lists the account's suppliers with counts for one shop and their cost components. */
export const suppliersList = defineCapability({
  name: 'suppliers.list',
  summary: 'Suppliers with offers and cost components (counts of offers and matched products).',
  description: 'Returns every supplier of the account (few, not paginated) with its country, currency, default lead time, cost components (freight, duty, handling) and the counts of its offers for the shop `market` and of the catalogue products they match. Contacts need `personal-data:read`; bank and tax data are never returned. For the offers themselves use suppliers_get.',
  path: '/suppliers',
  scope: 'purchasing:read',
  mcpTool: 'suppliers_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market }).strict(),
  result: supplierSchema,
  fieldScopes: supplierFieldScopes,
  annotations: readOnly,
  handler: ({ ctx }) => listSuppliers(ctx.db, ctx.caller.account.id, ctx.shop!.id),
});

/** Reads one supplier with its offers for one shop. */
export const suppliersGet = defineCapability({
  name: 'suppliers.get',
  summary: 'One supplier with offers and cost components.',
  description: 'Returns one supplier by `supplierId` with its cost components and all its offers for the shop `market`, by product code: the catalogue product it matches (or unmatched), the supplier\'s code, price (with `purchase-prices:read`) and currency, minimum quantity and lead time. Contacts need `personal-data:read`; bank and tax data are never returned.',
  path: '/suppliers/{supplierId}',
  scope: 'purchasing:read',
  mcpTool: 'suppliers_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, supplierId: supplierIdParam }).strict(),
  result: supplierSchema.extend({ offers: z.array(offerSchema).describe('Offers for this shop, by product code.') }),
  fieldScopes: supplierWithOffersFieldScopes,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const supplier = await getSupplier(ctx.db, ctx.caller.account.id, ctx.shop!.id, params.supplierId);
    if (!supplier) throw new AppError('NOT_FOUND', `No supplier \`${params.supplierId}\` in the account.`, { param: 'supplierId' });
    return supplier;
  },
});
