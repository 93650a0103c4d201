/**
 * Inviting a person by e-mail (D27, U11–U14) over real HTTP and a real Postgres: the owner invites, the e-mail row in
 * the outbox carries the link, the invitee sets a password and is signed in; expired, used, revoked and unknown links
 * are refused with nothing created; a member cannot invite; nobody grants a right, role or shop they lack.
 */
import crypto from 'node:crypto';
import type { TestDatabase } from '../helpers/db.js';
import { FormClient, makePerson, applicationServerTest, TEST_PASSWORD, csrfOf } from '../helpers/application.js';
import type { TestServer } from '../helpers/server.js';
import { acceptInvitation, invitePerson, openInvitation } from '../../src/people/invitations.js';
import type { Person } from '../../src/people/model.js';
import { findAccountByCode } from '../../src/queries/shops.js';

const test = applicationServerTest();
type Context = { database: TestDatabase; server: TestServer };

const fresh = (label: string) => `${label}-${crypto.randomBytes(4).toString('hex')}@example.com`;

async function signedInOwner(t: { context: Context }): Promise<FormClient> {
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  const client = new FormClient(t.context.server.baseUrl);
  const signedIn = await client.signIn(owner.email, owner.password);
  if (signedIn.location !== '/app') throw new Error(`owner sign-in failed: ${signedIn.status}`);
  return client;
}

/** Invites through the People page; returns the response and the link from the e-mail row (if one was queued). */
async function invite(client: FormClient, db: TestDatabase['db'], form: Record<string, string | string[]>) {
  const _csrf = await client.csrf('/app/people');
  const response = await client.post('/app/people/invite', { _csrf, ...form });
  const row = await db('email_outbox').where({ recipient: String(form.email).toLowerCase(), event: 'person.invited' }).orderBy('id', 'desc').first();
  const link = row ? /href="([^"]+)"/.exec(row.body_html)?.[1] ?? null : null;
  return { response, row, path: link ? new URL(link).pathname : null, link };
}

test('When an owner invites by e-mail, then the outbox holds the link; the invitee sets a password, is signed in, and signs in later', async (t) => {
  const { db } = t.context.database;
  const owner = await signedInOwner(t);
  const email = fresh('invitee');
  const sent = await invite(owner, db, { email, name: 'Iva Invitee', role: 'member', permissions: ['reports'], shopChoice: 'some', shops: ['sk'] });
  t.is(sent.response.status, 303);
  t.is(sent.response.headers.get('location'), '/app/people?done=invite');
  t.truthy(sent.row);
  t.is(sent.row.source, 'people');
  t.is(sent.row.status, 'queued');
  t.regex(sent.link!, new RegExp(`^${t.context.server.baseUrl}/app/invitation/[A-Za-z0-9_-]{43}$`));
  const token = sent.path!.split('/').pop()!;
  // Only the token's hash is stored with the invitation; it expires 7 days after it was made.
  const stored = await db('person_invitations').where({ email }).first();
  t.deepEqual(stored.token_hash, crypto.createHash('sha256').update(token).digest());
  t.false(JSON.stringify(stored).includes(token));
  t.is(stored.expires_at.getTime() - stored.created_at.getTime(), 7 * 24 * 3600 * 1000);
  // The owner sees it pending on the People page.
  t.regex((await owner.get('/app/people')).text, /data-state="pending"/);

  const invitee = new FormClient(t.context.server.baseUrl);
  const opened = await invitee.get(sent.path!);
  t.is(opened.status, 200);
  t.regex(opened.text, /as <strong>member<\/strong>/);
  const accepted = await invitee.post(sent.path!, { _csrf: csrfOf(opened.text), name: 'Iva', password: TEST_PASSWORD });
  t.is(accepted.status, 303);
  t.is(accepted.headers.get('location'), '/app');
  const home = await invitee.get('/app');
  t.is(home.status, 200);
  t.regex(home.text, /Iva/);
  const person = await db('people').where({ email }).first();
  t.is(person.role, 'member');
  t.deepEqual(person.permissions, ['reports']);
  t.false(person.all_shops);
  t.deepEqual(person.shop_codes, ['sk']);
  t.regex(person.password_hash, /^\$argon2id\$/);

  const later = new FormClient(t.context.server.baseUrl);
  t.deepEqual(await later.signIn(email, TEST_PASSWORD), { status: 303, location: '/app' });

  // The link is good once: opening or posting it again is refused and creates nothing.
  const again = new FormClient(t.context.server.baseUrl);
  const reopened = await again.get(sent.path!);
  t.is(reopened.status, 410);
  t.regex(reopened.text, /used already/);
  const csrf = await again.csrf('/app/sign-in');
  const reposted = await again.post(sent.path!, { _csrf: csrf, password: 'another long password 123' });
  t.is(reposted.status, 410);
  t.is(Number((await db('people').where({ email }).count('* as n'))[0].n), 1);
});

