/**
 * Issue 26.4, MCP Apps in a real host: each app page, read over MCP from the test server, runs in headless Chromium
 * in a sandboxed frame on its own origin under the ext-apps spec's default CSP, and talks to the package's own host
 * bridge (AppBridge from @modelcontextprotocol/ext-apps/app-bridge, which validates every message). The bridge runs
 * in this process with the real MCP client; the transport between it and the frame is the page's postMessage, carried
 * across the test's browser connection. Each app gets a REAL tool result from the server, and the test reads what it
 * drew: one bar per figure, one row per carrier, the words deleted and inserted.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { Browser, BrowserContext, FrameLocator, Page } from 'playwright-core';
import { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { Client as ModernClient, JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { allScopes } from '../../src/auth/scopes.js';
import { projectRoot } from '../../src/config/projectRoot.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { connectBrowser, freshPagePerTest } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  temporal: TemporalAccess;
  key: string;
  client: ModernClient;
  browser: Browser;
  browserContext: BrowserContext;
  page: Page;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  // Proposals start their workflow on a queue no worker polls: they stay awaiting approval, as a fresh proposal is.
  const temporal: TemporalAccess = { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue: `test-mcp-apps-${crypto.randomBytes(4).toString('hex')}` };
  const server = await startTestServer(database.db, undefined, undefined, { platforms: createPlatformRegistry({ db: database.db }), temporal });
  const key = await issueKey(database.db, { scopes: allScopes });
  Object.assign(t.context, { database, server, temporal, key, client: await connectModern(server, key), browser: await connectBrowser() });
});

test.after.always(async (t) => {
  await t.context.client?.close();
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.temporal?.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

// The ext-apps spec's CSP for an app that declares no outside domains (what a host applies to our resources).
const DEFAULT_APP_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'";
const HOST = 'http://host.test/';
const SANDBOX = 'http://sandbox.test/app';

/** The host page's postMessage, carried across the browser connection: the frame's messages go to the bridge and back. */
class FrameTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(private readonly page: Page) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    await this.page.evaluate((m) => (globalThis as any).toApp(m), message);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
}

interface Hosted {
  frame: FrameLocator;
  /** Requests to anywhere but the host and the app page (must stay empty), CSP reports and script errors. */
  outside: string[];
  problems: string[];
}

/**
 * Hosts the tool's app as a chat client would: finds the app named in the tool's `_meta.ui.resourceUri`, reads it,
 * shows it in a sandboxed frame, connects the bridge, and hands over the tool's arguments and result.
 */
