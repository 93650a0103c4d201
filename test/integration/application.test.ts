/**
 * The application's pages over real HTTP (no browser): sign-in with lockout and second factor, session fixation,
 * CSRF, security headers, open redirects, keys within the person's rights, secrets shown once, account isolation.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import anyTest, { type TestFn } from 'ava';
import { projectRoot } from '../../src/config/projectRoot.js';
import { generate } from 'otplib';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { FormClient, makePerson, startApplicationServer, testApplicationOptions, TEST_PASSWORD, csrfOf } from '../helpers/application.js';
import { api, issueKey, type TestServer } from '../helpers/server.js';
import { startTotpEnrolment, confirmTotpEnrolment, verifySecondFactor } from '../../src/people/totp.js';
import { checkSecondFactor } from '../../src/people/signIn.js';
import { decryptSecret } from '../../src/webhooks/secrets.js';
import { pauseIfOverLimits } from '../../src/webhooks/pause.js';
import { disablePerson, updatePerson } from '../../src/people/people.js';
import { createSession } from '../../src/people/sessions.js';
import { queueEmail } from '../../src/email/outbox.js';
import { findAccountByCode } from '../../src/queries/shops.js';
import { waitUntil } from '../helpers/wait.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  key: Buffer;
}

const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const options = testApplicationOptions();
  t.context = { database, server: await startApplicationServer(database.db, options), key: options.key };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});


test('When a person signs in, then the session id changes (no fixation) and the old id is worthless', async (t) => {
  const person = await makePerson(t.context.database.db);
  const client = new FormClient(t.context.server.baseUrl);
  const _csrf = await client.csrf();
  const before = client.cookies.get('sid');
  t.truthy(before);
  const signedIn = await client.post('/app/sign-in', { _csrf, email: person.email, password: person.password, next: '/app' });
  t.is(signedIn.status, 303);
  t.is(signedIn.headers.get('location'), '/app');
  const after = client.cookies.get('sid');
  t.truthy(after);
  t.not(after, before);
  const setCookie = signedIn.headers.getSetCookie().join('\n');
  t.regex(setCookie, /HttpOnly/i);
  t.regex(setCookie, /SameSite=Lax/i);
  t.regex((await client.get('/app')).text, new RegExp(person.email));

  // The pre-sign-in id planted by an attacker gives nothing.
  const attacker = new FormClient(t.context.server.baseUrl);
  attacker.cookies.set('sid', before!);
  const page = await attacker.get('/app');
  t.is(page.status, 303);
  t.regex(page.headers.get('location')!, /^\/app\/sign-in/);
});

test('When the password is wrong five times, then the person is locked even with the right password', async (t) => {
  const person = await makePerson(t.context.database.db);
  const client = new FormClient(t.context.server.baseUrl);
  for (let i = 0; i < 4; i++) t.is((await client.signIn(person.email, 'wrong password!!')).status, 401);
  t.is((await client.signIn(person.email, 'wrong password!!')).status, 429);
  t.is((await client.signIn(person.email, person.password)).status, 429);
  // An unknown e-mail answers exactly like a known one (S4): four 401s, then locked, so the lockout names no address.
  const unknown = `nobody-${Date.now()}@example.com`;
  const answers = [];
  for (let i = 0; i < 6; i++) answers.push((await client.signIn(unknown, 'wrong password!!')).status);
  t.deepEqual(answers, [401, 401, 401, 401, 429, 429]);
  const page = await client.signIn(unknown, TEST_PASSWORD);
  t.is(page.status, 429);
});

test('When four wrong passwords are followed by the right one, then the count starts again: one more wrong one does not lock; five wrong in a row then do (O4)', async (t) => {
  const person = await makePerson(t.context.database.db);
  // A fresh client per attempt: a signed-in client is sent away from the sign-in page.
  const attempt = async (password: string) => (await new FormClient(t.context.server.baseUrl).signIn(person.email, password)).status;
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push(await attempt('wrong password!!'));
  statuses.push(await attempt(person.password));
  statuses.push(await attempt('wrong password!!'));
  statuses.push(await attempt(person.password));
  t.deepEqual(statuses, [401, 401, 401, 401, 303, 401, 303], 'four wrong, right, wrong: not locked');
  // The other side: five wrong in a row (counted from the last success) lock, even for the right password.
  const inARow = [];
  for (let i = 0; i < 5; i++) inARow.push(await attempt('wrong password!!'));
  t.deepEqual(inARow, [401, 401, 401, 401, 429]);
  t.is(await attempt(person.password), 429);
});

test('When a person stored as owner@x.example types " Owner@X.Example " with the right password, then they are signed in; with a wrong password they are not (O1)', async (t) => {
  const person = await makePerson(t.context.database.db, { email: 'owner@x.example' });
  const typed = new FormClient(t.context.server.baseUrl);
  const signedIn = await typed.signIn(' Owner@X.Example ', person.password);
  t.is(signedIn.status, 303);
  t.is(signedIn.location, '/app');
  t.regex((await typed.get('/app')).text, /owner@x\.example/);
  t.is((await new FormClient(t.context.server.baseUrl).signIn(' Owner@X.Example ', 'wrong password!!')).status, 401);
  t.is((await new FormClient(t.context.server.baseUrl).signIn('owner@x.example', person.password)).status, 303);
});

test('When wrong second-factor codes are sent, then the fifth locks the second step for the person, even for the right code (S4)', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db);
  const { secret } = await startTotpEnrolment(db, t.context.key, person.id);
  await confirmTotpEnrolment(db, t.context.key, person.id, await generate({ secret, epoch: Math.floor(Date.now() / 1000) }), new Date());
  const attempt = async (client: FormClient, code: string) => {
    const _csrf = await client.csrf('/app/sign-in/second-factor');
    return (await client.post('/app/sign-in/second-factor', { _csrf, code, next: '/app' })).status;
  };
  // Just under the limit: four wrong codes, then the right one still signs in and resets the count.
  const under = new FormClient(t.context.server.baseUrl);
  await under.signIn(person.email, person.password);
  for (let i = 0; i < 4; i++) t.is(await attempt(under, '000000'), 401);
  t.is(await attempt(under, await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 })), 303);
  // At the limit, spread over two clients (two addresses in real life): the count is the person's.
  const first = new FormClient(t.context.server.baseUrl);
  const second = new FormClient(t.context.server.baseUrl);
  await first.signIn(person.email, person.password);
  await second.signIn(person.email, person.password);
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push(await attempt(i % 2 === 0 ? first : second, '000000'));
  t.deepEqual(statuses, [401, 401, 401, 401, 429]);
  t.is(await attempt(first, await generate({ secret })), 429, 'the right code does not pass during the lock');
  t.is((await first.get('/app')).status, 303, 'still signed out');
});

test('When one address tries to sign in 31 times, then 30 are answered and the 31st is refused for the 15-minute window (O4)', async (t) => {
  // The service's own default, not the suite's relaxed value.
  const server = await startApplicationServer(t.context.database.db, testApplicationOptions({ signInAttemptsPerWindow: undefined }));
  t.teardown(() => server.close());
  const client = new FormClient(server.baseUrl);
  const _csrf = await client.csrf();
  const answers = [];
  // A different unknown e-mail each time: the per-address lockout never starts, only the per-client limit counts.
  for (let i = 0; i < 31; i++) answers.push(await client.post('/app/sign-in', { _csrf, email: `limit-${i}-${Date.now()}@example.com`, password: 'wrong password!!', next: '/app' }));
  t.deepEqual(answers.map((a) => a.status), [...Array(30).fill(401), 429]);
  t.regex(answers[0].headers.get('ratelimit-policy') ?? '', /;\s*q=30;\s*w=900\b/);
});

test('When a form arrives without the CSRF token or from another origin, then it is refused', async (t) => {
  const person = await makePerson(t.context.database.db);
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  const keysPage = await client.get('/app/keys');
  const _csrf = csrfOf(keysPage.text);
  const form = { name: 'forged', interfaces: 'rest', scopes: 'orders:read', shopChoice: 'all', expiresInDays: 'never', writeMode: 'read_only' };
  t.is((await client.post('/app/keys', form)).status, 403);
  t.is((await client.post('/app/keys', { ...form, _csrf: 'x'.repeat(43) })).status, 403);
  t.is((await client.post('/app/keys', { ...form, _csrf }, { Origin: 'https://evil.example' })).status, 403);
  const ok = await client.post('/app/keys', { ...form, _csrf });
  t.is(ok.status, 200);
  t.regex(ok.text, /sk_[0-9A-Za-z]{43}/);
});

test('When a page is served, then CSP, frame and content-type protections are set and it is not cached', async (t) => {
  const response = await new FormClient(t.context.server.baseUrl).get('/app/sign-in');
  const csp = response.headers.get('content-security-policy') ?? '';
  t.regex(csp, /frame-ancestors 'none'/);
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /form-action 'self'/);
  t.is(response.headers.get('x-frame-options'), 'DENY');
  t.is(response.headers.get('x-content-type-options'), 'nosniff');
  t.is(response.headers.get('cache-control'), 'no-store');
});

test('When sign-in names another site to return to, then it returns to the application instead', async (t) => {
  const person = await makePerson(t.context.database.db);
  for (const next of ['//evil.example/app', 'https://evil.example/', '/\\evil.example', '/app/../../x', 'javascript:alert(1)']) {
    const client = new FormClient(t.context.server.baseUrl);
    const _csrf = await client.csrf(`/app/sign-in?next=${encodeURIComponent(next)}`);
    const response = await client.post('/app/sign-in', { _csrf, email: person.email, password: person.password, next });
    const location = response.headers.get('location')!;
    t.true(location.startsWith('/app') && !location.startsWith('//'), `${next} → ${location}`);
    t.false(location.includes('evil'), `${next} → ${location}`);
  }
});

test('When the second factor is on, then sign-in needs a current code and a recovery code works once', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db);
  const { secret } = await startTotpEnrolment(db, t.context.key, person.id);
  const { recoveryCodes } = await confirmTotpEnrolment(db, t.context.key, person.id, await generate({ secret, epoch: Math.floor(Date.now() / 1000) }), new Date());
  // The stored secret is encrypted; it is not the secret itself.
  const row = await db('people').where({ id: person.id }).first();
  t.false(Buffer.from(row.totp_secret).includes(Buffer.from(secret)));
  t.is(decryptSecret(t.context.key, `person:${person.id}`, row.totp_secret), secret);

  const client = new FormClient(t.context.server.baseUrl);
  const first = await client.signIn(person.email, person.password);
  t.is(first.status, 303);
  t.regex(first.location!, /^\/app\/sign-in\/second-factor/);
  // Password alone opens nothing.
  t.is((await client.get('/app')).status, 303);
  const pendingSid = client.cookies.get('sid');
  let _csrf = await client.csrf('/app/sign-in/second-factor');
  t.is((await client.post('/app/sign-in/second-factor', { _csrf, code: '000000', next: '/app' })).status, 401);
  const passed = await client.post('/app/sign-in/second-factor', { _csrf, code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }), next: '/app' });
  t.is(passed.status, 303);
  t.not(client.cookies.get('sid'), pendingSid);
  t.is((await client.get('/app')).status, 200);

  const other = new FormClient(t.context.server.baseUrl);
  await other.signIn(person.email, person.password);
  _csrf = await other.csrf('/app/sign-in/second-factor');
  t.is((await other.post('/app/sign-in/second-factor', { _csrf, code: recoveryCodes[0], next: '/app' })).status, 303);
  const third = new FormClient(t.context.server.baseUrl);
  await third.signIn(person.email, person.password);
  _csrf = await third.csrf('/app/sign-in/second-factor');
  t.is((await third.post('/app/sign-in/second-factor', { _csrf, code: recoveryCodes[0], next: '/app' })).status, 401);
});

test('When a code is one 30-second step off it is accepted, two steps off it is refused; ten recovery codes are given (O7)', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db);
  // A fixed instant in the middle of a 30 s step: the neighbouring steps start 15 s before and after it.
  const now = new Date(Date.UTC(2026, 10, 27, 6, 0, 15));
  const seconds = now.getTime() / 1000;
  const { secret } = await startTotpEnrolment(db, t.context.key, person.id);
  const { recoveryCodes } = await confirmTotpEnrolment(db, t.context.key, person.id, await generate({ secret, epoch: seconds - 90 }), new Date(now.getTime() - 90_000));
  t.is(recoveryCodes.length, 10);
  t.is(new Set(recoveryCodes).size, 10);
  const check = async (offsetSeconds: number) => verifySecondFactor(db, t.context.key, person.id, await generate({ secret, epoch: seconds + offsetSeconds }), now);
  // Refusals first: an accepted step is never accepted again, nor an earlier one.
  t.false(await check(-60), 'two steps before');
  t.false(await check(60), 'two steps after');
  t.true(await check(-30), 'one step before');
  t.true(await check(30), 'one step after');
  t.false(await check(30), 'the same code again in its step (a code works once)');
});

test('When one code is sent twice at the same moment, then only one use is accepted (O7: the stored step is a guard, not only a read)', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db);
  const now = new Date(Date.UTC(2026, 10, 27, 7, 0, 15));
  const { secret } = await startTotpEnrolment(db, t.context.key, person.id);
  await confirmTotpEnrolment(db, t.context.key, person.id, await generate({ secret, epoch: now.getTime() / 1000 - 90 }), new Date(now.getTime() - 90_000));
  const code = await generate({ secret, epoch: now.getTime() / 1000 });
  // Hold the person's row so both uses read the same last step and then queue on their updates.
  const holder = await db.transaction();
  try {
    await holder('people').where({ id: person.id }).forUpdate().first('id');
    const uses = [verifySecondFactor(db, t.context.key, person.id, code, now), verifySecondFactor(db, t.context.key, person.id, code, now)];
    await waitUntil(async () => {
      const waiting = await db.raw(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike 'update "people"%'`);
      return waiting.rows[0].n === 2;
    }, 20_000);
    await holder.commit();
    t.deepEqual((await Promise.all(uses)).sort(), [false, true]);
  } finally {
    if (!holder.isCompleted()) await holder.rollback();
  }
  t.is(Number((await db('people').where({ id: person.id }).first('totp_last_step')).totp_last_step), Math.floor(now.getTime() / 30_000));
});

test('When the second step is locked after five wrong codes, then it stays locked for 15 minutes and opens at 15 minutes (S4)', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db);
  const start = new Date(Date.UTC(2026, 10, 27, 6, 0, 15));
  const { secret } = await startTotpEnrolment(db, t.context.key, person.id);
  await confirmTotpEnrolment(db, t.context.key, person.id, await generate({ secret, epoch: start.getTime() / 1000 - 90 }), new Date(start.getTime() - 90_000));
  const at = (ms: number) => new Date(start.getTime() + ms);
  const codeAt = (when: Date) => generate({ secret, epoch: Math.floor(when.getTime() / 1000) });
  const reasons = [];
  for (let i = 0; i < 5; i++) reasons.push(await checkSecondFactor(db, t.context.key, person.id, '000000', at(i * 1000)));
  t.deepEqual(reasons.map((r) => (r.ok ? 'ok' : r.reason)), ['invalid', 'invalid', 'invalid', 'invalid', 'locked']);
  const lockedAt = at(4000);
  const justBefore = new Date(lockedAt.getTime() + 15 * 60_000 - 1);
  t.like(await checkSecondFactor(db, t.context.key, person.id, await codeAt(justBefore), justBefore), { ok: false, reason: 'locked' });
  const atLimit = new Date(lockedAt.getTime() + 15 * 60_000);
  t.deepEqual(await checkSecondFactor(db, t.context.key, person.id, await codeAt(atLimit), atLimit), { ok: true });
});

test('When a person issues a key, then it carries at most their rights and shops, is shown once and can be revoked', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db, { role: 'member', permissions: ['keys:manage'], shops: ['sk'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  const page = await client.get('/app/keys');
  t.is(page.status, 200);
  // Scopes the person lacks are not even offered.
  t.notRegex(page.text, /value="purchase-prices:read"/);
  t.regex(page.text, /value="orders:read"/);
  // A person limited to shops is not offered "all shops, also future ones": only their shops, "only these" chosen.
  t.notRegex(page.text, /name="shopChoice" value="all"/);
  t.regex(page.text, /name="shopChoice" value="some" checked/);
  const _csrf = csrfOf(page.text);
  const base = { _csrf, name: 'shop sk reader', interfaces: 'rest', expiresInDays: '30', writeMode: 'read_only' };
  const beyondScope = await client.post('/app/keys', { ...base, scopes: ['orders:read', 'purchase-prices:read'], shopChoice: 'some', shops: 'sk' });
  t.is(beyondScope.status, 400);
  t.regex(beyondScope.text, /purchase-prices:read/);
  t.is((await client.post('/app/keys', { ...base, scopes: 'orders:read', shopChoice: 'all' })).status, 400);
  t.is((await client.post('/app/keys', { ...base, scopes: 'orders:read', shopChoice: 'some', shops: ['sk', 'cz'] })).status, 400);

  const created = await client.post('/app/keys', { ...base, scopes: ['orders:read', 'stores:read'], shopChoice: 'some', shops: 'sk' });
  t.is(created.status, 200);
  const key = /sk_[0-9A-Za-z]{43}/.exec(created.text)![0];
  t.is((await api(t.context.server, '/orders?market=sk&limit=1', key)).status, 200);
  t.is((await api(t.context.server, '/orders?market=cz&limit=1', key)).status, 403);

  const list = await client.get('/app/keys');
  t.false(list.text.includes(key), 'the key is never shown again');
  const id = /data-key-id="(key_[^"]+)"/.exec(list.text)![1];
  t.is((await client.post(`/app/keys/${id}/revoke`, { _csrf: csrfOf(list.text) })).status, 303);
  t.is((await api(t.context.server, '/orders?market=sk&limit=1', key)).status, 401);
});

test('When a person lacks a permission, then its pages and actions are refused', async (t) => {
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: [] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  t.is((await client.get('/app/keys')).status, 403);
  t.is((await client.get('/app/webhooks')).status, 403);
  const _csrf = csrfOf((await client.get('/app/account')).text);
  t.is((await client.post('/app/keys', { _csrf, name: 'x', interfaces: 'rest', scopes: 'orders:read', shopChoice: 'all' })).status, 403);
  t.is((await client.post('/app/webhooks', { _csrf, name: 'x', url: 'https://example.com/h', eventChoice: 'all', shopChoice: 'all' })).status, 403);
});

test('When two accounts have people, then neither sees the other\'s keys or endpoints', async (t) => {
  const { db } = t.context.database;
  const demoOwner = await makePerson(db, { account: 'demo' });
  const acmeOwner = await makePerson(db, { account: 'acme' });
  const demo = new FormClient(t.context.server.baseUrl);
  await demo.signIn(demoOwner.email, demoOwner.password);
  const keysPage = await demo.get('/app/keys');
  await demo.post('/app/keys', { _csrf: csrfOf(keysPage.text), name: 'demo-only key', interfaces: 'rest', scopes: 'orders:read', shopChoice: 'all', expiresInDays: 'never', writeMode: 'read_only' });
  const endpointPage = await demo.post('/app/webhooks', { _csrf: csrfOf(keysPage.text), name: 'demo-only endpoint', url: 'http://127.0.0.1:9/hook', eventChoice: 'all', shopChoice: 'all' });
  t.is(endpointPage.status, 200, endpointPage.text);
  const endpointId = /\/app\/webhooks\/(\d+)/.exec(endpointPage.text)![1];

  const acme = new FormClient(t.context.server.baseUrl);
  await acme.signIn(acmeOwner.email, acmeOwner.password);
  t.false((await acme.get('/app/keys')).text.includes('demo-only key'));
  t.false((await acme.get('/app/webhooks')).text.includes('demo-only endpoint'));
  t.is((await acme.get(`/app/webhooks/${endpointId}`)).status, 404);
  const _csrf = csrfOf((await acme.get('/app/webhooks')).text);
  t.is((await acme.post(`/app/webhooks/${endpointId}/rotate-secret`, { _csrf })).status, 404);
});

test('When an endpoint is created or its secret rotated, then the secret is shown once and never again', async (t) => {
  const person = await makePerson(t.context.database.db, { role: 'admin', permissions: ['webhooks:manage'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  const list = await client.get('/app/webhooks');
  const created = await client.post('/app/webhooks', { _csrf: csrfOf(list.text), name: 'once', url: 'http://127.0.0.1:9/once', eventChoice: 'some', events: 'order.created', shopChoice: 'all' });
  t.is(created.status, 200, created.text);
  const secret = /whsec_[A-Za-z0-9+/=]+/.exec(created.text)![0];
  const id = /\/app\/webhooks\/(\d+)/.exec(created.text)![1];
  const detail = await client.get(`/app/webhooks/${id}`);
  t.is(detail.status, 200);
  t.false(detail.text.includes(secret));
  t.false(detail.text.includes('whsec_'));
  t.false((await client.get('/app/webhooks')).text.includes('whsec_'));
  const rotated = await client.post(`/app/webhooks/${id}/rotate-secret`, { _csrf: csrfOf(detail.text) });
  const second = /whsec_[A-Za-z0-9+/=]+/.exec(rotated.text)![0];
  t.not(second, secret);
  t.false((await client.get(`/app/webhooks/${id}`)).text.includes('whsec_'));
  // Delete needs the confirmation page's form.
  const confirm = await client.get(`/app/webhooks/${id}/delete`);
  t.regex(confirm.text, /Delete the endpoint/);
  t.is((await client.post(`/app/webhooks/${id}/delete`, { _csrf: csrfOf(confirm.text) })).status, 303);
  t.regex((await client.get(`/app/webhooks/${id}`)).text, /deleted/);
});

test('When the owner runs `people create` without a password, then the generated password signs in, and `people disable` ends it', async (t) => {
  const run = promisify(execFile);
  const cli = async (...args: string[]) => (await run(process.execPath, [path.join(projectRoot, 'dist', 'src', 'entry', 'cli.js'), ...args], {
    env: { ...process.env, DATABASE_URL: t.context.database.url, LOG_LEVEL: 'silent' },
  })).stdout;
  const created = JSON.parse(await cli('people', 'create', '--email', 'Owner.CLI@Example.com', '--role', 'owner', '--json'));
  t.is(created.email, 'owner.cli@example.com');
  t.true(created.password.length >= 20);
  const client = new FormClient(t.context.server.baseUrl);
  t.is((await client.signIn('owner.cli@example.com', created.password)).location, '/app');
  const listed = JSON.parse(await cli('people', 'list', '--json'));
  const row = listed.people.find((p: { email: string }) => p.email === 'owner.cli@example.com');
  t.is(row.role, 'owner');
  t.false(JSON.stringify(listed).includes('argon2'), 'no password hash in the listing');
  await cli('people', 'disable', 'owner.cli@example.com');
  t.is((await client.get('/app')).status, 303, 'the session ended');
  t.is((await client.signIn('owner.cli@example.com', created.password)).status, 401);
});

test('When secrets exist, then no page or API returns a password hash, TOTP secret, key or webhook secret after creation', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db, { role: 'owner' });
  const { secret: totpSecret } = await startTotpEnrolment(db, t.context.key, person.id);
  await confirmTotpEnrolment(db, t.context.key, person.id, await generate({ secret: totpSecret, epoch: Math.floor(Date.now() / 1000) - 30 }), new Date());
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  let _csrf = await client.csrf('/app/sign-in/second-factor');
  await client.post('/app/sign-in/second-factor', { _csrf, code: await generate({ secret: totpSecret }), next: '/app' });
  const keysPage = await client.get('/app/keys');
  _csrf = csrfOf(keysPage.text);
  const keyPage = await client.post('/app/keys', { _csrf, name: 'sweep', interfaces: ['rest', 'mcp'], scopes: ['webhooks:read', 'stores:read'], shopChoice: 'all', expiresInDays: 'never', writeMode: 'read_only' });
  const key = /sk_[0-9A-Za-z]{43}/.exec(keyPage.text)![0];
  const endpointPage = await client.post('/app/webhooks', { _csrf, name: 'sweep', url: 'http://127.0.0.1:9/sweep', eventChoice: 'all', shopChoice: 'all' });
  const whsec = /whsec_[A-Za-z0-9+/=]+/.exec(endpointPage.text)![0];
  const endpointId = /\/app\/webhooks\/(\d+)/.exec(endpointPage.text)![1];
  const hash = (await db('people').where({ id: person.id }).first('password_hash')).password_hash as string;

  const secrets = { key, whsec, totpSecret, hash, password: person.password };
  const pages = ['/app', '/app/keys', '/app/webhooks', `/app/webhooks/${endpointId}`, '/app/account', '/app/connections'];
  for (const path of pages) {
    const page = await client.get(path);
    t.is(page.status, 200, path);
    for (const [name, value] of Object.entries(secrets)) t.false(page.text.includes(value), `${path} shows the ${name}`);
    t.false(page.text.includes('$argon2'), `${path} shows a password hash`);
  }
  for (const path of ['/webhooks/endpoints', `/webhooks/endpoints/${endpointId}`, `/webhooks/endpoints/${endpointId}/deliveries`, '/account/connection']) {
    const response = await api(t.context.server, path, key);
    t.is(response.status, 200, path);
    const text = JSON.stringify(response.body);
    for (const [name, value] of Object.entries(secrets)) t.false(text.includes(value), `REST ${path} returns the ${name}`);
  }
});

test('When an endpoint is paused, then people who see webhooks get the notification, and the plan page shows entitlements with usage', async (t) => {
  const { db } = t.context.database;
  const admin = await makePerson(db, { account: 'acme', role: 'admin', permissions: ['webhooks:manage'] });
  const member = await makePerson(db, { account: 'acme', role: 'member', permissions: [] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(admin.email, admin.password);
  const list = await client.get('/app/webhooks');
  const created = await client.post('/app/webhooks', { _csrf: csrfOf(list.text), name: 'flaky receiver', url: 'http://127.0.0.1:9/flaky', eventChoice: 'all', shopChoice: 'all' });
  const endpointId = /\/app\/webhooks\/(\d+)/.exec(created.text)![1];
  // The service's own pause rule (30 failed attempts in a row), as the endpoint actor runs it.
  await db('webhook_endpoints').where({ id: endpointId }).update({ consecutive_failures: 30 });
  t.true((await pauseIfOverLimits(db, endpointId)).paused);

  const page = await client.get('/app/notifications');
  t.regex(page.text, /Webhook endpoint &quot;flaky receiver&quot; was paused|Webhook endpoint "flaky receiver" was paused/);
  t.regex(page.text, new RegExp(`/app/webhooks/${endpointId}`));
  t.regex(page.text, /new/);
  t.is((await client.post('/app/notifications/read', { _csrf: csrfOf(page.text) })).status, 303);
  t.notRegex((await client.get('/app/notifications')).text, /· new/);

  const other = new FormClient(t.context.server.baseUrl);
  await other.signIn(member.email, member.password);
  t.notRegex((await other.get('/app/notifications')).text, /flaky receiver/, 'no webhook notifications without the webhook permission');
  const plan = await other.get('/app/plan');
  t.regex(plan.text, /id="plan-name">Start</);
  // The feature by its name, its key as secondary text (U-decisions: no raw keys as the only label).
  t.regex(plan.text, /data-feature="webhooks"><td>Webhook endpoints <span class="secondary-text">webhooks<\/span><\/td><td>yes<\/td>\s*<td>5<\/td><td>1<\/td>/);
  // Another account's notifications are never shown.
  const demo = await makePerson(db, { account: 'demo', role: 'owner' });
  const demoClient = new FormClient(t.context.server.baseUrl);
  await demoClient.signIn(demo.email, demo.password);
  t.notRegex((await demoClient.get('/app/notifications')).text, /flaky receiver/);
});

test('When an endpoint is edited, then the new settings are saved under the address rules and only by a person who may change it', async (t) => {
  const { db } = t.context.database;
  const admin = await makePerson(db, { role: 'admin', permissions: ['webhooks:manage'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(admin.email, admin.password);
  const list = await client.get('/app/webhooks');
  const created = await client.post('/app/webhooks', { _csrf: csrfOf(list.text), name: 'to edit', url: 'http://127.0.0.1:9/a', eventChoice: 'all', shopChoice: 'all' });
  const id = /\/app\/webhooks\/(\d+)/.exec(created.text)![1];
  const form = await client.get(`/app/webhooks/${id}/edit`);
  t.regex(form.text, /value="to edit"/);
  const _csrf = csrfOf(form.text);
  const refused = await client.post(`/app/webhooks/${id}/edit`, { _csrf, name: 'edited', url: 'https://10.1.2.3/hook', eventChoice: 'all', shopChoice: 'all' });
  t.is(refused.status, 400);
  t.regex(refused.text, /non-public|public/);
  const saved = await client.post(`/app/webhooks/${id}/edit`, { _csrf, name: 'edited', url: 'http://127.0.0.1:9/b', eventChoice: 'some', events: 'order.created', shopChoice: 'some', shops: 'sk' });
  t.is(saved.status, 303);
  const row = await db('webhook_endpoints').where({ id }).first();
  t.is(row.name, 'edited');
  t.is(row.url, 'http://127.0.0.1:9/b');
  t.deepEqual([row.all_events, row.event_types, row.all_shops, row.shop_codes], [false, ['order.created'], false, ['sk']]);

  // A person who sees only cz cannot change an endpoint of sk.
  const czOnly = await makePerson(db, { role: 'member', permissions: ['webhooks:manage'], shops: ['cz'] });
  const other = new FormClient(t.context.server.baseUrl);
  await other.signIn(czOnly.email, czOnly.password);
  const otherCsrf = csrfOf((await other.get('/app/webhooks')).text);
  const denied = await other.post(`/app/webhooks/${id}/edit`, { _csrf: otherCsrf, name: 'hijack', url: 'http://127.0.0.1:9/c', eventChoice: 'all', shopChoice: 'some', shops: 'cz' });
  t.is(denied.status, 404);
  t.is((await db('webhook_endpoints').where({ id }).first()).name, 'edited');

  // A person who may only see webhooks sees the endpoint, but neither its edit nor its delete page, nor any change.
  const reader = await makePerson(db, { role: 'admin', permissions: ['webhooks:read'] });
  const readerClient = new FormClient(t.context.server.baseUrl);
  await readerClient.signIn(reader.email, reader.password);
  const shown = await readerClient.get(`/app/webhooks/${id}`);
  t.is(shown.status, 200);
  const before = await db('webhook_endpoints').where({ id }).first();
  for (const page of ['edit', 'delete']) t.is((await readerClient.get(`/app/webhooks/${id}/${page}`)).status, 403, `GET ${page}`);
  const readerCsrf = csrfOf(shown.text) || csrfOf((await readerClient.get('/app/account')).text);
  for (const action of ['edit', 'delete', 'enable', 'disable', 'ping']) {
    t.is((await readerClient.post(`/app/webhooks/${id}/${action}`, { _csrf: readerCsrf, name: 'reader', url: 'http://127.0.0.1:9/r', eventChoice: 'all', shopChoice: 'all' })).status, 403, `POST ${action}`);
  }
  t.deepEqual(await db('webhook_endpoints').where({ id }).first(), before);
});

test('When the person who issued a key loses a permission or a shop, or is disabled, then the key is narrowed or refused at the next request', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db, { role: 'member', permissions: ['keys:manage', 'reports', 'proposals:approve', 'coupons:manage'], shops: ['sk', 'cz'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  const page = await client.get('/app/keys');
  const created = await client.post('/app/keys', {
    _csrf: csrfOf(page.text), name: 'reports', interfaces: 'rest,mcp'.split(','), expiresInDays: '30', writeMode: 'autonomous',
    scopes: ['orders:read', 'stores:read', 'reports:read', 'coupons:read', 'coupons:write'], shopChoice: 'some', shops: ['sk', 'cz'],
  });
  t.is(created.status, 200);
  const key = /sk_[0-9A-Za-z]{43}/.exec(created.text)![0];
  const summary = '/reports/financial-summary?market=sk';
  t.is((await api(t.context.server, summary, key)).status, 200);
  t.is((await api(t.context.server, '/orders?market=cz&limit=1', key)).status, 200);
  const before = await api(t.context.server, '/account/connection', key);
  t.is(before.body.data.aiWriteMode, 'autonomous', 'the write mode chosen at issue, not a default');

  t.deepEqual(before.body.data.permissions.find((p: any) => p.area === 'coupons').granted.sort(), ['coupons:read', 'coupons:write']);

  const account = (await findAccountByCode(db, 'demo'))!;
  await updatePerson(db, account.id, person.id, { permissions: ['keys:manage'], shops: ['sk'] });
  t.is((await api(t.context.server, summary, key)).status, 403, 'reports:read went with the permission');
  t.is((await api(t.context.server, '/orders?market=cz&limit=1', key)).status, 403, 'cz went with the shop');
  t.is((await api(t.context.server, '/orders?market=sk&limit=1', key)).status, 200);
  const after = await api(t.context.server, '/account/connection', key);
  t.deepEqual(after.body.data.shops, { all: false, codes: ['sk'] });
  t.deepEqual(after.body.data.permissions.find((p: any) => p.area === 'reports').granted, []);
  // S1: without proposals:approve the key no longer writes without approval; without coupons:manage it no longer writes coupons.
  t.is(after.body.data.aiWriteMode, 'proposals');
  t.deepEqual(after.body.data.permissions.find((p: any) => p.area === 'coupons').granted, ['coupons:read']);

  await disablePerson(db, account.id, person.id);
  const refused = await api(t.context.server, '/orders?market=sk&limit=1', key);
  t.is(refused.status, 401);
  t.is(refused.body.error.code, 'CREDENTIALS_REVOKED');
  const owner = await makePerson(db, { role: 'owner' });
  const ownerClient = new FormClient(t.context.server.baseUrl);
  await ownerClient.signIn(owner.email, owner.password);
  const keyId = (await db('access_keys').where({ person_id: person.id }).first('id')).id;
  const keyRow = new RegExp(`data-key-id="${keyId}"[\\s\\S]*?</tr>`).exec((await ownerClient.get('/app/keys')).text)![0];
  t.regex(keyRow, /stopped: its person is disabled/, 'the owner sees why it stopped');
  // A key of the operator command line (no person) is untouched by people's changes.
  t.is((await api(t.context.server, '/orders?market=sk&limit=1', await issueKey(db))).status, 200);
});

test('When a person without the matching right issues a key, then autonomous mode and write scopes are neither offered nor accepted, and write scopes start unticked', async (t) => {
  const { db } = t.context.database;
  const plain = await makePerson(db, { role: 'member', permissions: ['keys:manage'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(plain.email, plain.password);
  const page = await client.get('/app/keys');
  t.is(page.status, 200);
  t.notRegex(page.text, /<option value="autonomous"/);
  for (const scope of ['coupons:write', 'coupons:delete', 'affiliate:write', 'automations:write', 'availabilities:draft']) t.notRegex(page.text, new RegExp(`value="${scope}"`), scope);
  // Reads open to everyone stay offered and ticked.
  t.regex(page.text, /value="orders:read" checked/);
  const base = { _csrf: csrfOf(page.text), name: 'sneaky', interfaces: 'mcp', expiresInDays: '30', shopChoice: 'all' };
  const autonomous = await client.post('/app/keys', { ...base, scopes: 'product-content:read', writeMode: 'autonomous' });
  t.is(autonomous.status, 400);
  t.regex(autonomous.text, /autonomous/);
  for (const scope of ['coupons:write', 'coupons:delete', 'affiliate:write', 'availabilities:draft']) {
    const refused = await client.post('/app/keys', { ...base, scopes: ['coupons:read', scope], writeMode: 'proposals' });
    t.is(refused.status, 400, scope);
    t.regex(refused.text, new RegExp(scope));
  }
  t.is(await db('access_keys').where({ person_id: plain.id }).count('* as n').first().then((r: any) => Number(r.n)), 0);
  // The other side: with the rights, both are offered (write scopes unticked) and granted.
  const entitled = await makePerson(db, { role: 'member', permissions: ['keys:manage', 'coupons:manage', 'affiliate:manage', 'proposals:approve'] });
  const other = new FormClient(t.context.server.baseUrl);
  await other.signIn(entitled.email, entitled.password);
  const offered = await other.get('/app/keys');
  t.regex(offered.text, /<option value="autonomous"/);
  for (const scope of ['coupons:write', 'coupons:delete', 'affiliate:write', 'availabilities:draft']) {
    t.regex(offered.text, new RegExp(`value="${scope}"`), scope);
    t.notRegex(offered.text, new RegExp(`value="${scope}" checked`), `${scope} unticked by default`);
  }
  const created = await other.post('/app/keys', { ...base, _csrf: csrfOf(offered.text), scopes: ['coupons:read', 'coupons:write', 'affiliate:write'], writeMode: 'autonomous' });
  t.is(created.status, 200, created.text.slice(0, 300));
  t.like(await db('access_keys').where({ person_id: entitled.id }).first(), { write_mode: 'autonomous' });
});

test('When a person who may approve proposals but not edit automations issues a key, then automations:write is neither offered nor granted; with automations:edit it is (O2)', async (t) => {
  const { db } = t.context.database;
  const approver = await makePerson(db, { role: 'member', permissions: ['keys:manage', 'proposals:approve'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(approver.email, approver.password);
  const page = await client.get('/app/keys');
  t.is(page.status, 200);
  t.notRegex(page.text, /value="automations:write"/);
  t.regex(page.text, /value="availabilities:draft"/, 'the approver\'s own write scope is offered');
  const base = { name: 'automation writer', interfaces: 'mcp', expiresInDays: '30', shopChoice: 'all', writeMode: 'proposals' };
  const refused = await client.post('/app/keys', { ...base, _csrf: csrfOf(page.text), scopes: ['automations:read', 'automations:write'] });
  t.is(refused.status, 400);
  t.regex(refused.text, /automations:write/);
  t.is(await db('access_keys').where({ person_id: approver.id }).count('* as n').first().then((r: any) => Number(r.n)), 0);
  // The other side: automations:edit (and nothing else of the writes) offers and grants it.
  const editor = await makePerson(db, { role: 'member', permissions: ['keys:manage', 'automations:edit'] });
  const other = new FormClient(t.context.server.baseUrl);
  await other.signIn(editor.email, editor.password);
  const offered = await other.get('/app/keys');
  t.regex(offered.text, /value="automations:write"/);
  const created = await other.post('/app/keys', { ...base, _csrf: csrfOf(offered.text), scopes: ['automations:read', 'automations:write'] });
  t.is(created.status, 200, created.text.slice(0, 300));
  t.deepEqual([...(await db('access_keys').where({ person_id: editor.id }).first('scopes')).scopes].sort(), ['automations:read', 'automations:write']);
});

test('When a member with keys:manage lists and revokes keys, then only their own are shown and revoked; an owner\'s key stays listed for the owner and working', async (t) => {
  const { db } = t.context.database;
  const owner = await makePerson(db, { role: 'owner' });
  const ownerClient = new FormClient(t.context.server.baseUrl);
  await ownerClient.signIn(owner.email, owner.password);
  const base = { name: 'owner key', interfaces: 'rest', expiresInDays: '30', writeMode: 'read_only', scopes: 'orders:read', shopChoice: 'all' };
  const made = await ownerClient.post('/app/keys', { _csrf: csrfOf((await ownerClient.get('/app/keys')).text), ...base });
  t.is(made.status, 200);
  const ownerKey = /sk_[0-9A-Za-z]{43}/.exec(made.text)![0];
  const ownerKeyId = /data-key-id="(key_[^"]+)"/.exec((await ownerClient.get('/app/keys')).text)![1];
  const member = await makePerson(db, { role: 'member', permissions: ['keys:manage'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(member.email, member.password);
  const own = await client.post('/app/keys', { _csrf: csrfOf((await client.get('/app/keys')).text), ...base, name: 'member key' });
  t.is(own.status, 200);
  const list = await client.get('/app/keys');
  const shown = [...list.text.matchAll(/data-key-id="(key_[^"]+)"/g)].map((m) => m[1]);
  const mine = (await db('access_keys').where({ person_id: member.id }).select('id')).map((r) => String(r.id));
  t.is(mine.length, 1);
  t.deepEqual(shown, mine, 'the member sees their own key only');
  const revoke = await client.post(`/app/keys/${ownerKeyId}/revoke`, { _csrf: csrfOf(list.text) });
  t.is(revoke.status, 404);
  t.is((await api(t.context.server, '/orders?market=sk&limit=1', ownerKey)).status, 200, 'the owner\'s key still works');
  t.regex((await ownerClient.get('/app/keys')).text, new RegExp(`data-key-id="${ownerKeyId}"`));
});

test('When a person who may only see webhooks rotates a secret, then it is refused (403) and the secret stays; a person who may manage them rotates it', async (t) => {
  const { db } = t.context.database;
  const admin = await makePerson(db, { role: 'admin', permissions: ['webhooks:manage'] });
  const manager = new FormClient(t.context.server.baseUrl);
  await manager.signIn(admin.email, admin.password);
  const created = await manager.post('/app/webhooks', { _csrf: csrfOf((await manager.get('/app/webhooks')).text), name: 'read only rotation', url: 'http://127.0.0.1:9/ro', eventChoice: 'all', shopChoice: 'all' });
  t.is(created.status, 200, created.text);
  const id = /\/app\/webhooks\/(\d+)/.exec(created.text)![1];
  const stored = async () => (await db('webhook_endpoints').where({ id }).first('secret_encrypted')).secret_encrypted;
  const before = await stored();

  const readerPerson = await makePerson(db, { role: 'member', permissions: ['webhooks:read'] });
  const reader = new FormClient(t.context.server.baseUrl);
  await reader.signIn(readerPerson.email, readerPerson.password);
  const detail = await reader.get(`/app/webhooks/${id}`);
  t.is(detail.status, 200, 'webhooks:read sees the endpoint');
  const refused = await reader.post(`/app/webhooks/${id}/rotate-secret`, { _csrf: csrfOf(detail.text) });
  t.is(refused.status, 403);
  t.false(refused.text.includes('whsec_'));
  t.deepEqual(await stored(), before);

  const rotated = await manager.post(`/app/webhooks/${id}/rotate-secret`, { _csrf: csrfOf((await manager.get(`/app/webhooks/${id}`)).text) });
  t.is(rotated.status, 200);
  t.regex(rotated.text, /whsec_/);
  t.notDeepEqual(await stored(), before);
});

test('When someone other than the owner posts to the People page, then every action is refused and the person is unchanged; the owner disables (U10)', async (t) => {
  const { db } = t.context.database;
  const target = await makePerson(db, { role: 'member', permissions: ['reports'] });
  const every = ['purchase-prices', 'personal-data', 'reports', 'webhooks:read', 'webhooks:manage', 'automations:edit', 'keys:manage', 'proposals:approve', 'coupons:manage', 'affiliate:manage', 'texts:edit'];
  const invited = `invited-${target.id.slice(-6).toLowerCase()}@example.com`;
  for (const who of [await makePerson(db, { role: 'admin', permissions: every }), await makePerson(db, { role: 'member', permissions: [] })]) {
    const client = new FormClient(t.context.server.baseUrl);
    await client.signIn(who.email, who.password);
    t.is((await client.get('/app/people')).status, 403);
    const _csrf = csrfOf((await client.get('/app/account')).text);
    const actions: Array<[string, Record<string, string | string[]>]> = [
      [`/app/people/${target.id}/disable`, {}],
      [`/app/people/${target.id}/update`, { role: 'admin', permissions: ['keys:manage'], shopChoice: 'all' }],
      [`/app/people/${target.id}/reset-second-factor`, {}],
      ['/app/people/invite', { email: invited, name: 'x', role: 'member', shopChoice: 'all' }],
    ];
    for (const [path, form] of actions) t.is((await client.post(path, { _csrf, ...form })).status, 403, path);
  }
  const row = await db('people').where({ id: target.id }).first('disabled_at', 'role', 'permissions');
  t.deepEqual({ disabled: row.disabled_at, role: row.role, permissions: row.permissions }, { disabled: null, role: 'member', permissions: ['reports'] });
  t.is((await db('person_invitations').where({ email: invited })).length, 0);

  const owner = await makePerson(db, { role: 'owner' });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(owner.email, owner.password);
  const _csrf = csrfOf((await client.get('/app/people')).text);
  const disabled = await client.post(`/app/people/${target.id}/disable`, { _csrf });
  t.is(disabled.status, 303);
  t.is(disabled.headers.get('location'), '/app/people?done=disable');
  t.not((await db('people').where({ id: target.id }).first('disabled_at')).disabled_at, null);
});

test('When a person\'s permissions, role, shops or password change, then their open sessions end; a new name keeps them (U10)', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db, { role: 'member', permissions: ['reports', 'personal-data'], shops: ['sk', 'cz'] });
  const account = (await findAccountByCode(db, 'demo'))!;
  const changes: Array<[string, Parameters<typeof updatePerson>[3], boolean]> = [
    ['name', { name: 'Renamed Person' }, true],
    // As `people set --permissions` sends it: the permissions alone.
    ['permissions', { permissions: ['reports'] }, false],
    ['role', { role: 'admin' }, false],
    ['shops', { shops: ['sk'] }, false],
    ['password', { password: 'another long password 42' }, false],
  ];
  for (const [what, change, keeps] of changes) {
    const { token } = await createSession(db, new Date(), { personId: person.id });
    const browser = new FormClient(t.context.server.baseUrl);
    browser.cookies.set('sid', token);
    t.is((await browser.get('/app')).status, 200, `signed in before the ${what} change`);
    await updatePerson(db, account.id, person.id, change);
    const after = await browser.get('/app');
    if (keeps) t.is(after.status, 200, `still signed in after the ${what} change`);
    else t.deepEqual([after.status, after.headers.get('location')?.startsWith('/app/sign-in')], [303, true], `signed out by the ${what} change`);
  }
});

test.serial('When the E-mails page holds exactly 50 e-mails, then it has no next page; with 51 the 51st is alone on page 2 (U6); newest first, the later id first at one instant; pages run 1..10000', async (t) => {
  const { db } = t.context.database;
  const acme = (await findAccountByCode(db, 'acme'))!;
  const skipped = async () => (await db('email_outbox').where({ account_id: acme.id, status: 'skipped' }).select('id', 'created_at'))
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || Number(b.id) - Number(a.id)).map((r) => String(r.id));
  const existing = (await skipped()).length;
  t.true(existing <= 48, `acme has ${existing} skipped e-mails already`);
  const base = Date.parse('2026-01-05T10:00:00Z');
  // Newest first; the first two share one instant, so the later one (higher id) comes first.
  const add = (i: number) => queueEmail(db, { accountId: acme.id, source: 'people', event: 'paging_check', recipient: 'paging@example.com', subject: `Paging ${i}`, bodyHtml: '<p>paging</p>', skippedReason: 'paging test', now: new Date(base + Math.max(i, 2) * 60_000) });
  for (let i = 1; i <= 50 - existing; i += 1) await add(i);
  const owner = await makePerson(db, { account: 'acme', role: 'owner' });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(owner.email, owner.password);
  const ids = (html: string) => [...html.matchAll(/data-email-id="(\d+)" data-status="(\w+)"/g)].map((m) => `${m[1]}:${m[2]}`);
  const next = /rel="next"|rel="prev"/;

  const full = await client.get('/app/emails?status=skipped');
  t.is(full.status, 200);
  t.deepEqual(ids(full.text), (await skipped()).map((id) => `${id}:skipped`));
  t.is(ids(full.text).length, 50);
  t.false(next.test(full.text), 'exactly 50: no next and no previous page');

  // One more, older than all: it is the 51st, alone on page 2.
  const [oldest] = await db('email_outbox').insert({ account_id: acme.id, source: 'people', event: 'paging_check', recipient: 'paging@example.com', subject: 'Paging oldest', body_html: '<p>paging</p>', attachments: '[]', status: 'skipped', last_error: 'paging test', next_attempt_at: new Date(base - 86_400_000 * 400), created_at: new Date(base - 86_400_000 * 400) }).returning('id');
  const first = await client.get('/app/emails?status=skipped');
  t.is(ids(first.text).length, 50);
  t.regex(first.text, /href="\/app\/emails\?status=skipped&(amp;)?page=2" rel="next"/);
  t.notRegex(first.text, /rel="prev"/);
  const second = await client.get('/app/emails?status=skipped&page=2');
  t.deepEqual(ids(second.text), [`${oldest.id}:skipped`]);
  t.notRegex(second.text, /rel="next"/);
  t.regex(second.text, /href="\/app\/emails\?status=skipped" rel="prev"/);

  t.is((await client.get('/app/emails?page=10000')).status, 200);
  for (const page of ['10001', '0', '-1', '1.5', 'x']) t.is((await client.get(`/app/emails?page=${page}`)).status, 400, `page=${page}`);
});

test('When a person changes their password with a repeat that differs, then it is refused and the old password still signs in', async (t) => {
  const { db } = t.context.database;
  const person = await makePerson(db, { role: 'member', permissions: [] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  const hash = (await db('people').where({ id: person.id }).first('password_hash')).password_hash as string;
  const page = await client.get('/app/account');
  const differ = await client.post('/app/account/password', {
    _csrf: csrfOf(page.text), currentPassword: person.password, newPassword: 'a brand new passphrase 1', repeatPassword: 'a brand new passphrase 2',
  });
  t.is(differ.status, 400);
  t.regex(differ.text, /The new passwords differ/);
  t.is((await db('people').where({ id: person.id }).first('password_hash')).password_hash, hash, 'the stored password is unchanged');
  t.is((await client.get('/app/account')).status, 200, 'the session goes on');

  const same = await client.post('/app/account/password', {
    _csrf: csrfOf(page.text), currentPassword: person.password, newPassword: 'a brand new passphrase 1', repeatPassword: 'a brand new passphrase 1',
  });
  t.is(same.status, 303);
  t.is(same.headers.get('location'), '/app/sign-in');
  t.not((await db('people').where({ id: person.id }).first('password_hash')).password_hash, hash);
  const fresh = new FormClient(t.context.server.baseUrl);
  t.is((await fresh.signIn(person.email, 'a brand new passphrase 1')).location, '/app');
});
