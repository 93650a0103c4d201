/**
 * The affiliate programme the service runs for the demo accounts, seeded at demo load from the demo seed: the
 * programme, twelve partners indexed like the partner codes of the demo coupon book (P40), per shop a portal,
 * campaigns, the partners' discount codes, code requests, and tracked clicks. Shoppers' visits are simulated by the
 * service's own tracking (clicks and the thank-you page beacon); conversions are then attributed from the real orders.
 */
import crypto from 'node:crypto';
import type { ShopDefinition } from '../catalogue.js';
import { PEOPLE } from '../cataloguePeople.js';
import { PARTNER_HANDLES } from '../coupons.js';
import { createRandom } from '../random.js';
import type { GeneratedCoupon } from '../types.js';
import type { SqlRunner } from '../../../affiliate/sql.js';
import { ensureDemoContent, seedDemoSignatures } from './affiliateContent.js';
import { recordBeacons, recordClicks, type ClickOutcome, type PortalShop } from '../../../affiliate/tracking/clicks.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Partner `i` registers about this many days into the history window, a few days before its code exists (P40: 35). */
const PARTNER_EVERY_DAYS = 35;
/** Share of orders without a partner code whose shopper came through a partner's tracked link. */
const CLICK_ORDER_SHARE = 0.03;
/** The shop whose portal the demo partners registered on and signed the agreement in. */
const SIGNING_SHOP = 'sk';

export const DEMO_PROGRAMME = {
  defaultCommissionPercent: 8,
  clickWindowDays: 30,
  payoutMinimumEur: 50,
  returnPeriodDays: 14,
} as const;

const PARTNER_KINDS = ['blogger', 'influencer', 'comparison_site', 'blogger', 'magazine', 'influencer', 'blogger', 'influencer', 'blogger', 'magazine', 'influencer', 'blogger'];
/** Two applicants the programme turned down (no code, no index). */
const REJECTED_APPLICANTS = ['SLEVYDNES', 'CASHBACKPRO'];
const SUSPENDED_INDEX = 9;
const WAITING_INDEX = 11;
/** Partners of the manual-approval campaign for the best performers. */
export const TOP_PARTNER_INDEXES = [0, 2, 4];
/** Partner 6 and partner 10 came through the referral of another partner. */
const REFERRALS: Record<number, number> = { 6: 1, 10: 4 };

const FIXED_REWARD: Record<string, number> = { EUR: 4, CZK: 100, HUF: 1500, PLN: 15 };

export interface DemoAffiliateInput {
  accountId: string;
  accountCode: string;
  /** The demo load's seed (not the shop's), so account-level records agree whichever shop is loaded first. */
  seed: number;
  shopId: string;
  shop: ShopDefinition;
  shopSeed: number;
  windowStartMs: number;
  historyEndMs: number;
  /** The partner codes of the shop's coupon book that exist at the history end. */
  partnerCoupons: GeneratedCoupon[];
}

interface PartnerRef {
  id: string;
  partner_index: number | null;
  state: string;
  registered_at: Date;
}

function partnerRegisteredMs(windowStartMs: number, index: number): number {
  return windowStartMs + index * PARTNER_EVERY_DAYS * DAY_MS - 3 * DAY_MS;
}

function fakeIban(country: string, rng: ReturnType<typeof createRandom>): string {
  return `${country}${rng.digits(2)}${rng.digits(20)}`;
}

