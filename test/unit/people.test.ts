/** Pure rules of people (D27): what a person may grant, the words of every scope, and safe return paths after sign-in. */
import test from 'ava';
import { safeReturnPath } from '../../api/app/session.js';
import { allScopes, sensitiveScopes, writeScopes } from '../../src/auth/scopes.js';
import { capabilities } from '../../src/capabilities/registry.js';
import { scopesByArea, scopeWordsComplete } from '../../src/auth/scopeWords.js';
import { AppError } from '../../src/errors.js';
import { checkPasswordRules } from '../../src/people/passwords.js';
import { effectivePermissions, scopePermission, type Person } from '../../src/people/model.js';
import { assertWithinRights, assertWriteModeWithinRights, grantableScopes, grantableWriteModes, narrowToPerson } from '../../src/people/rights.js';

const person = (role: Person['role'], permissions: string[], shops: string[] | null): Pick<Person, 'permissions' | 'shopCodes'> => ({
  permissions: effectivePermissions(role, permissions), shopCodes: shops ? new Set(shops) : null,
});

test('Every scope has words and an area, and sensitive scopes are marked', (t) => {
  t.true(scopeWordsComplete());
  const flat = scopesByArea([...allScopes]).flatMap((g) => g.scopes);
  t.is(flat.length, allScopes.length);
  t.deepEqual(flat.filter((s) => s.sensitive).map((s) => s.scope).sort(), ['automations:write', 'availabilities:draft', 'personal-data:read', 'purchase-prices:read', 'purchasing:read', 'reports:read']);
});

test('When a person lacks a permission, then the scopes of that data are not grantable', (t) => {
  const member = grantableScopes(person('member', [], null));
  for (const scope of ['purchase-prices:read', 'purchasing:read', 'personal-data:read', 'chatbot-conversations:read', 'reports:read', 'webhooks:read', 'automations:write']) {
    t.false(member.includes(scope as never), scope);
  }
  t.true(member.includes('orders:read'));
  t.deepEqual(grantableScopes(person('owner', [], null)), [...allScopes]);
  t.true(grantableScopes(person('member', ['webhooks:manage'], null)).includes('webhooks:read'));
  t.true(grantableScopes(person('admin', ['automations:edit'], null)).includes('automations:write'));
});

test('When a grant reaches beyond the person, then it is refused with the reason', (t) => {
  const someShops = person('member', ['reports'], ['sk']);
  t.notThrows(() => assertWithinRights(someShops, ['reports:read', 'orders:read'], ['sk']));
  t.is(t.throws(() => assertWithinRights(someShops, ['purchase-prices:read'], ['sk']))?.message.includes('purchase-prices:read'), true);
  t.regex(t.throws(() => assertWithinRights(someShops, ['orders:read'], null))!.message, /all shops/);
  t.regex(t.throws(() => assertWithinRights(someShops, ['orders:read'], ['sk', 'cz']))!.message, /cz/);
});

test('Only paths inside the application are returned to after sign-in', (t) => {
  for (const ok of ['/app', '/app/keys', '/app/webhooks/3?afterId=1', '/oauth/interaction/abc']) t.is(safeReturnPath(ok), ok);
  for (const bad of ['//evil.example', 'https://evil.example/app', '/\\evil.example', '/application', '/app\n/x', 'app', '', undefined, ['/app']]) {
    t.is(safeReturnPath(bad), '/app', String(bad));
  }
});

test('Every write scope, every sensitive scope and every scope of a write tool needs a permission unless its writes wait for approval (S1)', (t) => {
  const needing = new Set(Object.keys(scopePermission));
  for (const scope of [...writeScopes, ...sensitiveScopes]) t.true(needing.has(scope), scope);
  // Proposal tools write only after a person approves (or, in autonomous mode, which itself needs proposals:approve).
  const approvalGated = new Set(['product-content:read', 'category-content:read', 'claims-settings:read']);
  for (const capability of capabilities.filter((c) => c.kind === 'write')) {
    t.true(needing.has(capability.scope) || approvalGated.has(capability.scope), `${capability.name} (${capability.scope})`);
  }
  t.deepEqual([...writeScopes].sort(), ['affiliate:write', 'automations:write', 'availabilities:draft', 'coupons:delete', 'coupons:write']);
});

test('When a person may not approve proposals, then autonomous mode is neither grantable nor kept by a credential (S1)', (t) => {
  const member = person('member', [], null);
  t.deepEqual(grantableWriteModes(member), ['read_only', 'proposals']);
  t.throws(() => assertWriteModeWithinRights(member, 'autonomous'), { message: /autonomous/ });
  t.notThrows(() => assertWriteModeWithinRights(member, 'proposals'));
  t.is(narrowToPerson(member, ['orders:read'], null, 'autonomous').writeMode, 'proposals');
  const approver = person('member', ['proposals:approve'], null);
  t.deepEqual(grantableWriteModes(approver), ['read_only', 'proposals', 'autonomous']);
  t.is(narrowToPerson(approver, ['orders:read'], null, 'autonomous').writeMode, 'autonomous');
  for (const [scope, permission] of [['coupons:write', 'coupons:manage'], ['coupons:delete', 'coupons:manage'], ['affiliate:write', 'affiliate:manage'], ['availabilities:draft', 'proposals:approve']]) {
    t.false(grantableScopes(member).includes(scope as never), scope);
    t.true(grantableScopes(person('member', [permission], null)).includes(scope as never), `${scope} with ${permission}`);
  }
});

test('When a password has 12 or 256 characters, then it is accepted; 11 or 257 are refused with the length reason (O3)', (t) => {
  for (const length of [12, 256]) t.notThrows(() => checkPasswordRules('p'.repeat(length)), String(length));
  for (const length of [11, 257]) {
    const error = t.throws(() => checkPasswordRules('p'.repeat(length)), { instanceOf: AppError }, String(length));
    t.like(error, { code: 'INVALID_PARAMETER', details: { param: 'password', reason: 'length' } }, String(length));
  }
});
