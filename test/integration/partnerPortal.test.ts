/**
 * The partner portal (issue 24 point 2) over real HTTP against the real database: unknown portals are 404 pages;
 * closed registration shows its reason; registration, e-mail verification (link from the outbox, expiring),
 * sign-in with lockout, password reset; acceptance of the agreement as a signature record that REST reads; the
 * dashboard's link generator, clicks and code requests under the MCP tools' rules; payout details stored encrypted,
 * shown masked and found in no affiliate REST or MCP answer; partner-entered HTML escaped; the payout statement.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import crypto from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';
import { connectModern } from '../helpers/mcp.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { linkFromOutbox, PortalBrowser } from '../helpers/portal.js';
import { capabilities } from '../../src/capabilities/registry.js';
import { isRestCapability } from '../../src/capabilities/types.js';
import { decideCodeRequest, setPartnerState } from '../../src/affiliate/writes/partners.js';
import { reencryptPayoutDetails } from '../../src/affiliate/portal/payoutDetails.js';
import { TEST_SECRETS } from '../helpers/service.js';
import { listOutbox } from '../../src/email/outbox.js';

interface Context { database: TestDatabase; server: TestServer; key: string; clock: { now: Date }; shop: { id: string; accountId: string } }
const test = anyTest as TestFn<Context>;
const PREFIX = '/portal/demo/sk';
const PASSWORD = 'correct horse battery';
const HOUR_MS = 3_600_000;

test.before(async (t) => {
  const database = await createTestDatabase();
  const clock = { now: TEST_NOW };
  const server = await startTestServer(database.db, () => clock.now);
  const shop = await database.db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' }).first('s.id', 's.account_id');
  Object.assign(t.context, { database, server, clock, key: await issueKey(database.db), shop: { id: String(shop.id), accountId: String(shop.account_id) } });
});
test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

let seq = 0;
const unique = () => `${++seq}${crypto.randomBytes(3).toString('hex')}`;

/** Registers a partner through the form (on `baseUrl`, the shared server unless given); returns the browser, e-mail and handle. */
async function register(t: ExecutionContext<Context>, fields: Partial<Record<string, string>> = {}, language: 'sk' | 'en' = 'en', baseUrl = t.context.server.baseUrl) {
  const id = unique();
  const browser = new PortalBrowser(baseUrl, { language });
  const form = { email: `partner${id}@example.com`, password: PASSWORD, handle: `p${id}`, name: 'Jana Partnerová', web: '', kind: 'blogger', ...fields } as Record<string, string>;
  const res = await browser.submit(`${PREFIX}/register`, `${PREFIX}/register`, form);
  t.is(res.status, 201, res.html);
  const partner = await t.context.database.db('affiliate_partners').where({ account_id: t.context.shop.accountId, handle: form.handle }).first('id');
  return { browser, email: form.email, handle: form.handle, partnerId: String(partner.id) };
}

/** Opens the verification link from the outbox and confirms it. */
async function verify(t: ExecutionContext<Context>, browser: PortalBrowser, email: string) {
  const link = await linkFromOutbox(t.context.database.db, email, 'portal_email_verification');
  const page = await browser.get(link);
  t.is(page.status, 200, page.html);
  const done = await browser.request('POST', link, {});
  t.is(done.status, 200, done.html);
}

async function signIn(browser: PortalBrowser, email: string, password = PASSWORD) {
  return browser.submit(`${PREFIX}/sign-in`, `${PREFIX}/sign-in`, { email, password });
}

async function approve(t: ExecutionContext<Context>, partnerId: string) {
  const shop = { id: t.context.shop.id, code: 'sk', name: 'sk', currency: 'EUR', timeZone: 'Europe/Bratislava' };
  await setPartnerState(t.context.database.db, { accountId: t.context.shop.accountId, shop, now: t.context.clock.now }, { partnerId, action: 'approve' });
}

/** A verified, approved partner who accepted the agreement, signed in. */
async function readyPartner(t: ExecutionContext<Context>, fields: Partial<Record<string, string>> = {}, baseUrl = t.context.server.baseUrl) {
  const p = await register(t, fields, 'en', baseUrl);
  await verify(t, p.browser, p.email);
  await approve(t, p.partnerId);
  t.is((await signIn(p.browser, p.email)).status, 303);
  const docs = await p.browser.get(`${PREFIX}/documents`);
  const versionId = /name="versionId" value="(\d+)"/.exec(docs.html)![1];
  t.is((await p.browser.request('POST', `${PREFIX}/documents/partner-agreement/accept`, { versionId })).status, 303);
  return p;
}

test.serial('When a portal address is unknown, then a 404 page answers; a portal\'s own Host serves its pages at the root', async (t) => {
  const db = t.context.database.db;
  for (const path of ['/portal/demo/nope/', '/portal/nobody/sk/sign-in', '/portal/demo/sk/no-such-page']) {
    const res = await new PortalBrowser(t.context.server.baseUrl).get(path);
    t.is(res.status, 404, path);
    t.regex(res.contentType, /text\/html/, path);
    t.regex(res.html, /There is no such page|Taká stránka neexistuje/, path);
  }
  // The demo's two accounts share portal addresses; one Host must name one portal.
  const acme = db('shops as s').join('accounts as a', 'a.id', 's.account_id').where('a.code', 'acme').select('s.id');
  await db('affiliate_portals').whereIn('shop_id', acme).update({ address: db.raw(`replace(address, 'partners.', 'partners-acme.')`), custom_domain: null });
  const byHost = await new PortalBrowser(t.context.server.baseUrl, { host: 'partners.domov-kuchyna.sk' }).get('/sign-in');
  t.is(byHost.status, 200, byHost.html);
  t.regex(byHost.html, /action="\/sign-in"/);
  const unknownHost = await new PortalBrowser(t.context.server.baseUrl, { host: 'partners.unknown.example' }).get('/sign-in');
  t.is(unknownHost.status, 404);
  t.notRegex(unknownHost.html, /action="\/sign-in"/);
});

