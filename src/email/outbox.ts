/**
 * The e-mail outbox (D30): every e-mail the service sends is first a row here, written in the same transaction as the
 * change that causes it, so a decision is never recorded without its e-mail nor an e-mail sent for a change that rolled
 * back. The sender (src/email/sender.ts) delivers queued rows when SMTP_URL is configured; without it they stay
 * `queued` and the application's E-mails page shows them as not sent.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';

export const EMAIL_STATUSES = ['queued', 'sent', 'failed', 'skipped'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export interface EmailAttachmentRef {
  documentKey: string;
  title: string;
  language: string;
  version: number;
  fileName: string;
  /** The document's published wording, or the partner's own signed copy (signature id) when the policy asks for it. */
  kind: 'published_text' | 'signed_copy';
  signatureId?: string;
  /**
   * What is attached: text as is, or with `encoding` `base64` the bytes of a binary file (a PDF). Frozen when the
   * e-mail is queued, so a later version of the document changes no e-mail already written.
   */
  content: string;
  encoding?: 'base64';
  /** The attachment's MIME type (`application/pdf`); rows queued before PDFs have none and are plain text. */
  contentType?: string;
}

export interface QueuedEmail {
  accountId: string;
  source: 'affiliate' | 'automation' | 'people';
  event: string;
  dedupeKey?: string | null;
  shopId?: string | null;
  partnerId?: string | null;
  recipient?: string | null;
  recipientGroup?: 'account_people' | null;
  language?: string | null;
  subject: string;
  bodyHtml: string;
  attachments?: EmailAttachmentRef[];
  /** A reason makes the row `skipped`: recorded and shown, never sent. */
  skippedReason?: string | null;
  now: Date;
}

/** Records one e-mail (in the caller's transaction); returns its id and status. */
export async function queueEmail(trx: Knex | Knex.Transaction, email: QueuedEmail): Promise<{ emailId: string; status: EmailStatus }> {
  const status: EmailStatus = email.skippedReason ? 'skipped' : 'queued';
  const [row] = await trx('email_outbox').insert({
    account_id: email.accountId, source: email.source, event: email.event, dedupe_key: email.dedupeKey ?? null, shop_id: email.shopId ?? null,
    partner_id: email.partnerId ?? null, recipient: email.recipient ?? null, recipient_group: email.recipientGroup ?? null, language: email.language ?? null,
    subject: email.subject, body_html: email.bodyHtml, attachments: JSON.stringify(email.attachments ?? []), status,
    last_error: email.skippedReason ?? null, next_attempt_at: email.now, created_at: email.now,
  }).returning(['id', 'status']);
  return { emailId: String(row.id), status: row.status };
}

export interface OutboxEntry {
  emailId: string;
  source: string;
  event: string;
  market: string | null;
  partnerHandle: string | null;
  recipient: string;
  language: string | null;
  subject: string;
  bodyHtml: string;
  /** Without their content: the page names the files (a PDF would put megabytes into every listing). */
  attachments: Array<Omit<EmailAttachmentRef, 'content'>>;
  status: EmailStatus;
  attempts: number;
  lastError: string | null;
  createdAt: string;
  sentAt: string | null;
}

/**
 * An invitation's link signs its holder up with the invited rights (U14): whoever reads the E-mails page sees that an
 * invitation was sent, never a usable link.
 */
export function maskInvitationLinks(html: string): string {
  return html.replace(/(\/app\/invitation\/)[A-Za-z0-9_-]{43}/g, '$1(link hidden)');
}

/** A partner portal's verification and password-reset links open a partner's account: the E-mails page never shows them. */
export function maskPortalLinks(html: string): string {
  return html.replace(/(\/(?:verify-email|reset-password)\/)[A-Za-z0-9_-]{43}/g, '$1(link hidden)');
}

/** The newest e-mails of an account (the application's E-mails page), optionally only those of some shops. */
export async function listOutbox(db: Db, accountId: string, options: { limit: number; offset?: number; shopCodes: ReadonlySet<string> | null; status?: EmailStatus }): Promise<OutboxEntry[]> {
  const q = db('email_outbox as e').leftJoin('shops as s', 's.id', 'e.shop_id').leftJoin('affiliate_partners as p', 'p.id', 'e.partner_id')
    .where('e.account_id', accountId)
    .select('e.id', 'e.source', 'e.event', 's.code as market', 'p.handle', 'e.recipient', 'e.recipient_group', 'e.language', 'e.subject', 'e.body_html',
      db.raw(`(select coalesce(jsonb_agg(a - 'content' order by n), '[]'::jsonb) from jsonb_array_elements(e.attachments) with ordinality as x(a, n)) as attachments`), 'e.status', 'e.attempts', 'e.last_error', 'e.created_at', 'e.sent_at')
    .orderBy([{ column: 'e.created_at', order: 'desc' }, { column: 'e.id', order: 'desc' }]).limit(options.limit).offset(options.offset ?? 0);
  // A person limited to some shops sees the e-mails of those shops and the account-wide ones.
  if (options.shopCodes) q.where((w) => w.whereNull('e.shop_id').orWhereIn('s.code', [...options.shopCodes!]));
  if (options.status) q.where('e.status', options.status);
  const rows = await q;
  return rows.map((r) => ({
    emailId: String(r.id), source: r.source, event: r.event, market: r.market ?? null, partnerHandle: r.handle ?? null,
    recipient: r.recipient ?? (r.recipient_group === 'account_people' ? 'the account\'s people' : r.recipient_group ?? '(no address)'),
    language: r.language, subject: r.subject, bodyHtml: r.source === 'people' ? maskInvitationLinks(r.body_html) : String(r.event).startsWith('portal_') ? maskPortalLinks(r.body_html) : r.body_html, attachments: r.attachments, status: r.status, attempts: r.attempts,
    lastError: r.last_error, createdAt: r.created_at.toISOString(), sentAt: r.sent_at ? r.sent_at.toISOString() : null,
  }));
}
