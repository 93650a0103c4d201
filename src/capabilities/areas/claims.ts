/** Claims and returns of one shop: listing, one claim with its links, statistics, refund readiness and the claims module's settings. */
import { z } from 'zod';
import { MASKED_ACCOUNT } from '../../claims/accounts.js';
import {
  claimsSettingsSchema, configurationSchema, processSchema, refundOptionsSchema, refundSettingsSchema, routesSchema, tagSchema, templatesSchema,
  type ClaimsSettings,
} from '../../claims/settings.js';
import type { CapabilityContext } from '../context.js';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { CLAIM_TYPES, claimStatistics, getClaim, getClaimsSettings, listClaims, refundReadiness } from '../../queries/claims.js';
import { from, listParams, market, to } from '../params.js';
import type { FieldScopes } from '../projection.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const claimCode = z.string().min(1).max(64).describe('Claim code in the shop, e.g. `R2026001234`, as `code` in claims_list.');
const maskedAccount = z.string().regex(MASKED_ACCOUNT).describe('Masked account: country and the last four characters (`SK****5678`); the whole number is never returned.');
const status = z.object({ id: z.number().int(), name: z.string().nullable() });

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
}).describe('The customer (of the claim\'s order). Without `personal-data:read` only `city` and `country` are present.');

const returnShipment = z.object({
  carrierCode: z.string(),
  trackingNumber: z.string(),
  status: z.string().describe('`CREATED` (label issued) or `DELIVERED` (goods back at the shop).'),
  createdAt: timestamp.nullable(),
  deliveredAt: timestamp.nullable(),
}).nullable().describe('The customer\'s parcel back to the shop; it belongs to the claim and is never a shipment of shipping_shipments. Null before a label exists.');

const claimSchema = z.object({
  code: z.string().describe('Claim code; use it with claims_get.'),
  type: z.enum(CLAIM_TYPES).describe('`withdrawal` (return within the withdrawal period) or `complaint` (warranty claim).'),
  reason: z.string().nullable().describe('The customer\'s reason.'),
  processId: z.number().int().nullable().describe('Claims-module process, see claims_settings.'),
  status,
  openedAt: timestamp,
  updatedAt: timestamp,
  statusChangedAt: timestamp,
  closedAt: timestamp.nullable(),
  deadlineAt: timestamp.nullable().describe('By when the claim must be settled (the process\'s legal deadline).'),
  resolution: z.enum(['refund', 'repair', 'rejected']).nullable().describe('How it was settled; null while open.'),
  currency: z.string().length(3),
  refundWithVat: moneySchema.nullable().describe('Refund decided, with VAT; null when none (yet).'),
  orderCode: z.string().nullable().describe('The claim\'s order; read it with orders_get.'),
  order: z.object({ code: z.string(), createdAt: timestamp }).nullable().describe('Link to the order; null when the order is not in the service\'s records.'),
  tags: z.array(z.string()).describe('Tag ids, see claims_settings.'),
  customerRequest: z.object({
    type: z.enum(['refund', 'exchange', 'repair']),
    refundTo: z.enum(['bank_account', 'original_payment', 'coupon']).nullable().describe('Where a refund goes; null for an exchange or a repair.'),
    account: maskedAccount.nullable().describe('The customer\'s account for a refund to a bank account, masked; null otherwise.'),
  }).nullable().describe('What the customer asks for.'),
  rating: z.object({ score: z.number().int().min(1).max(5), comment: z.string().nullable() }).nullable().describe('The customer\'s rating of the handling, given when the claim closed.'),
  returnShipment,
  customerEmailHash: z.string().nullable().describe('Pseudonym of the customer (SHA-256 of the e-mail), as on orders.'),
  customer,
});

