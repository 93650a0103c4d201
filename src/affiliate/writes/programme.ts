/**
 * Writes of the programme's own records over MCP: non-financial settings, portal page texts, help articles (never
 * deleted), partner e-mail templates, campaigns (a reward is never invented) and the document policy. Texts are
 * sanitised before they are stored and every answer names the variables the registry does not know.
 */
import type { Db } from '../../db/knex.js';
import type { Caller, ShopRef } from '../../capabilities/context.js';
import { AppError } from '../../errors.js';
import { getArticle, listDocuments, listEmailTemplates } from '../../queries/affiliateContent.js';
import { getCampaign, getProgrammeSettings, listPortals } from '../../queries/affiliate.js';
import { CONTENT_LANGUAGES, defaultArticleWording } from '../content.js';
import { plainText, sanitiseHtml, variableReport, type VariableReport } from './text.js';

/** Settings that touch money or attribution: read over REST and MCP, changed only by a person in the application (SPEC "Not available over MCP"). */
export const FINANCIAL_SETTINGS = ['commissions', 'commissionBase', 'defaultCommissionPercent', 'clicks', 'payouts', 'referrals'] as const;

export interface SettingsInput {
  name?: string;
  autoApprovePartners?: boolean;
  contactPerson?: { name?: string | null; email?: string | null };
  colours?: Record<string, string>;
  privacyPolicyUrl?: string | null;
  registration?: Array<{ shop: string; open: boolean; closedReason?: string }>;
}

/** The refusal of financial settings, which are never changed over MCP (they are not parameters at all). */
export function financialSettingsRefused(financial: string[]): AppError {
  return new AppError('FINANCIAL_SETTING_READ_ONLY', `${financial.map((f) => `\`${f}\``).join(', ')} ${financial.length > 1 ? 'are financial settings' : 'is a financial setting'}: never changed over MCP. A person changes it in the application; nothing was changed.`,
    { params: financial });
}

/** Non-financial programme settings (financial ones never reach here: see financialSettingsRefused). */
export async function updateSettings(db: Db, caller: Caller, now: Date, input: SettingsInput) {
  const accountId = caller.account.id;
  const changes: Record<string, unknown> = {};
  if (input.name !== undefined) changes.name = plainText(input.name).text;
  if (input.autoApprovePartners !== undefined) changes.auto_approve_partners = input.autoApprovePartners;
  if (input.contactPerson?.name !== undefined) changes.contact_name = input.contactPerson.name;
  if (input.contactPerson?.email !== undefined) changes.contact_email = input.contactPerson.email;
  if (input.colours !== undefined) changes.colours = JSON.stringify(input.colours);
  if (input.privacyPolicyUrl !== undefined) changes.privacy_policy_url = input.privacyPolicyUrl;
  if (!Object.keys(changes).length && !input.registration?.length) {
    throw new AppError('MISSING_PARAMETER', 'Name at least one setting to change.', { param: 'name' });
  }
  for (const r of input.registration ?? []) {
    if (caller.shopCodes && !caller.shopCodes.has(r.shop)) throw new AppError('SHOP_FORBIDDEN', `This credential may not change shop \`${r.shop}\`.`, { param: 'registration', market: r.shop });
    if (!r.open && !r.closedReason?.trim()) throw new AppError('MISSING_PARAMETER', `Closing registration on \`${r.shop}\` needs \`closedReason\` (the portal shows it).`, { param: 'registration.closedReason' });
  }
  await db.transaction(async (trx) => {
    const programme = await trx('affiliate_programmes').where({ account_id: accountId }).forUpdate().first('account_id');
    if (!programme) throw new AppError('NOT_FOUND', 'The account runs no affiliate programme.', {});
    if (Object.keys(changes).length) await trx('affiliate_programmes').where({ account_id: accountId }).update({ ...changes, updated_at: now });
    for (const r of input.registration ?? []) {
      const shop = await trx('shops').where({ account_id: accountId, code: r.shop }).whereNull('removed_at').first('id');
      if (!shop) throw new AppError('SHOP_NOT_FOUND', `The account has no shop \`${r.shop}\`.`, { param: 'registration', market: r.shop });
      const updated = await trx('affiliate_portals').where({ shop_id: shop.id })
        .update({ registration_open: r.open, registration_closed_reason: r.open ? null : r.closedReason!.trim(), updated_at: now });
      if (!updated) throw new AppError('NOT_FOUND', `Shop \`${r.shop}\` has no partner portal.`, { param: 'registration', market: r.shop });
    }
  });
  const settings = (await getProgrammeSettings(db, accountId))!;
  const codes = (input.registration ?? []).map((r) => r.shop);
  const portals = codes.length ? (await listPortals(db, accountId, new Set(codes))).map((p) => ({ market: p.market, registration: p.registration })) : [];
  return { settings, registration: portals };
}

