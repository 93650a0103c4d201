/**
 * Every page of the application, as an owner sees it, in headless Chromium on a 390 px wide phone and on a desktop:
 * nothing is wider than the viewport (the document's scrollWidth), and axe (@axe-core/playwright) finds no serious or
 * critical accessibility violation. Lists with and without rows are both visited (empty states and filled tables).
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { connectBrowser, screenshotOnFailure, signInInBrowser } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  browser: Browser;
}

const test = anyTest as TestFn<Context>;

/** The pages a signed-in owner can open from the navigation, and the pages behind them that need no prepared data.
 * (`/app/setup` exists only while the service has no account; test/e2e/setup.test.ts measures it the same way.) */
export const APPLICATION_PAGES = [
  '/app', '/app/customers', '/app/documents', '/app/approvals', '/app/products', '/app/products?market=sk&search=NOTHING-MATCHES', '/app/products/import',
  '/app/categories', '/app/categories?market=sk&search=NOTHING-MATCHES',
  '/app/keys', '/app/shops', '/app/webhooks', '/app/connections', '/app/automations', '/app/notifications', '/app/emails', '/app/people',
  '/app/plan', '/app/account', '/app/affiliate/documents', '/app/customers?market=sk&purchaseFrom=2000-01-01&purchaseTo=2000-01-02', '/app/documents?market=sk&type=credit_note&query=NOTHING-MATCHES',
];

/**
 * Pages of one record: a product card and a category screen of the demo shop (codes from the data), and the owner's
 * own import preview and finished customer export (rows made here, as the screens' first steps would make them).
 */
async function recordPages(database: TestDatabase, ownerId: string): Promise<string[]> {
  const { db } = database;
  const shop = await db('shops').where({ code: 'sk' }).first('id', 'account_id');
  const product = await db('products').where({ shop_id: shop.id }).orderBy('code').first('code', 'name', 'meta_title');
  const category = await db('categories').where({ shop_id: shop.id }).orderBy('guid').first('guid');
  const now = new Date();
  const batchId = `wb_${crypto.randomBytes(8).toString('hex')}`;
  await db('text_edit_batches').insert({
    id: batchId, account_id: shop.account_id, shop_id: shop.id, person_id: ownerId, entity: 'product', kind: 'import', status: 'previewed', file_name: 'texty.csv', created_at: now,
    items: JSON.stringify({ changes: [{ id: product.code, name: product.name, fingerprint: 'f', changes: { metaTitle: 'Nový titulok' }, before: { metaTitle: product.meta_title } }], problems: [{ row: 3, code: 'NOPE', error: 'PROPOSAL_TARGET_NOT_FOUND', message: 'No such product.' }], unchanged: 1 }),
  });
  const exportId = `cex_${crypto.randomBytes(10).toString('hex')}`;
  await db('customer_exports').insert({
    id: exportId, account_id: shop.account_id, shop_id: shop.id, person_id: ownerId, format: 'csv', query: JSON.stringify({ market: 'sk' }), status: 'ready', rows_total: 1, rows_done: 1,
    file: Buffer.from('customerKey\r\n'), file_name: 'customers-sk.csv', created_at: now, finished_at: now, expires_at: new Date(now.getTime() + 3_600_000),
  });
  return [
    `/app/products/sk/${encodeURIComponent(product.code)}`, `/app/categories/sk/${encodeURIComponent(category.guid)}`,
    `/app/products/import/${batchId}`, `/app/customers/exports/${exportId}`,
  ];
}

