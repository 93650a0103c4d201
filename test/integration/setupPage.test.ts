/**
 * The first-run set-up page (issue 28.2) over real HTTP on a real, empty Postgres: a link creates the account and its
 * owner, who is signed in and sent to Shops; a wrong, expired or used link, a forged form and bad fields create
 * nothing; once an account exists the page is gone for every link; two links used at once make one account.
 * Expected values are SPEC/task literals (24 hours, 12-character passwords), not imported from the code.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { issueSetupToken } from '../../src/setup/firstRun.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { FormClient, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { createEmptyTestDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';

interface Context { database: TestDatabase; server: TestServer }
const test = anyTest as TestFn<Context>;

const HOUR = 3600_000;

test.beforeEach(async (t) => {
  // Each test its own empty service: the first account closes the page for good.
  const database = await createEmptyTestDatabase();
  const server = await startApplicationServer(database.db, testApplicationOptions(), undefined, { platforms: createPlatformRegistry({ db: database.db }) });
  t.context = { database, server };
});
test.afterEach.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

const GOOD = { name: 'Acme EU', code: 'acme-eu', plan: 'growth', timeZone: 'Europe/Vienna', ownerName: 'Olga Owner', email: 'Olga@Acme.example', password: 'twelve-chars' };

const count = async (t: { context: Context }, table: string) => Number((await t.context.database.db(table).count<{ count: string }[]>('* as count').first())!.count);

/** Opens the link's page and returns the client (with its session) and the page's CSRF token. */
async function opened(t: { context: Context }, token: string): Promise<{ client: FormClient; csrf: string; text: string }> {
  const client = new FormClient(t.context.server.baseUrl);
  const page = await client.get(`/app/setup?token=${token}`);
  if (page.status !== 200) throw new Error(`set-up page: ${page.status}`);
  return { client, csrf: /name="_csrf" value="([^"]+)"/.exec(page.text)![1], text: page.text };
}

