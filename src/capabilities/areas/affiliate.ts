/**
 * The affiliate (partner) programme the service runs for the account: settings, portal, partners, campaigns,
 * conversions of real orders with their commissions, discount codes, code requests, payouts, figures, tracked links.
 * Partner bank and tax data are never returned; partner contacts only with `personal-data:read`.
 */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { generateLink, LINK_TARGETS } from '../../affiliate/links.js';
import {
  affiliateStatistics, affiliateSummary, COMMISSION_STATES, CONVERSION_SOURCES, getCampaign, getConversion, getPartner, getProgrammeSettings,
  listCampaigns, listCodeRequests, listConversions, listDiscountCodes, listPartners, listPayouts, listPortals, PARTNER_STATES, PAYOUT_STATES,
} from '../../queries/affiliate.js';
import { cursor, from, limit, listParams, market, to } from '../params.js';
import type { FieldScopes } from '../projection.js';
import { defineCapability, readOnly } from '../types.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds.');
const id = (what: string) => z.string().regex(/^\d{1,18}$/, `a ${what} id (digits)`);
const partnerIdParam = id('partner').describe('Partner id, as `partnerId` in affiliate_partners_list.');

const commissionsByState = z.object({
  pending: moneySchema.describe('Waiting for the return period to end or for a person\'s approval.'),
  approved: moneySchema.describe('Approved, not yet paid out.'),
  paid: moneySchema.describe('Paid out in a payout.'),
  rejected: moneySchema.describe('Rejected: the order was cancelled or returned.'),
});

const settingsSchema = z.object({
  name: z.string(),
  commissions: z.object({
    defaultPercent: z.string().describe('Default commission in percent of the commission base (decimal string); campaigns may differ.'),
    returnPeriodDays: z.number().int().describe('A commission stays pending this many days after the order (the shoppers\' return period).'),
  }),
  clicks: z.object({
    attributionWindowDays: z.number().int().describe('Default click attribution window of new campaigns, in days.'),
    cookie: z.literal('first_party'),
  }),
  payouts: z.object({ minimum: moneySchema.describe('Smallest payout; smaller approved sums wait for a later month.') }),
  referrals: z.object({ enabled: z.boolean().describe('Whether partners may refer new partners.'), commissionPercent: z.string().nullable() }),
  registration: z.object({ autoApprovePartners: z.boolean() }),
  contactPerson: z.object({ name: z.string().nullable(), email: z.string().nullable() }).describe('The programme\'s own contact for partners (staff, not a partner).'),
  colours: z.record(z.string(), z.string()),
  privacyPolicyUrl: z.string().nullable(),
  updatedAt: timestamp,
});

const portalSchema = z.object({
  market: z.string().describe('Shop code.'),
  address: z.string().describe('Public address of the shop\'s partner portal.'),
  customDomain: z.object({ domain: z.string(), status: z.string().nullable() }).nullable(),
  registration: z.object({ open: z.boolean(), closedReason: z.string().nullable().describe('Why registration is closed; null when open.') }),
  contactPerson: z.object({ name: z.string().nullable(), email: z.string().nullable() }),
  appearance: z.record(z.string(), z.unknown()),
  texts: z.array(z.object({
    language: z.string(), page: z.string().describe('login, register, dashboard, privacy_notice or programme_description.'),
    status: z.string().describe('`published` (custom text live), `draft` (custom text not published) or `default` (the built-in wording).'),
  })),
  updatedAt: timestamp,
});