test.before(async (t) => {
  const database = await createTestDatabase();
  // With the platform adapters, as the service runs: the Shops page shows its connect form with each platform's fields.
  const server = await startApplicationServer(database.db, testApplicationOptions(), undefined, { platforms: createPlatformRegistry({ db: database.db }) });
  Object.assign(t.context, { database, server, browser: await connectBrowser() });
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

const VIEWPORTS = [{ name: 'phone', width: 390, height: 844 }, { name: 'desktop', width: 1280, height: 900 }];

/** What the page measures: its own width against the viewport's, and the widest element that sticks out. */
async function overflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number; culprit: string | null }> {
  // A string, not a function: the tests compile without the DOM's types.
  return page.evaluate(`(() => {
    const innerWidth = window.innerWidth;
    let culprit = null;
    for (const el of document.querySelectorAll('body *')) {
      if (el.getBoundingClientRect().right > innerWidth + 0.5 && !el.closest('.table-scroll')) {
        culprit = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + el.className;
        break;
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth, culprit };
  })()`);
}

/** With APP_SCREENSHOTS=<dir>, each page is also saved there as a PNG (how docs/application-*.png are made). */
async function screenshot(page: Page, path: string, viewport: string): Promise<void> {
  const dir = process.env.APP_SCREENSHOTS;
  if (!dir) return;
  const name = path.replace(/^\/app\/?/, '').replace(/[^a-z0-9]+/gi, '-').replace(/-$/, '').slice(0, 60) || 'overview';
  await page.screenshot({ path: `${dir}/${viewport}-${name}.png`, fullPage: viewport === 'desktop' });
}

/** The problems of one page, as lines: every page is visited before the test fails, so one run shows them all. */
async function problemsOf(page: Page, path: string, viewport = ''): Promise<string[]> {
  const problems: string[] = [];
  const response = await page.goto(path);
  if (viewport) await screenshot(page, path, viewport);
  if (response?.status() !== 200) problems.push(`${path}: HTTP ${response?.status()}`);
  const measured = await overflow(page);
  if (measured.scrollWidth > measured.innerWidth) problems.push(`${path}: ${measured.scrollWidth}px wide in ${measured.innerWidth}px (${measured.culprit})`);
  const result = await new AxeBuilder({ page }).analyze();
  for (const v of result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
    problems.push(`${path}: axe ${v.impact} ${v.id} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  }
  return problems;
}

for (const viewport of VIEWPORTS) {
  test.serial(`When an owner opens every page on a ${viewport.name} (${viewport.width} px), then nothing overflows and axe finds no serious violation`, async (t) => {
    const context = await t.context.browser.newContext({ baseURL: t.context.server.baseUrl, viewport: { width: viewport.width, height: viewport.height } });
    const page = await context.newPage();
    try {
      const owner = await makePerson(t.context.database.db, { role: 'owner' });
      const problems = await problemsOf(page, '/app/sign-in');
      await signInInBrowser(page, owner.email, owner.password);
      for (const path of [...APPLICATION_PAGES, ...await recordPages(t.context.database, owner.id)]) problems.push(...await problemsOf(page, path, viewport.name));
      t.deepEqual(problems, []);
    } finally {
      await screenshotOnFailure(t, page);
      await context.close();
    }
  });
}

/** The partner portal's pages a visitor opens (the demo shop sk's portal, in both of its languages). */
const PORTAL_PAGES = ['/portal/demo/sk/', '/portal/demo/sk/register', '/portal/demo/sk/sign-in', '/portal/demo/sk/forgot-password', '/portal/demo/sk/register?lang=en', '/portal/demo/sk/no-such-page'];

for (const viewport of VIEWPORTS) {
  test.serial(`When a visitor opens the partner portal on a ${viewport.name} (${viewport.width} px), then nothing overflows and axe finds no serious violation`, async (t) => {
    const context = await t.context.browser.newContext({ baseURL: t.context.server.baseUrl, viewport: { width: viewport.width, height: viewport.height } });
    const page = await context.newPage();
    try {
      const problems: string[] = [];
      for (const path of PORTAL_PAGES) {
        const found = await problemsOf(page, path);
        // The unknown page is the portal's 404 page: measured and checked like the others, its status is the point.
        problems.push(...(path.endsWith('no-such-page') ? found.filter((p) => !p.endsWith('HTTP 404')) : found));
      }
      t.deepEqual(problems, []);
    } finally {
      await screenshotOnFailure(t, page);
      await context.close();
    }
  });
}
