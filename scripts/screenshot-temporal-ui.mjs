#!/usr/bin/env node
// Takes the Temporal UI screenshot of docs/webhooks.md: the delivery workflows that are retrying, and one of them.
// Usage (with `npm start` running and a failing endpoint, see docs/webhooks.md "In the Temporal UI"):
//   node scripts/screenshot-temporal-ui.mjs [ui-url]     (default http://127.0.0.1:8233)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import chromiumPackage from '@sparticuz/chromium';
import { chromium } from 'playwright-core';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const ui = process.argv[2] ?? 'http://127.0.0.1:8233';
const query = encodeURIComponent('WebhookDeliveryStatus="RETRYING"');
const browser = await chromium.launch({ executablePath: await chromiumPackage.executablePath(), args: ['--no-sandbox', '--disable-gpu'], headless: true });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  await page.goto(`${ui}/namespaces/default/workflows?query=${query}`);
  const first = page.locator('a[href*="/workflows/webhook-delivery-"]').first();
  await first.waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(root, 'docs/temporal-ui-retrying-deliveries.png') });
  await first.click();
  await page.waitForURL(/\/workflows\/webhook-delivery-/);
  // The page keeps polling (never network-idle): wait for its workflow type, then give the history a moment to draw.
  await page.getByText('webhookDeliveryWorkflow').first().waitFor({ timeout: 30_000 });
  await page.waitForTimeout(3_000);
  await page.screenshot({ path: join(root, 'docs/temporal-ui-retrying-delivery.png') });
  console.log('docs/temporal-ui-retrying-deliveries.png and docs/temporal-ui-retrying-delivery.png written');
} finally {
  await browser.close();
}