const partnerSchema = z.object({
  partnerId: z.string(),
  handle: z.string().describe('The partner\'s handle; its discount codes start with it.'),
  state: z.enum(PARTNER_STATES),
  stateReason: z.string().nullable().describe('Why the partner was rejected or suspended; null otherwise.'),
  stateChangedAt: timestamp,
  kind: z.string().describe('blogger, influencer, comparison_site, magazine, coupon_site.'),
  web: z.string().nullable(),
  language: z.string(),
  registeredAt: timestamp,
  referredByPartnerId: z.string().nullable().describe('The partner who referred this one (referral programme), or null.'),
  contact: z.object({ name: z.string().nullable(), company: z.string().nullable(), email: z.string().nullable(), phone: z.string().nullable() })
    .optional().describe('Needs `personal-data:read`; absent without it. Bank and tax data are never returned.'),
  discountCodes: z.array(z.string()).describe('The partner\'s discount codes in this shop.'),
  performance: z.object({
    clicks: z.number().int(),
    conversions: z.number().int(),
    revenueWithVat: moneySchema.describe('Whole orders with VAT of the conversions not rejected.'),
    commissions: commissionsByState,
  }).describe('All-time figures in this shop (`market`).'),
});

const campaignSchema = z.object({
  campaignId: z.string(),
  name: z.string(),
  reward: z.object({
    type: z.enum(['percent', 'fixed']),
    percent: z.string().nullable().describe('Percent of the commission base, for `percent`.'),
    amount: moneySchema.nullable().describe('Fixed amount per conversion, for `fixed`.'),
  }),
  attributionWindowDays: z.number().int().describe('A click attributes an order placed at most this many days later (the edge included).'),
  availability: z.object({ to: z.enum(['all', 'chosen']), partnerIds: z.array(z.string()).describe('The chosen partners; empty for `all`.') }),
  conversionApproval: z.enum(['manual', 'automatic']),
  enabled: z.boolean(),
  isDefault: z.boolean().describe('The campaign that a partner\'s discount code earns under.'),
  descriptions: z.record(z.string(), z.string()).describe('Description for partners per language.'),
  createdAt: timestamp,
  counts: z.object({
    partners: z.number().int().describe('Approved partners the campaign is available to.'),
    clicks: z.number().int(),
    conversions: z.number().int(),
    commission: moneySchema.describe('Commissions not rejected.'),
  }),
});

const conversionSchema = z.object({
  conversionId: z.string(),
  orderCode: z.string().describe('The shop\'s order; read it with orders_get.'),
  orderedAt: timestamp,
  partnerId: z.string(),
  partnerHandle: z.string(),
  campaignId: z.string(),
  source: z.enum(CONVERSION_SOURCES).describe('`coupon`: the order carried the partner\'s discount code (this wins); `click`: the shopper clicked the partner\'s tracked link within the campaign\'s window.'),
  clickId: z.string().nullable(),
  couponCode: z.string().nullable(),
  commissionBase: moneySchema.describe('Goods after discounts, without VAT and without shipping.'),
  orderTotalWithVat: moneySchema.describe('The whole order with VAT.'),
  commission: moneySchema,
  commissionState: z.enum(COMMISSION_STATES),
  stateReason: z.string().describe('return_period (pending until the return period ends), awaiting_manual_approval, approved_automatically, approved_manually or rejected_manually (a person in the application), order_cancelled, order_returned, paid_out.'),
  orderStatus: z.object({ id: z.number().int(), name: z.string() }).describe('The order\'s current status in the shop.'),
  approvedAt: timestamp.nullable(),
  creditNoteCode: z.string().nullable().describe('The order\'s credit note (a return), when there is one.'),
  payout: z.object({ payoutId: z.string(), state: z.string() }).nullable().describe('The payout the commission belongs to, or null.'),
});

const discountCodeSchema = z.object({
  code: z.string(),
  partnerId: z.string(),
  partnerHandle: z.string(),
  partnerState: z.enum(PARTNER_STATES),
  createdAt: timestamp,
  usage: z.object({
    orders: z.number().int().describe('Orders that used the code, all time.'),
    conversions: z.number().int(),
    revenueWithVat: moneySchema.describe('Whole orders with VAT, cancelled and returned orders excluded.'),
  }),
});

const codeRequestSchema = z.object({
  requestId: z.string(), partnerId: z.string(), partnerHandle: z.string(), requestedCode: z.string(),
  state: z.enum(['pending', 'approved', 'rejected']), reason: z.string().nullable().describe('Why it was rejected.'),
  requestedAt: timestamp, decidedAt: timestamp.nullable(),
});

