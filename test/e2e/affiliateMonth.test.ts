/**
 * A whole month of the partner programme in headless Chromium (issue 24 point 6), on the service's clock (moved
 * forward, never slept): a partner registers on the shop's portal, verifies the e-mail from the outbox, accepts the
 * agreement and generates a link of a manual-approval campaign; a shopper (another browser) follows it to the shop,
 * the demo shop takes an order after the click (read from the demo platform as the sync reads it), the shop's
 * thank-you page sends the beacon with the order and the click, and the sync brings the order past its return
 * period; the partner sees the conversion; staff approve the commission, draw up the month's payout, confirm it and
 * mark it paid; the partner sees the payout and downloads its PDF statement, which lists the order.
 */
import anyTest, { type TestFn } from 'ava';
import { PDFParse } from 'pdf-parse';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { connectBrowser, screenshotOnFailure, signInInBrowser } from '../helpers/browser.js';
import { makePerson } from '../helpers/application.js';
import { TEST_NOW } from '../helpers/constants.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { linkFromOutbox } from '../helpers/portal.js';
import { issueKey, startTestServer, type TestServer } from '../helpers/server.js';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import type { PlatformOrder } from '../../src/platforms/types.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';

/** The service's clock: runs at real speed from a point the test sets (a jump forward stands for the days between). */
class TestClock {
  private base = TEST_NOW.getTime() + 3_600_000;
  private setAt = Date.now();
  now = (): Date => new Date(this.base + (Date.now() - this.setAt));
  jumpTo(at: Date): void {
    this.base = at.getTime();
    this.setAt = Date.now();
  }
}

interface Context { database: TestDatabase; server: TestServer; clock: TestClock; browser: Browser; contexts: BrowserContext[]; pages: Page[]; campaignId: string }
const test = anyTest as TestFn<Context>;

const DAY_MS = 86_400_000;
const PASSWORD = 'a long month-end password';
/** The campaign's reward per order: one order reaches the programme's payout minimum (EUR 50, SPEC/A5). */
const REWARD_EUR = 60;

test.before(async (t) => {
  // Kept in the context as each part starts, so the after hook stops whatever did.
  Object.assign(t.context, { contexts: [], pages: [], clock: new TestClock() });
  t.context.database = await createTestDatabase();
  t.context.server = await startTestServer(t.context.database.db, t.context.clock.now);
  const client = await connectModern(t.context.server, await issueKey(t.context.database.db));
  // As a programme manager's assistant would: partners are approved on verification, and a campaign whose
  // commissions a person approves (manual approval) pays a fixed reward.
  const settings = await client.callTool({ name: 'affiliate_settings_update', arguments: { autoApprovePartners: true } });
  const campaign = await client.callTool({
    name: 'affiliate_campaigns_create',
    arguments: { market: 'sk', name: 'Month-end review', reward: { type: 'fixed', amount: REWARD_EUR }, availability: 'all', approval: 'manual' },
  });
  await client.close();
  if (settings.isError || campaign.isError) throw new Error(JSON.stringify([settings.content, campaign.content]));
  t.context.campaignId = String((campaign.structuredContent as { data: { campaign: { campaignId: string } } }).data.campaign.campaignId);
  t.context.browser = await connectBrowser();
});

test.afterEach.always(async (t) => {
  for (const page of t.context.pages) await screenshotOnFailure(t, page);
});