test('When an invitation is past its expiry, then its link is refused and nothing is created; a second before, it opens', async (t) => {
  const { db } = t.context.database;
  const owner = await signedInOwner(t);
  const email = fresh('late');
  const sent = await invite(owner, db, { email, role: 'member', shopChoice: 'all' });
  t.is(sent.response.status, 303);
  const invitee = new FormClient(t.context.server.baseUrl);

  await db('person_invitations').where({ email }).update({ expires_at: new Date(Date.now() + 60_000) });
  const before = await invitee.get(sent.path!);
  t.is(before.status, 200);
  // At the expiry instant itself the link is expired (U12), a millisecond before it still opens.
  const token = sent.path!.split('/').pop()!;
  const expiry = new Date(Date.UTC(2026, 10, 27, 12, 0, 0));
  await db('person_invitations').where({ email }).update({ expires_at: expiry });
  t.like(await openInvitation(db, token, new Date(expiry.getTime() - 1)), { ok: true });
  t.deepEqual(await openInvitation(db, token, expiry), { ok: false, reason: 'expired' });
  await t.throwsAsync(acceptInvitation(db, token, { password: TEST_PASSWORD }, expiry), { message: /expired/ });
  t.is(await db('people').where({ email }).first(), undefined);

  await db('person_invitations').where({ email }).update({ expires_at: new Date(Date.now() - 1000) });
  const after = await invitee.get(sent.path!);
  t.is(after.status, 410);
  t.regex(after.text, /has expired/);
  const posted = await invitee.post(sent.path!, { _csrf: csrfOf(before.text), password: TEST_PASSWORD });
  t.is(posted.status, 410);
  t.is(await db('people').where({ email }).first(), undefined);
  t.false(invitee.cookies.has('sid') && (await invitee.get('/app')).status === 200);
});

test('When a link is unknown or revoked, then a clear page says so and nothing is created', async (t) => {
  const { db } = t.context.database;
  const owner = await signedInOwner(t);
  const visitor = new FormClient(t.context.server.baseUrl);
  const unknown = await visitor.get(`/app/invitation/${crypto.randomBytes(32).toString('base64url')}`);
  t.is(unknown.status, 404);
  t.regex(unknown.text, /not known/);
  t.is((await visitor.get('/app/invitation/short')).status, 404);

  const email = fresh('revoked');
  const sent = await invite(owner, db, { email, role: 'member', shopChoice: 'all' });
  const { id } = await db('person_invitations').where({ email }).first('id');
  const revoked = await owner.post(`/app/people/invitations/${id}/revoke`, { _csrf: await owner.csrf('/app/people') });
  t.is(revoked.status, 303);
  t.is(revoked.headers.get('location'), '/app/people?done=revoke');
  const opened = await visitor.get(sent.path!);
  t.is(opened.status, 410);
  t.regex(opened.text, /withdrawn/);
  t.is(await db('people').where({ email }).first(), undefined);
});