const payoutSchema = z.object({
  payoutId: z.string(), partnerId: z.string(), partnerHandle: z.string(),
  amount: moneySchema, conversions: z.number().int(), state: z.enum(PAYOUT_STATES),
  approvedBefore: z.string().describe('The payout collects commissions approved up to and including this date (YYYY-MM-DD).'),
  createdAt: timestamp, paidAt: timestamp.nullable(),
});

const partnerFieldScopes: FieldScopes = { contact: 'personal-data:read' };

/** Reads the programme settings of the account. */
export const affiliateSettings = defineCapability({
  name: 'affiliate.settings',
  summary: 'Programme settings: commissions, clicks, payout minimum, referrals.',
  description: 'Returns the settings of the partner programme the service runs for the account: default commission and return period, click attribution window, payout minimum, referrals of partners by partners, registration approval, contact person, colours. Account-wide (no `market`). Campaign rewards are in affiliate_campaigns_list.',
  path: '/affiliate/settings',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_settings',
  kind: 'get',
  market: 'none',
  params: z.object({}).strict(),
  result: settingsSchema,
  annotations: readOnly,
  handler: async ({ ctx }) => {
    const settings = await getProgrammeSettings(ctx.db, ctx.caller.account.id);
    if (!settings) throw new AppError('NOT_FOUND', 'The account runs no partner programme.');
    return settings;
  },
});

/** Lists the public partner portals of the shops the caller may see. */
export const affiliatePortal = defineCapability({
  name: 'affiliate.portal',
  summary: 'Public partner portal per shop: address, registration, custom domain, contact, appearance, texts.',
  description: 'Returns the public partner portal of every shop this credential may see: its address and custom domain, whether registration is open (and why not), the contact person, appearance, and the status of each page text per language. Use it to answer "where do partners sign up" or "is registration open".',
  path: '/affiliate/portal',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_portal_get',
  kind: 'get',
  market: 'none',
  params: z.object({}).strict(),
  result: z.object({ portals: z.array(portalSchema) }),
  annotations: readOnly,
  handler: async ({ ctx }) => ({ portals: await listPortals(ctx.db, ctx.caller.account.id, ctx.caller.shopCodes) }),
});

/** Lists the programme's partners with their state and performance in one shop. */
export const affiliatePartnersList = defineCapability({
  name: 'affiliate.partnersList',
  summary: 'Partners with state, performance and commissions in one shop; contacts only with personal data.',
  description: 'Returns the programme\'s partners, newest registration first, optionally in one `state`, each with its discount codes and all-time performance in the shop `market`: clicks, conversions, revenue, commissions per state. Contacts (name, company, e-mail, phone) need `personal-data:read`; bank and tax data are never returned. Paginated by cursor. For one partner with the campaigns available to it use affiliate_partners_get; for figures of a period use affiliate_summary or affiliate_statistics.',
  path: '/affiliate/partners',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_partners_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market, state: z.enum(PARTNER_STATES).optional().describe('Only partners in this state.'), limit: limit.optional(), cursor: cursor.optional() }).strict(),
  result: partnerSchema,
  fieldScopes: partnerFieldScopes,
  annotations: readOnly,
  handler: ({ params, ctx, page }) => listPartners(ctx.db, ctx.caller.account.id, ctx.shop!, params.state, page),
});

/** Reads one partner with the campaigns of the shop available to it. */
export const affiliatePartnersGet = defineCapability({
  name: 'affiliate.partnersGet',
  summary: 'One partner with performance and available campaigns.',
  description: 'Returns one partner of the programme by `partnerId` with its state, discount codes, all-time performance in the shop `market`, and the enabled campaigns of that shop available to it. Contacts need `personal-data:read`; bank and tax data are never returned.',
  path: '/affiliate/partners/{partnerId}',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_partners_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, partnerId: partnerIdParam }).strict(),
  result: partnerSchema.extend({ availableCampaigns: z.array(campaignSchema).describe('Enabled campaigns of this shop the partner may promote.') }),
  fieldScopes: partnerFieldScopes,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const partner = await getPartner(ctx.db, ctx.caller.account.id, ctx.shop!, params.partnerId);
    if (!partner) throw new AppError('NOT_FOUND', `No partner \`${params.partnerId}\` in the programme.`, { param: 'partnerId' });
    return partner;
  },
});

