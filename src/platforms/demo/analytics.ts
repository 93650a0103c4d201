/**
 * Web analytics and advertising of a demo shop, tied to its real orders: visits per local day by channel, source,
 * referrer, device and landing page (sized so the day's orders convert at about 2 %), which orders were tracked to a
 * visit, and two ad platforms' daily spend, budget, clicks and attributed conversions. Every value is a function of
 * (seed, shop, day or order) on its own random streams (`web-visits`, `order-tracking`, `ad-spend`), so no existing
 * draw changes. A day is reported the next morning (04:00 local), as analytics exports are.
 */
import { WHOLE_UNIT_CURRENCIES, type ShopDefinition } from './catalogue.js';
import { createRandom, type Random } from './random.js';
import { DAY_MS, HOUR_MS, localDateUtc, localMidnightInstant } from './time.js';
import type { VisitRow as GeneratedVisitRow, VisitDay as GeneratedVisitDay, OrderTracking as GeneratedOrderTracking, AdSpend as GeneratedAdSpend } from '../../records/types.js';
export type { GeneratedVisitRow, GeneratedVisitDay, GeneratedOrderTracking, GeneratedAdSpend };

/** A traffic source as web analytics reports it: its own channel label and the referrer host. */
export interface TrafficSource {
  channel: string;
  source: string;
  referrer: string | null;
  /** Share of visits. */
  weight: number;
  /** How much better (or worse) than average its visits convert. */
  conversion: number;
}

/**
 * The sources of the demo shops. AI assistants arrive as plain referrals, as they do in real analytics; the service
 * recognises them by their referrer host.
 */
export const TRAFFIC_SOURCES: TrafficSource[] = [
  { channel: 'direct', source: '(direct)', referrer: null, weight: 22, conversion: 1.3 },
  { channel: 'organic_search', source: 'google', referrer: 'www.google.com', weight: 27, conversion: 1 },
  { channel: 'organic_search', source: 'bing', referrer: 'www.bing.com', weight: 3, conversion: 0.9 },
  { channel: 'paid_search', source: 'google_ads', referrer: 'www.google.com', weight: 12, conversion: 1.1 },
  { channel: 'paid_social', source: 'meta_ads', referrer: 'm.facebook.com', weight: 8, conversion: 0.7 },
  { channel: 'social', source: 'facebook', referrer: 'm.facebook.com', weight: 4, conversion: 0.5 },
  { channel: 'social', source: 'instagram', referrer: 'l.instagram.com', weight: 3, conversion: 0.5 },
  { channel: 'email', source: 'newsletter', referrer: null, weight: 5, conversion: 1.6 },
  { channel: 'referral', source: 'heureka', referrer: 'www.heureka.sk', weight: 4, conversion: 1.2 },
  { channel: 'affiliate', source: 'partners', referrer: null, weight: 3, conversion: 1.1 },
  { channel: 'referral', source: 'chatgpt.com', referrer: 'chatgpt.com', weight: 2.2, conversion: 1.7 },
  { channel: 'referral', source: 'perplexity.ai', referrer: 'www.perplexity.ai', weight: 0.7, conversion: 1.6 },
  { channel: 'referral', source: 'gemini.google.com', referrer: 'gemini.google.com', weight: 0.5, conversion: 1.5 },
  { channel: 'referral', source: 'claude.ai', referrer: 'claude.ai', weight: 0.35, conversion: 1.6 },
  { channel: 'referral', source: 'copilot.microsoft.com', referrer: 'copilot.microsoft.com', weight: 0.3, conversion: 1.4 },
];

const DEVICES: Array<[string, number]> = [['mobile', 0.62], ['desktop', 0.33], ['tablet', 0.05]];
const LANDING_PAGES: Array<[string, number]> = [['/', 0.45], ['/category', 0.33], ['/product', 0.22]];
const CONVERSION_RATE = 0.02;

const isoDay = (localDate: number) => new Date(localDate).toISOString().slice(0, 10);

function pickWeighted<T>(rng: Random, items: T[], weights: number[]): T {
  return rng.weighted(items, weights);
}

/** When a day's data is reported: 04:00 local on the next day. */
function reportedAtOf(shop: ShopDefinition, localDate: number): number {
  return localMidnightInstant(shop.timeZone, localDate + DAY_MS) + 4 * HOUR_MS;
}

