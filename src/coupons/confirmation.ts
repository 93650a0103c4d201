/**
 * Confirmation tokens of D25 (issue 13): the first call of a coupon change answers with a preview and a token; only a
 * second call carrying the token changes the shop. The token is HMAC-signed (a key derived from the cursor secret),
 * expires after CONFIRMATION_TTL_MS, and is bound to the tool, the exact arguments, the account, the credential (key or
 * OAuth connection) and a fingerprint of the coupon as the shop had it at the preview. Single use is enforced in
 * Postgres (coupon_confirmations, migration 015), inside the transaction that makes the change.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { canonicalJson } from '../automations/drafts.js';
import { AppError } from '../errors.js';
import type { Caller } from '../capabilities/context.js';

/** Ten minutes: enough to read a preview to a person and confirm, short enough that the preview is still the shop's state. */
export const CONFIRMATION_TTL_MS = 10 * 60 * 1000;
const PREFIX = 'cct1';

interface TokenPayload {
  /** Token id: the primary key of its use. */
  id: string;
  tool: string;
  account: string;
  credential: string;
  /** Hash of the call's arguments without the token. */
  args: string;
  /** Fingerprint of the coupon in the shop at the preview. */
  state: string;
  /** Expiry, epoch milliseconds. */
  exp: number;
}

function signingKey(secret: string): Buffer {
  // Derived, so a confirmation token and a pagination cursor can never be swapped for each other.
  return crypto.createHmac('sha256', secret).update('coupon-confirmation/v1').digest();
}

function signature(body: string, secret: string): string {
  return crypto.createHmac('sha256', signingKey(secret)).update(body).digest('base64url');
}

/** SHA-256 of a value as canonical JSON (sorted keys, undefined dropped, Dates as ISO). */
export function fingerprint(value: unknown): string {
  return crypto.createHash('sha256').update(canonicalJson(JSON.parse(JSON.stringify(value ?? null)))).digest('base64url');
}

export interface IssuedToken {
  token: string;
  expiresAt: string;
}

/** Issues a token for `tool` with these arguments, to this caller, over this coupon state. */
export function issueConfirmation(caller: Caller, tool: string, args: Record<string, unknown>, state: unknown, now: Date, secret: string): IssuedToken {
  const exp = now.getTime() + CONFIRMATION_TTL_MS;
  const payload: TokenPayload = {
    id: crypto.randomUUID(), tool, account: caller.account.id, credential: caller.credentialId, args: fingerprint(args), state: fingerprint(state), exp,
  };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return { token: `${PREFIX}.${body}.${signature(body, secret)}`, expiresAt: new Date(exp).toISOString() };
}

export interface VerifiedToken {
  id: string;
  /** The coupon-state fingerprint of the preview; the confirmation compares it with the shop's state now. */
  state: string;
}

function invalid(reason: string): AppError {
  return new AppError('CONFIRMATION_TOKEN_INVALID', `The confirmation token is not valid (${reason}); call without \`confirmationToken\` for a new preview and token.`, { param: 'confirmationToken', reason });
}

/**
 * Checks a token presented with a call, in this order: signature, account and credential, tool and arguments, expiry.
 * Its use (single use) is recorded by `consumeConfirmation` in the transaction of the change.
 */
export function verifyConfirmation(token: string, caller: Caller, tool: string, args: Record<string, unknown>, now: Date, secret: string): VerifiedToken {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) throw invalid('malformed');
  const [, body, sig] = parts;
  const expected = Buffer.from(signature(body, secret));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) throw invalid('signature');
  let payload: TokenPayload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenPayload;
  } catch {
    throw invalid('malformed');
  }
  if (payload.account !== caller.account.id || payload.credential !== caller.credentialId) {
    throw new AppError('CONFIRMATION_TOKEN_OTHER_CREDENTIAL', 'This confirmation token was issued to another key or connection; only the credential that asked for the preview can confirm it.', { param: 'confirmationToken' });
  }
  if (payload.tool !== tool || payload.args !== fingerprint(args)) {
    throw new AppError('CONFIRMATION_TOKEN_MISMATCH', `This confirmation token was issued for other arguments${payload.tool !== tool ? ` (tool ${payload.tool})` : ''}; send exactly the arguments of the preview, or call without \`confirmationToken\` for a new preview.`, { param: 'confirmationToken', issuedFor: payload.tool });
  }
  if (now.getTime() >= payload.exp) {
    throw new AppError('CONFIRMATION_TOKEN_EXPIRED', `This confirmation token expired at ${new Date(payload.exp).toISOString()}; call without \`confirmationToken\` for a new preview.`, { param: 'confirmationToken', expiredAt: new Date(payload.exp).toISOString() });
  }
  return { id: payload.id, state: payload.state };
}

/**
 * Records the token's use in the change's transaction. A second use — also a concurrent one, which waits on the
 * primary key until the first commits — is refused; when the first rolls back (the change failed), the token stays unused.
 */
export async function consumeConfirmation(trx: Knex.Transaction, token: VerifiedToken, use: { caller: Caller; tool: string; shopId: string; code: string; now: Date }): Promise<void> {
  const inserted = await trx('coupon_confirmations')
    .insert({ token_id: token.id, account_id: use.caller.account.id, credential_id: use.caller.credentialId, tool: use.tool, shop_id: use.shopId, coupon_code: use.code, used_at: use.now })
    .onConflict('token_id').ignore().returning('token_id');
  if (inserted.length === 0) {
    throw new AppError('CONFIRMATION_TOKEN_USED', 'This confirmation token was already used; a token confirms one change once. Call without `confirmationToken` for a new preview.', { param: 'confirmationToken' });
  }
}
