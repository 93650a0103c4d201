/**
 * Tracked links and the conversion beacon (issue 24 point 1). The redirect `/r/<handle>` on a shop's partner portal
 * records the click (shop, partner, campaign, target, time; the address and user agent only as keyed hashes) and
 * sends the shopper to the target on the shop's own domain with the attribution parameter; the beacon on the shop's
 * thank-you page hands back the order code and the click, and the order is attributed by the existing rule (A3).
 * Neither ever answers the shop with an error it would have to handle: a bad beacon is recorded as unattributed.
 */
import crypto from 'node:crypto';
import type { Db } from '../../db/knex.js';
import { attributeOrders, refreshCommissionStates } from '../attribution.js';
import { knexRunner, type SqlRunner } from '../sql.js';

/** The query parameter the shop's pages receive after the redirect and pass back in the beacon. */
export const ATTRIBUTION_PARAM = 'aff_click';
/** The first-party cookie of the portal that remembers the visitor for the campaign's window. */
export const VISITOR_COOKIE = 'aff_visitor';
/** Repeats of one address on one link within this window are counted on the first click, not as new clicks. */
export const FLOOD_WINDOW_MS = 10 * 60_000;
/** More repeats than this within the flood window are refused (429) instead of redirected. */
export const FLOOD_LIMIT = 20;

/** A portal's shop, as the request's Host or the development path prefix names it. */
export interface PortalShop {
  shopId: string;
  accountId: string;
  baseUrl: string;
}

/** Finds the shop whose portal answers at `host` (its address, or its custom domain once active); ambiguous → none. */
export async function portalShopByHost(db: Db, host: string): Promise<PortalShop | null> {
  const h = host.toLowerCase().replace(/:\d+$/, '');
  const rows = await db('affiliate_portals as p').join('shops as s', 's.id', 'p.shop_id')
    .where((w) => w.whereRaw(`lower(regexp_replace(p.address, '^[a-z]+://([^/:]+).*$', '\\1')) = ?`, [h])
      .orWhere((c) => c.whereRaw('lower(p.custom_domain) = ?', [h]).where('p.custom_domain_status', 'active')))
    .limit(2).select('s.id', 's.account_id', 's.base_url');
  if (rows.length !== 1) return null;
  return { shopId: String(rows[0].id), accountId: String(rows[0].account_id), baseUrl: rows[0].base_url };
}

/** The development address of a shop's portal: `/portal/<account>/<shop>` on the service itself. */
export async function portalShopByPath(db: Db, accountCode: string, shopCode: string): Promise<PortalShop | null> {
  const row = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').join('affiliate_portals as p', 'p.shop_id', 's.id')
    .where({ 'a.code': accountCode, 's.code': shopCode }).first('s.id', 's.account_id', 's.base_url');
  return row ? { shopId: String(row.id), accountId: String(row.account_id), baseUrl: row.base_url } : null;
}

/** Keyed hash: the address and user agent are never stored in clear, and a hash cannot be reversed by guessing. */
export function keyedHash(key: Buffer, kind: 'ip' | 'ua', value: string): string {
  return crypto.createHmac('sha256', key).update(`affiliate-click:${kind}:${value}`).digest('base64url');
}

/**
 * The target the shopper is sent to: the shop's home when none is given, otherwise a URL on the shop's own host (the
 * same scheme and host as its base URL). Anything else is refused — the redirect is never an open redirect.
 */
export function checkTarget(baseUrl: string, to: string | undefined): { url: URL } | { refused: string } {
  const base = new URL(baseUrl);
  if (to === undefined || to === '') return { url: new URL('/', base) };
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    return { refused: 'The link target is not a URL.' };
  }
  if (url.protocol !== base.protocol || url.host.toLowerCase() !== base.host.toLowerCase() || url.username || url.password) {
    return { refused: 'The link target is not on the shop\'s own domain.' };
  }
  return { url };
}

export type ClickOutcome =
  | { kind: 'unknown_partner' }
  | { kind: 'refused'; message: string }
  | { kind: 'flooded' }
  | { kind: 'redirect'; location: string; visitorId: string | null; windowDays: number | null; clickToken: string | null; counted: 'new' | 'repeat' | 'none' };

export interface ClickRequest {
  handle: string;
  campaignId?: string;
  to?: string;
  ip: string;
  userAgent: string;
  /** The portal's visitor cookie, when the browser has one. */
  visitorId?: string;
  now: Date;
}