test('When registration is closed, then the register page shows the programme\'s reason and a registration is refused', async (t) => {
  const db = t.context.database.db;
  const cz = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'cz' }).first('s.id');
  await db('affiliate_portals').where({ shop_id: cz.id }).update({ registration_open: false, registration_closed_reason: 'Full until spring <b>2027</b>' });
  const browser = new PortalBrowser(t.context.server.baseUrl);
  const page = await browser.get('/portal/demo/cz/register');
  t.is(page.status, 200);
  t.true(page.html.includes('Full until spring &lt;b&gt;2027&lt;/b&gt;'), 'the reason, escaped');
  t.notRegex(page.html, /name="password"/, 'no form while closed');
  const email = `closed${unique()}@example.com`;
  // A form token from the portal's sign-in page: the refusal must come from the rule, not from CSRF.
  await browser.get('/portal/demo/cz/sign-in');
  const refused = await browser.request('POST', '/portal/demo/cz/register', { email, password: PASSWORD, handle: `c${unique()}`, name: 'Closed Door', web: '', kind: 'blogger' });
  t.is(refused.status, 403);
  t.true(refused.html.includes('Full until spring &lt;b&gt;2027&lt;/b&gt;'));
  t.falsy(await db('affiliate_partner_logins').where({ email }).first());
  // The other side: the sk portal is open and has the form.
  t.regex((await browser.get(`${PREFIX}/register`)).html, /name="password"/);
});

test('When a partner registers with bad input, then each field is refused with its reason and nothing is stored', async (t) => {
  const db = t.context.database.db;
  const browser = new PortalBrowser(t.context.server.baseUrl);
  const base = { email: `bad${unique()}@example.com`, password: PASSWORD, handle: `b${unique()}`, name: 'Bad Input', web: '', kind: 'blogger' };
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ password: 'elevenchars' }, /12 to 256 characters/],
    [{ email: 'not-an-email' }, /not an e-mail address/],
    [{ handle: 'a b' }, /3 to 32 letters/],
    [{ handle: 'ab' }, /3 to 32 letters/],
    [{ kind: 'spammer' }, /The kind is one of/],
    [{ web: 'javascript:alert(1)' }, /http or https/],
  ];
  for (const [override, message] of cases) {
    const res = await browser.submit(`${PREFIX}/register`, `${PREFIX}/register`, { ...base, ...override });
    t.is(res.status, 400, JSON.stringify(override));
    t.regex(res.html, message, JSON.stringify(override));
  }
  t.falsy(await db('affiliate_partners').where({ handle: base.handle }).first());
  // Twelve characters is the shortest password taken (the other side of the bound).
  const ok = await browser.submit(`${PREFIX}/register`, `${PREFIX}/register`, { ...base, password: 'twelve chars' });
  t.is(ok.status, 201, ok.html);
  const again = await new PortalBrowser(t.context.server.baseUrl).submit(`${PREFIX}/register`, `${PREFIX}/register`, { ...base, handle: `o${unique()}` });
  t.is(again.status, 409);
  t.regex(again.html, /exists already/);
});

test('When a partner registers, verifies the e-mail and signs in, then a partner session (not a staff one) opens the dashboard', async (t) => {
  const db = t.context.database.db;
  const staffSessions = Number((await db('app_sessions').count<{ n: string }[]>({ n: '*' }))[0].n);
  const { browser, email, partnerId } = await register(t);
  const partner = await db('affiliate_partners').where({ id: partnerId }).first('state', 'email', 'language');
  t.deepEqual({ ...partner }, { state: 'waiting', email, language: 'en' });
  const mail = await db('email_outbox').where({ recipient: email, event: 'portal_email_verification' }).first('status', 'shop_id', 'partner_id');
  t.deepEqual({ status: mail.status, shop: String(mail.shop_id), partner: String(mail.partner_id) }, { status: 'queued', shop: t.context.shop.id, partner: partnerId });
  // Staff read the e-mail on the E-mails page, never its usable link.
  const outbox = await listOutbox(db, t.context.shop.accountId, { limit: 50, shopCodes: null });
  const shown = outbox.find((e) => e.event === 'portal_email_verification' && e.recipient === email)!;
  t.regex(shown.bodyHtml, /\/verify-email\/\(link hidden\)/);
  const login = await db('affiliate_partner_logins').where({ partner_id: partnerId }).first('password_hash', 'email_verified_at');
  t.true(login.password_hash.startsWith('$argon2id$'));
  t.is(login.email_verified_at, null);

  // Before verification: refused, and a fresh link is sent.
  const early = await signIn(browser, email);
  t.is(early.status, 403);
  t.regex(early.html, /not verified yet/);
  t.is((await db('email_outbox').where({ recipient: email, event: 'portal_email_verification' })).length, 2);

  await verify(t, browser, email);
  const link = await linkFromOutbox(db, email, 'portal_email_verification');
  const reused = await browser.request('POST', link, {});
  t.is(reused.status, 410);
  t.regex(reused.html, /LINK_EXPIRED/);

  const res = await signIn(browser, email);
  t.is(res.status, 303, res.html);
  t.is(res.location, `${PREFIX}/dashboard`);
  const cookie = res.setCookies.find((c) => c.startsWith('psid='))!;
  t.regex(cookie, /Path=\/portal\/demo\/sk/);
  t.regex(cookie, /HttpOnly/);
  t.regex(cookie, /SameSite=Lax/);
  // The agreement (confirmed at registration) comes before the dashboard, for a waiting partner too.
  const gate = await browser.get(`${PREFIX}/dashboard`);
  t.is(gate.status, 303);
  t.is(gate.location, `${PREFIX}/documents`);
  const docs = await browser.get(`${PREFIX}/documents`);
  const versionId = /name="versionId" value="(\d+)"/.exec(docs.html)![1];
  t.is((await browser.request('POST', `${PREFIX}/documents/partner-agreement/accept`, { versionId })).status, 303);
  const dashboard = await browser.get(`${PREFIX}/dashboard`);
  t.is(dashboard.status, 200);
  t.regex(dashboard.html, /data-partner-state="waiting"/);
  t.regex(dashboard.html, /waiting for approval/);
  t.is(Number((await db('app_sessions').count<{ n: string }[]>({ n: '*' }))[0].n), staffSessions, 'no staff session was made');
  t.is((await db('affiliate_portal_sessions').where({ partner_id: partnerId })).length, 1);
  // The partner's cookie opens nothing in the application.
  const app = await fetch(`${t.context.server.baseUrl}/app`, { headers: { Cookie: `sid=${cookie.split(';')[0].split('=')[1]}` }, redirect: 'manual' });
  t.is(app.status, 303);
  t.regex(app.headers.get('location') ?? '', /\/app\/sign-in/);
  // The same cookie carried to another shop's portal is no session there.
  const elsewhere = await fetch(`${t.context.server.baseUrl}/portal/demo/cz/dashboard`, { headers: { Cookie: cookie.split(';')[0] }, redirect: 'manual' });
  t.is(elsewhere.status, 303);
  t.is(elsewhere.headers.get('location'), '/portal/demo/cz/sign-in');
  // Signing out ends it.
  t.is((await browser.request('POST', `${PREFIX}/sign-out`, {})).status, 303);
  t.is((await browser.get(`${PREFIX}/dashboard`)).status, 303);
});