/** Lists a shop's campaigns with reward, availability and counts. */
export const affiliateCampaignsList = defineCapability({
  name: 'affiliate.campaignsList',
  summary: 'Campaigns of a shop with reward, availability and counts.',
  description: 'Returns every campaign of the shop `market` (few, not paginated): reward (percent of the commission base or a fixed amount), attribution window, availability to all or chosen partners, conversion approval (manual or automatic), whether enabled, and all-time counts of partners, clicks, conversions and commission.',
  path: '/affiliate/campaigns',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_campaigns_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market }).strict(),
  result: campaignSchema,
  annotations: readOnly,
  handler: ({ ctx }) => listCampaigns(ctx.db, ctx.shop!),
});

/** Reads one campaign of a shop. */
export const affiliateCampaignsGet = defineCapability({
  name: 'affiliate.campaignsGet',
  summary: 'One campaign.',
  description: 'Returns one campaign of the shop `market` by `campaignId` (from affiliate_campaigns_list), with reward, window, availability, approval and counts.',
  path: '/affiliate/campaigns/{campaignId}',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_campaigns_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, campaignId: id('campaign').describe('Campaign id, as `campaignId` in affiliate_campaigns_list.') }).strict(),
  result: campaignSchema,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const campaign = await getCampaign(ctx.db, ctx.shop!, params.campaignId);
    if (!campaign) throw new AppError('NOT_FOUND', `No campaign \`${params.campaignId}\` in shop \`${ctx.shop!.code}\`.`, { param: 'campaignId' });
    return campaign;
  },
});

const conversionFilters = {
  state: z.enum(COMMISSION_STATES).optional().describe('Only conversions whose commission is in this state.'),
  partnerId: partnerIdParam.optional().describe('Only this partner\'s conversions.'),
  source: z.enum(CONVERSION_SOURCES).optional().describe('Only conversions attributed by a click or by a discount code.'),
};

/** Lists a shop's conversions (attributed orders) with commissions, newest first. */
export const affiliateConversionsList = defineCapability({
  name: 'affiliate.conversionsList',
  summary: 'Conversions of a shop: commission base, whole order, commission, state with reason, order status, payout.',
  description: 'Returns the orders of the shop `market` attributed to a partner (by the partner\'s discount code, or by a click on the partner\'s tracked link within the campaign\'s window), ordered by order time, newest first, optionally in a period (order time, shop time zone; default all) and filtered by commission `state`, `partnerId` or `source`. Each carries the commission base, the whole order with VAT, the commission, its state with the reason (pending until the return period ends; rejected when the order was cancelled or returned), the order\'s current status in the shop, the credit note and the payout. Paginated by cursor. For totals use affiliate_summary.',
  path: '/affiliate/conversions',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_conversions_list',
  kind: 'list',
  market: 'required',
  period: { default: 'all' },
  params: z.object({ ...listParams, ...conversionFilters }).strict(),
  result: conversionSchema,
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => listConversions(ctx.db, ctx.shop!.id, period, params, page),
});

/** Reads one conversion of a shop. */
export const affiliateConversionsGet = defineCapability({
  name: 'affiliate.conversionsGet',
  summary: 'One conversion: amounts, commission, state with reason, order status, credit note, payout.',
  description: 'Returns one conversion of the shop `market` by `conversionId`.',
  path: '/affiliate/conversions/{conversionId}',
  scope: 'affiliate:read',
  mcpTool: null,
  kind: 'get',
  market: 'required',
  params: z.object({ market, conversionId: id('conversion').describe('Conversion id, as `conversionId` in /affiliate/conversions.') }).strict(),
  result: conversionSchema,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const conversion = await getConversion(ctx.db, ctx.shop!.id, params.conversionId);
    if (!conversion) throw new AppError('NOT_FOUND', `No conversion \`${params.conversionId}\` in shop \`${ctx.shop!.code}\`.`, { param: 'conversionId' });
    return conversion;
  },
});