/** The programme and its partners (account level); concurrent shop loads of one account insert the same rows once. */
async function ensureAccountProgramme(run: SqlRunner, input: DemoAffiliateInput): Promise<Array<PartnerRef & { handle: string }>> {
  const k = run.knex;
  const created = new Date(input.windowStartMs - 10 * DAY_MS);
  await run.rows(k('affiliate_programmes').insert({
    account_id: input.accountId, name: 'Partner programme', default_commission_percent: DEMO_PROGRAMME.defaultCommissionPercent,
    click_window_days: DEMO_PROGRAMME.clickWindowDays, payout_minimum_eur: DEMO_PROGRAMME.payoutMinimumEur, referrals_enabled: true,
    referral_commission_percent: 2, auto_approve_partners: false, return_period_days: DEMO_PROGRAMME.returnPeriodDays,
    contact_name: 'Partner care', contact_email: `partners@${input.accountCode}.example`,
    colours: JSON.stringify({ primary: '#0B6E4F', accent: '#F2A541' }), privacy_policy_url: `https://${input.accountCode}.example/privacy`,
    created_at: created, updated_at: created,
  }).onConflict('account_id').ignore());

  // Account-level rows must not depend on which shop loads first: partners are people of the account's home market.
  const people = PEOPLE.SK;
  const rows = [...PARTNER_HANDLES.map((handle, i) => ({ handle, index: i as number | null })), ...REJECTED_APPLICANTS.map((handle) => ({ handle, index: null }))]
    .map(({ handle, index }, position) => {
      const rng = createRandom(input.seed, 'affiliate-partner', input.accountCode, handle);
      const registered = index === null
        ? input.windowStartMs + (60 + position * 20) * DAY_MS
        // The last partners of the 35-day cadence would register after the history's end on a 365-day window.
        : Math.min(partnerRegisteredMs(input.windowStartMs, index), input.historyEndMs - 2 * DAY_MS);
      const state = index === null ? 'rejected' : index === SUSPENDED_INDEX ? 'suspended' : index === WAITING_INDEX ? 'waiting' : 'approved';
      const reason = state === 'rejected' ? 'Code-sharing sites are not accepted by the programme terms.'
        : state === 'suspended' ? 'Bidding on the shop\'s brand in paid search, against the programme terms.' : null;
      const female = rng.chance(0.6);
      const first = rng.pick(female ? people.femaleFirstNames : people.maleFirstNames);
      const last = rng.pick(people.lastNames)[female ? 1 : 0];
      const stateChanged = state === 'suspended' ? input.historyEndMs - 20 * DAY_MS : registered + rng.int(1, 4) * DAY_MS;
      return {
        account_id: input.accountId, partner_index: index, handle, state, state_reason: reason,
        state_changed_at: new Date(state === 'waiting' ? registered : stateChanged),
        kind: index === null ? 'coupon_site' : PARTNER_KINDS[index], web: `https://${handle.toLowerCase()}.example`, language: 'sk',
        contact_name: `${first} ${last}`, company: rng.chance(0.4) ? `${handle.charAt(0)}${handle.slice(1).toLowerCase()} Media ${people.companyForm}` : null,
        email: `${handle.toLowerCase()}@partners.example`, phone: `${people.phone.prefix} ${rng.pick(people.phone.mobile)} ${rng.digits(3)} ${rng.digits(3)}`,
        bank_iban: fakeIban('SK', rng), bank_account_holder: `${first} ${last}`, tax_id: rng.digits(10), vat_id: `SK${rng.digits(10)}`,
        registered_at: new Date(registered),
      };
    });
  await run.rows(k('affiliate_partners').insert(rows).onConflict(['account_id', 'handle']).ignore());
  const partners = await run.rows<PartnerRef & { handle: string }>(k('affiliate_partners').where({ account_id: input.accountId })
    .select('id', 'partner_index', 'state', 'registered_at', 'handle').orderBy('id'));
  const byIndex = new Map(partners.map((p) => [p.partner_index, p.id]));
  for (const [child, parent] of Object.entries(REFERRALS)) {
    await run.rows(k('affiliate_partners').where({ id: byIndex.get(Number(child)) }).whereNull('referred_by_partner_id')
      .update({ referred_by_partner_id: byIndex.get(parent) }));
  }
  return partners;
}

interface CampaignRef { id: string; attribution_window_days: number; availability: string; enabled: boolean }