test.serial('When a verification link is 24 hours old, then it has expired; a moment earlier it still works', async (t) => {
  const { clock } = t.context;
  const { browser, email } = await register(t);
  const link = await linkFromOutbox(t.context.database.db, email, 'portal_email_verification');
  try {
    clock.now = new Date(TEST_NOW.getTime() + 24 * HOUR_MS - 1);
    t.is((await browser.get(link)).status, 200);
    clock.now = new Date(TEST_NOW.getTime() + 24 * HOUR_MS);
    const expired = await browser.get(link);
    t.is(expired.status, 410);
    t.regex(expired.html, /expired or was used/);
    t.is((await browser.request('POST', link, {})).status, 410);
  } finally {
    clock.now = TEST_NOW;
  }
});

test.serial('When a wrong password is given five times, then the partner account is locked for 15 minutes, even for the right password', async (t) => {
  const { clock } = t.context;
  const { browser, email } = await register(t);
  await verify(t, browser, email);
  try {
    for (let i = 1; i <= 4; i++) t.is((await signIn(browser, email, 'wrong password!')).status, 401, `attempt ${i}`);
    const fifth = await signIn(browser, email, 'wrong password!');
    t.is(fifth.status, 429);
    t.regex(fifth.html, /locked for 15 minutes/);
    t.is((await signIn(browser, email)).status, 429, 'locked even with the right password');
    clock.now = new Date(TEST_NOW.getTime() + 15 * 60_000 - 1);
    t.is((await signIn(browser, email)).status, 429);
    clock.now = new Date(TEST_NOW.getTime() + 15 * 60_000 + 1);
    t.is((await signIn(browser, email)).status, 303);
  } finally {
    clock.now = TEST_NOW;
  }
});

test('When a partner gives four wrong passwords and then the right one, then the count starts again: one more wrong one does not lock; five wrong in a row then do', async (t) => {
  // A server of its own, so these thirteen sign-ins do not use up the shared server's per-address limit (30 in 15 minutes).
  const server = await startTestServer(t.context.database.db, () => t.context.clock.now);
  t.teardown(() => server.close());
  const { browser, email } = await register(t, {}, 'en', server.baseUrl);
  await verify(t, browser, email);
  // A fresh browser per attempt: a signed-in one is sent on from the sign-in page.
  const attempt = async (password?: string) => (await signIn(new PortalBrowser(server.baseUrl), email, password)).status;
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push(await attempt('wrong password!'));
  statuses.push(await attempt());
  statuses.push(await attempt('wrong password!'));
  statuses.push(await attempt());
  t.deepEqual(statuses, [401, 401, 401, 401, 303, 401, 303], 'four wrong, right, wrong: not locked');
  const inARow = [];
  for (let i = 0; i < 5; i++) inARow.push(await attempt('wrong password!'));
  t.deepEqual(inARow, [401, 401, 401, 401, 429]);
  t.is(await attempt(), 429, 'locked even with the right password');
});

test('When one address tries to sign in to a portal 31 times, then 30 are answered and the 31st is refused for the 15-minute window (O4)', async (t) => {
  // A server of its own: its limiter's count starts at zero and no other test's sign-in is refused by this one.
  const server = await startTestServer(t.context.database.db, () => t.context.clock.now);
  t.teardown(() => server.close());
  const browser = new PortalBrowser(server.baseUrl, { language: 'en' });
  const answers = [];
  // A different unknown e-mail each time: no address is locked, only the per-client limit counts.
  for (let i = 0; i < 31; i++) answers.push(await signIn(browser, `limit-${i}-${unique()}@example.com`, 'wrong password!'));
  t.deepEqual(answers.map((a) => a.status), [...Array(30).fill(401), 429]);
  t.regex(String(answers[0].headers['ratelimit-policy'] ?? ''), /;\s*q=30;\s*w=900\b/);
});

