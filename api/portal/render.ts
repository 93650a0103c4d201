/**
 * Server-side rendering of the partner portal's pages with Eta (every `<%= %>` escaped), in the application's style
 * (Pico CSS from /app/static). Every page gets the portal, its base path (the development prefix, or none on the
 * portal's own host), the visitor's language and its labels, the signed-in partner and the session's CSRF token.
 */
import path from 'node:path';
import type { Response } from 'express';
import { Eta } from 'eta';
import { projectRoot } from '../../src/config/projectRoot.js';
import { dateFormatters } from '../app/render.js';
import type { AppState } from '../app/session.js';
import type { Portal, PortalLanguage } from '../../src/affiliate/portal/portals.js';
import type { PortalPartner } from '../../src/affiliate/portal/accounts.js';
import { LABELS } from './labels.js';

const eta = new Eta({ views: path.join(projectRoot, 'api', 'portal', 'views'), cache: true, autoEscape: true });

/** What the portal's middleware puts in `res.locals.portal` for every page. */
export interface PortalState {
  portal: Portal | null;
  /** `/portal/<account>/<shop>` in development; '' on the portal's own host. */
  base: string;
  language: PortalLanguage;
  partner: PortalPartner | null;
}

export function portalState(res: Response): PortalState {
  return res.locals.portal as PortalState;
}

export function renderPortal(res: Response, view: string, data: Record<string, unknown>, status = 200): void {
  const state = portalState(res);
  const language = state?.language ?? 'en';
  const html = eta.render(view, {
    ...data, ...dateFormatters('UTC'), portal: state?.portal ?? null, base: state?.base ?? '', lang: language, l: LABELS[language],
    partner: state?.partner ?? null, csrfToken: (res.locals.app as AppState | undefined)?.session?.csrfToken ?? '',
  });
  res.status(status).type('html').send(html);
}