/** Campaigns of a shop: the standard one (default, all partners), one for the top partners, and a switched-off fixed bonus. */
async function seedCampaigns(run: SqlRunner, input: DemoAffiliateInput, partners: PartnerRef[]): Promise<CampaignRef[]> {
  const k = run.knex;
  const created = new Date(input.windowStartMs - 7 * DAY_MS);
  const currency = input.shop.currency;
  const descriptions = (text: string) => JSON.stringify({ [input.shop.language]: text, en: text });
  const inserted = await run.rows<CampaignRef>(k('affiliate_campaigns').insert([
    {
      shop_id: input.shopId, name: 'Standard commission', reward_type: 'percent', reward_percent: DEMO_PROGRAMME.defaultCommissionPercent, reward_amount: null,
      currency, attribution_window_days: DEMO_PROGRAMME.clickWindowDays, availability: 'all', approval: 'automatic', enabled: true, is_default: true,
      descriptions: descriptions('Commission on every order you bring.'), created_at: created,
    },
    {
      shop_id: input.shopId, name: 'Top partners', reward_type: 'percent', reward_percent: 12, reward_amount: null,
      currency, attribution_window_days: 45, availability: 'chosen', approval: 'manual', enabled: true, is_default: false,
      descriptions: descriptions('A higher rate for our best partners; conversions are approved by hand.'), created_at: new Date(created.getTime() + 60 * DAY_MS),
    },
    {
      shop_id: input.shopId, name: 'Launch bonus', reward_type: 'fixed', reward_percent: null, reward_amount: FIXED_REWARD[currency] ?? 5,
      currency, attribution_window_days: 14, availability: 'all', approval: 'automatic', enabled: false, is_default: false,
      descriptions: descriptions('A fixed reward per order during the launch weeks.'), created_at: created,
    },
  ]).returning(['id', 'attribution_window_days', 'availability', 'enabled']));
  const top = partners.filter((p) => p.partner_index !== null && TOP_PARTNER_INDEXES.includes(p.partner_index));
  await run.rows(k('affiliate_campaign_partners').insert(top.map((p) => ({ campaign_id: inserted[1].id, partner_id: p.id }))));
  return inserted;
}

/** Discount codes of the partners (from the shop's coupon book) and partners' requests for a code of their own. */
async function seedCodes(run: SqlRunner, input: DemoAffiliateInput, partners: PartnerRef[]): Promise<void> {
  const k = run.knex;
  const byIndex = new Map(partners.map((p) => [p.partner_index, p]));
  const codes = input.partnerCoupons.filter((c) => c.partnerIndex !== null && byIndex.has(c.partnerIndex))
    .map((c) => ({ shop_id: input.shopId, partner_id: byIndex.get(c.partnerIndex)!.id, code: c.code, created_at: c.createdAt }));
  if (codes.length) await run.rows(k('affiliate_discount_codes').insert(codes).onConflict(['shop_id', 'code']).ignore());
  const rng = createRandom(input.shopSeed, 'affiliate-code-requests', input.shop.code);
  const at = (daysBeforeEnd: number) => new Date(input.historyEndMs - daysBeforeEnd * DAY_MS - rng.int(0, 20) * HOUR_MS);
  const requests = [
    { index: 1, code: `${PARTNER_HANDLES[1]}VIP`, state: 'approved', reason: null, requested: at(80), decidedAfterDays: 2 },
    { index: 3, code: 'ZADARMO100', state: 'rejected', reason: 'The code reads like a free-goods offer and would mislead shoppers.', requested: at(40), decidedAfterDays: 1 },
    { index: 5, code: `${PARTNER_HANDLES[5]}20`, state: 'pending', reason: null, requested: at(3), decidedAfterDays: null },
    { index: 7, code: `${PARTNER_HANDLES[7]}LETO`, state: 'pending', reason: null, requested: at(1), decidedAfterDays: null },
  ];
  await run.rows(k('affiliate_code_requests').insert(requests.filter((r) => byIndex.has(r.index)).map((r) => ({
    shop_id: input.shopId, partner_id: byIndex.get(r.index)!.id, requested_code: r.code, state: r.state, reason: r.reason, requested_at: r.requested,
    decided_at: r.decidedAfterDays === null ? null : new Date(r.requested.getTime() + r.decidedAfterDays * DAY_MS),
  }))));
}

