/**
 * The MCP server of one request: a fresh McpServer holding exactly the tools the caller's scopes allow
 * (a tool outside them does not exist for this client), each calling the same runner as REST.
 */
import fs from 'node:fs';
import path from 'node:path';
import { McpServer, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { projectRoot } from '../../src/config/projectRoot.js';
import { callerMayUse, runCapability, type RunDeps } from '../../src/capabilities/run.js';
import type { Caller } from '../../src/capabilities/context.js';
import { toAppError } from '../../src/errors.js';
import { logger } from '../../src/logger.js';
import { mcpToolCalls } from '../../src/metrics/registry.js';
import { registerApps, toolUiMeta } from './apps/apps.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from './protocol.js';
import { errorResult, structuredContent, textRendering, toolDefinitions, type ToolDefinition } from './tools.js';
import { callConfirmedTool, PERSON_CONFIRMED_TOOLS } from './confirmations.js';
import { TASK_TOOLS } from './tasks.js';

const version = (JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;

export const SERVER_INFO = { name: 'store-operations-data-service', title: 'Store operations data', version } as const;

/**
 * The rules every tool shares, said once here instead of in 91 tool descriptions (issue 26.1); each tool's
 * description ends with a usage line (scope, per shop, period default, paged/search) that refers to them.
 */
const INSTRUCTIONS = [
  'The data of the client\'s online shops: orders, documents, products and stock, shipping, claims, coupons, customers,',
  'reports and analytics, the affiliate programme, the chatbot, suppliers and automations. Tools read; the only changes',
  'are automation drafts (disabled until a person publishes them), proposals (texts, availability dictionary, claims settings)',
  'that a person approves in the application, coupons (coupons_update and coupons_remove change nothing until called again',
  'with the confirmationToken of their preview, or until the person says yes to the question their client shows) and the affiliate programme\'s own records (partner and code decisions e-mail',
  'the partner; commissions and payouts are never changed); write tools are listed only when the credential allows them.',
  '\n\nShops ("per shop"): call stores_list first; per-shop tools take the shop code as `market`; a shop outside this credential is SHOP_FORBIDDEN.',
  '\nPeriods: `from`/`to` are calendar dates YYYY-MM-DD, inclusive, in the shop\'s time zone, at most 366 days; `to` alone needs `from`,',
  'only `from` means until today; without both, the tool\'s default period applies ("period default ..."); "period required" means both are needed;',
  '`todayOnly: true` means today and excludes `from`/`to`. The period used is returned as `period`.',
  '\nPaged lists ("paged"): `limit` 1..250 (default 50); while `hasMore` is true call again with `cursor` = `nextCursor` and every other',
  'argument unchanged; never infer the end from the count. A "complete list" returns everything at once.',
  'Searches ("search", or a list given `query`): `limit` 1..100 (default 20), ordered by relevance, not paged, no period; `query` excludes `cursor`, `from`, `to`.',
  '\nResults: lists give `items`, `count`, `hasMore`, `nextCursor`; other tools give `data`; plus `market` and `period` where they apply.',
  'Fields that need an extra scope ("X adds a, b") are absent, not null, without it; personal data (names, e-mails, addresses, phones) needs personal-data:read.',
  'Errors are tool errors whose text is {"error":{"code","message","details"}}, the same codes as the REST API; `details.param` names the offending argument.',
  '\nUnits: money is {amount: decimal string, currency}; fields named ...Percent or ...Margin in percent are numbers 0..100 (12.5 = 12.5 %);',
  'rates, shares and coverage (...Rate, ...Share, coverage) are fractions 0..1. Prefer summary tools (reports_financial_summary, analytics_overview,',
  'shipping_stats) over adding up pages.',
].join(' ');

/** What the router hands over per request (through the SDK's pass-through authInfo). */
export interface McpCallContext {
  caller: Caller;
  requestId: string;
}

/** The tools this caller may see, in the stable order of the registry (sorted by name). */
export function toolsFor(caller: Caller): ToolDefinition[] {
  return toolDefinitions().filter((tool) => callerMayUse(tool.capability, caller));
}

/** Runs one tool: the capability runner's business data as structuredContent + text, or the D3 error as isError. */
export async function callTool(tool: ToolDefinition, args: unknown, context: McpCallContext, deps: RunDeps): Promise<CallToolResult> {
  try {
    const output = await runCapability(tool.capability, (args ?? {}) as Record<string, unknown>, context.caller, context.requestId, deps);
    const content = structuredContent(tool.capability, output);
    mcpToolCalls.inc({ tool: tool.name, outcome: 'ok' });
    return { content: [{ type: 'text', text: textRendering(content) }], structuredContent: content, _meta: { requestId: context.requestId } };
  } catch (error) {
    return callToolFailure(tool, error, context);
  }
}

/** Where the SDK names the server on every 2026-07-28 result (`_meta`). */
export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

/**
 * The JSON-RPC response to a plain `tools/call`, as text: the result the SDK would send for callTool's result. In the
 * 2026-07-28 era that carries the server's identity in `_meta` and `resultType: complete`; a 2025-era result has
 * neither (the SDK's legacy leg adds nothing to what the tool returns). structuredContent is written as the very JSON
 * string the text block was made from, so the business data is serialised once, not twice.
 */
export async function toolCallResponse(tool: ToolDefinition, args: unknown, context: McpCallContext, deps: RunDeps, id: string | number, era: 'modern' | 'legacy' = 'modern'): Promise<string> {
  const modern = era === 'modern';
  const meta = modern ? { requestId: context.requestId, [SERVER_INFO_META]: SERVER_INFO } : { requestId: context.requestId };
  let content: Record<string, unknown>;
  try {
    const output = await runCapability(tool.capability, (args ?? {}) as Record<string, unknown>, context.caller, context.requestId, deps);
    content = structuredContent(tool.capability, output);
    mcpToolCalls.inc({ tool: tool.name, outcome: 'ok' });
  } catch (error) {
    const result = await callToolFailure(tool, error, context);
    const answer = modern ? { ...result, _meta: { ...result._meta, [SERVER_INFO_META]: SERVER_INFO }, resultType: 'complete' } : result;
    return JSON.stringify({ result: answer, jsonrpc: '2.0', id });
  }
  const full = JSON.stringify(content);
  const text = textRendering(content, full);
  const tail = modern ? ',"resultType":"complete"' : '';
  return `{"result":{"_meta":${JSON.stringify(meta)},"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${full}${tail}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** A failed call as the tool error result (D3 code and message); an unexpected failure is logged. */
function callToolFailure(tool: ToolDefinition, error: unknown, context: McpCallContext) {
  const appError = toAppError(error);
  mcpToolCalls.inc({ tool: tool.name, outcome: appError.code });
  if (appError.code === 'INTERNAL_ERROR') logger.error({ err: error, tool: tool.name }, 'tool call failed');
  return errorResult(appError, context.requestId);
}

/** Builds the per-request server. Tool lists depend on the credential, hence `cacheScope: private` on the cacheable results. */
export function buildMcpServer(context: McpCallContext, deps: RunDeps): McpServer {
  const server = new McpServer(SERVER_INFO, {
    // Tasks: the propose tools may run as tasks, 2025-11-25 `tasks` and the 2026-07-28 extension (api/mcp/tasks.ts).
    capabilities: { tools: { listChanged: false }, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }, extensions: { 'io.modelcontextprotocol/tasks': {} } },
    instructions: INSTRUCTIONS,
    supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    cacheHints: {
      'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
      'server/discover': { ttlMs: 60_000, cacheScope: 'private' },
      'prompts/list': { ttlMs: 0, cacheScope: 'private' },
      'resources/list': { ttlMs: 0, cacheScope: 'private' },
      'resources/templates/list': { ttlMs: 0, cacheScope: 'private' },
      'resources/read': { ttlMs: 0, cacheScope: 'private' },
    },
  });
  const tools = toolsFor(context.caller);
  for (const tool of tools) {
    const registered = server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema, annotations: tool.annotations, _meta: toolUiMeta(tool.name) },
      // coupons_update/remove ask the person where the client can (issue 26.3); every other tool runs as it is.
      PERSON_CONFIRMED_TOOLS.has(tool.name)
        ? (args: unknown, ctx: ServerContext) => callConfirmedTool(tool, args, ctx, context, deps)
        : (args: unknown) => callTool(tool, args, context, deps),
    );
    // The SDK's registerTool takes no `execution`; the listed tool reads it from the registration.
    if (TASK_TOOLS.has(tool.name)) registered.execution = { taskSupport: 'optional' };
  }
  // MCP Apps (issue 26.4): the pictures of the tools listed above, and no others.
  registerApps(server, tools.map((tool) => tool.name));
  return server;
}