const claimDetailSchema = claimSchema.extend({
  items: z.array(z.object({
    lineNo: z.number().int().describe('Line of the order the goods come from.'),
    productCode: z.string(),
    name: z.string().nullable(),
    quantity: z.string().describe('Decimal string.'),
    unitPriceWithVat: moneySchema.nullable().describe('Price of the order line; null when the order is not stored.'),
  })),
  links: z.object({
    order: z.object({ code: z.string(), createdAt: timestamp }).nullable(),
    creditNote: z.object({ code: z.string(), issuedAt: timestamp, totalWithVat: moneySchema }).nullable().describe('The credit note of the refund (a document of the order).'),
    returnShipment,
    stockMovements: z.array(z.object({
      movementId: z.string(), productCode: z.string(), kind: z.string(), quantity: z.string(), occurredAt: timestamp,
    })).describe('Goods put back on stock because of the claim.'),
  }),
  refunds: z.array(z.object({
    amountWithVat: moneySchema,
    refundTo: z.enum(['bank_account', 'original_payment', 'coupon']).nullable(),
    account: maskedAccount.nullable(),
    decidedAt: timestamp.nullable(),
    creditNoteCode: z.string().nullable(),
  })),
  timeline: z.array(z.object({ status, at: timestamp })).describe('Every status change, oldest first.'),
  emails: z.array(z.object({ templateId: z.string(), subject: z.string(), sentAt: timestamp })).describe('E-mails sent to the customer about the claim (no address, no body).'),
});

/** Personal data (SPEC "Customer records" rule 5, P5) is removed without `personal-data:read`. */
const claimFieldScopes: FieldScopes = Object.fromEntries(
  ['firstName', 'lastName', 'company', 'email', 'phone', 'street', 'zip'].map((f) => [`customer.${f}`, 'personal-data:read']),
);

const hours = z.number().nullable();

const statisticsSchema = z.object({
  claims: z.object({ total: z.number().int(), open: z.number().int(), closed: z.number().int() }).describe('Claims opened in the period.'),
  statuses: z.array(z.object({ status, count: z.number().int() })).describe('Current status of the period\'s claims, by status id.'),
  types: z.array(z.object({ type: z.enum(CLAIM_TYPES), count: z.number().int() })),
  resolutions: z.array(z.object({ resolution: z.string(), count: z.number().int() })).describe('Closed claims per resolution.'),
  resolutionTime: z.object({
    measured: z.number().int().describe('Closed claims, the only ones in the times.'),
    medianHours: hours.describe('Median hours from opening to closing, 2 decimals; null when none closed.'),
    p90Hours: hours.describe('90th percentile (continuous) of the same.'),
  }),
  ratings: z.object({
    rated: z.number().int(),
    average: z.number().nullable().describe('Average score, 2 decimals; null without ratings.'),
    distribution: z.array(z.object({ score: z.number().int(), count: z.number().int() })),
  }),
  reasons: z.array(z.object({ reason: z.string(), count: z.number().int() })).describe('Most frequent first.'),
});

const claimsFilters = {
  status: z.number().int().min(1).max(1_000_000).optional().describe('Only claims currently in this status id (see claims_settings).'),
  type: z.enum(CLAIM_TYPES).optional().describe('Only withdrawals or only complaints.'),
};

async function settingsOf(ctx: CapabilityContext): Promise<ClaimsSettings> {
  const settings = await getClaimsSettings(ctx.db, ctx.shop!.id);
  if (!settings) throw new AppError('NOT_FOUND', `The claims module of shop \`${ctx.shop!.code}\` has no settings.`, { param: 'market' });
  return settings;
}

/** Lists a shop's claims and returns, newest first, by cursor. */
export const claimsList = defineCapability({
  name: 'claims.list',
  summary: 'Claims and returns of one shop, newest first, with links to the order.',
  description: 'Returns the claims (withdrawals and complaints) of the shop `market` opened in the period (default: all), newest first, optionally only one `status` id or `type`. Each carries its order link, status, what the customer requests (a bank account masked), rating and return parcel. Paginated: send `nextCursor` back as `cursor` with all other parameters unchanged until `hasMore` is false. For goods, credit note, stock movements, refunds, timeline and e-mails use claims_get; for figures use claims_statistics.',
  path: '/claims',
  scope: 'claims:read',
  mcpTool: 'claims_list',
  kind: 'list',
  market: 'required',
  period: { default: 'all' },
  params: z.object({ ...listParams, ...claimsFilters }).strict(),
  result: claimSchema,
  fieldScopes: claimFieldScopes,
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => listClaims(ctx.db, ctx.shop!.id, period, { status: params.status, type: params.type }, page),
});

