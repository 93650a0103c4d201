/** Analytics: visits, channels (AI assistants included), comparison, months, coverage, heatmap, revenue sources, advertising. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import {
  ADVERTISING_HISTORY_MONTHS, advertising, analyticsChannels, analyticsComparison, analyticsMonthly, analyticsOverview, orderCoverage, orderHeatmap,
  revenueSources,
} from '../../queries/analytics.js';
import { from, market, to } from '../params.js';
import { todayIn } from '../period.js';
import { defineCapability, readOnly } from '../types.js';

const eurMoney = moneySchema.describe('EUR at each record\'s stored sync-time rate (D23).');
const share = z.number().min(0).nullable().describe('A ratio with 4 decimals (0.1234 = 12.34 %); null when its base is zero.');
const periodNote = 'Period: `from`/`to` in the shop\'s time zone, default the current month, at most 366 days; `meta.period` states it.';
const periodParams = { market, from: from.optional(), to: to.optional() };
const aiNote = 'AI assistants (ChatGPT, Perplexity, Gemini, Claude, Copilot...) are recognised by the referrer of the visit and reported as channel `ai_assistant`.';

const headline = {
  visits: z.number().int().describe('Web-analytics visits.'),
  orders: z.number().int().describe('All orders of the period (cancelled ones excluded), tracked or not.'),
  revenueWithVat: eurMoney,
  conversionRate: share.describe('orders / visits, 4 decimals.'),
  averageOrderValue: eurMoney.nullable(),
};

const aiShareSchema = z.object({
  visits: z.number().int(),
  orders: z.number().int().describe('Orders tracked to a visit from an AI assistant.'),
  revenueWithVat: eurMoney,
  visitsShare: share,
  ordersShare: share.describe('Of all orders.'),
  revenueShare: share.describe('Of all revenue.'),
});

/** Headline figures of a period with the AI assistants' share. */
export const analyticsOverviewCapability = defineCapability({
  name: 'analytics.overview',
  summary: 'Visits, orders, revenue, conversion rate, AOV and the AI/LLM share of a period.',
  description: `Answers "how is the shop doing": visits (web analytics), orders and revenue in EUR (all orders, cancelled excluded), conversion rate, average order value, tracked orders, and how much comes from AI assistants. ${aiNote} ${periodNote} For channels use analytics_channels; for profit reports_financial_summary.`,
  path: '/analytics/overview',
  scope: 'analytics:read',
  mcpTool: 'analytics_overview',
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object(periodParams).strict(),
  result: z.object({ currency: z.literal('EUR'), ...headline, trackedOrders: z.number().int().describe('Orders web analytics tracked to a visit.'), aiAssistants: aiShareSchema }),
  annotations: readOnly,
  handler: ({ ctx, period }) => analyticsOverview(ctx.db, ctx.shop!.id, period!),
});

const figures = { visits: z.number().int(), orders: z.number().int().describe('Orders tracked to this channel.'), revenueWithVat: eurMoney, conversionRate: share };

