/**
 * The application's E-mails page (D30) in headless Chromium: an assistant approves a partner and rejects a code request
 * over MCP, and a person with the personal-data permission sees both e-mails in the outbox as not sent (no SMTP here),
 * with the agreement attached and the rendered wording; the status filter works; a person without the permission gets
 * no page and no menu entry; a person limited to other shops does not see these shops' e-mails.
 */
import anyTest, { type TestFn } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { connectBrowser, signInInBrowser, freshPagePerTest } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { issueKey, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  browser: Browser;
  browserContext: BrowserContext;
  page: Page;
  partnerHandle: string;
  approvalEmailId: string;
  rejectionEmailId: string;
}

const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const server = await startApplicationServer(database.db, testApplicationOptions());
  const { db } = database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const shop = await db('shops').where({ account_id: account.id, code: 'sk' }).first('id');
  const [partner] = await db('affiliate_partners').insert({
    account_id: account.id, handle: 'PAGETEST', state: 'waiting', state_changed_at: new Date(), kind: 'blogger', language: 'sk',
    contact_name: 'Petra Page', email: 'petra@partners.example', registered_at: new Date(),
  }).returning('id');
  const [request] = await db('affiliate_code_requests').insert({ shop_id: shop.id, partner_id: partner.id, requested_code: 'PAGETEST50', state: 'pending', requested_at: new Date() }).returning('id');
  const client = await connectModern(server, await issueKey(db));
  const call = async (name: string, args: Record<string, unknown>) => ((await client.callTool({ name, arguments: args })) as { structuredContent: { data: any } }).structuredContent.data;
  const approval = await call('affiliate_partners_set_state', { market: 'sk', partnerId: String(partner.id), action: 'approve' });
  const rejection = await call('affiliate_code_requests_decide', { market: 'sk', requestId: String(request.id), decision: 'reject', reason: 'Too close to a competitor\'s code.' });
  await client.close();
  Object.assign(t.context, {
    database, server, browser: await connectBrowser(), partnerHandle: 'PAGETEST', approvalEmailId: approval.email.emailId, rejectionEmailId: rejection.email.emailId,
  });
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

test('When a person with personal data opens E-mails, then the partner e-mails of the MCP decisions are listed as not sent with their wording and attachment', async (t) => {
  const { page } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: ['personal-data'] });
  await signInInBrowser(page, person.email, person.password);
  await page.click('header nav a:has-text("E-mails")');
  t.is(new URL(page.url()).pathname, '/app/emails');
  t.is(await page.textContent('h1'), 'E-mails');

  const approval = page.locator(`tr[data-email-id="${t.context.approvalEmailId}"]`);
  t.is(await approval.getAttribute('data-status'), 'queued');
  t.is(await approval.getAttribute('data-event'), 'account_approved');
  t.regex((await approval.locator('td.status').textContent())!, /not sent/);
  t.regex((await approval.textContent())!, /petra@partners\.example/);
  t.regex((await approval.textContent())!, /partner PAGETEST/);
  await approval.locator('summary.subject').click();
  t.is((await approval.locator('summary.subject').textContent())!.trim(), 'Váš účet v programe Partner programme je schválený');
  t.regex((await approval.locator('pre.body').textContent())!, /Dobrý deň Petra Page/);
  t.regex((await approval.locator('ul.attachments').textContent())!, /partner-agreement-sk-v2\.pdf/);

  const rejection = page.locator(`tr[data-email-id="${t.context.rejectionEmailId}"]`);
  await rejection.locator('summary.subject').click();
  t.regex((await rejection.locator('pre.body').textContent())!, /Kód PAGETEST50 sme neschválili\. Dôvod: Too close to a competitor's code\./);

  // The filter: no e-mail was sent here (no SMTP), both are queued.
  await page.click('nav.actions a:has-text("sent")');
  t.is(await page.locator(`tr[data-email-id="${t.context.approvalEmailId}"]`).count(), 0);
  await page.click('nav.actions a:has-text("queued")');
  t.is(await page.locator(`tr[data-email-id="${t.context.approvalEmailId}"]`).count(), 1);
});

test('When a person lacks the personal-data permission, then there is no E-mails entry and the page is refused', async (t) => {
  const { page } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: [] });
  await signInInBrowser(page, person.email, person.password);
  t.is(await page.locator('header nav a:has-text("E-mails")').count(), 0);
  const response = await page.goto('/app/emails');
  t.is(response!.status(), 403);
  t.is(await page.locator('#emails').count(), 0);
  t.false((await page.content()).includes('petra@partners.example'));
});

test('When a person may see only other shops, then this shop\'s e-mails are not shown', async (t) => {
  const { page } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: ['personal-data'], shops: ['cz'] });
  await signInInBrowser(page, person.email, person.password);
  await page.goto('/app/emails');
  t.is(await page.locator(`tr[data-email-id="${t.context.approvalEmailId}"]`).count(), 0);
  t.false((await page.content()).includes('petra@partners.example'));
});