test('When the password breaks the rules, then the invitation stays pending and no person is made', async (t) => {
  const { db } = t.context.database;
  const owner = await signedInOwner(t);
  const email = fresh('short');
  const sent = await invite(owner, db, { email, role: 'member', shopChoice: 'all' });
  const invitee = new FormClient(t.context.server.baseUrl);
  const opened = await invitee.get(sent.path!);
  // 11 characters: one short of the 12 that `people create` requires.
  const refused = await invitee.post(sent.path!, { _csrf: csrfOf(opened.text), password: '12345678901' });
  t.is(refused.status, 400);
  t.is(await db('people').where({ email }).first(), undefined);
  const ok = await invitee.post(sent.path!, { _csrf: csrfOf(opened.text), password: '123456789012' });
  t.is(ok.status, 303);
});

test('When a member without the right posts an invitation, then it is refused and nothing is queued', async (t) => {
  const { db } = t.context.database;
  const member = await makePerson(db, { role: 'member', permissions: ['personal-data', 'reports'] });
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(member.email, member.password);
  const email = fresh('by-member');
  const _csrf = await client.csrf('/app');
  const response = await client.post('/app/people/invite', { _csrf, email, role: 'member', shopChoice: 'all' });
  t.is(response.status, 403);
  t.is(await db('person_invitations').where({ email }).first(), undefined);
  t.is(await db('email_outbox').where({ recipient: email }).first(), undefined);
});

test('When an inviter grants a role, permission or shop they lack, then it is refused; within their own rights it is queued', async (t) => {
  const { db } = t.context.database;
  const account = (await findAccountByCode(db, 'demo'))!;
  const admin = await makePerson(db, { role: 'admin', permissions: ['reports'], shops: ['sk'] });
  const inviter: Person = {
    id: admin.id, accountId: account.id, accountCode: 'demo', accountName: 'Demo', accountTimeZone: 'UTC', email: admin.email, name: '',
    role: 'admin', permissions: new Set(['reports']), shopCodes: new Set(['sk']), totpEnabled: false,
  };
  const now = new Date();
  const base = 'http://localhost';
  const refused = async (input: Parameters<typeof invitePerson>[2]) => (await t.throwsAsync(invitePerson(db, inviter, input, base, now)))!;
  t.is((await refused({ email: fresh('a'), role: 'owner', permissions: [], shops: ['sk'] }) as { code?: string }).code, 'INSUFFICIENT_SCOPE');
  t.is((await refused({ email: fresh('b'), role: 'member', permissions: ['reports', 'personal-data'], shops: ['sk'] }) as { code?: string }).code, 'INSUFFICIENT_SCOPE');
  t.is((await refused({ email: fresh('c'), role: 'member', permissions: [], shops: null }) as { code?: string }).code, 'INSUFFICIENT_SCOPE');
  const otherShop = (await db('shops').where({ account_id: account.id }).whereNot({ code: 'sk' }).first('code'))!.code;
  t.is((await refused({ email: fresh('d'), role: 'member', permissions: [], shops: [otherShop] }) as { code?: string }).code, 'INSUFFICIENT_SCOPE');
  t.is((await refused({ email: admin.email, role: 'member', permissions: [], shops: ['sk'] }) as { code?: string }).code, 'STATE_CONFLICT');
  const within = await invitePerson(db, inviter, { email: fresh('e'), role: 'admin', permissions: ['reports'], shops: ['sk'] }, base, now);
  t.truthy(within.emailId);
});

test('When the E-mails page lists an invitation, then its link is hidden (only the invitee\'s inbox has it)', async (t) => {
  const { db } = t.context.database;
  const owner = await signedInOwner(t);
  const email = fresh('masked');
  const sent = await invite(owner, db, { email, role: 'member', shopChoice: 'all' });
  const token = sent.path!.split('/').pop()!;
  const page = await owner.get('/app/emails');
  t.is(page.status, 200);
  t.true(page.text.includes(email));
  t.false(page.text.includes(token));
  t.regex(page.text, /invitation\/\(link hidden\)/);
});

