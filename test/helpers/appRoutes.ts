/**
 * The application's routes as the served Express router registers them, a digest of every row its pages can write, and
 * a signed-in person: shared by the application's generic matrices (applicationPermissions, applicationRecords).
 */
import type { Express } from 'express';
import type { Db } from '../../src/db/knex.js';
import { FormClient, csrfOf, makePerson, type PersonOptions } from './application.js';

/** A router layer as Express 5 (router 2) keeps it: a route, or a nested router with its own stack. */
export interface RouterLayer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/** Every method and path the routers under `stack` register (nested routers mounted without a path included). */
export function registered(stack: RouterLayer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) return Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m] && m !== '_all').map((m) => `${m.toUpperCase()} ${String(layer.route!.path)}`);
    if (layer.handle?.stack && layer.rawPath === '/') return registered(layer.handle.stack);
    return [];
  });
}

/** The routes of the router mounted at `mount` (`/app`), as `METHOD /path`; null when nothing is mounted there. */
export function mountedRoutes(app: Express, mount = '/app'): string[] | null {
  const stack = (app as unknown as { router: { stack: RouterLayer[] } }).router.stack;
  const layer = stack.find((l) => l.rawPath === mount);
  return layer?.handle?.stack ? registered(layer.handle.stack) : null;
}

/** Every row the application's pages can write, as one digest (sessions, which every request may touch, left out). */
export async function appRowsDigest(db: Db): Promise<string> {
  const tables = [
    'access_keys', 'automations', 'automation_versions', 'automation_runs', 'content_writes', 'customer_exports', 'demo_shop_writes', 'email_outbox', 'notifications',
    'oauth_connections', 'people', 'person_invitations', 'proposals', 'proposal_items', 'shops', 'shop_credentials', 'text_edit_batches', 'webhook_endpoints',
    'webhook_deliveries', 'affiliate_partners', 'affiliate_conversions', 'affiliate_payouts', 'affiliate_documents', 'affiliate_document_versions',
  ];
  const parts = await Promise.all(tables.map(async (table) => `${table}:${(await db.raw(`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ${table} t`)).rows[0].h}`));
  return parts.join(',');
}

/** A signed-in client of a new person (made through the service), with a CSRF token of their session. */
export async function signedInPerson(db: Db, baseUrl: string, options: PersonOptions = {}): Promise<{ client: FormClient; csrf: string; id: string; email: string }> {
  const person = await makePerson(db, options);
  const client = new FormClient(baseUrl);
  const result = await client.signIn(person.email, person.password);
  if (result.status !== 303) throw new Error(`sign-in failed: ${result.status}`);
  return { client, csrf: csrfOf((await client.get('/app/account')).text), id: person.id, email: person.email };
}
