/**
 * First run in headless Chromium (issue 28.2): the production API process (dist/src/entry/server.js) on an empty,
 * migrated database prints a one-time set-up link; the link opens the set-up page (checked for overflow and axe like
 * every page), a bad time zone is shown beside its field, the corrected form signs the owner in on Shops, and the
 * owner connects the first shop there. The link is the only place the token is logged (requests are logged without
 * it), and a restart once an account exists prints no link. everyPage.test.ts cannot visit this page: it exists only
 * while the service has no account.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { findFreePort } from '../../src/infra/ports.js';
import { connectBrowser, screenshotOnFailure } from '../helpers/browser.js';
import { createEmptyTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startEntry, type EntryProcess } from '../helpers/productionProcesses.js';

interface Context { database: TestDatabase; browser: Browser; env: Record<string, string>; baseUrl: string; processes: EntryProcess[] }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createEmptyTestDatabase();
  const port = await findFreePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = {
    NODE_ENV: 'production', DATABASE_URL: database.url, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233', PUBLIC_BASE_URL: baseUrl,
    CURSOR_SECRET: crypto.randomBytes(32).toString('hex'), SECRETS_KEY: crypto.randomBytes(32).toString('hex'), HOST: '127.0.0.1', PORT: String(port),
    // Every request line too, to see that the token is in none of them.
    LOG_LEVEL: 'debug',
  };
  t.context = { database, browser: await connectBrowser(), env, baseUrl, processes: [] };
});

test.after.always(async (t) => {
  for (const p of t.context.processes ?? []) await p.stop();
  await t.context.browser?.close();
  await t.context.database?.drop();
});

test.serial('When a fresh service starts, then its log links to the set-up page, where the first owner creates the account, lands on Shops and connects a shop; a restart prints no link', async (t) => {
  const { env, baseUrl, database } = t.context;
  const api = startEntry('server', env);
  t.context.processes.push(api);
  await api.waitForLine(/"msg":"api listening"/);
  const linkLines = api.lines.filter((line) => line.includes('/app/setup?token='));
  t.is(linkLines.length, 1, 'the link is printed once');
  const logged = JSON.parse(linkLines[0]) as { level: number; setupUrl: string };
  t.is(logged.level, 30, 'at info');
  const match = new RegExp(`^${baseUrl}/app/setup\\?token=([A-Za-z0-9_-]{43})$`).exec(logged.setupUrl);
  t.truthy(match, logged.setupUrl);
  const token = match![1];

  const context = await t.context.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  try {
    await page.goto(logged.setupUrl);
    t.is(await page.title(), 'Set up the service · Store operations');
    // The page as every page is checked (everyPage.test.ts): nothing wider than a phone, no serious axe violation.
    const width = await page.evaluate('document.documentElement.scrollWidth') as number;
    t.true(width <= 390, `${width}px wide`);
    const axe = await new AxeBuilder({ page }).analyze();
    t.deepEqual(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), []);

    await page.fill('input[name=name]', 'Acme EU');
    await page.fill('input[name=code]', 'acme-eu');
    await page.selectOption('select[name=plan]', 'start');
    await page.fill('input[name=timeZone]', 'Mars/Olympus_Mons');
    await page.fill('input[name=ownerName]', 'Olga Owner');
    await page.fill('input[name=email]', 'olga@acme.example');
    await page.fill('input[name=password]', 'a long owner password');
    await page.click('#setup button[type=submit]');
    await page.waitForSelector('#timeZone-problem');
    t.regex(await page.textContent('#timeZone-problem') ?? '', /`Mars\/Olympus_Mons` is not an IANA time zone/);
    t.is(await page.getAttribute('input[name=timeZone]', 'aria-invalid'), 'true');
    t.is(await page.inputValue('input[name=code]'), 'acme-eu', 'good values stay');
    t.is(await page.inputValue('input[name=password]'), '', 'the password is asked again');
    t.is(await database.db('accounts').count<{ count: string }[]>('* as count').first().then((r) => Number(r!.count)), 0);

    await page.fill('input[name=timeZone]', 'Europe/Bratislava');
    await page.fill('input[name=password]', 'a long owner password');
    await page.click('#setup button[type=submit]');
    await page.waitForURL(`${baseUrl}/app/shops?done=setup`);
    t.regex(await page.textContent('#shops-outcome') ?? '', /The account is ready and you are its owner/);
    t.regex(await page.textContent('header .who') ?? '', /Olga Owner\s+\(Acme EU\)/);

    // The next step the page asks for: the first shop, through the platform's test connection.
    await page.selectOption('#connect-shop select[name=platform]', 'demo');
    await page.fill('#connect-shop input[name=code]', 'sk');
    await page.fill('#connect-shop input[name=currency]', 'EUR');
    await page.fill('#connect-shop input[name=timeZone]', 'Europe/Bratislava');
    await page.fill('#connect-shop input[name=country]', 'SK');
    await page.fill('#connect-shop input[name="credential.demo.apiKey"]', 'acme-demo-key');
    await page.click('#connect-shop button[type=submit]');
    await page.waitForURL(`${baseUrl}/app/shops?done=connect`);
    t.is(await page.locator('tr[data-shop="sk"]').count(), 1);

    // The used link is gone with the page.
    const again = await page.goto(logged.setupUrl);
    t.is(again?.status(), 404);
  } finally {
    await screenshotOnFailure(t, page);
    await context.close();
  }

  // The token is in the one link line, never in a request line (the request log leaves out the query string).
  const withToken = api.lines.filter((line) => line.includes(token));
  t.deepEqual(withToken, linkLines);
  t.true(api.lines.some((line) => line.includes('"path":"/app/setup"')), 'the requests were logged, without the token');

  // A restart now that an account exists: no link, and the link line comes before `api listening` when there is one.
  await api.stop();
  const restarted = startEntry('server', env);
  t.context.processes.push(restarted);
  await restarted.waitForLine(/"msg":"api listening"/);
  t.deepEqual(restarted.lines.filter((line) => line.includes('/app/setup')), []);
  t.is(await database.db('setup_tokens').count<{ count: string }[]>('* as count').first().then((r) => Number(r!.count)), 1, 'no new link was issued');
});