test.after.always(async (t) => {
  for (const c of t.context.contexts ?? []) await c.close().catch(() => undefined);
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

/** A browser of its own (cookies, storage) for one person of the story. */
async function browserOf(t: { context: Context }): Promise<Page> {
  const context = await t.context.browser.newContext({ baseURL: t.context.server.baseUrl, acceptDownloads: true });
  t.context.contexts.push(context);
  const page = await context.newPage();
  t.context.pages.push(page);
  return page;
}

async function partnerSignsIn(page: Page, email: string): Promise<void> {
  await page.goto('/portal/demo/sk/sign-in?lang=en');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', PASSWORD);
  await page.click('form[action$="/sign-in"] button[type=submit]');
}

test('When a partner brings an order in a month, then it is tracked, approved, paid out and shown to the partner with its PDF statement', async (t) => {
  t.timeout(120_000);
  const { database, clock } = t.context;
  const db = database.db;
  const email = `month-partner-${Date.now()}@example.com`;
  const handle = `month_${Date.now() % 1_000_000}`;
  const partnerPage = await browserOf(t);
  // ---- The partner registers, verifies, accepts the agreement and generates a link of the manual campaign.
  await partnerPage.goto('/portal/demo/sk/register?lang=en');
  await partnerPage.fill('input[name=email]', email);
  await partnerPage.fill('input[name=password]', PASSWORD);
  await partnerPage.fill('input[name=handle]', handle);
  await partnerPage.fill('input[name=name]', 'Mona Monthend');
  await partnerPage.selectOption('select[name=kind]', 'blogger');
  await partnerPage.click('form[action$="/register"] button[type=submit]');
  await partnerPage.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  await partnerPage.goto(await linkFromOutbox(db, email, 'portal_email_verification'));
  await partnerPage.click('button:has-text("Verify my e-mail")');
  await partnerPage.getByText('Your account is approved').waitFor();
  await partnerSignsIn(partnerPage, email);
  await partnerPage.waitForURL(/\/portal\/demo\/sk\/documents$/);
  await partnerPage.click('[data-document="partner-agreement"] button[type=submit]');
  await partnerPage.waitForURL(/\/portal\/demo\/sk\/dashboard$/);
  await partnerPage.selectOption('select[name=target]', 'home');
  await partnerPage.selectOption('select[name=campaignId]', t.context.campaignId);
  await partnerPage.click('form[action$="/links"] button[type=submit]');
  t.regex(await partnerPage.textContent('[data-generated-link]') ?? '', /Month-end review, 30 d/);
  const link = (await partnerPage.getAttribute('[data-link-here]', 'href'))!;
  t.true(link.includes(`/r/${handle}?c=${t.context.campaignId}&`), link);

  // ---- A shopper follows the link in a browser of their own and lands on the shop with the click id.
  const shopper = await browserOf(t);
  // The shop's site (and its partner portal's public address) do not exist on this machine: the shop's thank-you page
  // is served to the browser here, and the portal's public address is passed on to the service's portal.
  await shopper.route('https://www.domov-kuchyna.sk/**', (route) => {
    const url = new URL(route.request().url());
    const order = url.searchParams.get('order');
    const click = url.searchParams.get('aff_click');
    const beacon = order ? `<img id="beacon" alt="" src="https://partneri.domov-kuchyna.sk/b?order=${encodeURIComponent(order)}&click=${encodeURIComponent(click ?? '')}">` : '';
    return route.fulfill({ status: 200, contentType: 'text/html', body: `<!doctype html><title>Domov a kuchyňa</title><h1>${order ? 'Thank you' : 'Welcome'}</h1>${beacon}` });
  });
  await shopper.route('https://partneri.domov-kuchyna.sk/**', async (route) => {
    const url = new URL(route.request().url());
    const response = await route.fetch({ url: `${t.context.server.baseUrl}/portal/demo/sk${url.pathname}${url.search}`, maxRedirects: 0 });
    await route.fulfill({ response });
  });
  // Playwright serves no redirect's target (it routes only a page's own requests), so the positive signal of the landing
  // is the browser's request for the shop's page after the portal's 302; the thank-you page below is a page of its own.
  const landed = shopper.waitForRequest((request) => new URL(request.url()).hostname === 'www.domov-kuchyna.sk');
  await shopper.goto(link).catch(() => undefined);
  const landingRequest = await landed;
  t.is(landingRequest.redirectedFrom()?.url(), new URL(link, t.context.server.baseUrl).toString());
  const landing = new URL(landingRequest.url());
  t.is(`${landing.origin}${landing.pathname}`, 'https://www.domov-kuchyna.sk/');
  const clickToken = landing.searchParams.get('aff_click')!;
  t.regex(clickToken, /^[A-Za-z0-9_-]{16,}$/);
  const click = await db('affiliate_clicks').where({ token: clickToken }).first('clicked_at', 'campaign_id', 'ip_hash');
  t.is(String(click.campaign_id), t.context.campaignId);
  t.false(String(click.ip_hash).includes('127.0.0.1'));

  // ---- The demo shop takes an order after the click: the first one without a partner code, as the sync reads it.
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const syncedUntil = new Date('2026-12-10T08:00:00Z');
  const platform = new DemoPlatform({ db, wallClock: () => syncedUntil });
  let order: PlatformOrder | undefined;
  for await (const batch of platform.readChanges(shop, 'orders', { since: TEST_NOW, until: new Date(click.clicked_at.getTime() + 3 * DAY_MS), resume: null, limit: 200 })) {
    order ??= (batch.records as PlatformOrder[]).filter((o) => o.createdAt > click.clicked_at && !o.couponCode).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0];
  }
  t.truthy(order, 'the demo shop takes an order within three days of the click');
  t.is(await db('orders').where({ shop_id: shop.id, code: order!.code }).first('id'), undefined, 'not yet synced');

  // The thank-you page, a minute after the order, hands the order and the click to the portal's beacon.
  clock.jumpTo(new Date(order!.createdAt.getTime() + 60_000));
  const beaconAnswered = shopper.waitForResponse((r) => r.url().startsWith('https://partneri.domov-kuchyna.sk/b?'));
  await shopper.goto(`https://www.domov-kuchyna.sk/thank-you?order=${encodeURIComponent(order!.code)}&aff_click=${clickToken}`);
  const pixel = await beaconAnswered;
  t.is(pixel.status(), 200);
  t.is(pixel.headers()['content-type'], 'image/gif');
  t.deepEqual(await db('affiliate_beacons').where({ shop_id: shop.id, order_code: order!.code }).select('outcome', 'reason'), [{ outcome: 'unattributed', reason: 'order_not_synced' }]);

  // ---- The sync brings the shop's orders up to 10 December, past the order's 14-day return period.
  await syncArea(db, platform, shop, 'orders', syncedUntil, { batchSize: 100 });
  const conversion = await db('affiliate_conversions').where({ shop_id: shop.id, order_code: order!.code })
    .first('id', 'source', 'commission', 'commission_state', 'state_reason', 'partner_id');
  t.like(conversion, { source: 'click', commission: '60.00', commission_state: 'pending', state_reason: 'awaiting_manual_approval' });

  // ---- Ten days into December: the partner sees the conversion, waiting for approval.
  clock.jumpTo(new Date('2026-12-10T09:00:00Z'));
  await partnerSignsIn(partnerPage, email);
  await partnerPage.waitForURL(/\/portal\/demo\/sk\/dashboard$/);
  t.is(await partnerPage.textContent('[data-clicks]'), '1');
  t.is(await partnerPage.textContent('[data-conversions]'), '1');
  t.regex(await partnerPage.textContent('tr[data-commission-state="pending"]') ?? '', /60\.00 EUR/);

  // ---- Staff with affiliate:manage approve the commission in the application.
  const staff = await browserOf(t);
  const manager = await makePerson(db, { role: 'member', permissions: ['affiliate:manage'] });
  await signInInBrowser(staff, manager.email, manager.password);
  await staff.goto('/app/affiliate/commissions?market=sk&state=pending');
  const row = staff.locator(`#commissions tr[data-id="${conversion.id}"]`);
  t.is(await row.getAttribute('data-reason'), 'awaiting_manual_approval');
  t.regex(await row.innerText(), new RegExp(`${order!.code}[\\s\\S]*${handle}[\\s\\S]*Month-end review \\(manual\\)`));
  await row.locator('button[value=approve]').click();
  await staff.getByText(`Commission ${conversion.id}: approved`).waitFor();

  // ---- On 5 January the month's payouts are drawn up (the form offers December), confirmed and paid.
  clock.jumpTo(new Date('2027-01-05T08:00:00Z'));
  await signInInBrowser(staff, manager.email, manager.password);
  await staff.goto('/app/affiliate/payouts');
  t.is(await staff.inputValue('#draw-up input[name=period]'), '2026-12');
  await staff.click('#draw-up button[type=submit]');
  await staff.getByText(/Payouts for 2026-12: [1-9]\d* drawn up as drafts/).waitFor();
  const payout = await db('affiliate_payouts').where({ partner_id: conversion.partner_id }).first('id', 'amount', 'currency', 'state', db.raw('period_to::text as period_to'));
  t.like(payout, { amount: '60.00', currency: 'EUR', state: 'requested', period_to: '2026-12-31' });
  await staff.goto('/app/affiliate/payouts?state=requested');
  await staff.locator(`#payouts tr[data-id="${payout.id}"] form[action$="/confirm"] button`).click();
  await staff.getByText(`Payout ${payout.id}: confirmed`).waitFor();
  await staff.goto('/app/affiliate/payouts?state=approved');
  const payRow = staff.locator(`#payouts tr[data-id="${payout.id}"]`);
  await payRow.locator('input[name=reference]').fill('SEPA 2027-01-05 month');
  await payRow.locator('form[action$="/paid"] button').click();
  await staff.getByText(`Payout ${payout.id}: marked paid`).waitFor();
  t.is((await db('affiliate_conversions').where({ id: conversion.id }).first('commission_state')).commission_state, 'paid');

  // ---- The partner sees the paid payout and downloads its statement.
  await partnerSignsIn(partnerPage, email);
  await partnerPage.waitForURL(/\/portal\/demo\/sk\/dashboard$/);
  const shown = partnerPage.locator(`tr[data-payout="${payout.id}"]`);
  t.regex(await shown.innerText(), /2026-12-01 – 2026-12-31\s+60\.00 EUR\s+paid/);
  t.regex(await partnerPage.textContent('tr[data-commission-state="paid"]') ?? '', /60\.00 EUR/);
  const [file] = await Promise.all([partnerPage.waitForEvent('download'), shown.locator('a[href$="/statement.pdf"]').click()]);
  t.is(file.suggestedFilename(), `payout-${payout.id}.pdf`);
  const chunks: Buffer[] = [];
  for await (const chunk of await file.createReadStream()) chunks.push(chunk as Buffer);
  const pdf = Buffer.concat(chunks);
  t.is(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  const text = (await parser.getText()).text.replace(/\s+/g, ' ');
  await parser.destroy();
  t.true(text.includes(`Partner: ${handle}`), text.slice(0, 400));
  t.true(text.includes(order!.code), `the statement lists order ${order!.code}`);
  t.true(text.includes('Period: 2026-12-01 – 2026-12-31'));
});
