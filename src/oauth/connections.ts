/**
 * Connections (D28): one person's grant to one OAuth client — the scopes and shops ticked on the consent screen and
 * the AI write mode. A token is worth what its connection holds, narrowed again by what the person may see today.
 */
import { isScope, isWriteMode, type Scope, type WriteMode } from '../auth/scopes.js';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { listShops } from '../queries/shops.js';
import { hasPermission, type Person } from '../people/model.js';
import { assertWithinRights, assertWriteModeWithinRights } from '../people/rights.js';
import { artifactKey } from './adapter.js';

export interface ConsentChoice {
  /** The grant id of the authorization server: also the connection's id. */
  grantId: string;
  clientId: string;
  clientName: string;
  /** What the client asked for; the person's ticks must lie inside it. */
  requested: readonly string[];
  scopes: readonly string[];
  /** null = all shops (also future ones). */
  shops: readonly string[] | null;
  writeMode: string;
}

/** Checks a consent against the request and the person's rights (D27), then records the connection. */
export async function recordConsent(db: Db, person: Person, choice: ConsentChoice): Promise<{ scopes: Scope[] }> {
  const scopes = [...new Set(choice.scopes)];
  if (scopes.length === 0) throw new AppError('INVALID_PARAMETER', 'Tick at least one permission, or deny access.', { param: 'scopes', reason: 'empty' });
  const notAsked = scopes.filter((s) => !choice.requested.includes(s) || !isScope(s));
  if (notAsked.length > 0) throw new AppError('INVALID_PARAMETER', `The application did not ask for ${notAsked.join(', ')}.`, { param: 'scopes', reason: 'not_requested' });
  // SPEC: automations:write only for a person allowed to edit automations (also part of the general rule below).
  if (scopes.includes('automations:write') && !hasPermission(person, 'automations:edit')) {
    throw new AppError('INVALID_PARAMETER', 'You may not let an application write automations.', { param: 'scopes', reason: 'beyond_rights' });
  }
  let shops: string[] | null = null;
  if (choice.shops !== null) {
    shops = [...new Set(choice.shops)];
    const known = new Set((await listShops(db, person.accountId, null)).map((s) => s.code));
    if (shops.length === 0 || shops.some((s) => !known.has(s))) throw new AppError('INVALID_PARAMETER', 'Pick all shops or at least one of your shops.', { param: 'shops', reason: 'unknown shop' });
  }
  assertWithinRights(person, scopes, shops);
  if (!isWriteMode(choice.writeMode)) throw new AppError('INVALID_PARAMETER', 'The AI write mode is read_only, proposals or autonomous.', { param: 'writeMode', reason: 'enum' });
  assertWriteModeWithinRights(person, choice.writeMode);
  await db('oauth_connections').insert({
    id: choice.grantId, account_id: person.accountId, person_id: person.id, client_id: choice.clientId, client_name: choice.clientName.slice(0, 200),
    scopes, all_shops: shops === null, shop_codes: shops ?? [], write_mode: choice.writeMode as WriteMode,
  });
  return { scopes: scopes as Scope[] };
}

export interface ConnectionSummary {
  id: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  shops: string[] | 'all';
  writeMode: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The person's connections, newest first. */
export async function connectionsOf(db: Db, person: Person): Promise<ConnectionSummary[]> {
  const rows = await db('oauth_connections').where({ person_id: person.id, account_id: person.accountId }).orderBy('created_at', 'desc');
  return rows.map((r) => ({
    id: r.id, clientId: r.client_id, clientName: r.client_name, scopes: r.scopes, shops: r.all_shops ? 'all' : r.shop_codes, writeMode: r.write_mode,
    createdAt: r.created_at.toISOString(), lastUsedAt: r.last_used_at?.toISOString() ?? null, revokedAt: r.revoked_at?.toISOString() ?? null,
  }));
}

/** Revokes a connection of the person: its tokens stop working at once and its grant and tokens are deleted. */
export async function revokeConnection(db: Db, person: Person, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const updated = await trx('oauth_connections').where({ id, person_id: person.id }).update({ revoked_at: trx.raw('coalesce(revoked_at, now())') });
    if (updated === 0) throw new AppError('NOT_FOUND', 'No such connection.');
    await trx('oauth_artifacts').where({ grant_id: id }).orWhere({ kind: 'Grant', id: artifactKey(id) }).delete();
  });
}