test.serial('When a partner resets the password by the e-mailed link, then the new one works, the old one not, and the link works once within 1 hour', async (t) => {
  const db = t.context.database.db;
  const { clock } = t.context;
  const { browser, email, partnerId } = await register(t);
  await verify(t, browser, email);
  // An address of nobody gets the same answer and no e-mail.
  const nobody = `nobody${unique()}@example.com`;
  const unknown = await browser.submit(`${PREFIX}/forgot-password`, `${PREFIX}/forgot-password`, { email: nobody });
  const known = await browser.submit(`${PREFIX}/forgot-password`, `${PREFIX}/forgot-password`, { email });
  t.is(unknown.status, 200);
  t.is(known.status, 200);
  t.is(unknown.html.replace(/name="_csrf" value="[^"]+"/, ''), known.html.replace(/name="_csrf" value="[^"]+"/, ''));
  t.falsy(await db('email_outbox').where({ recipient: nobody }).first());
  const link = await linkFromOutbox(db, email, 'portal_password_reset');
  // A browser signed in with the old password before the reset: the reset ends its session (like O5 in the application).
  const earlier = new PortalBrowser(t.context.server.baseUrl);
  t.is((await signIn(earlier, email)).status, 303);
  const sessionsOf = async () => Number((await db('affiliate_portal_sessions').where({ partner_id: partnerId }).count({ n: '*' }).first())!.n);
  t.true(await sessionsOf() >= 1, 'signed in before the reset');
  t.not((await earlier.get(`${PREFIX}/dashboard`)).location, `${PREFIX}/sign-in`, 'the earlier session works before the reset');
  try {
    clock.now = new Date(TEST_NOW.getTime() + HOUR_MS - 1);
    const form = await browser.get(link);
    t.is(form.status, 200);
    const short = await browser.request('POST', link, { password: 'elevenchars' });
    t.is(short.status, 400);
    t.is((await browser.request('POST', link, { password: 'a brand new password' })).status, 200);
    t.is(await sessionsOf(), 0, 'the reset ends every session of the partner');
    t.is((await earlier.get(`${PREFIX}/dashboard`)).location, `${PREFIX}/sign-in`, 'the earlier browser is signed out');
    t.is((await browser.request('POST', link, { password: 'another new password' })).status, 410, 'a link works once');
    t.is((await signIn(new PortalBrowser(t.context.server.baseUrl), email)).status, 401, 'the old password no longer works');
    t.is((await signIn(new PortalBrowser(t.context.server.baseUrl), email, 'a brand new password')).status, 303);
    // A second link, one hour old, has expired.
    clock.now = TEST_NOW;
    await browser.submit(`${PREFIX}/forgot-password`, `${PREFIX}/forgot-password`, { email });
    const second = await linkFromOutbox(db, email, 'portal_password_reset');
    clock.now = new Date(TEST_NOW.getTime() + HOUR_MS);
    t.is((await browser.get(second)).status, 410);
  } finally {
    clock.now = TEST_NOW;
  }
  t.truthy(partnerId);
});

test('When an approved partner signs in, then the agreement comes first, and accepting it writes the signature REST reads; a second acceptance is refused', async (t) => {
  const db = t.context.database.db;
  const p = await register(t, {}, 'sk');
  await verify(t, p.browser, p.email);
  await approve(t, p.partnerId);
  await signIn(p.browser, p.email);
  const gate = await p.browser.get(`${PREFIX}/dashboard`);
  t.is(gate.status, 303);
  t.is(gate.location, `${PREFIX}/documents`);
  const docs = await p.browser.get(`${PREFIX}/documents`);
  t.regex(docs.html, /data-document="partner-agreement"/);
  // The privacy notice (confirm `never`) is shown to read, without an accept button.
  t.regex(docs.html, /data-document="privacy-notice"[\s\S]*?For your information|data-document="privacy-notice"[\s\S]*?Na informáciu/);
  const versionId = /action="\/portal\/demo\/sk\/documents\/partner-agreement\/accept">\s*<input type="hidden" name="_csrf" value="[^"]+">\s*<input type="hidden" name="versionId" value="(\d+)"/.exec(docs.html)![1];
  const version = await db('affiliate_document_versions').where({ id: versionId }).first('version', 'language', 'status', 'text_sha256', 'pdf_sha256');
  t.deepEqual({ version: version.version, language: version.language, status: version.status }, { version: 2, language: 'sk', status: 'published' });

  // PP5: until the agreement is accepted every signed-in page but documents and sign-out sends the partner to the
  // documents, its forms included: no code request, link or payout details is taken.
  const requestedCode = `GATE${unique().toUpperCase()}`.slice(0, 20);
  const gatedForms: Array<[string, Record<string, string>]> = [
    ['/code-requests', { code: requestedCode }],
    ['/links', { target: 'home', productCode: '', categoryGuid: '', campaignId: '' }],
    ['/payout-details', { iban: 'SK3112000000198742637541', accountHolder: 'Jana Partnerová', taxId: '' }],
  ];
  for (const [path, form] of gatedForms) {
    const gated = await p.browser.request('POST', `${PREFIX}${path}`, form);
    t.is(gated.status, 303, `POST ${path} before the agreement`);
    t.is(gated.location, `${PREFIX}/documents`, `POST ${path} before the agreement`);
  }
  for (const path of ['/payout-details', '/dashboard']) t.is((await p.browser.get(`${PREFIX}${path}`)).location, `${PREFIX}/documents`, `GET ${path}`);
  t.is((await db('affiliate_code_requests').where({ partner_id: p.partnerId })).length, 0, 'no code request before the agreement');
  t.is((await db('affiliate_payout_details').where({ partner_id: p.partnerId })).length, 0, 'no payout details before the agreement');

  const accepted = await p.browser.request('POST', `${PREFIX}/documents/partner-agreement/accept`, { versionId });
  t.is(accepted.status, 303);
  t.is(accepted.location, `${PREFIX}/dashboard`);
  const row = await db('affiliate_signatures').where({ partner_id: p.partnerId }).first('id');
  const res = await api(t.context.server, `/affiliate/signatures/${row.id}`, t.context.key);
  t.is(res.status, 200, JSON.stringify(res.body));
  const s = res.body.data;
  t.is(s.partnerHandle, p.handle);
  t.is(s.documentKey, 'partner-agreement');
  t.is(s.version, 2);
  t.is(s.language, 'sk');
  t.is(s.market, 'sk');
  t.is(s.method, 'click_wrap');
  t.is(s.verification, 'email_link');
  t.is(s.state, 'valid');
  t.is(s.signedAt, TEST_NOW.toISOString());
  t.deepEqual(s.fingerprints, { textSha256: version.text_sha256.trim(), pdfSha256: version.pdf_sha256?.trim() ?? null });
  t.is(s.signedText, `Zmluva o partnerskom programe Partner programme (verzia 2) medzi prevádzkovateľom obchodu ${s.valuesSnapshot['shop.name']} a partnerom ${p.handle}. Provízia 8 %, klik platí 30 dní, výplata od 50.00 EUR.`);
  t.is(s.valuesSnapshot['partner.handle'], p.handle);
  t.false('partner.name' in s.valuesSnapshot, 'no contact data in the snapshot');
  t.false(JSON.stringify(s).includes(p.email), 'no e-mail in the signature');
  // It is listed, and the partner no longer lacks it.
  const lacking = await api(t.context.server, '/affiliate/signatures?status=lacking', t.context.key);
  t.false(JSON.stringify(lacking.body).includes(`"${p.handle}"`));

  const second = await p.browser.request('POST', `${PREFIX}/documents/partner-agreement/accept`, { versionId });
  t.is(second.status, 409);
  t.regex(second.html, /accepted version 2 of .*already/);
  t.is((await db('affiliate_signatures').where({ partner_id: p.partnerId })).length, 1);
  const reading = await p.browser.request('POST', `${PREFIX}/documents/privacy-notice/accept`, { versionId });
  t.is(reading.status, 409);
  t.is((await p.browser.get(`${PREFIX}/dashboard`)).status, 200);
  // The same code request after the agreement is filed.
  const filed = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: requestedCode });
  t.is(filed.location, `${PREFIX}/dashboard?requested=1`);
  t.deepEqual((await db('affiliate_code_requests').where({ partner_id: p.partnerId })).map((r) => r.requested_code), [requestedCode]);
});

