/**
 * Web analytics: a reported day of visits replaces that day's rows; ad spend rows are upserted per (day, platform,
 * campaign); a tracked order is upserted by its code. Channels are classified on the way in (AI assistants by
 * referrer), and the channel rollups of every touched day are recomputed in the same transaction.
 */
import type { Knex } from 'knex';
import type { AreaRecords, PlatformWebAnalytics } from '../../platforms/types.js';
import type { AdSpend, OrderTracking, VisitDay } from '../../records/types.js';
import { formatMinor } from '../../records/money.js';
import { classifyTraffic } from '../../analytics/channels.js';
import { refreshChannelDays } from '../../rollups/channels.js';
import { knexRunner } from '../../rollups/orders.js';
import type { Row } from '../rows.js';
import type { SyncShop } from '../shops.js';

/** The rows of one reported day, classified; rows that classify alike are merged. */
export function visitRows(shopId: string, day: VisitDay): Row[] {
  const merged = new Map<string, Row>();
  for (const r of day.rows) {
    const { channel, source } = classifyTraffic(r.channel, r.source, r.referrer);
    const key = `${channel}|${source}|${r.device}|${r.landingPage}`;
    const row = merged.get(key);
    if (row) row.visits = (row.visits as number) + r.visits;
    else merged.set(key, { shop_id: shopId, day: day.day, channel, source, device: r.device, landing_page: r.landingPage, visits: r.visits });
  }
  return [...merged.values()];
}

export function trackingRow(shopId: string, t: OrderTracking): Row {
  const { channel, source } = classifyTraffic(t.channel, t.source, t.referrer);
  return { shop_id: shopId, order_code: t.orderCode, channel, source, device: t.device, landing_page: t.landingPage, tracked_at: t.trackedAt };
}

export function adSpendRow(shopId: string, a: AdSpend): Row {
  return {
    shop_id: shopId, platform: a.platform, campaign: a.campaign, day: a.day, currency: a.currency, spend: formatMinor(a.spendMinor),
    budget: formatMinor(a.budgetMinor), impressions: a.impressions, clicks: a.clicks, conversions: a.conversions,
    conversion_value: formatMinor(a.conversionValueMinor), eur_rate: a.eurRate.toFixed(6),
  };
}

export async function applyWebAnalytics(trx: Knex.Transaction, shop: SyncShop, records: Array<AreaRecords['web_analytics']>): Promise<number> {
  const days = new Set<string>();
  const tracked: PlatformWebAnalytics[] = [];
  let written = 0;
  for (const r of records) {
    if (r.kind === 'visits') {
      await trx('web_visits').where({ shop_id: shop.id, day: r.day.day }).delete();
      const rows = visitRows(shop.id, r.day);
      if (rows.length) await trx('web_visits').insert(rows);
      days.add(r.day.day);
      written++;
    } else if (r.kind === 'ads') {
      if (r.rows.length) {
        await trx('ad_spend_daily').insert(r.rows.map((a) => adSpendRow(shop.id, a)))
          .onConflict(['shop_id', 'day', 'platform', 'campaign']).merge();
      }
      written++;
    } else {
      tracked.push(r);
    }
  }
  if (tracked.length) {
    const rows = tracked.map((r) => trackingRow(shop.id, (r as { tracking: OrderTracking }).tracking));
    await trx('order_tracking').insert(rows).onConflict(['shop_id', 'order_code']).merge();
    const orderDays = await trx.raw(`
      select distinct ((o.created_at at time zone s.time_zone)::date)::text as day
      from orders o join shops s on s.id = o.shop_id where o.shop_id = ? and o.code = any(?)`, [shop.id, rows.map((r) => r.order_code as string)]);
    for (const d of orderDays.rows) days.add(d.day);
    written += rows.length;
  }
  if (days.size) await refreshChannelDays(knexRunner(trx), shop.id, [...days]);
  return written;
}