/** Records a click on a partner's tracked link and says where to send the shopper (the `/r/` endpoint: one click). */
export async function recordClick(db: Db, shop: PortalShop, hashKey: Buffer, req: ClickRequest): Promise<ClickOutcome> {
  const [outcome] = await db.transaction((trx) => recordClicks(knexRunner(trx), shop, hashKey, [req]));
  return outcome;
}

interface CampaignRow { id: string; attribution_window_days: number; is_default: boolean; availability: string; partners: string[] }

/**
 * Records clicks on partners' tracked links, in the caller's transaction, and answers each with its outcome (in the
 * order given). One rule for every click, whoever reports it: the `/r/` endpoint passes one, the demo's simulated
 * shoppers a day's worth at a time (AM1). Clicks are taken in time order, so a repeat within the flood window counts
 * on the first click of the batch or of the database, exactly as if they had arrived one by one.
 */
export async function recordClicks(run: SqlRunner, shop: PortalShop, hashKey: Buffer, reqs: ClickRequest[]): Promise<ClickOutcome[]> {
  const k = run.knex;
  const outcomes: ClickOutcome[] = new Array(reqs.length);
  if (!reqs.length) return outcomes;
  const handles = [...new Set(reqs.map((r) => r.handle.toLowerCase()))];
  const partners = new Map((await run.rows<{ id: string; state: string; h: string }>(k('affiliate_partners').where({ account_id: shop.accountId })
    .whereRaw('lower(handle) = any(?::text[])', [handles]).select('id', 'state', k.raw('lower(handle) as h')))).map((p) => [p.h, { id: String(p.id), state: p.state }]));
  const campaigns = (await run.rows<CampaignRow>(k('affiliate_campaigns as c').where({ 'c.shop_id': shop.shopId, 'c.enabled': true })
    .orderBy([{ column: 'c.is_default', order: 'desc' }, { column: 'c.id' }])
    .select('c.id', 'c.attribution_window_days', 'c.is_default', 'c.availability',
      k.raw('coalesce((select array_agg(cp.partner_id::text) from affiliate_campaign_partners cp where cp.campaign_id = c.id), array[]::text[]) as partners'))))
    .map((c) => ({ ...c, id: String(c.id) }));
  const campaignOf = (partnerId: string, wanted: string | undefined) => {
    const available = campaigns.filter((c) => c.availability === 'all' || c.partners.includes(partnerId));
    return (wanted && /^\d{1,18}$/.test(wanted) ? available.find((c) => c.id === wanted) : undefined) ?? available[0];
  };

  interface Pending { i: number; req: ClickRequest; partnerId: string; campaign: CampaignRow; target: URL; ipHash: string; uaHash: string }
  const pending: Pending[] = [];
  reqs.forEach((req, i) => {
    const partner = partners.get(req.handle.toLowerCase());
    if (!partner) {
      outcomes[i] = { kind: 'unknown_partner' };
      return;
    }
    const target = checkTarget(shop.baseUrl, req.to);
    if ('refused' in target) {
      outcomes[i] = { kind: 'refused', message: target.refused };
      return;
    }
    // A link of a partner who is not approved, or of a campaign no longer available, still takes the shopper to the
    // shop; it records nothing and carries no attribution (A8: only an approved partner's link records clicks).
    const campaign = partner.state === 'approved' ? campaignOf(partner.id, req.campaignId) : undefined;
    if (!campaign) {
      outcomes[i] = { kind: 'redirect', location: target.url.toString(), visitorId: null, windowDays: null, clickToken: null, counted: 'none' };
      return;
    }
    pending.push({ i, req, partnerId: partner.id, campaign, target: target.url, ipHash: keyedHash(hashKey, 'ip', req.ip), uaHash: keyedHash(hashKey, 'ua', req.userAgent) });
  });
  if (!pending.length) return outcomes;

  const withParam = (target: URL, token: string) => {
    const url = new URL(target);
    url.searchParams.set(ATTRIBUTION_PARAM, token);
    return url.toString();
  };
  const keyOf = (p: { ipHash: string; uaHash: string; partnerId: string; campaignId: string }) => `${p.ipHash}|${p.uaHash}|${p.partnerId}|${p.campaignId}`;
  // The latest click per address, user agent, partner and campaign: from the database, then from this batch.
  const times = pending.map((p) => p.req.now.getTime());
  const recentRows = await run.rows<{ id: string; token: string; visitor_id: string; repeats: number; clicked_at: Date; ip_hash: string; ua_hash: string; partner_id: string; campaign_id: string }>(
    k('affiliate_clicks').where({ shop_id: shop.shopId }).whereRaw('ip_hash = any(?::text[])', [[...new Set(pending.map((p) => p.ipHash))]])
      .where('clicked_at', '>', new Date(Math.min(...times) - FLOOD_WINDOW_MS)).where('clicked_at', '<=', new Date(Math.max(...times)))
      .orderBy([{ column: 'clicked_at' }, { column: 'id' }]).forUpdate()
      .select('id', 'token', 'visitor_id', 'repeats', 'clicked_at', 'ip_hash', 'ua_hash', 'partner_id', 'campaign_id'));
  interface Latest { id: string | null; index: number | null; token: string; visitorId: string; repeats: number; at: number; lastSeen: number }
  const latest = new Map<string, Latest>();
  const existing = recentRows.map((r) => ({ key: keyOf({ ipHash: r.ip_hash, uaHash: r.ua_hash, partnerId: String(r.partner_id), campaignId: String(r.campaign_id) }), row: r }));
  const repeated = new Map<string, Latest>();
  const inserts: Array<Record<string, unknown>> = [];
  let e = 0;
  for (const p of [...pending].sort((a, b) => a.req.now.getTime() - b.req.now.getTime() || a.i - b.i)) {
    const now = p.req.now.getTime();
    // Clicks already stored up to this one's time become the latest of their key.
    for (; e < existing.length && existing[e].row.clicked_at.getTime() <= now; e++) {
      const r = existing[e].row;
      latest.set(existing[e].key, { id: String(r.id), index: null, token: r.token, visitorId: r.visitor_id, repeats: r.repeats, at: r.clicked_at.getTime(), lastSeen: r.clicked_at.getTime() });
    }
    const key = keyOf({ ...p, campaignId: p.campaign.id });
    const recent = latest.get(key);
    // One address hammering one link: the first click counts, the repeats are tallied on it, a flood is refused.
    if (recent && recent.at > now - FLOOD_WINDOW_MS) {
      if (recent.repeats >= FLOOD_LIMIT) {
        outcomes[p.i] = { kind: 'flooded' };
        continue;
      }
      recent.repeats += 1;
      recent.lastSeen = Math.max(recent.lastSeen, now);
      if (recent.id !== null) repeated.set(recent.id, recent);
      else inserts[recent.index!].repeats = recent.repeats;
      if (recent.index !== null) inserts[recent.index].last_seen_at = new Date(recent.lastSeen);
      outcomes[p.i] = { kind: 'redirect', location: withParam(p.target, recent.token), visitorId: recent.visitorId, windowDays: p.campaign.attribution_window_days, clickToken: recent.token, counted: 'repeat' };
      continue;
    }
    const visitorId = p.req.visitorId && /^[A-Za-z0-9_-]{8,64}$/.test(p.req.visitorId) ? p.req.visitorId : crypto.randomBytes(12).toString('base64url');
    const token = crypto.randomBytes(16).toString('base64url');
    const targetType = /^\/product\//.test(p.target.pathname) ? 'product' : /^\/category\//.test(p.target.pathname) ? 'category' : 'home';
    const targetRef = targetType === 'home' ? null : decodeURIComponent(p.target.pathname.split('/')[2] ?? '') || null;
    latest.set(key, { id: null, index: inserts.length, token, visitorId, repeats: 0, at: now, lastSeen: now });
    inserts.push({
      shop_id: shop.shopId, partner_id: p.partnerId, campaign_id: p.campaign.id, visitor_id: visitorId, clicked_at: p.req.now, target_type: targetType,
      target_ref: targetRef, token, ip_hash: p.ipHash, ua_hash: p.uaHash, target_url: p.target.toString(), last_seen_at: p.req.now, repeats: 0,
    });
    outcomes[p.i] = { kind: 'redirect', location: withParam(p.target, token), visitorId, windowDays: p.campaign.attribution_window_days, clickToken: token, counted: 'new' };
  }
  for (const r of repeated.values()) {
    await run.rows(k('affiliate_clicks').where({ id: r.id }).update({ repeats: r.repeats, last_seen_at: new Date(r.lastSeen) }));
  }
  for (let i = 0; i < inserts.length; i += 2000) await run.rows(k('affiliate_clicks').insert(inserts.slice(i, i + 2000)));
  return outcomes;
}