test('When the owner fills the set-up form, then the account and its owner exist, the owner is signed in on Shops, and the link is used', async (t) => {
  const { db } = t.context.database;
  const token = (await issueSetupToken(db, new Date()))!;
  t.regex(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  const stored = await db('setup_tokens').first('token_hash', 'created_at', 'expires_at');
  t.deepEqual(stored.token_hash, crypto.createHash('sha256').update(token).digest(), 'only the SHA-256 is stored');
  t.is(stored.expires_at.getTime() - stored.created_at.getTime(), 24 * HOUR);

  const { client, csrf, text } = await opened(t, token);
  t.regex(text, /<form method="post" action="\/app\/setup" id="setup">/);
  t.regex(text, /<option value="Europe\/Bratislava">/, 'the IANA zones are offered');
  const done = await client.post('/app/setup', { _csrf: csrf, token, ...GOOD });
  t.is(done.status, 303, done.text.slice(0, 800));
  t.is(done.headers.get('location'), '/app/shops?done=setup');

  const shops = await client.get('/app/shops?done=setup');
  t.is(shops.status, 200, 'signed in as an owner: Shops is for owners only');
  t.regex(shops.text, /The account is ready and you are its owner/);
  t.regex(shops.text, /id="connect-shop"/);
  t.regex(shops.text, /Olga Owner <span class="secondary-text">\(Acme EU\)<\/span>/);

  const account = await db('accounts').first('id', 'code', 'name', 'plan_code', 'time_zone');
  t.like(account, { code: 'acme-eu', name: 'Acme EU', plan_code: 'growth', time_zone: 'Europe/Vienna' });
  const person = await db('people').first('account_id', 'email', 'name', 'role', 'all_shops', 'password_hash');
  t.like(person, { account_id: account.id, email: 'olga@acme.example', name: 'Olga Owner', role: 'owner', all_shops: true });
  t.false(person.password_hash.includes('twelve-chars'), 'the password is stored hashed');
  const used = await db('setup_tokens').first('used_at', 'account_id');
  t.truthy(used.used_at);
  t.is(String(used.account_id), String(account.id));

  // The owner's password works for a new sign-in too.
  const again = new FormClient(t.context.server.baseUrl);
  t.deepEqual(await again.signIn('olga@acme.example', 'twelve-chars'), { status: 303, location: '/app' });
});

test('When the link is missing, wrong, or older than 24 hours, then a coded page says so and nothing is created; a link 1 minute short of 24 hours still opens', async (t) => {
  const { db } = t.context.database;
  const client = new FormClient(t.context.server.baseUrl);
  for (const path of ['/app/setup', '/app/setup?token=', `/app/setup?token=${crypto.randomBytes(32).toString('base64url')}`, '/app/setup?token=%3Cscript%3E', '/app/setup?token=a&token=b']) {
    const page = await client.get(path);
    t.is(page.status, 404, path);
    t.regex(page.text, /<code>setup_link_unknown<\/code>/, path);
  }
  const expired = (await issueSetupToken(db, new Date(Date.now() - 24 * HOUR - 60_000)))!;
  const stale = await client.get(`/app/setup?token=${expired}`);
  t.is(stale.status, 410);
  t.regex(stale.text, /<code>setup_link_expired<\/code>/);
  t.regex(stale.text, /Restart the server/);

  const fresh = (await issueSetupToken(db, new Date(Date.now() - 24 * HOUR + 60_000)))!;
  const { client: owner, csrf } = await opened(t, fresh);
  // The expired link posted with a valid session and CSRF token is refused all the same.
  const posted = await owner.post('/app/setup', { _csrf: csrf, token: expired, ...GOOD });
  t.is(posted.status, 410);
  t.regex(posted.text, /setup_link_expired/);
  t.is(await count(t, 'accounts'), 0);
  t.is(await count(t, 'people'), 0);
});

test('When the form is posted without its CSRF token or from another site, then it is refused and nothing is created', async (t) => {
  const token = (await issueSetupToken(t.context.database.db, new Date()))!;
  const { client, csrf } = await opened(t, token);
  const noToken = await client.post('/app/setup', { token, ...GOOD });
  t.is(noToken.status, 403);
  t.regex(noToken.text, /security token is missing or out of date/);
  const wrongToken = await client.post('/app/setup', { _csrf: `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`, token, ...GOOD });
  t.is(wrongToken.status, 403);
  const foreign = await client.post('/app/setup', { _csrf: csrf, token, ...GOOD }, { Origin: 'https://evil.example' });
  t.is(foreign.status, 403);
  t.regex(foreign.text, /came from another site/);
  t.is(await count(t, 'accounts'), 0);
  // The same form from the page itself goes through: the refusals were the CSRF check's.
  t.is((await client.post('/app/setup', { _csrf: csrf, token, ...GOOD })).status, 303);
});

test('When fields are bad, then each problem is shown beside its field, the other values stay, the password is not echoed, and nothing is created', async (t) => {
  const token = (await issueSetupToken(t.context.database.db, new Date()))!;
  const { client, csrf } = await opened(t, token);
  const bad = await client.post('/app/setup', { _csrf: csrf, token, ...GOOD, code: 'Acme EU', timeZone: 'Europe/Nowhere', password: 'eleven-char' });
  t.is(bad.status, 400);
  t.regex(bad.text, /INVALID_PARAMETER: some fields need a change/);
  t.regex(bad.text, /name="code" required value="Acme EU"[^>]*aria-invalid="true" aria-describedby="code-problem">/);
  t.regex(bad.text, /<small class="field-problem" id="code-problem">`code`: lower-case letters, digits and dashes, 1-32 characters.<\/small>/);
  t.regex(bad.text, /name="timeZone"[^>]*aria-invalid="true"/);
  t.regex(bad.text, /id="timeZone-problem">`timeZone`: `Europe\/Nowhere` is not an IANA time zone such as Europe\/Bratislava.</);
  t.regex(bad.text, /name="password"[^>]*aria-invalid="true"/);
  t.regex(bad.text, /id="password-problem">A password has 12 to 256 characters.</);
  t.notRegex(bad.text, /id="email-problem"/, 'a good field has no problem');
  t.notRegex(bad.text, /name="email"[^>]*aria-invalid/);
  t.regex(bad.text, /name="email" required value="Olga@Acme.example"/, 'the other values stay');
  t.false(bad.text.includes('eleven-char'), 'the password is never written back');

  // The other sides of the boundaries: a 33-character code, a plan that does not exist, a bad e-mail.
  const more = await client.post('/app/setup', { _csrf: csrf, token, ...GOOD, code: 'a'.repeat(33), plan: 'gold', email: 'not-an-address' });
  t.is(more.status, 400);
  t.regex(more.text, /id="code-problem"/);
  t.regex(more.text, /id="plan-problem">`plan`: no plan `gold`; plans are trial, beginner, start, growth, pro, custom.</);
  t.regex(more.text, /id="email-problem">That is not an e-mail address.</);
  t.is(await count(t, 'accounts'), 0);
  t.is(await count(t, 'people'), 0);
  t.is((await t.context.database.db('setup_tokens').first('used_at')).used_at, null, 'the link is still good');

  // 32 characters and a 12-character password are accepted.
  const ok = await client.post('/app/setup', { _csrf: csrf, token, ...GOOD, code: `a${'-'.repeat(30)}z` });
  t.is(ok.status, 303, ok.text.slice(0, 500));
});

test('When a field holds markup, then the page shows it as text', async (t) => {
  const token = (await issueSetupToken(t.context.database.db, new Date()))!;
  const { client, csrf } = await opened(t, token);
  const markup = '<script>alert(1)</script>"><img src=x onerror=alert(2)>';
  const bad = await client.post('/app/setup', { _csrf: csrf, token, ...GOOD, name: markup, code: markup, timeZone: markup });
  t.is(bad.status, 400);
  t.false(bad.text.includes('<script>alert(1)'), 'no raw markup');
  t.false(bad.text.includes('<img src=x'), 'no raw markup');
  t.regex(bad.text, /value="&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&gt;&lt;img src=x onerror=alert\(2\)&gt;"/);
  t.regex(bad.text, /id="timeZone-problem">`timeZone`: `&lt;script&gt;/);
  // Accepted as an account name, it is text on every page after.
  const done = await client.post('/app/setup', { _csrf: csrf, token, ...GOOD, name: markup });
  t.is(done.status, 303);
  const shops = await client.get('/app/shops');
  t.false(shops.text.includes('<script>alert(1)'));
  t.regex(shops.text, /\(&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
});

test('When an account exists, then every link is void: the page answers 404, a post creates nothing, and no new link is issued', async (t) => {
  const { db } = t.context.database;
  const first = (await issueSetupToken(db, new Date()))!;
  const second = (await issueSetupToken(db, new Date()))!;
  const a = await opened(t, first);
  const b = await opened(t, second);
  t.is((await a.client.post('/app/setup', { _csrf: a.csrf, token: first, ...GOOD })).status, 303);

  for (const token of [first, second, 'anything']) {
    const page = await new FormClient(t.context.server.baseUrl).get(`/app/setup?token=${token}`);
    t.is(page.status, 404, token);
    t.regex(page.text, /There is no such page/);
    t.notRegex(page.text, /setup_link/, 'the same 404 as any unknown page');
  }
  // The second link, opened before, posted after: no second account, no owner added to the first.
  const late = await b.client.post('/app/setup', { _csrf: b.csrf, token: second, ...GOOD, code: 'other', email: 'mallory@example.com' });
  t.is(late.status, 404);
  t.is(await count(t, 'accounts'), 1);
  t.deepEqual((await db('people').select('email')).map((p) => p.email), ['olga@acme.example']);
  t.is(await issueSetupToken(db, new Date()), null);
  // The sign-in page no longer points at a set-up link.
  t.notRegex((await new FormClient(t.context.server.baseUrl).get('/app/sign-in')).text, /id="first-run"/);
});

test('When a used link is opened after its account was deleted, then it says it was used (a new start issues a new one)', async (t) => {
  const { db } = t.context.database;
  const token = (await issueSetupToken(db, new Date()))!;
  const { client, csrf } = await opened(t, token);
  t.regex((await client.get('/app/sign-in')).text, /id="first-run"/, 'before set-up the sign-in page points at the link');
  t.is((await client.post('/app/setup', { _csrf: csrf, token, ...GOOD })).status, 303);
  await db('people').delete();
  await db('accounts').delete();
  const page = await new FormClient(t.context.server.baseUrl).get(`/app/setup?token=${token}`);
  t.is(page.status, 410);
  t.regex(page.text, /<code>setup_link_used<\/code>/);
});

test('When two links are used at the same moment, then exactly one account is made', async (t) => {
  const { db } = t.context.database;
  const [x, y] = [(await issueSetupToken(db, new Date()))!, (await issueSetupToken(db, new Date()))!];
  const [a, b] = [await opened(t, x), await opened(t, y)];
  const results = await Promise.all([
    a.client.post('/app/setup', { _csrf: a.csrf, token: x, ...GOOD, code: 'first-a', email: 'a@example.com' }),
    b.client.post('/app/setup', { _csrf: b.csrf, token: y, ...GOOD, code: 'first-b', email: 'b@example.com' }),
  ]);
  t.deepEqual(results.map((r) => r.status).sort(), [303, 404]);
  t.is(await count(t, 'accounts'), 1);
  t.is(await count(t, 'people'), 1);
});

test('When the service already has accounts (the demo data), then the page is not there, whatever the link', async (t) => {
  const demo = await createTestDatabase();
  const server = await startApplicationServer(demo.db, testApplicationOptions());
  try {
    const page = await new FormClient(server.baseUrl).get(`/app/setup?token=${crypto.randomBytes(32).toString('base64url')}`);
    t.is(page.status, 404);
    t.regex(page.text, /There is no such page/);
    t.is(await issueSetupToken(demo.db, new Date()), null);
  } finally {
    await server.close();
    await demo.drop();
  }
});
