/**
 * The partner portal in headless Chromium (issue 24 point 6, the partner's side): with automatic approval switched on
 * over MCP, a partner registers on the shop's portal, verifies the e-mail by the link read from the e-mail outbox,
 * signs in, accepts the partner agreement, generates a tracked link, follows it (`/r/...`, landing on the shop with
 * the attribution parameter) and sees the click on the dashboard.
 */
import anyTest, { type TestFn } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { connectBrowser, freshPagePerTest } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { linkFromOutbox } from '../helpers/portal.js';
import { issueKey, startTestServer, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  browser: Browser;
  browserContext: BrowserContext;
  page: Page;
}

const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const server = await startTestServer(database.db, () => new Date());
  const client = await connectModern(server, await issueKey(database.db));
  const result = await client.callTool({ name: 'affiliate_settings_update', arguments: { autoApprovePartners: true } });
  await client.close();
  if (result.isError) throw new Error(JSON.stringify(result.content));
  Object.assign(t.context, { database, server, browser: await connectBrowser() });
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

test('When a partner registers, verifies, accepts the agreement and follows a generated link, then the dashboard shows the click', async (t) => {
  t.timeout(120_000);
  const { page, database } = t.context;
  const email = `e2e-partner-${Date.now()}@example.com`;

  await page.goto('/portal/demo/sk/register?lang=en');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'a long e2e password');
  await page.fill('input[name=handle]', 'e2e_partner');
  await page.fill('input[name=name]', 'Eva Endtoend');
  await page.selectOption('select[name=kind]', 'blogger');
  await page.click('form[action$="/register"] button[type=submit]');
  await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();

  await page.goto(await linkFromOutbox(database.db, email, 'portal_email_verification'));
  await page.click('button:has-text("Verify my e-mail")');
  await page.getByText('Your account is approved').waitFor();

  await page.goto('/portal/demo/sk/sign-in');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'a long e2e password');
  await page.click('form[action$="/sign-in"] button[type=submit]');
  // The agreement comes first.
  await page.waitForURL(/\/portal\/demo\/sk\/documents$/);
  await page.click('[data-document="partner-agreement"] button[type=submit]');
  await page.waitForURL(/\/portal\/demo\/sk\/dashboard$/);
  t.is(await page.textContent('[data-clicks]'), '0');

  await page.selectOption('select[name=target]', 'home');
  await page.click('form[action$="/links"] button[type=submit]');
  const generated = await page.textContent('[data-generated-link] code');
  t.regex(generated ?? '', /^https:\/\/partneri\.domov-kuchyna\.sk\/r\/e2e_partner\?c=\d+&to=https%3A%2F%2Fwww\.domov-kuchyna\.sk%2F$/);
  const here = await page.getAttribute('[data-link-here]', 'href');
  t.truthy(here);

  // The browser follows the redirect to the shop's own site, which this machine cannot reach: the positive signal is
  // the browser's request for the shop's page with the attribution parameter, after the portal's redirect.
  const landed = page.waitForRequest((request) => new URL(request.url()).hostname === 'www.domov-kuchyna.sk');
  await page.goto(here!).catch(() => undefined);
  const shopRequest = await landed;
  t.regex(shopRequest.url(), /^https:\/\/www\.domov-kuchyna\.sk\/\?aff_click=[A-Za-z0-9_-]+$/);
  t.is(shopRequest.redirectedFrom()?.url(), here!);

  // A second tab of the same browser (same partner session): the first one ends on the browser's error page.
  const dashboard = await t.context.browserContext.newPage();
  await dashboard.goto('/portal/demo/sk/dashboard');
  t.is(await dashboard.textContent('[data-clicks]'), '1');
  const partner = await database.db('affiliate_partners').where({ handle: 'e2e_partner' }).first('id', 'state');
  t.is(partner.state, 'approved');
  t.is((await database.db('affiliate_clicks').where({ partner_id: partner.id })).length, 1);
  t.is((await database.db('affiliate_signatures').where({ partner_id: partner.id })).length, 1);
});