async function host(t: ExecutionContext<Context>, toolName: string, args: Record<string, unknown>, result: unknown): Promise<Hosted> {
  const { page, client } = t.context;
  const tool = (await client.listTools()).tools.find((candidate) => candidate.name === toolName)!;
  const uri = (tool._meta as any)?.ui?.resourceUri as string;
  t.truthy(uri, `${toolName} names an app`);
  const html = ((await client.readResource({ uri })).contents[0] as { text: string }).text;

  const outside: string[] = [];
  const problems: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === HOST) {
      await route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><html><body style="margin:0"><iframe id="app" title="app" sandbox="allow-scripts" src="${SANDBOX}" style="border:0;width:800px;height:200px"></iframe>
<script>
const frame = document.getElementById('app');
window.addEventListener('message', (event) => { if (event.source === frame.contentWindow) window.toHost(event.data); });
window.toApp = (message) => frame.contentWindow.postMessage(message, '*');
</script></body></html>`,
      });
    } else if (url === SANDBOX) {
      await route.fulfill({ contentType: 'text/html', headers: { 'Content-Security-Policy': DEFAULT_APP_CSP }, body: html });
    } else {
      outside.push(url);
      await route.abort();
    }
  });

  const transport = new FrameTransport(page);
  await page.exposeBinding('toHost', (_source, message: JSONRPCMessage) => transport.onmessage?.(message));
  const bridge = new AppBridge(client, { name: 'test-host', version: '1.0.0' }, { serverTools: {} }, { hostContext: { theme: 'light', displayMode: 'inline', toolInfo: { tool } } });
  const initialized = new Promise<void>((resolve) => { bridge.oninitialized = () => resolve(); });
  bridge.onsizechange = ({ height }) => {
    if (height) void page.evaluate((h) => { (globalThis as any).document.getElementById('app').style.height = `${h}px`; }, height).catch(() => undefined);
  };
  await bridge.connect(transport);
  await page.goto(HOST);
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result as any);
  const frame = page.frameLocator('#app');
  await frame.locator('main[data-rendered="true"]').waitFor();
  return { frame, outside, problems };
}

/** With DOCS_SCREENSHOTS=1 the drawn app is saved for docs/mcp.md. */
async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.DOCS_SCREENSHOTS !== '1') return;
  await page.waitForTimeout(300);
  await page.locator('#app').screenshot({ path: path.join(projectRoot, 'docs', `mcp-app-${name}.png`) });
}

const call = async (t: ExecutionContext<Context>, name: string, args: Record<string, unknown>) => {
  const result = await t.context.client.callTool({ name, arguments: args });
  t.falsy(result.isError, JSON.stringify(result.content).slice(0, 300));
  return result as { structuredContent: any };
};

test.serial('When the financial summary is hosted as an app, then it draws one bar per figure of the result, scaled, with the orders and the shop', async (t) => {
  const args = { market: 'sk', from: '2026-10-01', to: '2026-10-31' };
  const result = await call(t, 'reports_financial_summary', args);
  const data = result.structuredContent.data;
  const { frame, outside, problems } = await host(t, 'reports_financial_summary', args, result);
  // The money figures of the spec's financial summary, in the order drawn; a key with every scope sees them all.
  const figures = ['revenueWithVat', 'revenueWithoutVat', 'vat', 'discounts', 'cogs', 'grossProfit', 'shipping', 'companyCosts', 'resultAfterCosts'].filter((field) => data[field]);
  t.true(figures.length >= 8, `cost of goods known in October: ${figures.join(', ')}`);
  t.deepEqual(await frame.locator('[data-figure]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-figure'))), figures);
  for (const field of figures) t.is(await frame.locator(`[data-figure="${field}"] [data-amount]`).getAttribute('data-amount'), data[field].amount, field);
  // Bars are proportional: the revenue with VAT is the longest (300 px), the one without VAT in proportion.
  const width = async (field: string) => Number(await frame.locator(`[data-figure="${field}"] rect`).getAttribute('width'));
  t.is(await width('revenueWithVat'), 300);
  t.true(Math.abs(await width('revenueWithoutVat') - (300 * Number(data.revenueWithoutVat.amount)) / Number(data.revenueWithVat.amount)) <= 1);
  t.is(await frame.locator('[data-tile="orders"] b').textContent(), String(data.orders));
  t.is(await frame.locator('[data-tile="grossMargin"] b').textContent(), `${data.grossMargin} %`);
  t.regex((await frame.locator('h1').textContent())!, /· sk$/);
  t.regex((await frame.locator('[data-period]').textContent())!, /^2026-10-01 – 2026-10-31/);
  t.deepEqual(outside, [], 'the app loads nothing');
  t.deepEqual(problems, [], 'no CSP report, no script error');
  await screenshot(t.context.page, 'sales-summary');
});

test.serial('When a key without purchase prices gets the financial summary, then the app draws only the figures the result has', async (t) => {
  const limited = await connectModern(t.context.server, await issueKey(t.context.database.db, { scopes: ['stores:read', 'reports:read'] }));
  try {
    const args = { market: 'sk', from: '2026-10-01', to: '2026-10-31' };
    const result = await limited.callTool({ name: 'reports_financial_summary', arguments: args });
    const { frame } = await host(t, 'reports_financial_summary', args, result);
    t.deepEqual(await frame.locator('[data-figure]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-figure'))), ['revenueWithVat', 'revenueWithoutVat', 'vat', 'discounts']);
    t.is(await frame.locator('[data-tile="grossMargin"]').count(), 0);
  } finally {
    await limited.close();
  }
});

test.serial('When shipping statistics are hosted as an app, then it draws one row per carrier with its outcomes and its median and p90 delivery times', async (t) => {
  const args = { market: 'sk', from: '2026-08-15', to: '2026-10-10' };
  const result = await call(t, 'shipping_stats', args);
  const carriers = result.structuredContent.data.carriers as any[];
  t.true(carriers.length >= 2, `carriers: ${carriers.length}`);
  const { frame, outside, problems } = await host(t, 'shipping_stats', args, result);
  t.deepEqual(await frame.locator('[data-carrier]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-carrier'))), carriers.map((c) => c.carrierCode));
  const longest = Math.max(...carriers.map((c) => c.delivery.p90Hours ?? 0));
  for (const carrier of carriers) {
    const row = frame.locator(`[data-carrier="${carrier.carrierCode}"]`);
    t.regex((await row.locator('text').first().textContent())!, new RegExp(carrier.carrierName ?? carrier.carrierCode));
    const outcomes = ['delivered', 'returned', 'failed', 'inTransit'].filter((field) => carrier[field] > 0);
    t.deepEqual(await row.locator('[data-outcome]').evaluateAll((nodes) => nodes.map((node) => [node.getAttribute('data-outcome'), Number(node.getAttribute('data-count'))])), outcomes.map((field) => [field, carrier[field]]));
    if (carrier.delivery.medianHours === null) {
      t.is(await row.locator('[data-median-hours]').count(), 0);
      continue;
    }
    const median = row.locator('[data-median-hours]');
    t.is(Number(await median.getAttribute('data-median-hours')), carrier.delivery.medianHours);
    t.true(Math.abs(Number(await median.getAttribute('width')) - (220 * carrier.delivery.medianHours) / longest) <= 1, `${carrier.carrierCode} median bar to scale`);
    t.is(Number(await row.locator('[data-p90-hours]').getAttribute('data-p90-hours')), carrier.delivery.p90Hours);
  }
  t.is(await frame.locator('[data-tile="total"] b').textContent(), String(result.structuredContent.data.shipments.total));
  t.deepEqual(outside, []);
  t.deepEqual(problems, []);
  await screenshot(t.context.page, 'shipping-stats');
});

test.serial('When a product-text proposal is hosted as an app, then its card marks exactly the deleted and inserted words', async (t) => {
  const { db } = t.context.database;
  const shop = await db('shops').where({ code: 'sk' }).first('id');
  const codes = (await db('products').where({ shop_id: shop.id }).orderBy('code').limit(200).pluck('code')) as string[];
  let product: { code: string; content: any } | undefined;
  for (const code of codes) {
    const content = (await api(t.context.server, `/products/${encodeURIComponent(code)}/content?market=sk`, t.context.key)).body.data;
    const words = String(content.fields.metaTitle.value ?? '').split(/\s+/).filter(Boolean);
    if (words.length >= 3 && new Set(words).size === words.length) { product = { code, content }; break; }
  }
  t.truthy(product, 'a product whose SEO title has three different words');
  const words = (product!.content.fields.metaTitle.value as string).split(/\s+/).filter(Boolean);
  // The first word replaced, one appended: the diff must show exactly these.
  const metaTitle = ['Najlepší', ...words.slice(1), 'výpredaj'].join(' ');
  const args = { market: 'sk', products: [{ code: product!.code, fingerprint: product!.content.fingerprint, fields: { metaTitle } }], note: 'Sharper title' };
  const result = await call(t, 'products_content_propose', args);
  t.is(result.structuredContent.data.status, 'awaiting_approval');
  const { frame, outside, problems } = await host(t, 'products_content_propose', args, result);
  const field = frame.locator(`[data-item="${product!.code}"] [data-field="metaTitle"]`);
  t.deepEqual(await field.locator('del').allTextContents(), [words[0]]);
  t.deepEqual(await field.locator('ins').allTextContents(), ['Najlepší', 'výpredaj']);
  t.is((await field.locator('.diff').textContent())!.replace(/\s+/g, ' '), [words[0], 'Najlepší', ...words.slice(1), 'výpredaj'].join(' '));
  t.is(await frame.locator('article').getAttribute('data-status'), 'awaiting_approval');
  t.regex((await frame.locator('h1').textContent())!, /^Product texts · sk$/);
  t.regex((await frame.locator('article').textContent())!, /Sharper title/);
  t.deepEqual(outside, []);
  t.deepEqual(problems, []);
  await screenshot(t.context.page, 'proposal-preview');
});

test.serial('When a claims-settings proposal is hosted as the same app, then a switch shows as the old value deleted and the new one inserted', async (t) => {
  const settings = (await api(t.context.server, '/claims/settings?market=sk', t.context.key)).body.data;
  const allowsPhotos = !settings.module.configuration.form.allowsPhotos;
  const args = { market: 'sk', form: { allowsPhotos } };
  const result = await call(t, 'claims_settings_propose', args);
  const { frame } = await host(t, 'claims_settings_propose', args, result);
  const field = frame.locator('[data-field]').first();
  t.deepEqual(await field.locator('del').allTextContents(), [String(!allowsPhotos)]);
  t.deepEqual(await field.locator('ins').allTextContents(), [String(allowsPhotos)]);
  t.regex((await frame.locator('h1').textContent())!, /^Claims settings · sk$/);
});

test.serial('When the tool call failed, then the app shows the error code and message of the result', async (t) => {
  const args = { market: 'sk', from: '2026-10-31', to: '2026-10-01' };
  const result = await t.context.client.callTool({ name: 'shipping_stats', arguments: args });
  t.true(result.isError);
  const { frame } = await host(t, 'shipping_stats', args, result);
  t.regex((await frame.locator('[role="alert"]').textContent())!, /^PERIOD_REVERSED: /);
});