export const PORTAL_PAGES = ['login', 'register', 'dashboard', 'privacy_notice', 'programme_description'] as const;
type PortalText = { language: string; page: string; status: string; html?: string; updatedAt?: string };

/** One portal page's custom text in one language (published or kept as a draft), or back to the built-in wording. */
export async function updatePortalPage(db: Db, shop: ShopRef, now: Date, input: { language: string; page: string; html?: string; publish?: boolean; restoreDefault?: boolean }) {
  if ((input.html === undefined) === (input.restoreDefault !== true)) {
    throw new AppError('INVALID_PARAMETER_COMBINATION', 'Give either `html` (the custom text) or `restoreDefault: true`.', { params: ['html', 'restoreDefault'] });
  }
  const clean = input.html !== undefined ? sanitiseHtml(input.html) : null;
  await db.transaction(async (trx) => {
    const portal = await trx('affiliate_portals').where({ shop_id: shop.id }).forUpdate().first('texts');
    if (!portal) throw new AppError('NOT_FOUND', 'This shop has no partner portal.', { param: 'market' });
    const texts = (portal.texts as PortalText[]).filter((t) => !(t.language === input.language && t.page === input.page));
    texts.push(clean
      ? { language: input.language, page: input.page, status: input.publish === false ? 'draft' : 'published', html: clean.html, updatedAt: now.toISOString() }
      : { language: input.language, page: input.page, status: 'default', updatedAt: now.toISOString() });
    await trx('affiliate_portals').where({ shop_id: shop.id }).update({ texts: JSON.stringify(texts), updated_at: now });
  });
  return {
    market: shop.code, language: input.language, page: input.page, status: (clean ? (input.publish === false ? 'draft' : 'published') : 'default') as 'draft' | 'published' | 'default',
    html: clean?.html ?? null, sanitised: clean?.changed ?? false, ...variableReport('portal', clean?.html), updatedAt: now.toISOString(),
  };
}

type Translation = { title: string; slug: string; html: string; status: 'default' | 'custom' | 'missing' };
export interface ArticleTranslationInput { title: string; slug: string; html: string }

function articleReport(translations: Record<string, Translation>): VariableReport & { sanitised?: boolean } {
  return variableReport('articles', ...Object.values(translations).flatMap((t) => [t.title, t.html]));
}

/** A custom help article in every programme language at once, appended at the end of the list. */
export async function createArticle(db: Db, accountId: string, now: Date, input: { key: string; translations: Record<string, ArticleTranslationInput>; enabled?: boolean }) {
  const missing = CONTENT_LANGUAGES.filter((l) => !input.translations[l]);
  if (missing.length) throw new AppError('MISSING_PARAMETER', `An article is created in all languages at once; missing ${missing.map((l) => `\`${l}\``).join(', ')}.`, { param: `translations.${missing[0]}` });
  let sanitised = false;
  const translations: Record<string, Translation> = {};
  for (const lang of CONTENT_LANGUAGES) {
    const t = input.translations[lang];
    const html = sanitiseHtml(t.html);
    const title = plainText(t.title);
    sanitised ||= html.changed || title.changed;
    translations[lang] = { title: title.text, slug: t.slug, html: html.html, status: 'custom' };
  }
  const exists = () => new AppError('ALREADY_EXISTS', `An article \`${input.key}\` exists already; change it with affiliate_articles_update.`, { param: 'key' });
  try {
    await db.transaction(async (trx) => {
      if (await trx('affiliate_articles').where({ account_id: accountId, key: input.key }).first('id')) throw exists();
      const { max } = (await trx('affiliate_articles').where({ account_id: accountId }).max<{ max: number | null }>('position as max').first())!;
      await trx('affiliate_articles').insert({ account_id: accountId, key: input.key, is_default: false, enabled: input.enabled ?? true, position: (max ?? 0) + 1,
        translations: JSON.stringify(translations), updated_at: now });
    });
  } catch (error) {
    // Two creations of one key at once: the unique index lets one in; the other is told what the check above says.
    if ((error as { code?: string }).code === '23505') throw exists();
    throw error;
  }
  return { article: (await getArticle(db, accountId, input.key, undefined))!, sanitised, ...articleReport(translations) };
}

