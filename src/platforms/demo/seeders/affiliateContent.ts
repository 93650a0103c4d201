/**
 * The demo programme's content (account level): help articles, partner e-mail templates, legal documents with versions
 * per language, and the partners' electronic signatures. Texts keep their `{{variables}}` unsubstituted; a signature
 * stores the text as signed, with the values filled in and a snapshot of them.
 */
import crypto from 'node:crypto';
import { createRandom } from '../random.js';
import type { SqlRunner } from '../../../affiliate/sql.js';
import { ARTICLES, CONTENT_LANGUAGES, renderText } from '../../../affiliate/content.js';
import { DEMO_PROGRAMME } from './affiliateProgramme.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** The second version of the partner agreement is published this many days into the history window. */
const AGREEMENT_V2_DAY = 200;
/** Partners who signed version 1 and signed version 2 again once it was published. */
const RESIGNED_INDEXES = [0, 1, 2];

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

const EMAIL_EVENTS: Array<{ event: string; enabled: boolean; subject: Record<string, string>; body: Record<string, string> }> = [
  { event: 'account_approved', enabled: true, subject: { sk: 'Váš účet v programe {{programme.name}} je schválený', en: 'Your {{programme.name}} account is approved' },
    body: { sk: '<p>Dobrý deň {{partner.name}}, vitajte! Váš odkaz: {{partner.link}}</p>', en: '<p>Hello {{partner.name}}, welcome! Your link: {{partner.link}}</p>' } },
  { event: 'account_rejected', enabled: true, subject: { sk: 'Vaša registrácia do programu {{programme.name}}', en: 'Your {{programme.name}} application' },
    body: { sk: '<p>Dobrý deň {{partner.name}}, registráciu sme nemohli schváliť.</p>', en: '<p>Hello {{partner.name}}, we could not approve your application.</p>' } },
  { event: 'conversion_approved', enabled: false, subject: { sk: 'Nová schválená provízia', en: 'A commission was approved' },
    body: { sk: '<p>Provízia {{conversion.commission}} bola schválená.</p>', en: '<p>A commission of {{conversion.commission}} was approved.</p>' } },
  { event: 'payout_paid', enabled: true, subject: { sk: 'Vyplatili sme {{payout.amount}}', en: 'We paid {{payout.amount}}' },
    body: { sk: '<p>Výplata {{payout.amount}} odišla {{date}}.</p>', en: '<p>The payout of {{payout.amount}} was sent on {{date}}.</p>' } },
  { event: 'code_request_decided', enabled: true, subject: { sk: 'Rozhodnutie o vašom kóde', en: 'About your code request' },
    body: { sk: '<p>Vaša žiadosť o kód bola vybavená.</p>', en: '<p>Your code request was decided.</p>' } },
];

const AGREEMENT_TEXT: Record<string, string[]> = {
  sk: [
    'Zmluva o partnerskom programe {{programme.name}} medzi prevádzkovateľom obchodu {{shop.name}} a partnerom {{partner.handle}}. Provízia {{programme.commission_percent}} %.',
    'Zmluva o partnerskom programe {{programme.name}} (verzia 2) medzi prevádzkovateľom obchodu {{shop.name}} a partnerom {{partner.handle}}. Provízia {{programme.commission_percent}} %, klik platí {{programme.click_window_days}} dní, výplata od {{programme.payout_minimum}}.',
    'Zmluva o partnerskom programe {{programme.name}} (verzia 3, návrh) – doplnené pravidlá propagácie značky {{shop.name}}.',
  ],
  en: ['Partner programme agreement {{programme.name}} between {{shop.name}} and partner {{partner.handle}}. Commission {{programme.commission_percent}} %.'],
};

interface ContentInput { accountId: string; accountCode: string; seed: number; windowStartMs: number; historyEndMs: number }