test('When a partner generates a link on the dashboard, then it is the MCP tool\'s link under the same rules, and following it counts a click', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  const product = await db('products').where({ shop_id: t.context.shop.id }).orderBy('id').first('code');
  await p.browser.get(`${PREFIX}/dashboard`);
  const missing = await p.browser.request('POST', `${PREFIX}/links`, { target: 'product', productCode: '', categoryGuid: '', campaignId: '' });
  t.is(missing.status, 404, 'an empty product code names no product');
  const unknown = await p.browser.request('POST', `${PREFIX}/links`, { target: 'product', productCode: 'NO-SUCH-PRODUCT', categoryGuid: '', campaignId: '' });
  t.is(unknown.status, 404);
  t.regex(unknown.html, /No product `NO-SUCH-PRODUCT`/);
  const badTarget = await p.browser.request('POST', `${PREFIX}/links`, { target: 'checkout', productCode: '', categoryGuid: '', campaignId: '' });
  t.is(badTarget.status, 400);
  const made = await p.browser.request('POST', `${PREFIX}/links`, { target: 'product', productCode: product.code, categoryGuid: '', campaignId: '' });
  t.is(made.status, 200, made.html);
  const url = /data-generated-link><code>([^<]+)<\/code>/.exec(made.html)![1].replace(/&amp;/g, '&');
  const viaRest = await api(t.context.server, `/affiliate/links/generate?market=sk&partnerId=${p.partnerId}&target=product&productCode=${encodeURIComponent(product.code)}`, t.context.key);
  t.is(url, viaRest.body.data.url);
  const here = /data-link-here href="([^"]+)"/.exec(made.html)![1].replace(/&amp;/g, '&');
  t.true(here.startsWith(`${t.context.server.baseUrl}${PREFIX}/r/${p.handle.toLowerCase()}?c=`));
  const shopper = await fetch(here, { redirect: 'manual', headers: { 'User-Agent': 'portal-test-shopper' } });
  t.is(shopper.status, 302);
  t.true(String(shopper.headers.get('location')).startsWith(`https://www.domov-kuchyna.sk/product/${encodeURIComponent(product.code)}?aff_click=`));
  const dashboard = await p.browser.get(`${PREFIX}/dashboard`);
  t.regex(dashboard.html, /data-clicks>1</);
  t.regex(dashboard.html, /data-conversions>0</);
});

test('When a partner requests a discount code, then the tool\'s rules apply: format, taken codes, one pending request; and the staff decision takes it', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  await p.browser.get(`${PREFIX}/dashboard`);
  const short = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: 'ab' });
  t.is(short.status, 400);
  const coupon = await db('coupons').where({ shop_id: t.context.shop.id }).orderBy('created_at').first('code');
  const taken = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: coupon.code });
  t.is(taken.status, 409);
  t.regex(taken.html, /already taken/);
  const code = `MY${unique().toUpperCase()}`.slice(0, 20);
  const ok = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: code.toLowerCase() });
  t.is(ok.status, 303);
  const request = await db('affiliate_code_requests').where({ partner_id: p.partnerId }).first('id', 'requested_code', 'state', 'shop_id');
  t.deepEqual({ code: request.requested_code, state: request.state, shop: String(request.shop_id) }, { code, state: 'pending', shop: t.context.shop.id });
  const second = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: 'OTHERCODE' });
  t.is(second.status, 409);
  t.regex(second.html, /still waiting/);
  const shop = { id: t.context.shop.id, code: 'sk', name: 'sk', currency: 'EUR', timeZone: 'Europe/Bratislava' };
  const decided = await decideCodeRequest(db, { accountId: t.context.shop.accountId, shop, now: TEST_NOW }, { requestId: String(request.id), decision: 'approve' });
  t.is(decided.reservation?.code, code);
  const dashboard = await p.browser.get(`${PREFIX}/dashboard`);
  t.regex(dashboard.html, new RegExp(`data-code-request="${code}"><td><code>${code}</code></td><td>approved`));
});