/** Edits one language of an article (title, slug, body) or restores a default article's built-in wording there. */
export async function updateArticle(db: Db, accountId: string, now: Date, input: { key: string; language: string; title?: string; slug?: string; html?: string; restoreDefault?: boolean }) {
  const editing = input.title !== undefined || input.slug !== undefined || input.html !== undefined;
  if (editing === (input.restoreDefault === true)) {
    throw new AppError('INVALID_PARAMETER_COMBINATION', 'Give `title`, `slug` or `html` to edit, or `restoreDefault: true`, not both and not neither.', { params: ['title', 'slug', 'html', 'restoreDefault'] });
  }
  let sanitised = false;
  let translation: Translation | null = null;
  await db.transaction(async (trx) => {
    const row = await trx('affiliate_articles').where({ account_id: accountId, key: input.key }).forUpdate().first('id', 'is_default', 'translations');
    if (!row) throw new AppError('NOT_FOUND', `No help article \`${input.key}\`.`, { param: 'key' });
    const translations = row.translations as Record<string, Translation>;
    const current = translations[input.language] ?? { title: '', slug: input.key, html: '', status: 'missing' as const };
    if (input.restoreDefault) {
      const wording = row.is_default ? defaultArticleWording(input.key, input.language) : null;
      if (!wording) throw new AppError('STATE_CONFLICT', `Article \`${input.key}\` is custom: it has no default wording in \`${input.language}\` to restore.`, { state: 'custom' });
      translation = { ...wording, status: 'default' };
    } else {
      const html = input.html !== undefined ? sanitiseHtml(input.html) : null;
      const title = input.title !== undefined ? plainText(input.title) : null;
      sanitised = Boolean(html?.changed || title?.changed);
      translation = { title: title?.text ?? current.title, slug: input.slug ?? current.slug, html: html?.html ?? current.html, status: 'custom' };
    }
    translations[input.language] = translation;
    await trx('affiliate_articles').where({ id: row.id }).update({ translations: JSON.stringify(translations), updated_at: now });
  });
  const t = translation as unknown as Translation;
  return { article: (await getArticle(db, accountId, input.key, input.language))!, sanitised, ...variableReport('articles', t.title, t.html) };
}

/** Enables or disables an article in all languages; nothing is ever deleted (a default article is only disabled). */
export async function setArticleState(db: Db, accountId: string, now: Date, input: { key: string; enabled: boolean }) {
  const updated = await db('affiliate_articles').where({ account_id: accountId, key: input.key }).update({ enabled: input.enabled, updated_at: now });
  if (!updated) throw new AppError('NOT_FOUND', `No help article \`${input.key}\`.`, { param: 'key' });
  return { article: (await getArticle(db, accountId, input.key, undefined))! };
}