/** Reads one claim with everything linked to it. */
export const claimsGet = defineCapability({
  name: 'claims.get',
  summary: 'One claim with items, links (order, credit note, return shipment, stock movements), refunds, tags, timeline and e-mails.',
  description: 'Returns one claim of the shop `market` by its code, with the goods claimed (order lines), links to the order, the credit note, the return parcel with its tracking number and the stock movements, the refunds (account masked), tags, the timeline of status changes and the e-mails sent to the customer. A claim of another shop is not found.',
  path: '/claims/{claimCode}',
  scope: 'claims:read',
  mcpTool: 'claims_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, claimCode }).strict(),
  result: claimDetailSchema,
  fieldScopes: claimFieldScopes,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const claim = await getClaim(ctx.db, ctx.shop!.id, params.claimCode);
    if (!claim) throw new AppError('NOT_FOUND', `No claim \`${params.claimCode}\` in shop \`${ctx.shop!.code}\`.`, { param: 'claimCode' });
    return claim;
  },
});

/** Summarises a shop's claims of a period: counts, resolution times, types, ratings, reasons. */
export const claimsStatistics = defineCapability({
  name: 'claims.statistics',
  summary: 'Claim counts, resolution times (median, p90), types, resolutions, ratings and reasons.',
  description: 'Returns finished figures over the claims of the shop `market` OPENED in the period (default: the last 30 days, including today, in the shop\'s time zone): counts (open, closed, per current status), types, resolutions, the time from opening to closing in hours as median and 90th percentile (closed claims only; `resolutionTime.measured` says how many), ratings and the most frequent reasons. Not paginated; use it instead of adding up claims_list pages.',
  path: '/claims/statistics',
  scope: 'claims:read',
  mcpTool: 'claims_statistics',
  kind: 'summary',
  market: 'required',
  period: { default: 'last30days' },
  params: z.object({ market, from: from.optional(), to: to.optional() }).strict(),
  result: statisticsSchema,
  annotations: readOnly,
  handler: ({ ctx, period }) => claimStatistics(ctx.db, ctx.shop!.id, period),
});

/** The claims module's processes and tags; its whole settings only with claims-settings:read. */
export const claimsSettings = defineCapability({
  name: 'claims.settings',
  summary: 'Claim processes (types, steps, statuses, deadlines) and tags; module settings with claims-settings:read.',
  description: 'Returns the claims module of the shop `market`: the processes with ids and names (type, steps, statuses, deadline in days) and the tags, which claims_list and claims_get refer to by id. With `claims-settings:read` also `module`: configuration (custom fields, return transport, form), refund options, refund settings (bank accounts masked) and e-mail and protocol templates; without that scope `module` is absent.',
  path: '/claims/settings',
  scope: 'claims:read',
  mcpTool: 'claims_settings',
  kind: 'get',
  market: 'required',
  params: z.object({ market }).strict(),
  result: z.object({
    processes: z.array(processSchema),
    tags: z.array(tagSchema),
    module: claimsSettingsSchema.omit({ processes: true }).optional().describe('The module\'s settings. Needs `claims-settings:read`; absent without it.'),
  }),
  fieldScopes: { module: 'claims-settings:read' },
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const { processes, ...module } = await settingsOf(ctx);
    return { processes, tags: module.configuration.tags, module };
  },
});