test('When a partner\'s earlier code request was approved or rejected, then a new one is filed; while one is pending, another is refused with STATE_CONFLICT (PP6)', async (t) => {
  const db = t.context.database.db;
  // A server of its own: its sign-in does not count towards the shared server's per-address limit (30 in 15 minutes).
  const server = await startTestServer(db, () => t.context.clock.now);
  t.teardown(() => server.close());
  const p = await readyPartner(t, {}, server.baseUrl);
  await p.browser.get(`${PREFIX}/dashboard`);
  const shop = { id: t.context.shop.id, code: 'sk', name: 'sk', currency: 'EUR', timeZone: 'Europe/Bratislava' };
  const scope = { accountId: t.context.shop.accountId, shop, now: TEST_NOW };
  const codes = ['AP', 'RJ', 'PN', 'NO'].map((prefix) => `${prefix}${unique().toUpperCase()}`.slice(0, 20));
  const file = (code: string) => p.browser.request('POST', `${PREFIX}/code-requests`, { code });
  const requestOf = async (code: string) => String((await db('affiliate_code_requests').where({ partner_id: p.partnerId, requested_code: code }).first('id')).id);
  t.is((await file(codes[0])).status, 303);
  const whilePending = await file(codes[3]);
  t.is(whilePending.status, 409, 'a second request while the first is pending: STATE_CONFLICT');
  t.regex(whilePending.html, /still waiting/);
  await decideCodeRequest(db, scope, { requestId: await requestOf(codes[0]), decision: 'approve' });
  t.is((await file(codes[1])).status, 303, 'after an approved request a new one is filed');
  t.is((await file(codes[3])).status, 409, 'and it is pending again');
  await decideCodeRequest(db, scope, { requestId: await requestOf(codes[1]), decision: 'reject', reason: 'Too close to our brand.' });
  t.is((await file(codes[2])).status, 303, 'after a rejected request a new one is filed');
  const stored = await db('affiliate_code_requests').where({ partner_id: p.partnerId }).orderBy('id').select('requested_code', 'state');
  t.deepEqual(stored.map((r) => [r.requested_code, r.state]), [[codes[0], 'approved'], [codes[1], 'rejected'], [codes[2], 'pending']]);
});

test('When a partner who is no longer approved requests a discount code, then it is refused and no request is stored', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  await p.browser.get(`${PREFIX}/dashboard`);
  // Codes are for approved partners (the approved side is the test above: the same request is a 303).
  await db('affiliate_partners').where({ id: p.partnerId }).update({ state: 'suspended' });
  const refused = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: `SU${unique().toUpperCase()}`.slice(0, 20) });
  t.is(refused.status, 409);
  t.regex(refused.html, /codes are for approved partners/);
  t.is((await db('affiliate_code_requests').where({ partner_id: p.partnerId })).length, 0);
});

test.serial('When a partner enters payout details, then they are stored encrypted, shown masked, survive a key rotation, and no affiliate REST or MCP answer contains them', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  await p.browser.get(`${PREFIX}/payout-details`);
  const bad = await p.browser.request('POST', `${PREFIX}/payout-details`, { iban: 'SK3112000000198742637542', accountHolder: 'Jana Partnerová', taxId: '2020123456' });
  t.is(bad.status, 400);
  t.regex(bad.html, /not a valid IBAN/);
  t.false(bad.html.includes('SK3112000000198742637542'), 'entered values are not echoed');
  const iban = 'SK31 1200 0000 1987 4263 7541';
  const taxId = '2020123456';
  const saved = await p.browser.request('POST', `${PREFIX}/payout-details`, { iban, accountHolder: 'Jana Partnerová', taxId });
  t.is(saved.status, 200, saved.html);
  t.regex(saved.html, /data-masked-iban>SK••••••••7541</);
  t.regex(saved.html, /data-masked-tax-id>••••••3456</);
  t.false(saved.html.includes('SK3112000000198742637541'));
  t.false(saved.html.includes(taxId));
  const row = await db('affiliate_payout_details').where({ partner_id: p.partnerId }).first('details_encrypted');
  const stored = Buffer.from(row.details_encrypted).toString('latin1');
  t.false(stored.includes('1987426375'), 'no IBAN in clear');
  t.false(stored.includes(taxId), 'no tax id in clear');
  const partnerRow = JSON.stringify(await db('affiliate_partners').where({ id: p.partnerId }).first());
  t.false(partnerRow.includes('1987426375'));

  // Rotation: a new SECRETS_KEY with the old one as previous re-encrypts; the page still reads it under the new key.
  const next = crypto.randomBytes(32);
  const rotated = await reencryptPayoutDetails(db, { current: next, previous: TEST_SECRETS.secretsKey });
  t.true(rotated.reencrypted >= 1);
  const under = (key: Buffer) => crypto.createHash('sha256').update(key).digest().subarray(0, 4).toString('hex');
  const keyIdOf = async () => Buffer.from((await db('affiliate_payout_details').where({ partner_id: p.partnerId }).first('details_encrypted')).details_encrypted).subarray(1, 5).toString('hex');
  t.is(await keyIdOf(), under(next));
  t.true((await reencryptPayoutDetails(db, { current: TEST_SECRETS.secretsKey, previous: next })).reencrypted >= 1);
  t.is(await keyIdOf(), under(TEST_SECRETS.secretsKey));
  t.regex((await p.browser.get(`${PREFIX}/payout-details`)).html, /data-masked-iban>SK••••••••7541</);

  // Every affiliate read, over REST and MCP, with this partner as the sample partner.
  const values: Record<string, string> = { ...await sampleValues(db), partnerId: p.partnerId };
  const reads = capabilities.filter((c) => c.name.startsWith('affiliate') && c.kind !== 'write');
  t.true(reads.length >= 20);
  const secrets = ['SK3112000000198742637541', '1987 4263 7541', '198742637541', taxId];
  const client = await connectModern(t.context.server, t.context.key);
  try {
    for (const capability of reads) {
      const args = sampleArgs(capability, values);
      if ('partnerId' in args) args.partnerId = p.partnerId;
      if (isRestCapability(capability)) {
        const path = capability.path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name] ?? values[name])));
        const query = new URLSearchParams(Object.entries(args).filter(([k]) => !capability.path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
        const res = await api(t.context.server, `${path}?${query}`, t.context.key);
        t.is(res.status, 200, `${capability.name}: ${JSON.stringify(res.body).slice(0, 300)}`);
        for (const secret of secrets) t.false(JSON.stringify(res.body).includes(secret), `${capability.name} REST`);
      }
      if (capability.mcpTool) {
        const result = await client.callTool({ name: capability.mcpTool, arguments: args });
        t.falsy(result.isError, `${capability.name}: ${JSON.stringify(result.content).slice(0, 300)}`);
        for (const secret of secrets) t.false(JSON.stringify(result).includes(secret), `${capability.name} MCP`);
      }
    }
  } finally {
    await client.close();
  }
});