/** Lists the partners' discount codes of a shop with usage and revenue. */
export const affiliateDiscountCodes = defineCapability({
  name: 'affiliate.discountCodes',
  summary: 'Partner discount codes with usage count and revenue.',
  description: 'Returns the partners\' discount codes of the shop `market` (few, not paginated), each with its partner, how many orders used it, how many became conversions, and the revenue of those orders with VAT (cancelled and returned orders excluded). The coupon itself (discount, validity) is in coupons_get.',
  path: '/affiliate/discount-codes',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_discount_codes_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market }).strict(),
  result: discountCodeSchema,
  annotations: readOnly,
  handler: ({ ctx }) => listDiscountCodes(ctx.db, ctx.shop!),
});

/** Lists partners' requests for a custom discount code, pending first. */
export const affiliateCodeRequests = defineCapability({
  name: 'affiliate.codeRequests',
  summary: 'Partner requests for a custom discount code with state and reason; pending first.',
  description: 'Returns the partners\' requests for a discount code of their own in the shop `market` (few, not paginated): the requested code, state (pending, approved, rejected) and the reason of a rejection; pending requests first, then newest.',
  path: '/affiliate/code-requests',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_code_requests_list',
  kind: 'list',
  market: 'required',
  params: z.object({ market }).strict(),
  result: codeRequestSchema,
  annotations: readOnly,
  handler: ({ ctx }) => listCodeRequests(ctx.db, ctx.shop!.id),
});

/** Lists a shop's commission payouts, newest first. */
export const affiliatePayouts = defineCapability({
  name: 'affiliate.payouts',
  summary: 'Commission payouts with state; no bank or billing data.',
  description: 'Returns the commission payouts of the shop `market`, newest first, optionally in a period (when drawn up; default all) and in one `state`. A payout is drawn up monthly per partner from the approved commissions once they reach the payout minimum; no bank or billing data is returned. Paginated by cursor; the conversions of a payout are in affiliate_conversions_list.',
  path: '/affiliate/payouts',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_payouts_list',
  kind: 'list',
  market: 'required',
  period: { default: 'all' },
  params: z.object({ ...listParams, state: z.enum(PAYOUT_STATES).optional().describe('Only payouts in this state.') }).strict(),
  result: payoutSchema,
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) => listPayouts(ctx.db, ctx.shop!.id, period, params.state, page),
});