/** The public portal of a shop. */
async function seedPortal(run: SqlRunner, input: DemoAffiliateInput): Promise<void> {
  const host = new URL(input.shop.baseUrl).hostname.replace(/^www\./, '');
  const open = input.shop.code !== 'pl';
  const updated = new Date(input.windowStartMs);
  await run.rows(run.knex('affiliate_portals').insert({
    shop_id: input.shopId, address: `https://partners.${host}`, custom_domain: input.shop.code === 'sk' ? `partneri.${host}` : null,
    custom_domain_status: input.shop.code === 'sk' ? 'active' : null, registration_open: open,
    registration_closed_reason: open ? null : 'Registration is paused while the programme terms are translated.',
    contact_name: 'Partner care', contact_email: `partners@${host}`,
    appearance: JSON.stringify({ primaryColour: '#0B6E4F', accentColour: '#F2A541', logo: `${input.shop.baseUrl}/logo.svg` }),
    texts: JSON.stringify(['login', 'register', 'dashboard', 'privacy_notice', 'programme_description'].flatMap((page) => [
      { language: input.shop.language, page, status: page === 'privacy_notice' && !open ? 'draft' : 'published' },
      { language: 'en', page, status: page === 'programme_description' ? 'default' : 'published' },
    ])),
    updated_at: updated,
  }).onConflict('shop_id').ignore());
}

/**
 * The demo's shoppers as the service's tracking meets them (AM1): each visit is a click on the partner's tracked link
 * and each order the thank-you page's beacon, recorded by the same functions the `/r/` and `/b` endpoints call, so
 * their rules (keyed hashes, approved partners and available campaigns only, the flood rule, attribution) hold for the
 * demo too. A shopper is an invented address and browser drawn from the shop's seed; their hashes use a key derived
 * from that seed (nothing real to protect, and the loader runs without SECRETS_KEY).
 */
interface DemoShopper { handle: string; campaignId: string; at: number; visitor: string; target: string }

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; SM-A546B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:132.0) Gecko/20100101 Firefox/132.0',
];

async function trackedShop(run: SqlRunner, shopId: string, seed: number): Promise<{ shop: PortalShop; key: Buffer }> {
  const [row] = await run.rows<{ account_id: string; base_url: string }>(run.knex('shops').where({ id: shopId }).select('account_id', 'base_url'));
  return { shop: { shopId, accountId: String(row.account_id), baseUrl: row.base_url }, key: crypto.createHmac('sha256', `demo-shoppers:${seed}`).update('affiliate-tracking').digest() };
}

/** Follows the shoppers' tracked links (their own address, browser and cookie); the outcomes in the same order. */
async function followLinks(run: SqlRunner, tracked: { shop: PortalShop; key: Buffer }, seed: number, shoppers: DemoShopper[]): Promise<ClickOutcome[]> {
  const outcomes: ClickOutcome[] = [];
  for (let i = 0; i < shoppers.length; i += 2000) {
    outcomes.push(...await recordClicks(run, tracked.shop, tracked.key, shoppers.slice(i, i + 2000).map((s) => {
      const rng = createRandom(seed, 'affiliate-shopper', s.visitor);
      return {
        handle: s.handle, campaignId: s.campaignId, to: new URL(s.target, tracked.shop.baseUrl).toString(), now: new Date(s.at), visitorId: s.visitor,
        ip: `10.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`, userAgent: rng.pick(USER_AGENTS),
      };
    })));
  }
  return outcomes;
}