test('When a partner enters HTML in a field, then every page shows it escaped', async (t) => {
  const payload = '<script>alert("x")</script>';
  const p = await readyPartner(t, { name: payload });
  for (const path of ['/dashboard', '/documents', '/payout-details']) {
    const page = await p.browser.get(`${PREFIX}${path}`);
    t.is(page.status, 200, path);
    t.false(page.html.includes(payload), `${path}: never raw`);
    t.true(page.html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'), `${path}: escaped`);
  }
  await p.browser.request('POST', `${PREFIX}/payout-details`, { iban: 'SK3112000000198742637541', accountHolder: payload, taxId: '2020123456' });
  const details = await p.browser.get(`${PREFIX}/payout-details`);
  t.false(details.html.includes(payload));
  t.true(details.html.includes('&lt;script&gt;'));
  // A code request can carry no markup at all: refused, and the refusal page does not echo it raw.
  const code = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: payload });
  t.is(code.status, 400);
  t.false(code.html.includes(payload));
});

test('When a partner has a payout, then its PDF statement downloads from the dashboard; another partner\'s payout is not found', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  const other = await db('affiliate_payouts').where({ shop_id: t.context.shop.id }).whereNot('partner_id', p.partnerId).first('id');
  const [payout] = await db('affiliate_payouts').insert({
    account_id: t.context.shop.accountId, shop_id: t.context.shop.id, partner_id: p.partnerId, currency: 'EUR', amount: '61.20', conversions: 0,
    state: 'paid', period_from: '2026-10-01', period_to: '2026-10-31', created_at: TEST_NOW, paid_at: TEST_NOW, drawn_up_by: 'test',
  }).returning('id');
  const dashboard = await p.browser.get(`${PREFIX}/dashboard`);
  t.regex(dashboard.html, new RegExp(`data-payout="${payout.id}"><td>2026-10-01 – 2026-10-31</td><td>61.20 EUR</td>`));
  const pdf = await p.browser.get(`${PREFIX}/payouts/${payout.id}/statement.pdf`);
  t.is(pdf.status, 200);
  t.is(pdf.contentType, 'application/pdf');
  t.true(pdf.html.startsWith('%PDF-'));
  const foreign = await p.browser.get(`${PREFIX}/payouts/${other.id}/statement.pdf`);
  t.is(foreign.status, 404);
  t.is((await new PortalBrowser(t.context.server.baseUrl).get(`${PREFIX}/payouts/${payout.id}/statement.pdf`)).status, 303, 'signed out: to sign-in');
});

// ---- Guards of the portal (issue 22, GD): each test below fails when the guard it names is dropped. ----

test('When a partner\'s click, code or campaign lies in another shop, or a campaign is for other partners, then the sk dashboard shows none of it', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  const marker = unique();
  const cz = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'cz' }).first('s.id');
  const campaign = (shopId: string, name: string, availability: 'all' | 'chosen') => ({
    shop_id: shopId, name, reward_type: 'percent', reward_percent: '5.00', currency: 'EUR', attribution_window_days: 30, availability, approval: 'automatic', enabled: true, created_at: TEST_NOW,
  });
  const [czCampaign] = await db('affiliate_campaigns').insert(campaign(String(cz.id), `CZ campaign ${marker}`, 'all')).returning('id');
  const [forOthers] = await db('affiliate_campaigns').insert(campaign(t.context.shop.id, `Chosen for others ${marker}`, 'chosen')).returning('id');
  const [forYou] = await db('affiliate_campaigns').insert(campaign(t.context.shop.id, `Chosen for you ${marker}`, 'chosen')).returning('id');
  const other = await db('affiliate_partners').where({ account_id: t.context.shop.accountId }).whereNot('id', p.partnerId).first('id');
  await db('affiliate_campaign_partners').insert([{ campaign_id: forOthers.id, partner_id: other.id }, { campaign_id: forYou.id, partner_id: p.partnerId }]);
  // The same partner's click and code in shop cz: the sk portal's dashboard counts neither.
  await db('affiliate_clicks').insert({ shop_id: cz.id, partner_id: p.partnerId, campaign_id: czCampaign.id, visitor_id: `v${marker}`, clicked_at: TEST_NOW, target_type: 'home' });
  await db('affiliate_discount_codes').insert({ shop_id: cz.id, partner_id: p.partnerId, code: `CZONLY${marker}`.toUpperCase(), created_at: TEST_NOW });
  const dashboard = await p.browser.get(`${PREFIX}/dashboard`);
  t.is(dashboard.status, 200);
  t.regex(dashboard.html, /data-clicks>0</);
  t.false(dashboard.html.includes(`CZONLY${marker}`.toUpperCase()), 'no code of shop cz');
  t.false(dashboard.html.includes(`CZ campaign ${marker}`), 'no campaign of shop cz');
  t.false(dashboard.html.includes(`Chosen for others ${marker}`), 'no campaign chosen for other partners');
  t.true(dashboard.html.includes(`Chosen for you ${marker}`), 'the campaign chosen for this partner is offered');
  // The other side: on the cz portal the click and the code are there.
  t.is((await p.browser.get('/portal/demo/cz/sign-in')).status, 200);
  t.is((await p.browser.request('POST', '/portal/demo/cz/sign-in', { email: p.email, password: PASSWORD })).status, 303);
  const czDocs = await p.browser.get('/portal/demo/cz/documents');
  const czVersion = /name="versionId" value="(\d+)"/.exec(czDocs.html)?.[1];
  if (czVersion) await p.browser.request('POST', '/portal/demo/cz/documents/partner-agreement/accept', { versionId: czVersion });
  const czDashboard = await p.browser.get('/portal/demo/cz/dashboard');
  t.is(czDashboard.status, 200, czDashboard.location ?? '');
  t.regex(czDashboard.html, /data-clicks>1</);
  t.true(czDashboard.html.includes(`CZONLY${marker}`.toUpperCase()));
});