/** Visits of one local day, given the day's order count. */
export function visitDay(seed: number, shop: ShopDefinition, localDate: number, orders: number): GeneratedVisitDay {
  const rng = createRandom(seed, 'web-visits', shop.code, localDate);
  const total = Math.round((Math.max(orders, 1) / CONVERSION_RATE) * rng.float(0.85, 1.15));
  const weightSum = TRAFFIC_SOURCES.reduce((n, s) => n + s.weight, 0);
  const rows: GeneratedVisitRow[] = [];
  for (const s of TRAFFIC_SOURCES) {
    const sourceVisits = total * (s.weight / weightSum) * rng.float(0.8, 1.2);
    for (const [device, deviceShare] of DEVICES) {
      for (const [landingPage, pageShare] of LANDING_PAGES) {
        const visits = Math.round(sourceVisits * deviceShare * pageShare * rng.float(0.85, 1.15));
        if (visits > 0) rows.push({ channel: s.channel, source: s.source, referrer: s.referrer, device, landingPage, visits });
      }
    }
  }
  return { day: isoDay(localDate), reportedAt: new Date(reportedAtOf(shop, localDate)), rows };
}

/** Whether web analytics tracked an order to a visit, and from where (about 82 % of orders are tracked). */
export function orderTracking(seed: number, shop: ShopDefinition, orderCode: string, createdMs: number): GeneratedOrderTracking | null {
  const rng = createRandom(seed, 'order-tracking', shop.code, orderCode);
  if (!rng.chance(0.82)) return null;
  const s = pickWeighted(rng, TRAFFIC_SOURCES, TRAFFIC_SOURCES.map((x) => x.weight * x.conversion));
  const device = pickWeighted(rng, DEVICES.map((d) => d[0]), DEVICES.map((d) => d[1]));
  const landingPage = pickWeighted(rng, LANDING_PAGES.map((p) => p[0]), LANDING_PAGES.map((p) => p[1]));
  return { orderCode, channel: s.channel, source: s.source, referrer: s.referrer, device, landingPage, trackedAt: new Date(createdMs) };
}

const CAMPAIGNS: Array<{ platform: 'google_ads' | 'meta_ads'; campaign: string; share: number; cpcEur: number }> = [
  { platform: 'google_ads', campaign: 'search-brand', share: 0.2, cpcEur: 0.18 },
  { platform: 'google_ads', campaign: 'shopping', share: 0.45, cpcEur: 0.32 },
  { platform: 'meta_ads', campaign: 'prospecting', share: 0.25, cpcEur: 0.22 },
  { platform: 'meta_ads', campaign: 'retargeting', share: 0.1, cpcEur: 0.12 },
];

/** Ad spend of one local day over both platforms: about 8 % of the day's revenue, given the day's orders. */
export function adSpendDay(seed: number, shop: ShopDefinition, localDate: number, orders: number, eurRate: number): GeneratedAdSpend[] {
  const rng = createRandom(seed, 'ad-spend', shop.code, localDate);
  const revenueEur = orders * 55;
  const toMinor = (eur: number) => {
    const amount = eur / shop.eurRate;
    return WHOLE_UNIT_CURRENCIES.has(shop.currency) ? Math.round(amount) * 100 : Math.round(amount * 100);
  };
  return CAMPAIGNS.map((c) => {
    const spendEur = Math.max(1, revenueEur * 0.08 * c.share * rng.float(0.7, 1.3));
    const clicks = Math.max(1, Math.round((spendEur / c.cpcEur) * rng.float(0.9, 1.1)));
    const conversions = Math.round(clicks * (c.campaign === 'retargeting' ? 0.05 : 0.02) * rng.float(0.6, 1.4));
    return {
      platform: c.platform, campaign: c.campaign, day: isoDay(localDate), currency: shop.currency,
      spendMinor: toMinor(spendEur), budgetMinor: toMinor(spendEur * rng.float(1.05, 1.35)),
      impressions: Math.round(clicks * rng.float(35, 80)), clicks, conversions, conversionValueMinor: toMinor(conversions * 55 * rng.float(0.8, 1.2)),
      eurRate, reportedAt: new Date(reportedAtOf(shop, localDate)),
    };
  });
}

/** Local days whose report time lies in (sinceMs, untilMs] (from the day containing `earliestMs` when since is null). */
export function reportedDays(shop: ShopDefinition, sinceMs: number | null, untilMs: number, earliestMs: number): number[] {
  const out: number[] = [];
  const first = localDateUtc(shop.timeZone, sinceMs === null ? earliestMs : Math.max(earliestMs, sinceMs - 2 * DAY_MS));
  for (let d = first; reportedAtOf(shop, d) <= untilMs; d += DAY_MS) {
    if (sinceMs === null || reportedAtOf(shop, d) > sinceMs) out.push(d);
  }
  return out;
}