/** Where a shopper's link points: the home page, a product or a category of the shop (as partners link them). */
async function linkTargets(run: SqlRunner, shopId: string): Promise<{ product: string[]; category: string[] }> {
  const k = run.knex;
  const products = await run.rows<{ code: string }>(k('products').where({ shop_id: shopId }).orderBy('code').limit(40).select('code'));
  const categories = await run.rows<{ guid: string }>(k('categories').where({ shop_id: shopId }).orderBy('guid').limit(20).select('guid'));
  return { product: products.map((p) => `/product/${encodeURIComponent(p.code)}`), category: categories.map((c) => `/category/${encodeURIComponent(c.guid)}`) };
}

function targetPath(targets: { product: string[]; category: string[] }, type: 'home' | 'product' | 'category', rng: ReturnType<typeof createRandom>): string {
  const list = type === 'home' ? [] : targets[type];
  return list.length ? rng.pick(list) : '/';
}

/** A shop's noise: clicks on partners' links that did not lead to an order (some days none). */
async function seedBrowsingClicks(run: SqlRunner, input: DemoAffiliateInput, partners: Array<PartnerRef & { handle: string }>, campaigns: CampaignRef[]): Promise<void> {
  const shoppers: DemoShopper[] = [];
  const active = partners.filter((p) => p.partner_index !== null && p.state !== 'waiting');
  const startDay = Math.floor(input.windowStartMs / DAY_MS);
  const endDay = Math.floor(input.historyEndMs / DAY_MS);
  for (let day = startDay; day <= endDay; day++) {
    for (const p of active) {
      if (p.registered_at.getTime() > day * DAY_MS) continue;
      const rng = createRandom(input.shopSeed, 'affiliate-browsing', input.shop.code, day, p.partner_index!);
      const n = rng.int(0, 3);
      for (let i = 0; i < n; i++) {
        const at = day * DAY_MS + rng.int(0, DAY_MS - 1);
        if (at > input.historyEndMs) continue;
        const campaign = TOP_PARTNER_INDEXES.includes(p.partner_index!) && rng.chance(0.5) ? campaigns[1] : campaigns[0];
        shoppers.push({ handle: p.handle, campaignId: String(campaign.id), at, visitor: rng.hex(8), target: '/' });
      }
    }
  }
  // A suspended partner's links record nothing now (A8), so the suspended partner has no clicks in the history either.
  await followLinks(run, await trackedShop(run, input.shopId, input.shopSeed), input.shopSeed, shoppers);
}

/**
 * The shoppers of these orders: a few came through a partner's tracked link (the click, then the thank-you page's
 * beacon with the click's token). Some clicks are older than the campaign's window, so they do not attribute. Orders
 * with a partner code are left out (the code attributes them), and so are orders whose beacon was already recorded
 * (an order the sync reads again after a change).
 */