/** Articles, e-mail templates and documents with their versions; once per account (concurrent loads insert them once). */
export async function ensureDemoContent(run: SqlRunner, input: ContentInput): Promise<void> {
  const k = run.knex;
  const created = new Date(input.windowStartMs - 10 * DAY_MS);
  await run.rows(k('affiliate_articles').insert(ARTICLES.map((a, i) => ({
    account_id: input.accountId, key: a.key, is_default: a.isDefault, enabled: a.enabled, position: i + 1, updated_at: created,
    translations: JSON.stringify(Object.fromEntries(CONTENT_LANGUAGES.map((lang) => [lang, {
      title: a.titles[lang], slug: a.key, html: a.html[lang], status: a.custom?.includes(lang) ? 'custom' : a.isDefault ? 'default' : 'missing',
    }]))),
  }))).onConflict(['account_id', 'key']).ignore());
  await run.rows(k('affiliate_email_templates').insert(EMAIL_EVENTS.flatMap((e) => CONTENT_LANGUAGES.map((lang) => ({
    account_id: input.accountId, event: e.event, language: lang, subject: e.subject[lang], body_html: e.body[lang], enabled: e.enabled,
    customised: e.event === 'account_approved' && lang === 'sk', updated_at: created,
  })))).onConflict(['account_id', 'event', 'language']).ignore());
  await run.rows(k('affiliate_documents').insert([
    { account_id: input.accountId, key: 'partner-agreement', title: 'Partner agreement', applies_to: 'all_partners', confirm_when: 'registration', signed_copy: true, email_attachment: true, enabled: true },
    { account_id: input.accountId, key: 'privacy-notice', title: 'Privacy notice for partners', applies_to: 'all_partners', confirm_when: 'never', signed_copy: false, email_attachment: false, enabled: true },
    { account_id: input.accountId, key: 'code-of-conduct', title: 'Influencer code of conduct', applies_to: 'influencers', confirm_when: 'first_payout', signed_copy: false, email_attachment: false, enabled: false },
  ]).onConflict(['account_id', 'key']).ignore());
  const docs = new Map((await run.rows<{ id: string; key: string }>(k('affiliate_documents').where({ account_id: input.accountId }).select('id', 'key'))).map((d) => [d.key, d.id]));
  const v2Ms = input.windowStartMs + AGREEMENT_V2_DAY * DAY_MS;
  const version = (key: string, language: string, n: number, text: string, status: string, createdMs: number, publishedMs: number | null, source: string) => {
    const pdf = status === 'draft' ? null : sha256(`pdf:${key}:${language}:${n}:${text}`);
    return {
      document_id: docs.get(key), language, version: n, status, stored_text: text, public_text: text.replace(/\{\{\s*programme\.name\s*\}\}/g, 'Partner programme'),
      text_sha256: sha256(text), pdf_sha256: pdf, source,
      pdf: JSON.stringify(pdf ? { fileName: `${key}-${language}-v${n}.pdf`, pages: 3 + n, bytes: 48_000 + n * 3_100 + text.length, sha256: pdf } : {}),
      created_at: new Date(createdMs), published_at: publishedMs === null ? null : new Date(publishedMs),
    };
  };
  const start = input.windowStartMs - 10 * DAY_MS;
  await run.rows(k('affiliate_document_versions').insert([
    version('partner-agreement', 'sk', 1, AGREEMENT_TEXT.sk[0], 'superseded', start - DAY_MS, start, 'upload'),
    version('partner-agreement', 'sk', 2, AGREEMENT_TEXT.sk[1], 'published', v2Ms - 3 * DAY_MS, v2Ms, 'upload'),
    version('partner-agreement', 'sk', 3, AGREEMENT_TEXT.sk[2], 'draft', input.historyEndMs - 5 * DAY_MS, null, 'editor'),
    version('partner-agreement', 'en', 1, AGREEMENT_TEXT.en[0], 'published', start - DAY_MS, start, 'upload'),
    version('privacy-notice', 'sk', 1, 'Ochrana osobných údajov partnerov programu {{programme.name}}.', 'published', start - DAY_MS, start, 'editor'),
    version('privacy-notice', 'en', 1, 'Privacy notice for partners of {{programme.name}}.', 'published', start - DAY_MS, start, 'editor'),
    version('code-of-conduct', 'sk', 1, 'Kódex influencera: označujte spoluprácu so {{shop.name}}.', 'draft', input.historyEndMs - 30 * DAY_MS, null, 'editor'),
  ]).onConflict(['document_id', 'language', 'version']).ignore());
}