test('When a partner waiting for approval requests a discount code, then it is refused and nothing is filed', async (t) => {
  const db = t.context.database.db;
  const p = await register(t);
  await verify(t, p.browser, p.email);
  t.is((await signIn(p.browser, p.email)).status, 303);
  const docs = await p.browser.get(`${PREFIX}/documents`);
  const versionId = /name="versionId" value="(\d+)"/.exec(docs.html)![1];
  t.is((await p.browser.request('POST', `${PREFIX}/documents/partner-agreement/accept`, { versionId })).status, 303);
  await p.browser.get(`${PREFIX}/dashboard`);
  const refused = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: `W${unique()}`.toUpperCase().slice(0, 20) });
  t.is(refused.status, 409);
  t.regex(refused.html, /Your account is waiting; codes are for approved partners/);
  t.is((await db('affiliate_code_requests').where({ partner_id: p.partnerId })).length, 0);
});

test('When a portal\'s one-time link is used on another shop\'s portal, then it has expired there and verifies nothing', async (t) => {
  const db = t.context.database.db;
  const p = await register(t);
  const link = await linkFromOutbox(db, p.email, 'portal_email_verification');
  const elsewhere = link.replace(`${PREFIX}/`, '/portal/demo/cz/');
  t.not(elsewhere, link);
  await p.browser.get('/portal/demo/cz/sign-in');
  t.is((await p.browser.get(elsewhere)).status, 410);
  const posted = await p.browser.request('POST', elsewhere, {});
  t.is(posted.status, 410);
  t.regex(posted.html, /LINK_EXPIRED/);
  t.is((await db('affiliate_partner_logins').where({ partner_id: p.partnerId }).first('email_verified_at')).email_verified_at, null);
  // On its own portal the same link still works.
  await verify(t, p.browser, p.email);
  t.truthy((await db('affiliate_partner_logins').where({ partner_id: p.partnerId }).first('email_verified_at')).email_verified_at);
});

test('When a password reset names the address of another account\'s partner, then this portal sends nothing; that account\'s portal does', async (t) => {
  const db = t.context.database.db;
  const acme = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where('a.code', 'acme').orderBy('s.id').first('s.code', 'a.id as account_id');
  const email = `acme-partner${unique()}@example.com`;
  const [partner] = await db('affiliate_partners').insert({
    account_id: acme.account_id, handle: `acme${unique()}`, state: 'approved', state_changed_at: TEST_NOW, kind: 'blogger', language: 'en', registered_at: TEST_NOW, email,
  }).returning('id');
  await db('affiliate_partner_logins').insert({
    partner_id: partner.id, account_id: acme.account_id, email, password_hash: '$argon2id$not-used', email_verified_at: TEST_NOW, password_changed_at: TEST_NOW, created_at: TEST_NOW,
  });
  const browser = new PortalBrowser(t.context.server.baseUrl);
  const demo = await browser.submit(`${PREFIX}/forgot-password`, `${PREFIX}/forgot-password`, { email });
  t.is(demo.status, 200);
  t.is((await db('email_outbox').where({ recipient: email })).length, 0, 'no link of demo\'s portal for acme\'s partner');
  const acmePortal = `/portal/acme/${acme.code}`;
  const own = await browser.submit(`${acmePortal}/forgot-password`, `${acmePortal}/forgot-password`, { email });
  t.is(own.status, 200, own.html);
  t.is((await db('email_outbox').where({ recipient: email, event: 'portal_password_reset' })).length, 1);
});

test('When a portal form comes without the session\'s token or from another site, then it is refused and nothing is filed', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  await p.browser.get(`${PREFIX}/dashboard`);
  const token = p.browser.csrf;
  t.truthy(token);
  const code = `CSRF${unique()}`.toUpperCase().slice(0, 20);
  const forged = await p.browser.request('POST', `${PREFIX}/code-requests`, { code, _csrf: 'x'.repeat(token.length) });
  t.is(forged.status, 403);
  t.regex(forged.html, /security token is missing or out of date/);
  const crossSite = await p.browser.request('POST', `${PREFIX}/code-requests`, { code, _csrf: token }, { Origin: 'https://attacker.example' });
  t.is(crossSite.status, 403);
  t.regex(crossSite.html, /came from another site/);
  t.is((await db('affiliate_code_requests').where({ partner_id: p.partnerId })).length, 0);
  const ok = await p.browser.request('POST', `${PREFIX}/code-requests`, { code, _csrf: token });
  t.is(ok.status, 303, ok.html);
  t.is((await db('affiliate_code_requests').where({ partner_id: p.partnerId })).length, 1);
});

test('When a partner requests a code of 21 characters, then it is refused and nothing is filed; one of 20 is filed (PP6: 3 to 20)', async (t) => {
  const db = t.context.database.db;
  const p = await readyPartner(t);
  await p.browser.get(`${PREFIX}/dashboard`);
  const stem = `L${unique().toUpperCase()}`.padEnd(20, 'X').slice(0, 20);
  t.is(stem.length, 20);
  const long = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: `${stem}Y` });
  t.is(long.status, 400);
  t.regex(long.html, /3 to 20/);
  t.is((await db('affiliate_code_requests').where({ partner_id: p.partnerId })).length, 0);
  const atLimit = await p.browser.request('POST', `${PREFIX}/code-requests`, { code: stem });
  t.is(atLimit.status, 303);
  t.deepEqual((await db('affiliate_code_requests').where({ partner_id: p.partnerId }).pluck('requested_code')), [stem]);
});