/** Edits one language of a partner e-mail template (subject, body) and/or enables or disables the event in all languages. */
export async function updateEmailTemplate(db: Db, accountId: string, now: Date, input: { event: string; language?: string; subject?: string; bodyHtml?: string; enabled?: boolean }) {
  const editing = input.subject !== undefined || input.bodyHtml !== undefined;
  if (!editing && input.enabled === undefined) throw new AppError('MISSING_PARAMETER', 'Give `subject` and/or `bodyHtml` (with `language`), or `enabled`.', { param: 'enabled' });
  if (editing && input.language === undefined) throw new AppError('MISSING_PARAMETER', 'Editing a template needs the `language` it is in.', { param: 'language' });
  const subject = input.subject !== undefined ? plainText(input.subject) : null;
  const body = input.bodyHtml !== undefined ? sanitiseHtml(input.bodyHtml) : null;
  await db.transaction(async (trx) => {
    const rows = await trx('affiliate_email_templates').where({ account_id: accountId, event: input.event }).forUpdate().select('id', 'language');
    if (!rows.length) throw new AppError('NOT_FOUND', `No e-mail template for the event \`${input.event}\`.`, { param: 'event' });
    if (editing) {
      const row = rows.find((r) => r.language === input.language);
      if (!row) throw new AppError('NOT_FOUND', `The event \`${input.event}\` has no template in \`${input.language}\` (it has ${rows.map((r) => `\`${r.language}\``).join(', ')}).`, { param: 'language' });
      await trx('affiliate_email_templates').where({ id: row.id }).update({
        ...(subject ? { subject: subject.text } : {}), ...(body ? { body_html: body.html } : {}), customised: true, updated_at: now,
      });
    }
    if (input.enabled !== undefined) await trx('affiliate_email_templates').where({ account_id: accountId, event: input.event }).update({ enabled: input.enabled, updated_at: now });
  });
  const templates = (await listEmailTemplates(db, accountId)).filter((t) => t.event === input.event && (input.language === undefined || t.language === input.language));
  return {
    templates, sanitised: Boolean(subject?.changed || body?.changed),
    ...variableReport('emails', ...templates.flatMap((t) => [t.subject, t.bodyHtml])),
  };
}

export type Reward = { type: 'percent'; percent: number } | { type: 'fixed'; amount: number };
export interface CampaignInput {
  name?: string;
  reward?: Reward;
  attributionWindowDays?: number;
  availability?: 'all' | 'chosen';
  partnerIds?: string[];
  approval?: 'manual' | 'automatic';
  enabled?: boolean;
  descriptions?: Record<string, string | null>;
}

function rewardColumns(reward: Reward) {
  return reward.type === 'percent'
    ? { reward_type: 'percent', reward_percent: reward.percent, reward_amount: null }
    : { reward_type: 'fixed', reward_percent: null, reward_amount: reward.amount };
}

async function checkPartners(trx: Db, accountId: string, partnerIds: string[]) {
  const found = await trx('affiliate_partners').where({ account_id: accountId }).whereIn('id', partnerIds).pluck('id');
  const unknown = partnerIds.filter((id) => !found.map(String).includes(id));
  if (unknown.length) throw new AppError('NOT_FOUND', `No partner ${unknown.map((id) => `\`${id}\``).join(', ')} in the programme.`, { param: 'partnerIds' });
}

function descriptionsOf(input: Record<string, string | null>, current: Record<string, string>) {
  const out = { ...current };
  let sanitised = false;
  for (const [lang, text] of Object.entries(input)) {
    if (text === null) delete out[lang];
    else {
      const clean = sanitiseHtml(text);
      sanitised ||= clean.changed;
      out[lang] = clean.html;
    }
  }
  return { descriptions: out, sanitised };
}

/** A new campaign on a shop; the reward is always given by the caller (a missing reward is refused, never defaulted). */
export async function createCampaign(db: Db, accountId: string, shop: ShopRef, now: Date, input: CampaignInput & { name: string; reward: Reward }) {
  if (!input.reward) throw new AppError('MISSING_PARAMETER', 'A campaign needs its `reward`; the service never invents one.', { param: 'reward' });
  const availability = input.availability ?? 'all';
  if (availability === 'chosen' && !input.partnerIds?.length) throw new AppError('MISSING_PARAMETER', 'A campaign for chosen partners needs `partnerIds`.', { param: 'partnerIds' });
  if (availability === 'all' && input.partnerIds?.length) throw new AppError('INVALID_PARAMETER_COMBINATION', '`partnerIds` goes only with `availability: chosen`.', { params: ['availability', 'partnerIds'] });
  const { descriptions, sanitised } = descriptionsOf(input.descriptions ?? {}, {});
  const id = await db.transaction(async (trx) => {
    const programme = await trx('affiliate_programmes').where({ account_id: accountId }).first('click_window_days');
    if (!programme) throw new AppError('NOT_FOUND', 'The account runs no affiliate programme.', {});
    if (input.partnerIds?.length) await checkPartners(trx, accountId, input.partnerIds);
    const [row] = await trx('affiliate_campaigns').insert({
      shop_id: shop.id, name: plainText(input.name).text, ...rewardColumns(input.reward), currency: shop.currency,
      // Not a reward: a window left out is the programme's default click window, as in the application.
      attribution_window_days: input.attributionWindowDays ?? programme.click_window_days, availability, approval: input.approval ?? 'manual',
      enabled: input.enabled ?? true, is_default: false, descriptions: JSON.stringify(descriptions), created_at: now,
    }).returning('id');
    if (availability === 'chosen') await trx('affiliate_campaign_partners').insert([...new Set(input.partnerIds!)].map((p) => ({ campaign_id: row.id, partner_id: p })));
    return String(row.id);
  });
  return { campaign: (await getCampaign(db, shop, id))!, sanitised, ...variableReport('portal', ...Object.values(descriptions)) };
}

/** Edits a campaign: name, reward, window, availability (with its partners), approval, enabling, descriptions per language. */
export async function updateCampaign(db: Db, accountId: string, shop: ShopRef, input: CampaignInput & { campaignId: string }) {
  const { campaignId, ...fields } = input;
  if (!Object.values(fields).some((v) => v !== undefined)) throw new AppError('MISSING_PARAMETER', 'Name at least one field to change.', { param: 'name' });
  let sanitised = false;
  let descriptions: Record<string, string> = {};
  await db.transaction(async (trx) => {
    const row = await trx('affiliate_campaigns').where({ shop_id: shop.id, id: campaignId }).forUpdate().first('id', 'availability', 'descriptions');
    if (!row) throw new AppError('NOT_FOUND', `No campaign \`${campaignId}\` in this shop.`, { param: 'campaignId' });
    const availability = input.availability ?? row.availability;
    if (input.partnerIds !== undefined && availability !== 'chosen') throw new AppError('INVALID_PARAMETER_COMBINATION', '`partnerIds` goes only with `availability: chosen`.', { params: ['availability', 'partnerIds'] });
    if (input.availability === 'chosen' && row.availability !== 'chosen' && !input.partnerIds?.length) {
      throw new AppError('MISSING_PARAMETER', 'Switching to chosen partners needs `partnerIds`.', { param: 'partnerIds' });
    }
    const d = descriptionsOf(input.descriptions ?? {}, row.descriptions as Record<string, string>);
    sanitised = d.sanitised;
    descriptions = d.descriptions;
    await trx('affiliate_campaigns').where({ id: row.id }).update({
      ...(input.name !== undefined ? { name: plainText(input.name).text } : {}), ...(input.reward ? rewardColumns(input.reward) : {}),
      ...(input.attributionWindowDays !== undefined ? { attribution_window_days: input.attributionWindowDays } : {}),
      ...(input.availability !== undefined ? { availability: input.availability } : {}), ...(input.approval !== undefined ? { approval: input.approval } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}), descriptions: JSON.stringify(descriptions),
    });
    if (availability === 'all') await trx('affiliate_campaign_partners').where({ campaign_id: row.id }).delete();
    if (input.partnerIds?.length) {
      await checkPartners(trx, accountId, input.partnerIds);
      await trx('affiliate_campaign_partners').where({ campaign_id: row.id }).delete();
      // A list of partners is a set: a partner named twice is in the campaign once (not a duplicate-key 500).
      await trx('affiliate_campaign_partners').insert([...new Set(input.partnerIds)].map((p) => ({ campaign_id: row.id, partner_id: p })));
    }
  });
  return { campaign: (await getCampaign(db, shop, campaignId))!, sanitised, ...variableReport('portal', ...Object.values(descriptions)) };
}

