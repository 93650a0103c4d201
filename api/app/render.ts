/** Server-side rendering with Eta (escapes every `<%= %>` value); every page gets the layout's common data. */
import path from 'node:path';
import type { Response } from 'express';
import { Eta } from 'eta';
import { projectRoot } from '../../src/config/projectRoot.js';
import type { AppState } from './session.js';
import { mayReadWebhooks } from '../../src/people/webhooks.js';
import { hasPermission } from '../../src/people/model.js';

const eta = new Eta({ views: path.join(projectRoot, 'api', 'app', 'views'), cache: true, autoEscape: true });

/** The navigation a person sees: only pages their permissions open. */
function navigation(state: AppState | undefined) {
  const person = state?.person;
  if (!person) return [];
  return [
    { href: '/app', label: 'Overview' },
    ...(hasPermission(person, 'keys:manage') ? [{ href: '/app/keys', label: 'Access keys' }] : []),
    ...(mayReadWebhooks(person) ? [{ href: '/app/webhooks', label: 'Webhook endpoints' }] : []),
    ...(hasPermission(person, 'proposals:approve') ? [{ href: '/app/approvals', label: 'Approvals' }, { href: '/app/content', label: 'Texts' }] : []),
    { href: '/app/connections', label: 'Connections' },
    { href: '/app/automations', label: 'Automations' },
    { href: '/app/affiliate/commissions', label: 'Partner programme' },
    { href: '/app/notifications', label: 'Notifications' },
    ...(hasPermission(person, 'personal-data') ? [{ href: '/app/emails', label: 'E-mails' }] : []),
    { href: '/app/plan', label: 'Plan' },
    { href: '/app/account', label: 'Your account' },
  ];
}

export function renderPage(res: Response, view: string, data: Record<string, unknown>, status = 200): void {
  const state = res.locals.app as AppState | undefined;
  const html = eta.render(view, { ...data, person: state?.person ?? null, csrfToken: state?.session?.csrfToken ?? '', nav: navigation(state) });
  res.status(status).type('html').send(html);
}

/** A page outside a session (the authorization server's error page): the layout without a person or navigation. */
export function renderAnonymous(view: string, data: Record<string, unknown>): string {
  return eta.render(view, { ...data, person: null, csrfToken: '', nav: [] });
}
