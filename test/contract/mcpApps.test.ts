/**
 * Issue 26.4, MCP Apps: each picture is a `ui://` resource named by its tools' `_meta.ui.resourceUri`, served with the
 * ext-apps MIME type as one self-contained HTML page (inline script and style; no src/href to any origin), and only to
 * credentials that may call a bound tool. Both eras: SDK 2.x at 2026-07-28 and SDK 1.x at 2025-11-25.
 */
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { connectLegacy, connectModern } from '../helpers/mcp.js';
import { issueKey } from '../helpers/server.js';

const test = appTest();

// The ext-apps spec (2026-01-26) names this MIME type for app resources.
const APP_MIME_TYPE = 'text/html;profile=mcp-app';
const BOUND: Record<string, string> = {
  reports_financial_summary: 'ui://store-ops/sales-summary',
  shipping_stats: 'ui://store-ops/shipping-stats',
  products_content_propose: 'ui://store-ops/proposal-preview',
  categories_content_propose: 'ui://store-ops/proposal-preview',
  availabilities_propose: 'ui://store-ops/proposal-preview',
  claims_settings_propose: 'ui://store-ops/proposal-preview',
};
const APP_URIS = ['ui://store-ops/proposal-preview', 'ui://store-ops/sales-summary', 'ui://store-ops/shipping-stats'];

interface Listed { name: string; _meta?: Record<string, any> }

/** Anything the page would load from elsewhere: src/href/action to a URL with a scheme or `//`, CSS imports and urls. */
const EXTERNAL = /\b(?:src|href|action|srcset|poster)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:|\/\/)|@import|url\(\s*["']?\s*(?:https?:|\/\/)|<link\b|<iframe\b|<object\b|<embed\b/i;

function checkPage(t: ExecutionContext<AppContext>, uri: string, contents: Array<{ uri: string; mimeType?: string; text?: string }>): void {
  t.is(contents.length, 1, uri);
  const [page] = contents;
  t.is(page.uri, uri);
  t.is(page.mimeType, APP_MIME_TYPE);
  const html = page.text ?? '';
  t.true(html.startsWith('<!doctype html>'), `${uri} is an HTML page`);
  t.regex(html, /<script>[\s\S]*ui\/initialize[\s\S]*<\/script>/, `${uri} carries its script inline`);
  t.regex(html, /<style>[\s\S]+<\/style>/, `${uri} carries its styles inline`);
  t.notRegex(html, EXTERNAL, `${uri} loads nothing from elsewhere`);
  t.notRegex(html, /<script[^>]*\bsrc=/i, `${uri} has no script file`);
  t.true(Buffer.byteLength(html) < 40_000, `${uri} is small (${Buffer.byteLength(html)} bytes)`);
}

test('When a 2026-07-28 client of a key with every scope lists tools and resources, then each bound tool names its app and each app reads as self-contained HTML', async (t) => {
  const client = await connectModern(t.context.server, t.context.key);
  try {
    const tools = (await client.listTools()).tools as Listed[];
    for (const [name, uri] of Object.entries(BOUND)) {
      const tool = tools.find((candidate) => candidate.name === name);
      t.truthy(tool, name);
      t.is(tool!._meta?.ui?.resourceUri, uri, `${name} names its app`);
    }
    const unbound = tools.filter((tool) => !(tool.name in BOUND));
    t.true(unbound.length > 70);
    t.deepEqual(unbound.filter((tool) => tool._meta?.ui !== undefined).map((tool) => tool.name), [], 'no other tool names an app');

    const resources = (await client.listResources()).resources;
    t.deepEqual(resources.map((resource) => resource.uri).sort(), APP_URIS);
    for (const resource of resources) t.is(resource.mimeType, APP_MIME_TYPE);
    for (const uri of APP_URIS) checkPage(t, uri, (await client.readResource({ uri })).contents as any);
  } finally {
    await client.close();
  }
});

test('When a 2025-11-25 client lists tools and reads an app, then it gets the same binding and page', async (t) => {
  const { client } = await connectLegacy(t.context.server, t.context.key, '2025-11-25');
  try {
    const tools = (await client.listTools()).tools as Listed[];
    t.is(tools.find((tool) => tool.name === 'shipping_stats')?._meta?.ui?.resourceUri, 'ui://store-ops/shipping-stats');
    t.deepEqual((await client.listResources()).resources.map((resource) => resource.uri).sort(), APP_URIS);
    checkPage(t, 'ui://store-ops/shipping-stats', (await client.readResource({ uri: 'ui://store-ops/shipping-stats' })).contents as any);
  } finally {
    await client.close();
  }
});

test('When a key may not call a bound tool, then its app is neither listed nor readable', async (t) => {
  const shippingOnly = await connectModern(t.context.server, await issueKey(t.context.database.db, { scopes: ['stores:read', 'shipping:read'] }));
  try {
    t.deepEqual((await shippingOnly.listResources()).resources.map((resource) => resource.uri), ['ui://store-ops/shipping-stats']);
    checkPage(t, 'ui://store-ops/shipping-stats', (await shippingOnly.readResource({ uri: 'ui://store-ops/shipping-stats' })).contents as any);
    await t.throwsAsync(shippingOnly.readResource({ uri: 'ui://store-ops/sales-summary' }), { message: /not found/i });
    await t.throwsAsync(shippingOnly.readResource({ uri: 'ui://store-ops/proposal-preview' }), { message: /not found/i });
  } finally {
    await shippingOnly.close();
  }
  // A read-only key lists no write tool, so no proposal card either; its reports and shipping pictures stay.
  const readOnly = await connectModern(t.context.server, await issueKey(t.context.database.db, { writeMode: 'read_only' }));
  try {
    t.deepEqual((await readOnly.listResources()).resources.map((resource) => resource.uri).sort(), ['ui://store-ops/sales-summary', 'ui://store-ops/shipping-stats']);
    await t.throwsAsync(readOnly.readResource({ uri: 'ui://store-ops/proposal-preview' }), { message: /not found/i });
  } finally {
    await readOnly.close();
  }
});
