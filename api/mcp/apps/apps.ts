/**
 * MCP Apps (issue 26.4, `@modelcontextprotocol/ext-apps`): results a person would rather look at than read. Each app
 * is a `ui://` HTML resource bound to its tools through the tool's `_meta.ui.resourceUri`; a host that supports Apps
 * fetches it with resources/read and shows it in a sandboxed frame, fed with the tool's result. The app draws only
 * from that result (structuredContent), so the text and structured result stay complete for clients without Apps.
 *
 * One page per app, built once: the shared view runtime and styles (view.js, view.css) and the app's script, all
 * inline. No `src`/`href` to anywhere, no fonts, no network: the spec's default CSP for app frames allows exactly that.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import type { McpServer } from '@modelcontextprotocol/server';
import { projectRoot } from '../../../src/config/projectRoot.js';

export interface McpApp {
  /** The resource's `ui://` address, named on each bound tool. */
  uri: string;
  name: string;
  title: string;
  description: string;
  /** The tools whose results it draws; all of them return the same result shape. */
  tools: readonly string[];
  /** Its script in this folder (browser JavaScript, run after view.js). */
  script: string;
}

export const MCP_APPS: readonly McpApp[] = [
  {
    uri: 'ui://store-ops/sales-summary',
    name: 'sales-summary',
    title: 'Sales summary chart',
    description: 'The financial summary of a shop\'s period as a chart: revenue, VAT, discounts, cost of goods, profit, costs and result in EUR, with orders, average order and gross margin.',
    tools: ['reports_financial_summary'],
    script: 'salesSummary.js',
  },
  {
    uri: 'ui://store-ops/shipping-stats',
    name: 'shipping-stats',
    title: 'Shipping statistics',
    description: 'Per carrier: the outcomes of its shipments and its delivery times (median and 90th percentile, from hand-over to the first delivery scan).',
    tools: ['shipping_stats'],
    script: 'shippingStats.js',
  },
  {
    uri: 'ui://store-ops/proposal-preview',
    name: 'proposal-preview',
    title: 'Proposal preview',
    description: 'A proposal as a card: kind, shop, status and expiry, and per item and field the change, texts as a word diff.',
    tools: ['products_content_propose', 'categories_content_propose', 'availabilities_propose', 'claims_settings_propose'],
    script: 'proposalPreview.js',
  },
];

const appByTool = new Map(MCP_APPS.flatMap((app) => app.tools.map((tool) => [tool, app] as const)));

/** The app bound to a tool, if any. */
export function appOfTool(tool: string): McpApp | undefined {
  return appByTool.get(tool);
}

/**
 * The tool's `_meta` naming its app: `ui.resourceUri` as the spec (2026-01-26) has it. Not also the deprecated flat
 * `ui/resourceUri` key the package's registerAppTool adds: hosts must read the nested form, and every byte of
 * tools/list counts against its budget (issue 26.1).
 */
export function toolUiMeta(tool: string): Record<string, unknown> | undefined {
  const app = appByTool.get(tool);
  return app ? { ui: { resourceUri: app.uri } } : undefined;
}

const folder = path.join(projectRoot, 'api', 'mcp', 'apps');
const pages = new Map<string, string>();

function source(file: string): string {
  const text = fs.readFileSync(path.join(folder, file), 'utf8');
  // Inline code must not close its own element early.
  if (/<\/(script|style)/i.test(text)) throw new Error(`${file} contains a closing </script> or </style>`);
  return text;
}

/** The app's self-contained HTML page (built on first use, then kept: the files do not change while running). */
export function appHtml(app: McpApp): string {
  let page = pages.get(app.uri);
  if (!page) {
    page = [
      '<!doctype html>',
      '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
      `<title>${app.title}</title><style>${source('view.css')}</style></head>`,
      '<body><main id="app" aria-live="polite"><p class="note">Waiting for the result…</p></main>',
      `<script>${source('view.js')}</script><script>${source(app.script)}</script></body></html>`,
    ].join('\n');
    pages.set(app.uri, page);
  }
  return page;
}

/**
 * Registers the apps whose tools this server lists (the caller's scopes and write mode already chose the tools), so
 * resources/list and resources/read show no app of a tool the credential cannot call.
 */
export function registerApps(server: McpServer, listedTools: readonly string[]): void {
  const listed = new Set(listedTools);
  for (const app of MCP_APPS) {
    if (!app.tools.some((tool) => listed.has(tool))) continue;
    server.registerResource(app.name, app.uri, { title: app.title, description: app.description, mimeType: RESOURCE_MIME_TYPE }, () => ({
      // `csp: {}`: the page needs no outside origin, so the host's strictest default CSP applies.
      contents: [{ uri: app.uri, mimeType: RESOURCE_MIME_TYPE, text: appHtml(app), _meta: { ui: { csp: {}, prefersBorder: true } } }],
    }));
  }
}
