/** Confirmation tokens of D25 without a server: what they are bound to, the order of the checks, and the expiry boundary. */
import test from 'ava';
import { CONFIRMATION_TTL_MS, fingerprint, issueConfirmation, verifyConfirmation } from '../../src/coupons/confirmation.js';
import { encodeCursor } from '../../src/capabilities/cursor.js';
import { AppError } from '../../src/errors.js';
import type { Caller } from '../../src/capabilities/context.js';

const SECRET = 'unit-secret-0123456789abcdef0123456789abcdef';
const NOW = new Date('2026-11-20T11:00:00.000Z');
const caller = (credentialId = 'key-1', account = '1'): Caller => ({
  account: { id: account, code: 'demo', timeZone: 'Europe/Bratislava' }, scopes: new Set(), shopCodes: null, credentialId, interface: 'mcp', writeMode: 'proposals',
});
const args = { market: 'sk', code: 'VITAJ10', changes: { name: 'New' } };

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as AppError).code;
  }
  return 'accepted';
}

test('When a token is verified with the same caller, tool and arguments before it expires, then it is accepted with the preview\'s state', (t) => {
  const issued = issueConfirmation(caller(), 'coupons_update', args, { percent: 10 }, NOW, SECRET);
  t.is(issued.expiresAt, new Date(NOW.getTime() + CONFIRMATION_TTL_MS).toISOString());
  // Key order of the arguments does not matter; the values do.
  const verified = verifyConfirmation(issued.token, caller(), 'coupons_update', { changes: { name: 'New' }, code: 'VITAJ10', market: 'sk' }, new Date(NOW.getTime() + CONFIRMATION_TTL_MS - 1), SECRET);
  t.is(verified.state, fingerprint({ percent: 10 }));
  t.not(issueConfirmation(caller(), 'coupons_update', args, {}, NOW, SECRET).token.split('.')[1], issued.token.split('.')[1], 'every token has its own id');
});

test('When any binding differs, then the check that fails names it: signature, credential, account, tool, arguments, expiry', (t) => {
  const { token } = issueConfirmation(caller(), 'coupons_update', args, {}, NOW, SECRET);
  const verify = (tok: string, who = caller(), tool = 'coupons_update', a: Record<string, unknown> = args, at = NOW, secret = SECRET) => code(() => verifyConfirmation(tok, who, tool, a, at, secret));
  t.is(verify(token), 'accepted');
  t.is(verify(token, caller(), 'coupons_update', args, NOW, 'another-secret-0123456789abcdef0123456789'), 'CONFIRMATION_TOKEN_INVALID');
  t.is(verify(`${token}x`), 'CONFIRMATION_TOKEN_INVALID');
  t.is(verify('cct1.e30'), 'CONFIRMATION_TOKEN_INVALID');
  t.is(verify(encodeCursor({ key: 'k', id: '1' }, null, 'f', SECRET)), 'CONFIRMATION_TOKEN_INVALID', 'a cursor signed with the same secret is no token');
  t.is(verify(token, caller('key-2')), 'CONFIRMATION_TOKEN_OTHER_CREDENTIAL');
  t.is(verify(token, caller('key-1', '2')), 'CONFIRMATION_TOKEN_OTHER_CREDENTIAL');
  t.is(verify(token, caller(), 'coupons_remove'), 'CONFIRMATION_TOKEN_MISMATCH');
  t.is(verify(token, caller(), 'coupons_update', { ...args, changes: { name: 'Other' } }), 'CONFIRMATION_TOKEN_MISMATCH');
  t.is(verify(token, caller(), 'coupons_update', { ...args, changes: { name: 'New', usageLimit: 5 } }), 'CONFIRMATION_TOKEN_MISMATCH');
  t.is(verify(token, caller(), 'coupons_update', args, new Date(NOW.getTime() + CONFIRMATION_TTL_MS)), 'CONFIRMATION_TOKEN_EXPIRED', 'the expiry instant itself is expired');
  // Another credential's expired token is refused for the credential first: nothing about it is revealed to them.
  t.is(verify(token, caller('key-2'), 'coupons_update', args, new Date(NOW.getTime() + CONFIRMATION_TTL_MS)), 'CONFIRMATION_TOKEN_OTHER_CREDENTIAL');
});