export interface BeaconRequest {
  orderCode?: string;
  clickToken?: string;
  visitorId?: string;
  now: Date;
}

export type BeaconOutcome = { outcome: 'attributed' | 'unattributed' | 'ignored'; reason: string | null };

/** Records one beacon of a shop's thank-you page (the `/b` endpoint). */
export async function recordBeacon(db: Db, shop: PortalShop, req: BeaconRequest): Promise<BeaconOutcome> {
  const [outcome] = await db.transaction((trx) => recordBeacons(knexRunner(trx), shop, [req]));
  return outcome;
}

/**
 * Records thank-you page beacons in the caller's transaction: which visitor (by the click token, else the portal
 * cookie) placed which order. Orders already synced are attributed at once (A3's rule, at the latest beacon's time);
 * the others when the sync brings them. The demo's simulated shoppers send theirs through here too (AM1).
 */
export async function recordBeacons(run: SqlRunner, shop: PortalShop, reqs: BeaconRequest[]): Promise<BeaconOutcome[]> {
  const k = run.knex;
  const outcomes: BeaconOutcome[] = new Array(reqs.length);
  interface Seen { i: number; orderCode: string; token: string | undefined; now: Date; click: { id: string; visitor_id: string } | undefined }
  const seen: Seen[] = [];
  reqs.forEach((req, i) => {
    const orderCode = req.orderCode?.trim();
    // Without an order code there is nothing to record (and nothing to tell the shop either).
    if (!orderCode || orderCode.length > 64) outcomes[i] = { outcome: 'ignored', reason: 'no_order_code' };
    else seen.push({ i, orderCode, token: req.clickToken && req.clickToken.length <= 64 ? req.clickToken : undefined, now: req.now, click: undefined });
  });
  if (!seen.length) return outcomes;
  const tokens = [...new Set(seen.flatMap((s) => (s.token ? [s.token] : [])))];
  const byToken = new Map(tokens.length ? (await run.rows<{ id: string; visitor_id: string; token: string }>(k('affiliate_clicks').where({ shop_id: shop.shopId })
    .whereRaw('token = any(?::text[])', [tokens]).select('id', 'visitor_id', 'token'))).map((c) => [c.token, c]) : []);
  for (const s of seen) {
    const req = reqs[s.i];
    if (s.token) s.click = byToken.get(s.token);
    else if (req.visitorId && req.visitorId.length <= 64) {
      [s.click] = await run.rows<{ id: string; visitor_id: string }>(k('affiliate_clicks').where({ shop_id: shop.shopId, visitor_id: req.visitorId }).where('clicked_at', '<=', req.now)
        .orderBy([{ column: 'clicked_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(1).select('id', 'visitor_id'));
    }
  }
  const clicked = seen.filter((s) => s.click);
  if (clicked.length) {
    await run.rows(k('affiliate_order_visitors').insert(clicked.map((s) => ({ shop_id: shop.shopId, order_code: s.orderCode, visitor_id: s.click!.visitor_id, recorded_at: s.now })))
      .onConflict(['shop_id', 'order_code']).ignore());
  }
  const codes = [...new Set(clicked.map((s) => s.orderCode))];
  const orders = new Map(codes.length ? (await run.rows<{ id: string; code: string }>(k('orders').where({ shop_id: shop.shopId }).whereRaw('code = any(?::text[])', [codes])
    .select('id', 'code'))).map((o) => [o.code, String(o.id)]) : []);
  const conversions = new Map<string, string>();
  if (orders.size) {
    const now = new Date(Math.max(...clicked.map((s) => s.now.getTime())));
    const synced = [...orders.keys()];
    await attributeOrders(run, shop.shopId, now, synced);
    await refreshCommissionStates(run, shop.shopId, now, synced);
    for (const c of await run.rows<{ order_id: string; source: string }>(k('affiliate_conversions').whereIn('order_id', [...orders.values()]).select('order_id', 'source'))) {
      conversions.set(String(c.order_id), c.source);
    }
  }
  for (const s of seen) {
    const order = orders.get(s.orderCode);
    const source = order ? conversions.get(order) : undefined;
    outcomes[s.i] = !s.click ? { outcome: 'unattributed', reason: s.token ? 'unknown_click' : 'no_click' }
      : !order ? { outcome: 'unattributed', reason: 'order_not_synced' }
        : !source ? { outcome: 'unattributed', reason: 'outside_window' }
          : source === 'coupon' ? { outcome: 'attributed', reason: 'coupon' } : { outcome: 'attributed', reason: null };
  }
  const rows = seen.map((s) => ({ shop_id: shop.shopId, order_code: s.orderCode, click_token: s.token ?? null, click_id: s.click?.id ?? null, outcome: outcomes[s.i].outcome, reason: outcomes[s.i].reason, received_at: s.now }));
  for (let i = 0; i < rows.length; i += 2000) await run.rows(k('affiliate_beacons').insert(rows.slice(i, i + 2000)));
  return outcomes;
}
