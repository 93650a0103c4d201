/**
 * The application's pages in headless Chromium (playwright-core; the browser binary ships in @sparticuz/chromium):
 * sign-in with and without a second factor and the lockout, issuing and revoking a key and using it, a webhook
 * endpoint from creation to a ping seen in its log, CSRF and clickjacking protections against a foreign page, and the
 * OAuth flow of the official MCP client with the person signing in and consenting in the browser.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { capabilities, capabilitiesByTool } from '../../src/capabilities/registry.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { connectBrowser, signInInBrowser, freshPagePerTest } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import type { TestServer } from '../helpers/server.js';
import { fakeDns, isolateWebhooks, testSettings } from '../helpers/webhooks.js';
import { connectWithOAuth, finishOAuth, metadataDocumentFetch, startCallbackReceiver, TestOAuthProvider } from '../helpers/oauthClient.js';

interface Shared {
  database: TestDatabase;
  server: TestServer;
  browser: Browser;
  worker: InProcessWorker;
  receiver: Receiver;
  callback: { url: string; close: () => Promise<void> };
}

interface Context extends Shared {
  browserContext: BrowserContext;
  page: Page;
}

/** Submits the sign-in form without waiting: some tests look at the refusal. */
const signIn = (page: Page, email: string, password: string) => signInInBrowser(page, email, password, { wait: false });

const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  const callback = await startCallbackReceiver();
  // The AI application's own web host (its metadata document) is simulated; everything of the service is real.
  const options = testApplicationOptions({ resolve: fakeDns({ 'client.example.com': ['93.184.215.14'] }).resolve, oauthFetch: metadataDocumentFetch(callback.url) });
  const worker = await startInProcessWorker(database.db, {
    prefix: 'test-app', webhookWorkflows: true, webhooks: testSettings({ secretsKey: options.key, resolve: fakeDns().resolve }),
  });
  const shared: Shared = {
    database, server: await startApplicationServer(database.db, options), browser: await connectBrowser(), worker,
    receiver: await startReceiver(), callback,
  };
  Object.assign(t.context, shared);
});

test.after.always(async (t) => {
  await t.context.worker?.stop();
  await t.context.receiver?.close();
  await t.context.callback?.close();
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

test.serial('When a person signs in without a second factor, then the overview shows them and sign-out ends the session', async (t) => {
  const { page } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: ['keys:manage'], shops: ['sk', 'cz'] });
  await page.goto('/app/keys');
  t.regex(page.url(), /\/app\/sign-in\?next=%2Fapp%2Fkeys$/);
  await page.fill('input[name=email]', person.email);
  await page.fill('input[name=password]', person.password);
  await page.click('button[type=submit]');
  // Back where the person wanted to go.
  await page.waitForURL(/\/app\/keys$/);
  await page.goto('/app');
  t.regex(await page.textContent('main') ?? '', new RegExp(person.email));
  t.regex(await page.textContent('main') ?? '', /sk, cz/);
  await page.click('header button:has-text("Sign out")');
  await page.waitForURL(/\/app\/sign-in$/);
  await page.goto('/app');
  t.regex(page.url(), /\/app\/sign-in/);
});