/** Visits, orders and revenue per marketing channel and source. */
export const analyticsChannelsCapability = defineCapability({
  name: 'analytics.channels',
  summary: 'Visits, orders and revenue by marketing channel and source, including AI sources.',
  description: `Answers "which channels bring revenue" and "how many orders come from ChatGPT": per channel (direct, organic_search, paid_search, paid_social, social, email, referral, affiliate, ai_assistant) and per source, the visits, the orders web analytics tracked to them, their revenue in EUR and conversion rate, most revenue first; \`untracked\` holds the orders no visit was tracked to. ${aiNote} ${periodNote}`,
  path: '/analytics/channels',
  scope: 'analytics:read',
  mcpTool: 'analytics_channels',
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object(periodParams).strict(),
  result: z.object({
    currency: z.literal('EUR'),
    channels: z.array(z.object({
      channel: z.string(),
      aiAssistant: z.boolean().describe('True for the AI assistants channel.'),
      ...figures,
      revenueShare: share.describe('Of all revenue of the period.'),
      sources: z.array(z.object({ source: z.string(), ...figures })),
    })),
    untracked: z.object({ orders: z.number().int(), revenueWithVat: eurMoney }),
    totals: z.object({ ...headline, trackedOrders: z.number().int() }),
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => analyticsChannels(ctx.db, ctx.shop!.id, period!),
});

const compared = z.object({ from: z.string(), to: z.string(), ...headline, aiRevenueShare: share });

/** A period against the previous period or the previous year. */
export const analyticsComparisonCapability = defineCapability({
  name: 'analytics.comparison',
  summary: 'Revenue, orders, AOV, visits, conversion rate and AI/LLM share against the previous period or year.',
  description: `Compares the period with \`compareTo\`: \`previous_period\` (the same number of days just before, default) or \`previous_year\` (the same dates a year earlier; 29 February maps to 28). Both periods and the change in percent are returned. ${periodNote}`,
  path: '/analytics/comparison',
  scope: 'reports:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object({ ...periodParams, compareTo: z.enum(['previous_period', 'previous_year']).optional().describe('Default `previous_period`.') }).strict(),
  result: z.object({
    currency: z.literal('EUR'),
    compareTo: z.enum(['previous_period', 'previous_year']),
    current: compared,
    previous: compared,
    changePercent: z.object({
      revenueWithVat: z.number().nullable(), orders: z.number().nullable(), averageOrderValue: z.number().nullable(), visits: z.number().nullable(),
      conversionRate: z.number().nullable(), aiRevenueShare: z.number().nullable(),
    }).describe('(current - previous) / previous in percent, 2 decimals; null without a previous figure.'),
  }),
  annotations: readOnly,
  handler: ({ params, ctx, period }) => analyticsComparison(ctx.db, ctx.shop!.id, period!, params.compareTo ?? 'previous_period'),
});

export const MAX_MONTHS = 24;
// Years 2000-2999: the shops' history is recent, and year 0 or 9999 would only break the calendar arithmetic.
const monthParam = z.string().regex(/^2\d{3}-(0[1-9]|1[0-2])$/, 'a month YYYY-MM from 2000-01');

/** Revenue, orders and visits per month, at most 24 months. */
export const analyticsMonthlyCapability = defineCapability({
  name: 'analytics.monthly',
  summary: 'Revenue, orders and visits per month (at most 24).',
  description: `Returns whole calendar months \`fromMonth\`..\`toMonth\` (YYYY-MM, shop time zone; default the last 12 months including the current one). At most ${MAX_MONTHS} months; more is a 400 PERIOD_TOO_LONG. The months used are stated in \`data.period\`.`,
  path: '/analytics/monthly',
  scope: 'reports:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  params: z.object({ market, fromMonth: monthParam.optional().describe('First month, YYYY-MM.'), toMonth: monthParam.optional().describe('Last month, YYYY-MM; default the current month.') }).strict(),
  result: z.object({
    currency: z.literal('EUR'),
    period: z.object({ from: z.string(), to: z.string() }).describe('First and last day of the months returned.'),
    months: z.array(z.object({ month: z.string(), orders: z.number().int(), revenueWithVat: eurMoney, visits: z.number().int(), conversionRate: share })),
  }),
  paramRules: [
    { code: 'PERIOD_REVERSED', rule: '`fromMonth` must not be after `toMonth` (default the current month).' },
    { code: 'PERIOD_TOO_LONG', rule: 'At most MAX_MONTHS months from `fromMonth` to `toMonth`.'.replace('MAX_MONTHS', String(MAX_MONTHS)) },
  ],
  annotations: readOnly,
  handler: ({ params, ctx }) => {
    const current = todayIn(ctx.shop!.timeZone, ctx.now()).slice(0, 7);
    const toMonth = params.toMonth ?? current;
    const index = (m: string) => Number(m.slice(0, 4)) * 12 + Number(m.slice(5, 7)) - 1;
    const fromMonth = params.fromMonth ?? (() => { const i = index(toMonth) - 11; return `${Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, '0')}`; })();
    if (index(fromMonth) > index(toMonth)) throw new AppError('PERIOD_REVERSED', `\`fromMonth\` (${fromMonth}) is after \`toMonth\` (${toMonth}).`, { fromMonth, toMonth });
    const months = index(toMonth) - index(fromMonth) + 1;
    if (months > MAX_MONTHS) throw new AppError('PERIOD_TOO_LONG', `The period spans ${months} months; monthly analytics returns at most ${MAX_MONTHS}.`, { fromMonth, toMonth, maxMonths: MAX_MONTHS });
    return analyticsMonthly(ctx.db, ctx.shop!.id, fromMonth, toMonth);
  },
});

/** Coverage of orders and revenue by web-analytics tracking. */
export const analyticsOrderCoverageCapability = defineCapability({
  name: 'analytics.orderCoverage',
  summary: 'Coverage of orders and revenue by tracking.',
  description: `Answers "how much of my revenue can analytics explain": orders and revenue of the period, how many of them web analytics tracked to a visit, and the coverage shares. Channel figures (analytics_channels) only see tracked orders. ${periodNote}`,
  path: '/analytics/order-coverage',
  scope: 'analytics:read',
  mcpTool: 'analytics_order_coverage',
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object(periodParams).strict(),
  result: z.object({
    currency: z.literal('EUR'), orders: z.number().int(), trackedOrders: z.number().int(), untrackedOrders: z.number().int(), orderCoverage: share,
    revenueWithVat: eurMoney, trackedRevenueWithVat: eurMoney, revenueCoverage: share,
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => orderCoverage(ctx.db, ctx.shop!.id, period!),
});

const weekday = z.enum(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);

/** When orders arrive: weekday x hour in the shop's zone. */
export const analyticsOrderHeatmapCapability = defineCapability({
  name: 'analytics.orderHeatmap',
  summary: 'When orders arrive: weekday x hour, strongest day and hour.',
  description: `Counts the period's orders (cancelled excluded) by weekday and hour of day in the SHOP's time zone (\`timeZone\`; across a DST change each order keeps its local hour): 168 cells, totals per weekday and per hour, and the strongest weekday, hour and cell (the earliest on a tie). ${periodNote}`,
  path: '/analytics/order-heatmap',
  scope: 'reports:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object(periodParams).strict(),
  result: z.object({
    timeZone: z.string(),
    orders: z.number().int(),
    cells: z.array(z.object({ weekday, hour: z.number().int().min(0).max(23), orders: z.number().int() })).describe('Monday 00 to Sunday 23.'),
    byWeekday: z.array(z.object({ weekday, orders: z.number().int() })),
    byHour: z.array(z.object({ hour: z.number().int(), orders: z.number().int() })),
    strongestWeekday: weekday.nullable(),
    strongestHour: z.number().int().nullable(),
    strongestCell: z.object({ weekday, hour: z.number().int(), orders: z.number().int() }).nullable(),
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => orderHeatmap(ctx.db, ctx.shop!.id, period!),
});

const part = z.object({ orders: z.number().int(), revenueWithVat: eurMoney, revenueShare: share });

/** Where revenue comes from. */
export const analyticsRevenueSourcesCapability = defineCapability({
  name: 'analytics.revenueSources',
  summary: 'Channels, AI/LLM, paid, affiliate and untracked revenue, acquisition per web analytics.',
  description: `Splits the period's revenue (EUR, cancelled orders excluded) by the channel web analytics tracked each order to, with the AI assistants, paid (search and social ads) and affiliate totals and the untracked rest; shares are of all revenue. ${aiNote} ${periodNote}`,
  path: '/analytics/revenue-sources',
  scope: 'reports:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object(periodParams).strict(),
  result: z.object({
    currency: z.literal('EUR'),
    revenueWithVat: eurMoney,
    orders: z.number().int(),
    channels: z.array(z.object({ channel: z.string(), aiAssistant: z.boolean(), orders: z.number().int(), revenueWithVat: eurMoney, revenueShare: share, visits: z.number().int() })),
    aiAssistants: part,
    affiliate: part,
    paid: part,
    untracked: part,
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => revenueSources(ctx.db, ctx.shop!.id, period!),
});

const platformFigures = z.object({
  platform: z.string().describe('`google_ads` or `meta_ads`.'),
  spend: eurMoney, budget: eurMoney, budgetUse: share.describe('spend / budget.'), clicks: z.number().int(), impressions: z.number().int(),
  conversions: z.number().int().describe('Conversions the ad platform attributes to itself.'), conversionValue: eurMoney,
  roas: z.number().nullable().describe('conversionValue / spend, 2 decimals.'), cpa: eurMoney.nullable().describe('spend / conversions.'),
});

/** Advertising over two ad platforms with comparison, at most six months back. */
export const analyticsAdvertisingCapability = defineCapability({
  name: 'analytics.advertising',
  summary: 'Advertising: spend, budget, ROAS, spend share of revenue, CPA, average order, MER with comparison; 6 months.',
  description: `Spend, budget, clicks, impressions and platform-attributed conversions per ad platform (Google Ads, Meta Ads) and in total, ROAS (conversion value / spend), CPA, the shop's revenue and average order, spend share of revenue, MER (all revenue / spend), paid clicks as web analytics saw them (\`clicksInWebAnalytics\`), and the previous period of the same length for comparison. History reaches ${ADVERTISING_HISTORY_MONTHS} months back: an earlier \`from\` is a 400. ${periodNote}`,
  path: '/analytics/advertising',
  scope: 'reports:read',
  mcpTool: null,
  kind: 'summary',
  market: 'required',
  period: { default: 'currentMonth' },
  params: z.object(periodParams).strict(),
  result: z.object({
    currency: z.literal('EUR'),
    from: z.string(), to: z.string(),
    platforms: z.array(platformFigures),
    spend: eurMoney, budget: eurMoney, clicks: z.number().int(), clicksInWebAnalytics: z.number().int(), conversions: z.number().int(), conversionValue: eurMoney,
    roas: z.number().nullable(), cpa: eurMoney.nullable(), revenueWithVat: eurMoney, orders: z.number().int(), averageOrderValue: eurMoney.nullable(),
    spendShareOfRevenue: share, mer: z.number().nullable().describe('revenueWithVat / spend, 2 decimals.'),
    comparison: z.object({
      from: z.string(), to: z.string(), spend: eurMoney, revenueWithVat: eurMoney, roas: z.number().nullable(), mer: z.number().nullable(), cpa: eurMoney.nullable(),
      changePercent: z.object({ spend: z.number().nullable(), revenueWithVat: z.number().nullable(), roas: z.number().nullable(), mer: z.number().nullable() }),
    }).describe('The previous period of the same length (it may reach before the 6-month history; then its figures cover what exists).'),
  }),
  annotations: readOnly,
  handler: ({ ctx, period }) => {
    const today = todayIn(ctx.shop!.timeZone, ctx.now());
    const [y, m, d] = today.split('-').map(Number);
    const back = new Date(Date.UTC(y, m - 1 - ADVERTISING_HISTORY_MONTHS, 1));
    const lastDay = new Date(Date.UTC(back.getUTCFullYear(), back.getUTCMonth() + 1, 0)).getUTCDate();
    const earliest = `${back.toISOString().slice(0, 8)}${String(Math.min(d, lastDay)).padStart(2, '0')}`;
    if (period!.from < earliest) {
      throw new AppError('INVALID_PARAMETER', `Advertising analytics reaches ${ADVERTISING_HISTORY_MONTHS} months back: \`from\` must be ${earliest} or later.`, { param: 'from', reason: 'before the advertising history', earliest });
    }
    return advertising(ctx.db, ctx.shop!.id, period!);
  },
});
