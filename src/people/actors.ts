/**
 * Names for the actors the service records as references (`person:<id>`, `key:<id>`, `oauth:<id>`): the application
 * shows who did something by name, with the id only as secondary text. Only actors of the given account are named.
 */
import type { Db } from '../db/knex.js';

export interface ActorName {
  /** What a person reads: a person's name (or e-mail), a key's name, a connected client's name. */
  name: string;
  /** What kind of actor it is, in words. */
  kind: 'person' | 'key' | 'connection' | 'system';
  /** The stored reference itself, kept as secondary text. */
  ref: string;
}

export type ActorNames = Record<string, ActorName>;

/** Resolves every reference in `refs` that belongs to `accountId`; unknown ones keep their reference as name. */
export async function actorNames(db: Db, accountId: string, refs: Iterable<string | null | undefined>): Promise<ActorNames> {
  const byKind: Record<string, Set<string>> = { person: new Set(), key: new Set(), oauth: new Set() };
  for (const ref of refs) {
    if (!ref) continue;
    const [kind, id] = [ref.slice(0, ref.indexOf(':')), ref.slice(ref.indexOf(':') + 1)];
    if (byKind[kind] && id) byKind[kind].add(id);
  }
  const names: ActorNames = {};
  const [people, keys, connections] = await Promise.all([
    byKind.person.size ? db('people').select('id', 'name', 'email').where('account_id', accountId).whereIn('id', [...byKind.person]) : [],
    byKind.key.size ? db('access_keys').select('id', 'name').where('account_id', accountId).whereIn('id', [...byKind.key]) : [],
    byKind.oauth.size ? db('oauth_connections').select('id', 'client_name').where('account_id', accountId).whereIn('id', [...byKind.oauth]) : [],
  ]);
  for (const p of people as Array<{ id: string; name: string; email: string }>) names[`person:${p.id}`] = { name: p.name || p.email, kind: 'person', ref: `person:${p.id}` };
  for (const k of keys as Array<{ id: string; name: string }>) names[`key:${k.id}`] = { name: `key “${k.name}”`, kind: 'key', ref: `key:${k.id}` };
  for (const c of connections as Array<{ id: string; client_name: string }>) names[`oauth:${c.id}`] = { name: c.client_name, kind: 'connection', ref: `oauth:${c.id}` };
  return names;
}