/**
 * The partners' signatures of the partner agreement, made on the home shop's portal: each partner signed the version
 * current at registration (in Slovak); three early partners signed version 2 again; the partner waiting for approval has
 * not signed yet. Inserted once per partner and version.
 */
export async function seedDemoSignatures(run: SqlRunner, input: ContentInput & { shopId: string; shopName: string; shopUrl: string }): Promise<void> {
  const k = run.knex;
  const versions = await run.rows<{ id: string; document_id: string; version: number; stored_text: string; text_sha256: string; pdf_sha256: string | null; published_at: Date | null }>(
    k('affiliate_document_versions as v').join('affiliate_documents as d', 'd.id', 'v.document_id')
      .where({ 'd.account_id': input.accountId, 'd.key': 'partner-agreement', 'v.language': 'sk' }).whereNotNull('v.published_at')
      .select('v.id', 'v.document_id', 'v.version', 'v.stored_text', 'v.text_sha256', 'v.pdf_sha256', 'v.published_at').orderBy('v.version'),
  );
  const partners = await run.rows<{ id: string; handle: string; partner_index: number | null; state: string; registered_at: Date }>(k('affiliate_partners')
    .where({ account_id: input.accountId }).whereNotNull('partner_index').whereNot('state', 'waiting').orderBy('partner_index')
    .select('id', 'handle', 'partner_index', 'state', 'registered_at'));
  const rows: Record<string, unknown>[] = [];
  const sign = (p: (typeof partners)[number], v: (typeof versions)[number], atMs: number) => {
    const rng = createRandom(input.seed, 'affiliate-signature', input.accountCode, p.handle, v.version);
    const values: Record<string, string> = {
      'partner.handle': p.handle, 'programme.name': 'Partner programme', 'programme.commission_percent': String(DEMO_PROGRAMME.defaultCommissionPercent),
      'programme.click_window_days': String(DEMO_PROGRAMME.clickWindowDays), 'programme.payout_minimum': `${DEMO_PROGRAMME.payoutMinimumEur}.00 EUR`,
      'shop.name': input.shopName, 'shop.url': input.shopUrl, date: new Date(atMs).toISOString().slice(0, 10),
    };
    rows.push({
      account_id: input.accountId, partner_id: p.id, document_id: v.document_id, version_id: v.id, version: v.version, language: 'sk', shop_id: input.shopId,
      signed_at: new Date(atMs), method: rng.chance(0.7) ? 'click_wrap' : 'typed_name', verification: rng.chance(0.8) ? 'email_link' : 'sms_code',
      text_sha256: v.text_sha256, pdf_sha256: v.pdf_sha256, state: 'valid', signed_text: renderText(v.stored_text, values), values_snapshot: JSON.stringify(values),
    });
  };
  for (const p of partners) {
    const atMs = p.registered_at.getTime() + 2 * HOUR_MS;
    const current = [...versions].reverse().find((v) => v.published_at!.getTime() <= atMs) ?? versions[0];
    sign(p, current, atMs);
    const latest = versions[versions.length - 1];
    if (current !== latest && RESIGNED_INDEXES.includes(p.partner_index!)) sign(p, latest, latest.published_at!.getTime() + (3 + p.partner_index!) * DAY_MS);
  }
  // Seeded by the home shop's load transaction alone, once: a signature already there (a retried load) is kept as it is.
  const existing = await run.rows<{ partner_id: string; version_id: string }>(k('affiliate_signatures').where({ account_id: input.accountId }).select('partner_id', 'version_id'));
  const signed = new Set(existing.map((e) => `${e.partner_id}/${e.version_id}`));
  const fresh = rows.filter((r) => !signed.has(`${r.partner_id}/${r.version_id}`));
  if (fresh.length) await run.rows(k('affiliate_signatures').insert(fresh));
}