export async function simulateDemoVisits(
  run: SqlRunner, shop: { id: string; code: string; seed: number }, orders: Array<{ code: string; created_at: Date; coupon_code: string | null }>,
): Promise<void> {
  const k = run.knex;
  const partners = await run.rows<PartnerRef & { handle: string }>(k('affiliate_partners as p').join('shops as s', 's.account_id', 'p.account_id')
    .where('s.id', shop.id).whereNotNull('p.partner_index').where('p.state', 'approved')
    .select('p.id', 'p.partner_index', 'p.state', 'p.registered_at', 'p.handle').orderBy('p.partner_index'));
  const campaigns = await run.rows<CampaignRef & { is_default: boolean }>(k('affiliate_campaigns').where({ shop_id: shop.id, enabled: true }).orderBy('id')
    .select('id', 'attribution_window_days', 'availability', 'enabled', 'is_default'));
  if (!partners.length || !campaigns.length || !orders.length) return;
  const codes = new Set((await run.rows<{ code: string }>(k('affiliate_discount_codes').where({ shop_id: shop.id }).select('code'))).map((r) => r.code));
  const beaconed = new Set((await run.rows<{ order_code: string }>(k('affiliate_order_visitors').where({ shop_id: shop.id })
    .whereRaw('order_code = any(?::text[])', [orders.map((o) => o.code)]).select('order_code'))).map((r) => r.order_code));
  const shoppers: Array<DemoShopper & { type: 'home' | 'product' | 'category'; code: string }> = [];
  const placed: Array<{ code: string; at: Date }> = [];
  for (const o of orders) {
    if (o.coupon_code !== null && codes.has(o.coupon_code)) continue;
    if (beaconed.has(o.code)) continue;
    const rng = createRandom(shop.seed, 'affiliate-visit', shop.code, o.code);
    if (!rng.chance(CLICK_ORDER_SHARE)) continue;
    const orderedMs = o.created_at.getTime();
    const eligible = partners.filter((p) => p.registered_at.getTime() < orderedMs);
    if (!eligible.length) continue;
    const partner = rng.pick(eligible);
    const campaign = TOP_PARTNER_INDEXES.includes(partner.partner_index!) && campaigns.length > 1 && rng.chance(0.5) ? campaigns[1] : campaigns[0];
    // Mostly within the window; about one in six clicks is older, and so attributes nothing.
    const gapMs = Math.round(rng.float(0.02, campaign.attribution_window_days * 1.2) * DAY_MS);
    const visitor = rng.hex(8);
    const type = rng.pick(['home', 'product', 'category'] as const);
    shoppers.push({ handle: partner.handle, campaignId: String(campaign.id), at: orderedMs - gapMs, visitor, target: '/', type, code: o.code });
    placed.push({ code: o.code, at: o.created_at });
  }
  if (!shoppers.length) return;
  // Most sync batches have no visit: the shop's products and categories are read only when one does.
  const targets = await linkTargets(run, shop.id);
  for (const s of shoppers) s.target = targetPath(targets, s.type, createRandom(shop.seed, 'affiliate-visit-target', shop.code, s.code));
  const tracked = await trackedShop(run, shop.id, shop.seed);
  const clicks = await followLinks(run, tracked, shop.seed, shoppers);
  // The thank-you page hands back the order and the click the shop received with the shopper.
  await recordBeacons(run, tracked.shop, placed.map((p, i) => {
    const click = clicks[i];
    return { orderCode: p.code, clickToken: click.kind === 'redirect' ? click.clickToken ?? undefined : undefined, visitorId: shoppers[i].visitor, now: p.at };
  }));
}

/** Seeds a freshly loaded demo shop's part of the programme (and the account's, once) and simulates its history's visits. */
export async function seedDemoAffiliateShop(run: SqlRunner, input: DemoAffiliateInput): Promise<void> {
  const partners = await ensureAccountProgramme(run, input);
  const content = { accountId: input.accountId, accountCode: input.accountCode, seed: input.seed, windowStartMs: input.windowStartMs, historyEndMs: input.historyEndMs };
  await ensureDemoContent(run, content);
  // Partners register (and sign the agreement) on the home shop's portal.
  if (input.shop.code === SIGNING_SHOP) await seedDemoSignatures(run, { ...content, shopId: input.shopId, shopName: input.shop.name, shopUrl: input.shop.baseUrl });
  await seedPortal(run, input);
  const campaigns = await seedCampaigns(run, input, partners);
  await seedCodes(run, input, partners);
  await seedBrowsingClicks(run, input, partners, campaigns);
  const k = run.knex;
  const shop = { id: input.shopId, code: input.shop.code, seed: input.shopSeed };
  for (let after = '0'; ;) {
    const orders = await run.rows<{ id: string; code: string; created_at: Date; coupon_code: string | null }>(k('orders').where({ shop_id: input.shopId })
      .where('id', '>', after).orderBy('id').limit(50_000).select('id', 'code', 'created_at', 'coupon_code'));
    if (!orders.length) break;
    await simulateDemoVisits(run, shop, orders);
    after = String(orders[orders.length - 1].id);
  }
}
