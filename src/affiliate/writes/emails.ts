/**
 * Partner e-mails of the affiliate writes: the event's template in the partner's language (English, then any, when the
 * partner's language has none), its `{{variables}}` filled from the programme, the shop and the partner, and for the
 * "Account approved" e-mail the documents the document policy attaches, as PDFs. The e-mail is queued in the outbox in the
 * caller's transaction; a disabled event or a partner without an address is recorded as `skipped`, never silently lost.
 */
import type { Knex } from 'knex';
import type { ShopRef } from '../../capabilities/context.js';
import { queueEmail, type EmailAttachmentRef, type EmailStatus } from '../../email/outbox.js';
import { renderText } from '../content.js';
import { htmlBlocks, renderWordingPdf, textBlocks } from '../staff/documentWording.js';

export const PARTNER_EMAIL_EVENTS = ['account_approved', 'account_rejected', 'conversion_approved', 'payout_paid', 'code_request_decided'] as const;
export type PartnerEmailEvent = (typeof PARTNER_EMAIL_EVENTS)[number];

export interface PartnerForEmail {
  id: string;
  handle: string;
  kind: string;
  language: string;
  contact_name: string | null;
  email: string | null;
  web: string | null;
}

/** What a write tool answers about the e-mail it queued (no address: contacts are personal data). */
export interface EmailSummary {
  emailId: string;
  event: string;
  status: EmailStatus;
  language: string | null;
  subject: string;
  /** Why it will not be sent (`skipped`), else null. */
  reason: string | null;
  attachments: Array<Pick<EmailAttachmentRef, 'documentKey' | 'language' | 'version' | 'fileName' | 'kind'>>;
  /** Documents the policy would attach but could not (no published version in the partner's language). */
  notAttached: Array<{ documentKey: string; reason: string }>;
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * Values of the registry's variables for one partner (or, on a partner portal before sign-in, nobody) in one shop;
 * raw text: callers escape them where they go into HTML. E-mails and the partner portal share it.
 */
export async function variableValues(trx: Knex, accountId: string, shop: Pick<ShopRef, 'id' | 'name'>, partner: PartnerForEmail | null, now: Date, extra: Record<string, string>) {
  // One after another: `trx` is often a transaction, one connection, and queries issued on a connection
  // that is still busy (pg 8 queues them with a deprecation warning; pg 9 will not).
  const programme = await trx('affiliate_programmes').where({ account_id: accountId }).first('name', 'default_commission_percent', 'click_window_days', 'payout_minimum_eur', 'return_period_days');
  const shopRow = await trx('shops').where({ id: shop.id }).first('name', 'base_url');
  const portal = await trx('affiliate_portals').where({ shop_id: shop.id }).first('address', 'custom_domain', 'custom_domain_status');
  const code = partner ? await trx('affiliate_discount_codes').where({ shop_id: shop.id, partner_id: partner.id }).orderBy('code').first('code') : undefined;
  const portalUrl = portal ? (portal.custom_domain && portal.custom_domain_status === 'active' ? `https://${portal.custom_domain}` : String(portal.address)) : '';
  const values: Record<string, string> = {
    'partner.handle': partner?.handle ?? '', 'partner.name': partner?.contact_name ?? partner?.handle ?? '', 'partner.web': partner?.web ?? '',
    'partner.discount_code': extra['partner.discount_code'] ?? code?.code ?? '',
    'partner.link': portalUrl && partner ? `${portalUrl.replace(/\/+$/, '')}/r/${encodeURIComponent(partner.handle.toLowerCase())}` : '',
    'programme.name': programme?.name ?? '', 'programme.commission_percent': programme ? String(Number(programme.default_commission_percent)) : '',
    'programme.click_window_days': programme ? String(programme.click_window_days) : '',
    'programme.payout_minimum': programme ? `${Number(programme.payout_minimum_eur).toFixed(2)} EUR` : '',
    'programme.return_period_days': programme ? String(programme.return_period_days) : '',
    'shop.name': shopRow?.name ?? shop.name, 'shop.url': shopRow?.base_url ?? '', 'portal.url': portalUrl, date: now.toISOString().slice(0, 10),
  };
  // Aliases fill like their canonical names.
  const aliases: Record<string, string> = {
    partner_handle: 'partner.handle', partner_name: 'partner.name', name: 'partner.name', coupon_code: 'partner.discount_code', affiliate_link: 'partner.link',
    program_name: 'programme.name', commission: 'programme.commission_percent', cookie_days: 'programme.click_window_days', payout_min: 'programme.payout_minimum',
    shop_name: 'shop.name', eshop: 'shop.name', shop_url: 'shop.url', portal_url: 'portal.url', today: 'date',
  };
  for (const [alias, canonical] of Object.entries(aliases)) values[alias] = values[canonical];
  return values;
}

/**
 * The PDF of one attachment: an uploaded PDF as it was uploaded; wording uploaded as HTML, or kept as text (the
 * demo's), rendered with the partner's values filled in; a signed copy is the text as signed with its signature record.
 */
async function attachmentPdf(title: string, language: string, version: { version: number; html: string | null; file: Buffer | null; public_text: string },
  signature: { signed_text: string; signed_at: Date; method: string; verification: string; text_sha256: string } | undefined,
  values: Record<string, string>, partner: PartnerForEmail, now: Date): Promise<Buffer> {
  const subtitle = `Version ${version.version} · ${language}`;
  if (signature) {
    return (await renderWordingPdf({
      title, subtitle: `${subtitle} · signed copy of ${partner.handle}`, blocks: textBlocks(signature.signed_text), createdAt: signature.signed_at,
      footer: [`Signed electronically by ${partner.handle} on ${signature.signed_at.toISOString()} (${signature.method}, verified by ${signature.verification}).`,
        `SHA-256 of the signed version's text: ${signature.text_sha256.trim()}`],
    })).content;
  }
  if (version.html === null && version.file) return version.file;
  const blocks = version.html !== null
    ? htmlBlocks(version.html).map((b) => ({ ...b, text: renderText(b.text, values) }))
    : textBlocks(renderText(version.public_text, values));
  return (await renderWordingPdf({ title, subtitle, blocks, createdAt: now })).content;
}

/** The documents the policy attaches to the "Account approved" e-mail of this partner, each as a PDF. */
async function approvalAttachments(trx: Knex.Transaction, accountId: string, partner: PartnerForEmail, language: string, values: Record<string, string>, now: Date) {
  const documents = await trx('affiliate_documents').where({ account_id: accountId, enabled: true, email_attachment: true }).orderBy('key')
    .select('id', 'key', 'title', 'applies_to', 'signed_copy');
  const attached: EmailAttachmentRef[] = [];
  const notAttached: Array<{ documentKey: string; reason: string }> = [];
  for (const d of documents) {
    if (d.applies_to === 'influencers' && partner.kind !== 'influencer') continue;
    const version = await trx('affiliate_document_versions').where({ document_id: d.id, language, status: 'published' }).orderBy('version', 'desc')
      .first('id', 'version', 'public_text', 'html', 'file');
    if (!version) {
      notAttached.push({ documentKey: d.key, reason: `no published version in \`${language}\`` });
      continue;
    }
    const signature = d.signed_copy
      ? await trx('affiliate_signatures').where({ partner_id: partner.id, version_id: version.id, state: 'valid' })
        .first('id', 'signed_text', 'signed_at', 'method', 'verification', 'text_sha256')
      : undefined;
    // Frozen in the outbox row as bytes (AW3, AD4): what the partner receives is what was decided when it was queued.
    const pdf = await attachmentPdf(d.title, language, version, signature, values, partner, now);
    attached.push({
      documentKey: d.key, title: d.title, language, version: version.version, fileName: `${d.key}-${language}-v${version.version}${signature ? '-signed' : ''}.pdf`,
      kind: signature ? 'signed_copy' : 'published_text', ...(signature ? { signatureId: String(signature.id) } : {}),
      content: pdf.toString('base64'), encoding: 'base64', contentType: 'application/pdf',
    });
  }
  return { attached, notAttached };
}

export interface PartnerEmailInput {
  accountId: string;
  shop: ShopRef;
  partner: PartnerForEmail;
  event: PartnerEmailEvent;
  now: Date;
  /** Extra variable values (e.g. the reserved code as `partner.discount_code`). */
  values?: Record<string, string>;
  /** A paragraph the service adds after the template's body (the decision itself, so no template can leave it out). */
  appendix?: string;
}

/** Renders and queues one partner e-mail in the caller's transaction. */
export async function queuePartnerEmail(trx: Knex.Transaction, input: PartnerEmailInput): Promise<EmailSummary> {
  const { partner } = input;
  const templates = await trx('affiliate_email_templates').where({ account_id: input.accountId, event: input.event })
    .select('language', 'subject', 'body_html', 'enabled');
  const template = templates.find((t) => t.language === partner.language) ?? templates.find((t) => t.language === 'en') ?? templates[0];
  const values = await variableValues(trx, input.accountId, input.shop, partner, input.now, input.values ?? {});
  const htmlValues = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, escapeHtml(v)]));
  const language = template?.language ?? partner.language;
  const subject = template ? renderText(template.subject, values) : input.event;
  const body = (template ? renderText(template.body_html, htmlValues) : '') + (input.appendix ? `\n<p>${escapeHtml(input.appendix)}</p>` : '');
  const { attached, notAttached } = input.event === 'account_approved' ? await approvalAttachments(trx, input.accountId, partner, language, values, input.now) : { attached: [], notAttached: [] };
  const skippedReason = !template ? `there is no template for the event \`${input.event}\``
    : !template.enabled ? `the e-mail of the event \`${input.event}\` is disabled`
      : !partner.email ? 'the partner has no e-mail address' : null;
  const queued = await queueEmail(trx, {
    accountId: input.accountId, source: 'affiliate', event: input.event, shopId: input.shop.id, partnerId: partner.id, recipient: partner.email,
    language, subject, bodyHtml: body, attachments: attached, skippedReason, now: input.now,
  });
  return {
    emailId: queued.emailId, event: input.event, status: queued.status, language, subject, reason: skippedReason,
    attachments: attached.map(({ documentKey, language: l, version, fileName, kind }) => ({ documentKey, language: l, version, fileName, kind })), notAttached,
  };
}