test('When people of two accounts or of one shop open the E-mails page, then each sees only the e-mails they may: their account\'s, and of their shops or account-wide', async (t) => {
  const { db } = t.context.database;
  const marker = crypto.randomBytes(4).toString('hex');
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  const acme = await db('accounts').where({ code: 'acme' }).first('id');
  const shopOf = async (account: string, code: string) => String((await db('shops').where({ account_id: account, code }).first('id')).id);
  // Newest first on the page: these rows are dated after every other so they are on its first page.
  const row = (accountId: string, shopId: string | null, label: string) => ({
    account_id: accountId, source: 'people', event: 'guards.test', shop_id: shopId, recipient: `${label}-${marker}@example.com`, subject: `${label} ${marker}`,
    body_html: '<p>x</p>', attachments: '[]', status: 'skipped', last_error: 'test row', next_attempt_at: new Date('2099-01-01T00:00:00Z'), created_at: new Date('2099-01-01T00:00:00Z'),
  });
  await db('email_outbox').insert([
    row(String(demo.id), await shopOf(String(demo.id), 'sk'), 'demo-sk'), row(String(demo.id), await shopOf(String(demo.id), 'cz'), 'demo-cz'),
    row(String(demo.id), null, 'demo-account'), row(String(acme.id), null, 'acme-account'),
  ]);
  const seen = async (options: Parameters<typeof makePerson>[1]) => {
    const person = await makePerson(db, options);
    const client = new FormClient(t.context.server.baseUrl);
    await client.signIn(person.email, person.password);
    const page = await client.get('/app/emails');
    return { status: page.status, labels: ['demo-sk', 'demo-cz', 'demo-account', 'acme-account'].filter((l) => page.text.includes(`${l}-${marker}@example.com`)) };
  };
  t.deepEqual(await seen({ account: 'demo', role: 'owner' }), { status: 200, labels: ['demo-sk', 'demo-cz', 'demo-account'] });
  t.deepEqual(await seen({ account: 'demo', role: 'member', permissions: ['personal-data'], shops: ['sk'] }), { status: 200, labels: ['demo-sk', 'demo-account'] });
  t.deepEqual(await seen({ account: 'acme', role: 'owner' }), { status: 200, labels: ['acme-account'] });
  // E-mails carry names and addresses: without personal-data the page is refused.
  t.deepEqual(await seen({ account: 'demo', role: 'member', permissions: [] }), { status: 403, labels: [] });
});

test('When an accepted invitation is revoked, then it is refused (the person is disabled instead) and the invitation stays accepted', async (t) => {
  const { db } = t.context.database;
  const owner = await signedInOwner(t);
  const email = fresh('accepted');
  const sent = await invite(owner, db, { email, role: 'member', shopChoice: 'all' });
  const invitee = new FormClient(t.context.server.baseUrl);
  const opened = await invitee.get(sent.path!);
  t.is((await invitee.post(sent.path!, { _csrf: csrfOf(opened.text), name: 'Ada', password: TEST_PASSWORD })).status, 303);
  const { id } = await db('person_invitations').where({ email }).first('id');
  const revoke = await owner.post(`/app/people/invitations/${id}/revoke`, { _csrf: await owner.csrf('/app/people') });
  t.is(revoke.status, 409);
  t.regex(revoke.text, /accepted already; disable the person instead/);
  const row = await db('person_invitations').where({ id }).first('accepted_at', 'revoked_at');
  t.truthy(row.accepted_at);
  t.is(row.revoked_at, null);
  t.is((await new FormClient(t.context.server.baseUrl).get(sent.path!)).status, 410, 'the used link opens nothing');
  t.is((await db('people').where({ email })).length, 1);
});
