/**
 * Server-side rendering with Eta (escapes every `<%= %>` value); every page gets the layout's common data and the
 * view helpers: `it.when(iso)` (a date and time in the account's time zone, human format, ISO in a `title`),
 * `it.day(iso)`, `it.actor(ref)` (a name, the reference as secondary text; pages pass `actors` from
 * src/people/actors.ts) and `it.pager` (see paging.ts).
 */
import path from 'node:path';
import type { Response } from 'express';
import { Eta } from 'eta';
import { projectRoot } from '../../src/config/projectRoot.js';
import type { AppState } from './session.js';
import { mayReadWebhooks } from '../../src/people/webhooks.js';
import { hasPermission } from '../../src/people/model.js';
import type { ActorNames } from '../../src/people/actors.js';

const eta = new Eta({ views: path.join(projectRoot, 'api', 'app', 'views'), cache: true, autoEscape: true });

/** The navigation a person sees: only pages their permissions open. */
function navigation(state: AppState | undefined, currentPath: string) {
  const person = state?.person;
  if (!person) return [];
  const items = [
    { href: '/app', label: 'Overview' },
    { href: '/app/customers', label: 'Customers' },
    { href: '/app/documents', label: 'Documents' },
    { href: '/app/products', label: 'Products' },
    { href: '/app/categories', label: 'Categories' },
    ...(hasPermission(person, 'proposals:approve') ? [{ href: '/app/approvals', label: 'Approvals' }] : []),
    ...(hasPermission(person, 'keys:manage') ? [{ href: '/app/keys', label: 'Access keys' }] : []),
    ...(mayReadWebhooks(person) ? [{ href: '/app/webhooks', label: 'Webhook endpoints' }] : []),
    { href: '/app/connections', label: 'Connections' },
    { href: '/app/automations', label: 'Automations' },
    { href: '/app/affiliate/commissions', label: 'Partner programme' },
    { href: '/app/notifications', label: 'Notifications' },
    ...(hasPermission(person, 'personal-data') ? [{ href: '/app/emails', label: 'E-mails' }] : []),
    ...(person.role === 'owner' ? [{ href: '/app/people', label: 'People' }, { href: '/app/shops', label: 'Shops' }] : []),
    { href: '/app/plan', label: 'Plan' },
    { href: '/app/account', label: 'Your account' },
  ];
  const current = items.filter((i) => currentPath === i.href || (i.href !== '/app' && currentPath.startsWith(`${i.href}/`))).at(-1);
  return items.map((i) => ({ ...i, current: i === current }));
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }[c]!));

/** Formats instants for one time zone; unknown zones fall back to UTC rather than failing a page. */
export function dateFormatters(timeZone: string) {
  const safeZone = (() => {
    try {
      new Intl.DateTimeFormat('en-GB', { timeZone });
      return timeZone;
    } catch {
      return 'UTC';
    }
  })();
  const dateTime = new Intl.DateTimeFormat('en-GB', { timeZone: safeZone, day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
  const dateOnly = new Intl.DateTimeFormat('en-GB', { timeZone: safeZone, day: 'numeric', month: 'short', year: 'numeric' });
  const toIso = (value: unknown): string | null => {
    if (value === null || value === undefined || value === '') return null;
    const date = value instanceof Date ? value : new Date(String(value));
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  };
  const html = (value: unknown, format: Intl.DateTimeFormat, fallback: string) => {
    const iso = toIso(value);
    if (!iso) return escapeHtml(fallback);
    return `<time datetime="${iso}" title="${iso}">${escapeHtml(format.format(new Date(iso)))}</time>`;
  };
  return {
    timeZone: safeZone,
    /** `<time>` with the date and time in the account's zone, e.g. "26 Nov 2026, 19:16", ISO in the title. */
    when: (value: unknown, fallback = '—') => html(value, dateTime, fallback),
    /** `<time>` with the date only. */
    day: (value: unknown, fallback = '—') => html(value, dateOnly, fallback),
    /** Plain text, for places that cannot hold markup (option labels, CSV). */
    whenText: (value: unknown) => {
      const iso = toIso(value);
      return iso ? dateTime.format(new Date(iso)) : '';
    },
  };
}

/** An actor as markup: the name, and its reference as secondary text. */
function actorHtml(actors: ActorNames | undefined, ref: unknown): string {
  if (ref === null || ref === undefined || ref === '') return '—';
  const key = String(ref);
  const known = actors?.[key];
  if (!known) return `<span class="actor">${escapeHtml(key)}</span>`;
  return `<span class="actor">${escapeHtml(known.name)}</span> <span class="secondary-text">${escapeHtml(known.ref)}</span>`;
}

export function renderPage(res: Response, view: string, data: Record<string, unknown>, status = 200): void {
  const state = res.locals.app as AppState | undefined;
  const formatters = dateFormatters(state?.person?.accountTimeZone ?? 'UTC');
  const actors = data.actors as ActorNames | undefined;
  const html = eta.render(view, {
    ...data, ...formatters, actor: (ref: unknown) => actorHtml(actors, ref),
    person: state?.person ?? null, csrfToken: state?.session?.csrfToken ?? '', nav: navigation(state, String(res.req?.path ? res.req.baseUrl + res.req.path : '')),
  });
  res.status(status).type('html').send(html);
}

/** A page outside a session (the authorization server's error page): the layout without a person or navigation. */
export function renderAnonymous(view: string, data: Record<string, unknown>): string {
  return eta.render(view, { ...data, ...dateFormatters('UTC'), actor: (ref: unknown) => actorHtml(undefined, ref), person: null, csrfToken: '', nav: [] });
}