/** Summarises a shop's programme over a period. */
export const affiliateSummaryCapability = defineCapability({
  name: 'affiliate.summary',
  summary: 'Overview of a shop for a period: clicks, conversions, commissions, partners.',
  description: 'Returns finished figures of the partner programme in the shop `market` for a period (default: the last 30 days including today, shop time zone; stated in `meta.period`): clicks, conversions by source and by commission state, click conversion rate (conversions by click / clicks; null without clicks), revenue of attributed orders, commissions per state, and partners per state with those active in the period. Conversions count by order time. Use this instead of adding up affiliate_conversions_list pages.',
  path: '/affiliate/summary',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_summary',
  kind: 'summary',
  market: 'required',
  period: { default: 'last30days' },
  params: z.object({ market, from: from.optional(), to: to.optional() }).strict(),
  result: z.object({
    clicks: z.number().int(),
    conversions: z.object({
      total: z.number().int(),
      bySource: z.object({ click: z.number().int(), coupon: z.number().int() }),
      byState: z.object({ pending: z.number().int(), approved: z.number().int(), paid: z.number().int(), rejected: z.number().int() }),
      conversionRate: z.number().nullable().describe('Conversions by click / clicks of the period, 4 decimals; null when there were no clicks.'),
    }),
    revenueWithVat: moneySchema.describe('Whole orders with VAT of the conversions not rejected.'),
    commissions: commissionsByState,
    partners: z.object({
      total: z.number().int(), approved: z.number().int(), waiting: z.number().int(), suspended: z.number().int(), rejected: z.number().int(),
      activeInPeriod: z.number().int().describe('Partners with a click or a conversion in the period in this shop.'),
    }),
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => affiliateSummary(ctx.db, ctx.shop!, ctx.caller.account.id, period!),
});

/** Daily timeline, attribution sources and partner ranking of a shop over a period. */
export const affiliateStatisticsCapability = defineCapability({
  name: 'affiliate.statistics',
  summary: 'Daily timeline, attribution sources, partner ranking.',
  description: 'Returns, for the shop `market` and a period (default: the last 30 days including today, shop time zone; stated in `meta.period`): a daily timeline (clicks, conversions, commission not rejected), the conversions and commission per attribution source (click, coupon), and the ranking of partners with activity by commission. Use affiliate_summary for the totals.',
  path: '/affiliate/statistics',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_statistics',
  kind: 'summary',
  market: 'required',
  period: { default: 'last30days' },
  params: z.object({ market, from: from.optional(), to: to.optional() }).strict(),
  result: z.object({
    timeline: z.array(z.object({ date: z.string().describe('YYYY-MM-DD, shop time zone.'), clicks: z.number().int(), conversions: z.number().int(), commission: moneySchema }))
      .describe('Every day of the period, oldest first, zeros included.'),
    sources: z.array(z.object({ source: z.enum(CONVERSION_SOURCES), conversions: z.number().int(), commission: moneySchema, revenueWithVat: moneySchema })),
    partnerRanking: z.array(z.object({
      rank: z.number().int(), partnerId: z.string(), handle: z.string(), clicks: z.number().int(), conversions: z.number().int(),
      commission: moneySchema, revenueWithVat: moneySchema,
    })).describe('Partners with a click or conversion in the period, highest commission first.'),
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => affiliateStatistics(ctx.db, ctx.shop!, period!),
});

/** Computes a partner's tracked link; stores nothing. */
export const affiliateLinksGenerate = defineCapability({
  name: 'affiliate.linksGenerate',
  summary: 'Tracked affiliate link to the shop home, a product or a category; keeps attribution after the click.',
  description: 'Computes the tracked link of partner `partnerId` in the shop `market` to the shop\'s home (`target=home`), a product (`target=product` with `productCode`) or a category (`target=category` with `categoryGuid`), under a campaign (`campaignId`, default: the shop\'s default campaign available to the partner). The link goes through the partner portal\'s redirect, which records the click and sets a first-party cookie, so an order placed within the campaign\'s window is attributed however the shopper browses on. Nothing is stored by this call. Only approved partners have working links (409 otherwise).',
  path: '/affiliate/links/generate',
  scope: 'affiliate:read',
  mcpTool: 'affiliate_links_generate',
  kind: 'get',
  market: 'required',
  params: z.object({
    market, partnerId: partnerIdParam, target: z.enum(LINK_TARGETS).describe('Where the link leads.'),
    productCode: z.string().min(1).max(64).optional().describe('Product code, with `target=product`.'),
    categoryGuid: z.string().min(1).max(64).optional().describe('Category guid, with `target=category` (from categories_list).'),
    campaignId: id('campaign').optional().describe('Campaign to track under; default: the shop\'s default campaign available to the partner.'),
  }).strict(),
  result: z.object({
    url: z.string().describe('The link to share.'),
    partnerId: z.string(), partnerHandle: z.string(), campaignId: z.string(), campaignName: z.string(),
    target: z.object({ type: z.enum(LINK_TARGETS), url: z.string().describe('Where the redirect forwards.') }),
    attribution: z.object({ windowDays: z.number().int(), how: z.string() }),
  }),
  paramRules: [
    { code: 'MISSING_PARAMETER', rule: '`target=product` needs `productCode`; `target=category` needs `categoryGuid`.' },
    { code: 'INVALID_PARAMETER_COMBINATION', rule: '`productCode` and `categoryGuid` go only with their own `target`.' },
  ],
  annotations: readOnly,
  handler: ({ params, ctx }) => generateLink(ctx.db, ctx.caller.account.id, ctx.shop!.id, params),
});
