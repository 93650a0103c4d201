/** Pure rules of people (D27): what a person may grant, the words of every scope, and safe return paths after sign-in. */
import test from 'ava';
import { safeReturnPath } from '../../api/app/session.js';
import { allScopes } from '../../src/auth/scopes.js';
import { scopesByArea, scopeWordsComplete } from '../../src/auth/scopeWords.js';
import { effectivePermissions, type Person } from '../../src/people/model.js';
import { assertWithinRights, grantableScopes } from '../../src/people/rights.js';

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
