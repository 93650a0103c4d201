/**
 * A partner portal as its pages see it (issue 24 point 2): the shop it belongs to (by the request's Host, or the
 * development prefix `/portal/<account>/<shop>` — the same lookups as the tracked links), its registration openness,
 * its page texts (a published custom text edited over MCP, else the built-in wording) and help articles, with the
 * registry's `{{variables}}` filled in. Stored texts are sanitised when written (AW6); values are escaped here.
 */
import type { Db } from '../../db/knex.js';
import { CONTENT_LANGUAGES, renderText } from '../content.js';
import { portalShopByHost, portalShopByPath, type PortalShop } from '../tracking/clicks.js';
import { variableValues, type PartnerForEmail } from '../writes/emails.js';

export type PortalLanguage = (typeof CONTENT_LANGUAGES)[number];

export interface Portal extends PortalShop {
  shopCode: string;
  shopName: string;
  accountCode: string;
  /** The language a visitor gets before choosing one: the shop's, when the programme has it, else English. */
  defaultLanguage: PortalLanguage;
  registrationOpen: boolean;
  registrationClosedReason: string | null;
  texts: Array<{ language: string; page: string; status: string; html?: string }>;
}

export function isPortalLanguage(value: unknown): value is PortalLanguage {
  return typeof value === 'string' && (CONTENT_LANGUAGES as readonly string[]).includes(value);
}

async function withDetails(db: Db, shop: PortalShop | null): Promise<Portal | null> {
  if (!shop) return null;
  const row = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').join('affiliate_portals as p', 'p.shop_id', 's.id')
    .where('s.id', shop.shopId).whereNull('s.removed_at')
    .first('s.code', 's.name', 's.language', 'a.code as account_code', 'p.registration_open', 'p.registration_closed_reason', 'p.texts');
  if (!row) return null;
  return {
    ...shop, shopCode: row.code, shopName: row.name, accountCode: row.account_code, defaultLanguage: isPortalLanguage(row.language) ? row.language : 'en',
    registrationOpen: row.registration_open, registrationClosedReason: row.registration_closed_reason, texts: row.texts,
  };
}

/** The portal answering at `host` (its address, or its active custom domain); none when no or two portals share it. */
export async function portalByHost(db: Db, host: string): Promise<Portal | null> {
  return withDetails(db, await portalShopByHost(db, host));
}

/** The portal of the development prefix `/portal/<account>/<shop>`. */
export async function portalByPath(db: Db, accountCode: string, shopCode: string): Promise<Portal | null> {
  return withDetails(db, await portalShopByPath(db, accountCode, shopCode));
}

/** The pages whose texts the programme edits (`affiliate_portal_pages_update`), with the built-in wording per language. */
const DEFAULT_PAGE_TEXTS: Record<string, Record<PortalLanguage, string>> = {
  programme_description: {
    sk: '<p>Odporúčajte obchod {{shop.name}} a získajte {{programme.commission_percent}} % z hodnoty tovaru bez DPH za každú objednávku. Klik platí {{programme.click_window_days}} dní.</p>',
    en: '<p>Recommend {{shop.name}} and earn {{programme.commission_percent}} % of the goods without VAT of every order. A click counts for {{programme.click_window_days}} days.</p>',
  },
  register: {
    sk: '<p>Registrácia do programu {{programme.name}}. Po overení e-mailu a schválení dostanete svoj odkaz.</p>',
    en: '<p>Join {{programme.name}}. Once your e-mail is verified and your account approved, you get your link.</p>',
  },
  login: { sk: '<p>Prihláste sa do programu {{programme.name}}.</p>', en: '<p>Sign in to {{programme.name}}.</p>' },
  dashboard: { sk: '<p>Výplaty od {{programme.payout_minimum}} mesačne.</p>', en: '<p>Payouts monthly from {{programme.payout_minimum}}.</p>' },
  privacy_notice: {
    sk: '<p>Vaše údaje spracúvame na účely partnerského programu {{programme.name}} obchodu {{shop.name}}.</p>',
    en: '<p>We process your data for the partner programme {{programme.name}} of {{shop.name}}.</p>',
  },
};

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Variable values for the portal's texts, HTML-escaped (they go into sanitised HTML). */
export async function portalValues(db: Db, portal: Portal, partner: PartnerForEmail | null, now: Date): Promise<Record<string, string>> {
  const values = await variableValues(db, portal.accountId, { id: portal.shopId, name: portal.shopName }, partner, now, {});
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, escapeHtml(v)]));
}

/** A page's text in a language: the published custom text, else the built-in wording; variables filled in. */
export function pageHtml(portal: Portal, page: keyof typeof DEFAULT_PAGE_TEXTS, language: PortalLanguage, values: Record<string, string>): string {
  const custom = portal.texts.find((t) => t.page === page && t.language === language && t.status === 'published' && t.html !== undefined);
  return renderText(custom?.html ?? DEFAULT_PAGE_TEXTS[page][language], values);
}

/** The enabled help articles in a language (titles escaped by the view, bodies sanitised when stored), in their order. */
export async function portalArticles(db: Db, accountId: string, language: PortalLanguage, values: Record<string, string>) {
  const rows = await db('affiliate_articles').where({ account_id: accountId, enabled: true }).orderBy('position').select('key', 'translations');
  return rows.flatMap((r) => {
    const tr = (r.translations as Record<string, { title: string; html: string; status: string }>)[language];
    if (!tr || tr.status === 'missing') return [];
    return [{ key: r.key as string, title: renderText(tr.title, Object.fromEntries(Object.entries(values))), html: renderText(tr.html, values) }];
  });
}