/** What a refund of one claim needs, before it is made. */
export const claimsRefundReadiness = defineCapability({
  name: 'claims.refundReadiness',
  summary: 'A claim before a refund: request, masked account, variable symbol, refund mode, whether it can be deleted.',
  description: 'Returns, for one claim of the shop `market`, what the customer requests, the account masked, the variable symbol a refund payment carries (from the order or the claim, per the refund options), the shop\'s refund mode, whether the refund is ready (`blockers` says why not) and whether the claim could be deleted (it cannot once a credit note, stock movement or refund is linked). Reads only; no refund is made.',
  path: '/claims/{claimCode}/refund-readiness',
  scope: 'claims:read',
  mcpTool: null,
  kind: 'get',
  market: 'required',
  params: z.object({ market, claimCode }).strict(),
  result: z.object({
    code: z.string(),
    status,
    customerRequest: claimSchema.shape.customerRequest,
    account: maskedAccount.nullable(),
    variableSymbol: z.string().nullable().describe('Payment reference of the refund, at most 10 digits.'),
    variableSymbolSource: z.enum(['order', 'claim']),
    refundMode: z.enum(['manual', 'payment_order', 'automatic']).nullable(),
    amountWithVat: moneySchema.nullable(),
    ready: z.boolean(),
    blockers: z.array(z.string()).describe('Why the refund is not ready; empty when it is.'),
    deletable: z.boolean(),
    deletableReason: z.string().nullable(),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const readiness = await refundReadiness(ctx.db, ctx.shop!.id, params.claimCode);
    if (!readiness) throw new AppError('NOT_FOUND', `No claim \`${params.claimCode}\` in shop \`${ctx.shop!.code}\`.`, { param: 'claimCode' });
    return readiness;
  },
});

/** One part of the claims module's settings, with claims-settings:read. */
function settingsPart<R extends z.ZodType>(name: string, path: string, summary: string, description: string, result: R, pick: (s: ClaimsSettings) => z.output<R>) {
  return defineCapability({
    name, summary, description, path, result,
    scope: 'claims-settings:read',
    mcpTool: null,
    kind: 'get',
    market: 'required',
    params: z.object({ market }).strict(),
    annotations: readOnly,
    handler: async ({ ctx }) => pick(await settingsOf(ctx)),
  });
}

/** The claims configuration: tags, fields, return transport, shop form, form types. */
export const claimsConfiguration = settingsPart(
  'claims.configuration', '/claims/configuration', 'Claims settings: tags, custom fields, return transport, shop form, form types.',
  'Returns the claims module configuration of the shop `market`: tags, custom fields, the return transport (routes, addresses, carrier profiles, case types), the shop\'s claim form and its form types.',
  configurationSchema, (s) => s.configuration,
);

/** Refund options of the claims module. */
export const claimsRefundOptions = settingsPart(
  'claims.refundOptions', '/claims/refund-options', 'Refunds: variable-symbol source, refund-coupon validity, coupon in the form, when the form asks for an account.',
  'Returns the refund options of the shop `market`: where the variable symbol of a refund comes from, how long a refund coupon is valid, whether the form offers a coupon, and when the form asks for an account number.',
  refundOptionsSchema, (s) => s.refundOptions,
);

/** Refund settings: mode and the shop's bank accounts, masked. */
export const claimsRefundSettings = settingsPart(
  'claims.refundSettings', '/claims/refund-settings', 'Refund mode, bank accounts (masked) with suitability for payment orders, default and manual account.',
  'Returns the refund settings of the shop `market`: the refund mode, the shop\'s bank accounts (masked: country and last four characters) with whether each suits payment orders, and the default and manual account.',
  refundSettingsSchema, (s) => s.refundSettings,
);

/** Return transport of the claims module. */
export const claimsRoutes = settingsPart(
  'claims.routes', '/claims/routes', 'Return transport: routes, addresses, carrier profiles with ids and return support, case types.',
  'Returns the return transport of the shop `market`: routes (carrier profile, case types, destination address, who pays), addresses, carrier profiles with ids and whether they support returns, and case types.',
  routesSchema, (s) => s.configuration.returnTransport,
);

/** Claim e-mail and protocol templates. */
export const claimsTemplates = settingsPart(
  'claims.templates', '/claims/templates', 'Claim e-mail templates (subject, text, when, automatic or not) and protocol templates.',
  'Returns the claim e-mail templates of the shop `market` (subject, text with placeholders unsubstituted, when they are sent, automatic or not) and the protocol templates.',
  templatesSchema, (s) => s.templates,
);
