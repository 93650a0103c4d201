/**
 * Headless Chromium for the e2e tests: the binary ships inside the npm package @sparticuz/chromium (no download at
 * install or run time), driven by playwright-core. One browser server per `npm test` run (started by globalSetup);
 * each test file connects to it and opens its own context, so files stay isolated.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext, TestFn } from 'ava';
import { chromium, type Browser, type BrowserContext, type BrowserServer, type Page } from 'playwright-core';
import { projectRoot } from '../../src/config/projectRoot.js';

/**
 * Our own flags, not the package's serverless ones: those turn off the same-origin policy (--disable-web-security)
 * and run one process for all pages (--single-process), which would make the CSRF and framing tests meaningless or
 * flaky. No sandbox: tests run as root in containers.
 */
const BROWSER_ARGS = ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'];

/** Starts the run's browser server; its WebSocket address goes to the test files as TEST_BROWSER_WS. */
export async function launchBrowserServer(): Promise<BrowserServer> {
  const { default: packaged } = await import('@sparticuz/chromium');
  return chromium.launchServer({ executablePath: await packaged.executablePath(), args: BROWSER_ARGS, headless: true });
}

/** Connects to the run's browser, or launches one for this file when run outside `npm test`'s set-up. */
export async function connectBrowser(): Promise<Browser> {
  const ws = process.env.TEST_BROWSER_WS;
  if (ws) return chromium.connect(ws);
  const { default: packaged } = await import('@sparticuz/chromium');
  return chromium.launch({ executablePath: await packaged.executablePath(), args: BROWSER_ARGS, headless: true });
}

/** Saves a screenshot of `page` under test-results/ when the test failed. */
export async function screenshotOnFailure(t: ExecutionContext, page: Page | undefined): Promise<void> {
  if (t.passed || !page || page.isClosed()) return;
  const dir = path.join(projectRoot, 'test-results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${t.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 100)}.png`);
  await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
  t.log(`screenshot: ${file}`);
}

/**
 * Signs in through the sign-in form. By default waits until the page has left the form (the overview, or the second
 * factor's page); `{ wait: false }` returns right after submitting, for tests that look at a refusal.
 */
export async function signInInBrowser(page: Page, email: string, password: string, options: { wait?: boolean } = {}): Promise<void> {
  await page.goto('/app/sign-in');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  if (options.wait !== false) await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
}

/** What a page test keeps in its context: the run's browser, the app's server, and a fresh context and page per test. */
export interface PageTestContext {
  browser: Browser;
  server: { baseUrl: string };
  browserContext: BrowserContext;
  page: Page;
}

/** Gives every test of the file its own browser context (cookies, storage) and page, and a screenshot when it fails. */
export function freshPagePerTest<C extends PageTestContext>(test: TestFn<C>): void {
  test.beforeEach(async (t) => {
    t.context.browserContext = await t.context.browser.newContext({ baseURL: t.context.server.baseUrl });
    t.context.page = await t.context.browserContext.newPage();
  });
  test.afterEach.always(async (t) => {
    await screenshotOnFailure(t, t.context.page);
    await t.context.browserContext?.close();
  });
}
