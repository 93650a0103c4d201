/**
 * Invitations of people by e-mail (D27, U11–U14): an owner invites an address with a role, permissions and shops; the
 * invitation e-mail goes through the e-mail outbox (D30) in the same transaction; its link carries 32 random bytes of
 * which only the SHA-256 is stored. The invitee sets a password (the rules of `people create`) and becomes a person.
 * An invitation is good once, for INVITATION_TTL_MS, until revoked; nothing the inviter lacks can be granted.
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';
import { queueEmail } from '../email/outbox.js';
import { AppError } from '../errors.js';
import { listShops } from '../queries/shops.js';
import { effectivePermissions, isPermission, isRole, type Permission, type Person, type Role } from './model.js';
import { assertGrantableShops, createPerson, normaliseEmail } from './people.js';

/** U12: an invitation link works for 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
export const INVITATION_EVENT = 'person.invited';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

const hashOf = (token: string) => crypto.createHash('sha256').update(token).digest();

export interface NewInvitation {
  email: string;
  name?: string;
  role: string;
  permissions: readonly string[];
  /** null = all shops (also future ones). */
  shops: readonly string[] | null;
}

export interface InvitationSummary {
  id: string;
  email: string;
  name: string;
  role: Role;
  permissions: Permission[];
  shops: string[] | 'all';
  state: 'pending' | 'accepted' | 'expired' | 'revoked';
  createdAt: string;
  expiresAt: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Checks the rights against the inviter's own (U13): no higher role, no permission they lack, no shop they cannot see;
 * "all shops" only from someone who has all shops.
 */
async function checkedRights(db: Db, inviter: Person, input: NewInvitation): Promise<{ role: Role; permissions: Permission[]; shops: string[] | null }> {
  if (!isRole(input.role)) throw new AppError('INVALID_PARAMETER', 'The role is owner, admin or member.', { param: 'role', reason: 'enum' });
  if (RANK[input.role] > RANK[inviter.role]) throw new AppError('INSUFFICIENT_SCOPE', `You cannot invite someone as ${input.role}: your own role is ${inviter.role}.`, { param: 'role' });
  const unknown = input.permissions.filter((p) => !isPermission(p));
  if (unknown.length > 0) throw new AppError('INVALID_PARAMETER', `Unknown permission(s): ${unknown.join(', ')}.`, { param: 'permissions', reason: 'unknown' });
  const permissions = [...new Set(input.permissions)] as Permission[];
  const lacking = permissions.filter((p) => !inviter.permissions.has(p));
  if (lacking.length > 0) throw new AppError('INSUFFICIENT_SCOPE', `You cannot grant what you do not have: ${lacking.join(', ')}.`, { param: 'permissions' });
  if (input.shops === null) {
    assertGrantableShops(inviter, null);
    return { role: input.role, permissions, shops: null };
  }
  const shops = [...new Set(input.shops.map((s) => s.trim()).filter(Boolean))];
  const known = new Set((await listShops(db, inviter.accountId, null)).map((s) => s.code));
  const bad = shops.filter((c) => !known.has(c));
  if (shops.length === 0 || bad.length > 0) throw new AppError('INVALID_PARAMETER', `Unknown shop(s): ${bad.join(', ') || '(none given)'}. Known: ${[...known].join(', ')}.`, { param: 'shops', reason: 'unknown shop' });
  assertGrantableShops(inviter, shops);
  return { role: input.role, permissions, shops };
}

/** Invites an address; the e-mail with the link (under `baseUrl`) is queued in the same transaction. */
export async function invitePerson(db: Db, inviter: Person, input: NewInvitation, baseUrl: string, now: Date): Promise<{ id: string; emailId: string }> {
  const email = normaliseEmail(input.email);
  const rights = await checkedRights(db, inviter, input);
  if (await db('people').where({ email }).first('id')) throw new AppError('STATE_CONFLICT', `A person with the e-mail ${email} exists already.`, { param: 'email', state: 'exists' });
  const token = crypto.randomBytes(32).toString('base64url');
  const id = `inv_${crypto.randomBytes(12).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  const link = `${baseUrl.replace(/\/$/, '')}/app/invitation/${token}`;
  const name = (input.name ?? '').trim().slice(0, 200);
  return db.transaction(async (trx) => {
    await trx('person_invitations').insert({
      id, account_id: inviter.accountId, email, name, role: rights.role, permissions: rights.permissions, all_shops: rights.shops === null,
      shop_codes: rights.shops ?? [], token_hash: hashOf(token), invited_by: inviter.id, created_at: now, expires_at: expiresAt,
    });
    const who = escapeHtml(inviter.name || inviter.email);
    const { emailId } = await queueEmail(trx, {
      accountId: inviter.accountId, source: 'people', event: INVITATION_EVENT, dedupeKey: `invitation:${id}`, recipient: email,
      subject: `${inviter.accountName}: you are invited`,
      bodyHtml: `<p>${who} invites you to ${escapeHtml(inviter.accountName)} as ${rights.role}.</p>`
        + `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p><p>Open the link to set your password. It works once, until ${expiresAt.toISOString()}.</p>`,
      now,
    });
    return { id, emailId };
  });
}

type Row = {
  id: string; account_id: string; email: string; name: string; role: Role; permissions: string[]; all_shops: boolean; shop_codes: string[];
  created_at: Date; expires_at: Date; accepted_at: Date | null; revoked_at: Date | null;
};

function stateOf(row: Row, now: Date): InvitationSummary['state'] {
  if (row.accepted_at) return 'accepted';
  if (row.revoked_at) return 'revoked';
  return row.expires_at > now ? 'pending' : 'expired';
}

function summary(row: Row, now: Date): InvitationSummary {
  return {
    id: row.id, email: row.email, name: row.name, role: row.role, permissions: [...effectivePermissions(row.role, row.permissions)],
    shops: row.all_shops ? 'all' : row.shop_codes, state: stateOf(row, now), createdAt: row.created_at.toISOString(), expiresAt: row.expires_at.toISOString(),
  };
}

/** The invitations of an account not yet accepted, newest first (pending, expired and revoked, for the People page). */
export async function listInvitations(db: Db, accountId: string, now: Date, limit = 50): Promise<InvitationSummary[]> {
  const rows = await db('person_invitations').where({ account_id: accountId }).whereNull('accepted_at').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit);
  return rows.map((r) => summary(r, now));
}

/** What a link leads to: a pending invitation (with the account's name), or why it cannot be used. */
export async function openInvitation(db: Db, token: string, now: Date): Promise<{ ok: true; invitation: InvitationSummary; accountName: string } | { ok: false; reason: 'unknown' | 'expired' | 'accepted' | 'revoked' }> {
  if (!TOKEN.test(token)) return { ok: false, reason: 'unknown' };
  const row = await db('person_invitations as i').join('accounts as a', 'a.id', 'i.account_id').where('i.token_hash', hashOf(token)).first('i.*', 'a.name as account_name');
  if (!row) return { ok: false, reason: 'unknown' };
  const state = stateOf(row, now);
  if (state !== 'pending') return { ok: false, reason: state };
  return { ok: true, invitation: summary(row, now), accountName: row.account_name };
}

/**
 * Accepts an invitation: creates the person with the invited rights and the chosen password, and marks the invitation
 * used, in one transaction (the row is locked, so two tabs cannot both create a person).
 */
export async function acceptInvitation(db: Db, token: string, input: { password: string; name?: string }, now: Date): Promise<{ personId: string }> {
  if (!TOKEN.test(token)) throw new AppError('NOT_FOUND', 'This invitation link is not known.');
  return db.transaction(async (trx) => {
    const row: Row | undefined = await trx('person_invitations').where({ token_hash: hashOf(token) }).forUpdate().first();
    if (!row) throw new AppError('NOT_FOUND', 'This invitation link is not known.');
    const state = stateOf(row, now);
    if (state !== 'pending') throw new AppError('STATE_CONFLICT', `This invitation was ${state === 'accepted' ? 'used already' : state}.`, { state });
    const { id } = await createPerson(trx as unknown as Db, {
      accountId: row.account_id, email: row.email, name: input.name?.trim() || row.name, password: input.password, role: row.role,
      permissions: row.permissions, shops: row.all_shops ? null : row.shop_codes,
    });
    await trx('person_invitations').where({ id: row.id }).update({ accepted_at: now, accepted_person_id: id });
    return { personId: id };
  });
}

/** Revokes a pending invitation of the account; its link stops working at once. */
export async function revokeInvitation(db: Db, accountId: string, id: string, now: Date): Promise<void> {
  const row = await db('person_invitations').where({ account_id: accountId, id }).first();
  if (!row) throw new AppError('NOT_FOUND', `No invitation ${id} in this account.`);
  if (row.accepted_at) throw new AppError('STATE_CONFLICT', 'This invitation was accepted already; disable the person instead.', { state: 'accepted' });
  await db('person_invitations').where({ id }).whereNull('revoked_at').update({ revoked_at: now });
}
