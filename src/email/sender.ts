/**
 * Sends the outbox's queued e-mails by SMTP (nodemailer) when SMTP_URL is configured (D30). One e-mail per
 * transaction: the row is locked (`for update skip locked`, so several workers share the queue), sent, and marked sent
 * in the same transaction. A crash between the SMTP server's acceptance and the commit sends that e-mail again: the
 * outbox is at-least-once, like the webhooks. A refused e-mail is retried after growing delays, then `failed`.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db } from '../db/knex.js';
import { logger } from '../logger.js';
import type { EmailAttachmentRef } from './outbox.js';

/** Delays before the 2nd, 3rd, ... attempt; after the last one the e-mail is `failed`. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 3_600_000];

export interface EmailSenderOptions {
  smtpUrl: string;
  from: string;
  /** How often the queue is looked at when it was empty (default 5 s). */
  idleMs?: number;
  retryDelaysMs?: number[];
}

/**
 * An SMTP transport for `smtp://[user:pass@]host[:port]` (STARTTLS when the server offers it) or `smtps://` (TLS from
 * the start). Short time-outs: the sender holds the e-mail's row lock while it talks to the server, so a server that
 * hangs must not hold it for nodemailer's default ten minutes.
 */
export function createTransport(smtpUrl: string): Transporter {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  return nodemailer.createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : secure ? 465 : 587, secure,
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000,
  });
}

const toText = (html: string) => html.replace(/<br\s*\/?>/gi, '\n').replace(/<\/(p|h\d|li)>/gi, '\n').replace(/<[^>]+>/g, '')
  .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, '\'').replace(/&amp;/g, '&').trim();

/** One outbox attachment as nodemailer sends it: its own content type; a PDF's bytes decoded from base64. */
export function attachmentOf(a: EmailAttachmentRef): { filename: string; content: string | Buffer; contentType: string } {
  return {
    filename: a.fileName,
    content: a.encoding === 'base64' ? Buffer.from(a.content, 'base64') : a.content,
    contentType: a.contentType ?? 'text/plain; charset=utf-8',
  };
}

/** Sends at most one due e-mail; returns what happened to it, or null when none was due. */
export async function sendNextEmail(db: Db, transport: Transporter, from: string, now: Date, retryDelaysMs = RETRY_DELAYS_MS): Promise<{ emailId: string; status: 'sent' | 'queued' | 'failed' } | null> {
  return db.transaction(async (trx) => {
    const row = await trx('email_outbox').where('status', 'queued').where('next_attempt_at', '<=', now).orderBy(['next_attempt_at', 'id'])
      .forUpdate().skipLocked().first('id', 'account_id', 'recipient', 'recipient_group', 'subject', 'body_html', 'attachments', 'attempts');
    if (!row) return null;
    const recipients = row.recipient ? [row.recipient]
      // A disabled person has left the account (sessions ended, keys and connections stopped): no longer one of its people.
      : await trx('people').where({ account_id: row.account_id }).whereNull('disabled_at').orderBy('email').pluck('email');
    const attempts = row.attempts + 1;
    try {
      if (!recipients.length) throw new Error('the account has no people to send it to');
      await transport.sendMail({
        from, to: recipients, subject: row.subject, html: row.body_html, text: toText(row.body_html),
        attachments: (row.attachments as EmailAttachmentRef[]).map(attachmentOf),
        headers: { 'X-Service-Email-Id': String(row.id) },
      });
      await trx('email_outbox').where({ id: row.id }).update({ status: 'sent', attempts, sent_at: now, last_error: null });
      return { emailId: String(row.id), status: 'sent' as const };
    } catch (error) {
      const message = (error as Error).message.slice(0, 500);
      const delay = retryDelaysMs[attempts - 1];
      const status = delay === undefined ? 'failed' as const : 'queued' as const;
      await trx('email_outbox').where({ id: row.id }).update({ status, attempts, last_error: message, next_attempt_at: new Date(now.getTime() + (delay ?? 0)) });
      logger.warn({ emailId: String(row.id), attempts, status, error: message }, 'e-mail not sent');
      return { emailId: String(row.id), status };
    }
  });
}

/** Sends every due e-mail now; returns how many were looked at. */
export async function sendDueEmails(db: Db, transport: Transporter, from: string, now: () => Date, retryDelaysMs = RETRY_DELAYS_MS): Promise<number> {
  let n = 0;
  while (await sendNextEmail(db, transport, from, now(), retryDelaysMs)) n += 1;
  return n;
}

/** Runs the sender in this process until `stop()`; started by the worker and `npm start` when SMTP_URL is set. */
export function startEmailSender(db: Db, options: EmailSenderOptions): { stop: () => Promise<void> } {
  const transport = createTransport(options.smtpUrl);
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      try {
        await sendDueEmails(db, transport, options.from, () => new Date(), options.retryDelaysMs);
      } catch (err) {
        logger.error({ err }, 'e-mail sender failed; trying again');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.idleMs ?? 5_000);
        wake = () => { clearTimeout(timer); resolve(); };
      });
    }
  })();
  logger.info('e-mail sender running (SMTP)');
  return {
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
      transport.close();
    },
  };
}