export const DOCUMENT_APPLIES_TO = ['all_partners', 'influencers'] as const;
export const DOCUMENT_CONFIRM_WHEN = ['registration', 'first_payout', 'never'] as const;

/** A programme document's policy; its wording is uploaded by a person in the application, never over MCP. */
export async function updateDocumentPolicy(db: Db, accountId: string, input: { key: string; appliesTo?: string; confirmWhen?: string; signedCopy?: boolean; emailAttachment?: boolean; enabled?: boolean }) {
  const changes = {
    ...(input.appliesTo !== undefined ? { applies_to: input.appliesTo } : {}), ...(input.confirmWhen !== undefined ? { confirm_when: input.confirmWhen } : {}),
    ...(input.signedCopy !== undefined ? { signed_copy: input.signedCopy } : {}), ...(input.emailAttachment !== undefined ? { email_attachment: input.emailAttachment } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
  };
  if (!Object.keys(changes).length) throw new AppError('MISSING_PARAMETER', 'Name at least one policy field to change.', { param: 'enabled' });
  const updated = await db('affiliate_documents').where({ account_id: accountId, key: input.key }).update(changes);
  if (!updated) throw new AppError('NOT_FOUND', `No programme document \`${input.key}\`.`, { param: 'key' });
  return { document: (await listDocuments(db, accountId)).find((d) => d.key === input.key)! };
}