test.serial('When a person turns on the second factor, then sign-in asks for a code and recovery codes are shown once', async (t) => {
  const { page } = t.context;
  const person = await makePerson(t.context.database.db);
  await signIn(page, person.email, person.password);
  await page.waitForURL(/\/app$/);
  await page.goto('/app/account');
  await page.click('button:has-text("Set up a second factor")');
  t.true(await page.isVisible('img[alt^="QR code"]'));
  const secret = (await page.textContent('#totp-secret'))!.trim();
  // The current time step's code turns it on; the sign-in below uses the next step's (a step is accepted once, and
  // one step either side is accepted), so a step boundary passing under load cannot make either code stale.
  await page.fill('input[name=code]', await generate({ secret, epoch: Math.floor(Date.now() / 1000) }));
  await page.click('button:has-text("Turn on")');
  const codes = await page.$$eval('#recovery-codes code', (els) => els.map((e) => e.textContent));
  t.is(codes.length, 10);
  await page.goto('/app/account');
  t.is(await page.$('#recovery-codes'), null, 'recovery codes are shown only once');

  await page.click('header button:has-text("Sign out")');
  await signIn(page, person.email, person.password);
  await page.waitForURL(/second-factor/);
  await page.fill('input[name=code]', '123456');
  await page.click('button[type=submit]');
  t.regex(await page.textContent('.error') ?? '', /not right/);
  await page.fill('input[name=code]', await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
  await page.click('button[type=submit]');
  await page.waitForURL(/\/app$/);
  t.regex(await page.textContent('main') ?? '', /Second factor\s*on/);
});

test.serial('When the password is guessed wrong five times, then the page says the account is locked', async (t) => {
  const { page } = t.context;
  const person = await makePerson(t.context.database.db);
  for (let i = 0; i < 5; i++) await signIn(page, person.email, `wrong guess number ${i}`);
  t.regex(await page.textContent('.error') ?? '', /locked for 15 minutes/);
  await signIn(page, person.email, person.password);
  t.regex(await page.textContent('.error') ?? '', /locked/);
  t.regex(page.url(), /\/app\/sign-in/);
});

test.serial('When a key is issued in the page, then it is shown once, works for REST and stops working when revoked', async (t) => {
  const { page, server } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'admin', permissions: ['keys:manage', 'reports'] });
  await signIn(page, person.email, person.password);
  await page.goto('/app/keys');
  // Sensitive scopes are marked and unchecked; the person's missing rights are not offered.
  t.false(await page.isChecked('input[value="reports:read"]'));
  t.truthy(await page.$('label.sensitive:has(input[value="reports:read"]) .badge'));
  t.is(await page.$('input[value="purchase-prices:read"]'), null);
  t.true(await page.isChecked('input[value="orders:read"]'));
  await page.fill('#issue-key input[name=name]', 'browser key');
  await page.uncheck('input[name=interfaces][value=mcp]');
  await page.click('#issue-key button[type=submit]');
  const key = (await page.textContent('#new-key'))!.trim();
  t.regex(key, /^sk_[0-9A-Za-z]{43}$/);

  const call = () => fetch(`${server.baseUrl}/api/v1/orders?market=sk&limit=1`, { headers: { Authorization: `Bearer ${key}` } });
  t.is((await call()).status, 200);
  const reports = await fetch(`${server.baseUrl}/api/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{}' });
  t.is(reports.status, 401, 'a REST-only key does not open MCP');

  await page.goto('/app/keys');
  t.false((await page.content()).includes(key));
  const row = page.locator('tr', { hasText: 'browser key' });
  await row.locator('button:has-text("Revoke")').click();
  await page.waitForURL(/\/app\/keys$/);
  t.regex(await page.locator('tr', { hasText: 'browser key' }).textContent() ?? '', /revoked/);
  t.is((await call()).status, 401);
});

test.serial('When an endpoint is created and pinged in the page, then the secret shows once and the signed attempt is in the log', async (t) => {
  const { page, receiver } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'admin', permissions: ['webhooks:manage'] });
  await signIn(page, person.email, person.password);
  await page.goto('/app/webhooks');
  await page.fill('#create-endpoint input[name=name]', 'local receiver');
  await page.fill('#create-endpoint input[name=url]', receiver.url);
  await page.click('#create-endpoint button[type=submit]');
  const secret = (await page.textContent('#endpoint-secret'))!.trim();
  t.regex(secret, /^whsec_/);
  receiver.secret = secret;
  await page.click('a:has-text("Go to the endpoint")');
  t.false((await page.content()).includes(secret));
  await page.click('button:has-text("Send a test ping")');
  await page.waitForSelector('.notice');
  await receiver.waitFor((requests) => requests.some((r) => r.body?.event_type === 'ping'), 30_000);
  const ping = receiver.requests.find((r) => r.body?.event_type === 'ping')!;
  t.is(ping.verifyError, null, 'signed with the secret shown once');
  // The log shows the attempt once the worker recorded it.
  for (let i = 0; i < 50; i++) {
    await page.reload();
    if ((await page.locator('#deliveries tr', { hasText: 'ping' }).textContent().catch(() => ''))?.includes('SENT')) break;
    await page.waitForTimeout(200);
  }
  const line = await page.locator('#deliveries tr', { hasText: 'ping' }).textContent() ?? '';
  t.regex(line, /SENT/);
  t.regex(line, /HTTP 200/);
});

test.serial('When a foreign page posts a forged form or frames the application, then both are refused', async (t) => {
  const { page, server } = t.context;
  const person = await makePerson(t.context.database.db);
  await signIn(page, person.email, person.password);
  await page.waitForURL(/\/app$/);
  // An attacker's page on another origin (another port), with the victim's session cookie in the browser.
  const attacker = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><iframe id="framed" src="${server.baseUrl}/app"></iframe>
      <form id="forged" method="post" action="${server.baseUrl}/app/keys">
        <input name="name" value="stolen"><input name="interfaces" value="rest"><input name="scopes" value="orders:read">
        <input name="shopChoice" value="all"><input name="expiresInDays" value="never"><input name="writeMode" value="read_only">
        <input name="_csrf" value="guessed-token">
      </form>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  try {
    const attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
    await page.goto(attackerUrl);
    // Clickjacking: the browser refuses to render the application inside the frame.
    const frame = page.frames().find((f) => f !== page.mainFrame());
    t.truthy(frame, 'the attacker page has its frame');
    const framedText = await frame!.evaluate('document.body ? document.body.innerText : ""').catch(() => '') as string;
    t.log(`framed: ${frame!.url()} ${JSON.stringify(framedText.slice(0, 80))}`);
    // Blocked by the browser (frame-ancestors 'none' / X-Frame-Options DENY): an error page instead of ours.
    t.regex(frame!.url(), /^chrome-error:/);
    t.false(framedText.includes(person.email), 'the framed application must not render');
    await Promise.all([page.waitForNavigation(), page.evaluate('document.getElementById("forged").submit()')]);
    t.regex(await page.textContent('main') ?? '', /refused/);
    const keys = await t.context.database.db('access_keys').where({ name: 'stolen' });
    t.is(keys.length, 0);
  } finally {
    await new Promise<void>((resolve) => attacker.close(() => resolve()));
  }
});

test.serial('When an MCP client with OAuth is given only /api/mcp, then the person signs in and consents in the browser, and the client sees only the ticked tools until the connection is revoked', async (t) => {
  const { page, server, callback } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'admin', permissions: ['reports'] });
  const mcpUrl = new URL(`${server.baseUrl}/api/mcp`);
  const provider = new TestOAuthProvider(callback.url, true);
  const first = await connectWithOAuth(mcpUrl, provider);
  t.is(first.client, null, 'discovery from the 401, then the authorization URL');
  await page.goto(provider.authorizationUrl!.href);
  await page.waitForURL(/\/app\/sign-in/);
  await page.fill('input[name=email]', person.email);
  await page.fill('input[name=password]', person.password);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/app\/consent\//);
  t.is((await page.textContent('#client-name'))?.trim(), 'Test Assistant');
  t.is((await page.textContent('#client-address'))?.trim(), 'https://client.example.com/oauth/client-metadata.json');
  // Sensitive scopes are marked and unticked; rights the person lacks are not offered at all.
  t.false(await page.isChecked('input[value="reports:read"]'));
  t.truthy(await page.$('label.sensitive:has(input[value="reports:read"]) .badge'));
  t.is(await page.$('input[value="purchase-prices:read"]'), null);
  t.is(await page.$('input[value="automations:write"]'), null);
  for (const scope of ['shipping:read', 'inventory:read', 'products:read']) await page.uncheck(`input[value="${scope}"]`);
  await page.check('input[name=shopChoice][value=some]');
  await page.check('input[name=shops][value=sk]');
  await page.selectOption('select[name=writeMode]', 'read_only');
  await page.click('button[value=allow]');
  await page.waitForURL((url) => url.href.startsWith(callback.url));

  const client = await finishOAuth(mcpUrl, provider, first.transport, new URL(page.url()));
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  t.true(tools.includes('orders_list'));
  // No tool of an unticked scope (tool names do not tell: products_content_get needs product-content:read).
  const unticked = new Set(['shipping:read', 'inventory:read', 'products:read']);
  t.false(tools.some((name) => unticked.has(capabilitiesByTool.get(name)?.scope ?? '')), tools.join(','));
  t.true(capabilities.some((c) => c.mcpTool && unticked.has(c.scope)), 'the unticked scopes do have tools');
  t.false(provider.savedTokens.scope.includes('reports:read'));
  t.true((await client.callTool({ name: 'orders_list', arguments: { market: 'cz', limit: 1 } })).isError, 'only the ticked shop');

  await page.goto('/app/connections');
  const row = page.locator('tr', { hasText: 'Test Assistant' });
  t.regex(await row.textContent() ?? '', /read_only/);
  await row.locator('button:has-text("Revoke")').click();
  await page.waitForURL(/\/app\/connections$/);
  // (tools/list may be answered from the client's cache; a call always reaches the server.)
  await t.throwsAsync(() => client.callTool({ name: 'orders_list', arguments: { market: 'sk', limit: 1 } }));
  const raw = await fetch(mcpUrl, { method: 'POST', headers: { Authorization: `Bearer ${provider.savedTokens.access_token}`, 'Content-Type': 'application/json' }, body: '{}' });
  t.is(raw.status, 401);
  await client.close().catch(() => undefined);
});
