/**
 * First-run set-up (issue 28.2): while the service has no account, each start of an API process issues a set-up link
 * (32 random bytes, only their SHA-256 stored; good once, for SETUP_LINK_TTL_MS). The link's page creates the account
 * and its first owner with the rules of `accounts create` and `people create` (src/setup/setup.ts, src/people), in one
 * transaction. Once any account exists every link is void and the page is gone: further accounts are made with the
 * CLI (decision SU2), so a link can never add an owner to an account someone else set up.
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { permissions } from '../people/model.js';
import { checkPasswordRules } from '../people/passwords.js';
import { createPerson, normaliseEmail } from '../people/people.js';
import { accountProblems, createAccount, type AccountInput } from './setup.js';

/** A set-up link works for 24 hours (a new start issues a new one while the service has no account). */
export const SETUP_LINK_TTL_MS = 24 * 3600_000;
export const SETUP_PATH = '/app/setup';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
// pg_advisory_xact_lock key ('SU' set-up): two links used at the same moment cannot both make a first account.
const SETUP_LOCK = 0x5355_0001;

const hashOf = (token: string) => crypto.createHash('sha256').update(token).digest();

/** What a link leads to: `open`, or why not; `closed` means an account exists, and then the page itself is gone. */
export type SetupLinkState = 'open' | 'closed' | 'unknown' | 'expired' | 'used';

export interface SetupInput {
  account: AccountInput;
  owner: { name: string; email: string; password: string };
}

export async function hasAnyAccount(db: Db): Promise<boolean> {
  return (await db('accounts').first('id')) !== undefined;
}

/** A new set-up token while the service has no account (null once one exists); expired unused ones are deleted. */
export async function issueSetupToken(db: Db, now: Date): Promise<string | null> {
  if (await hasAnyAccount(db)) return null;
  await db('setup_tokens').whereNull('used_at').where('expires_at', '<=', now).delete();
  const token = crypto.randomBytes(32).toString('base64url');
  await db('setup_tokens').insert({ token_hash: hashOf(token), created_at: now, expires_at: new Date(now.getTime() + SETUP_LINK_TTL_MS) });
  return token;
}

/**
 * The link to print. The token goes in the query string, which the request log and the traces leave out
 * (api/http/requestContext.ts), so using the link does not write it into the logs again.
 */
export function setupLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/$/, '')}${SETUP_PATH}?token=${token}`;
}

function stateOf(row: { expires_at: Date; used_at: Date | null } | undefined, now: Date): SetupLinkState {
  if (!row) return 'unknown';
  if (row.used_at) return 'used';
  return row.expires_at > now ? 'open' : 'expired';
}

/** The link's state, and when it expires (null for a link not known). */
export async function setupLinkState(db: Db, token: string, now: Date): Promise<{ state: SetupLinkState; expiresAt: Date | null }> {
  if (await hasAnyAccount(db)) return { state: 'closed', expiresAt: null };
  if (!TOKEN.test(token)) return { state: 'unknown', expiresAt: null };
  const row = await db('setup_tokens').where({ token_hash: hashOf(token) }).first('expires_at', 'used_at');
  return { state: stateOf(row, now), expiresAt: row?.expires_at ?? null };
}

/**
 * Every problem of the form, by field (code, name, plan, timeZone of the account; ownerName, email, password of the
 * owner): the same rules as the CLI, all at once, so the page can show each beside its field.
 */
export async function setupProblems(db: Db, input: SetupInput): Promise<Record<string, string>> {
  const problems: Record<string, string> = {};
  const note = (error: unknown, fallback: string) => {
    if (!(error instanceof AppError)) throw error;
    const param = typeof error.details?.param === 'string' ? error.details.param : fallback;
    problems[param] ??= error.message;
  };
  for (const problem of await accountProblems(db, input.account)) note(problem, 'code');
  try {
    normaliseEmail(input.owner.email);
  } catch (error) {
    note(error, 'email');
  }
  try {
    checkPasswordRules(input.owner.password);
  } catch (error) {
    note(error, 'password');
  }
  return problems;
}

/**
 * Uses a set-up link: creates the account and its owner (every permission, every shop) and marks the link used, in
 * one transaction under the set-up lock. Bad fields are INVALID_PARAMETER with `details.fields`; a link that is not
 * open is STATE_CONFLICT with `details.state`; an account made meanwhile is NOT_FOUND (the page is gone).
 */
export async function completeSetup(db: Db, token: string, input: SetupInput, now: Date): Promise<{ accountId: string; accountCode: string; personId: string }> {
  const problems = await setupProblems(db, input);
  if (Object.keys(problems).length > 0) throw new AppError('INVALID_PARAMETER', 'Some fields need a change.', { param: Object.keys(problems)[0], fields: problems });
  return db.transaction(async (trx) => {
    const tx = trx as unknown as Db;
    await trx.raw('select pg_advisory_xact_lock(?)', [SETUP_LOCK]);
    if (await hasAnyAccount(tx)) throw new AppError('NOT_FOUND', 'The service is set up already.', { state: 'closed' });
    const row = TOKEN.test(token) ? await trx('setup_tokens').where({ token_hash: hashOf(token) }).forUpdate().first('id', 'expires_at', 'used_at') : undefined;
    const state = stateOf(row, now);
    if (state !== 'open') throw new AppError('STATE_CONFLICT', `This set-up link is ${state}.`, { state });
    const account = await createAccount(tx, input.account);
    const { id: personId } = await createPerson(tx, {
      accountId: account.id, email: input.owner.email, name: input.owner.name, password: input.owner.password, role: 'owner', permissions: [...permissions], shops: null,
    });
    await trx('setup_tokens').where({ id: row!.id }).update({ used_at: now, account_id: account.id });
    return { accountId: account.id, accountCode: account.code, personId };
  });
}
