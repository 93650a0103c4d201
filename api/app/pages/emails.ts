/**
 * E-mails (D30): the outbox of every e-mail the service sends — partner decisions and code requests, automation e-mails —
 * with whether each was sent, waits (no SMTP configured, or a retry), failed or was skipped and why. Partner e-mails
 * carry names and addresses, so the page needs the `personal-data` permission; a person limited to some shops sees
 * those shops' e-mails and the account-wide ones.
 */
import express, { type Router } from 'express';
import { EMAIL_STATUSES, listOutbox, type EmailStatus } from '../../../src/email/outbox.js';
import { hasPermission } from '../../../src/people/model.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { paged, pageWindow } from '../paging.js';
import { currentPerson, requirePermission, requirePerson } from '../session.js';

const PAGE_SIZE = 50;

/** A readable plain-text view of a stored HTML body (the page never renders stored HTML as HTML). */
function bodyText(html: string): string {
  return html.replace(/<br\s*\/?>/gi, '\n').replace(/<\/(p|h\d|li)>/gi, '\n').replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, '\'').replace(/&amp;/g, '&').trim();
}

export function emailsRoutes(deps: ApplicationDeps): Router {
  const router = express.Router();
  router.get('/emails', requirePerson, requirePermission((p) => hasPermission(p, 'personal-data'), 'see personal data (partner e-mails carry names and addresses)'), async (req, res) => {
    const person = currentPerson(res);
    const wanted = typeof req.query.status === 'string' && (EMAIL_STATUSES as readonly string[]).includes(req.query.status) ? req.query.status as EmailStatus : undefined;
    const window = pageWindow(req, PAGE_SIZE);
    const { items: emails, pager } = paged(req, window, await listOutbox(deps.db, person.accountId, { limit: window.fetch, offset: window.offset, shopCodes: person.shopCodes, status: wanted }));
    renderPage(res, 'emails', {
      title: 'E-mails', statuses: EMAIL_STATUSES, status: wanted ?? null, pager,
      emails: emails.map((e) => ({ ...e, bodyText: bodyText(e.bodyHtml) })),
    });
  });
  return router;
}
