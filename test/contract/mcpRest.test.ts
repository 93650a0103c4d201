/**
 * Contract over the whole registry: every MCP tool and its REST counterpart, called with the same arguments, return
 * identical business data and list metadata — with a full key and with a key lacking the personal-data and
 * purchase-price scopes (whose fields must then be absent on both). Real clients of both SDK generations validate
 * each structuredContent against the advertised outputSchema on the way.
 */
import { appTest, type AppContext } from '../helpers/app.js';
import { fieldPresent } from '../helpers/fields.js';
import type { ExecutionContext } from 'ava';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { allScopes, type Scope } from '../../src/auth/scopes.js';
import { capabilities } from '../../src/capabilities/registry.js';
import { isListKind } from '../../src/capabilities/run.js';
import { isRestCapability, type RestCapability } from '../../src/capabilities/types.js';
import { connectLegacy, connectModern, type LegacyConnection } from '../helpers/mcp.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { api, issueKey } from '../helpers/server.js';

type Context = AppContext & { samples: Record<string, string> };
const test = appTest({}, async ({ database }) => ({ samples: await sampleValues(database.db) }));

const tools = capabilities.filter((c) => c.mcpTool !== null);
const RESTRICTED: Scope[] = ['personal-data:read', 'purchase-prices:read'];

/** The REST call for the same arguments: path parameters in the path, the rest in the query. */
function restPath(capability: RestCapability, args: Record<string, unknown>): string {
  const path = capability.path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k]) => !capability.path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  return `${path}?${query}`;
}


async function compareAll(t: ExecutionContext<Context>, key: string, scopes: readonly Scope[]) {
  const modern: ModernClient = await connectModern(t.context.server, key);
  const legacy: LegacyConnection = await connectLegacy(t.context.server, key, '2025-11-25');
  try {
    // listTools() caches the output schemas the clients validate every structuredContent against.
    t.is((await modern.listTools()).tools.length, tools.length);
    t.is((await legacy.client.listTools()).tools.length, tools.length);
    // MCP-only tools (writes, draft validation) have no REST counterpart to compare with.
    for (const capability of tools.filter(isRestCapability)) {
      const name = capability.mcpTool as string;
      const args = sampleArgs(capability, t.context.samples);
      const rest = await api(t.context.server, restPath(capability, args), key);
      t.is(rest.status, 200, `${name} REST: ${JSON.stringify(rest.body)}`);
      for (const [era, client] of [['2026-07-28', modern], ['2025-11-25', legacy.client]] as const) {
        const result = await client.callTool({ name, arguments: args });
        t.falsy(result.isError, `${name} over ${era}: ${JSON.stringify(result.content)}`);
        const content = result.structuredContent as Record<string, unknown>;
        const { requestId: _id, ...restMeta } = rest.body.meta as Record<string, unknown>;
        if (isListKind(capability)) {
          const { items, ...meta } = content;
          t.deepEqual(items, rest.body.data, `${name} over ${era}: items = REST data`);
          t.deepEqual(meta, restMeta, `${name} over ${era}: count, hasMore, nextCursor, market, period = REST meta`);
          if (capability.kind === 'list') t.true((items as unknown[]).length > 0, `${name} returns records for the samples`);
        } else {
          const { data, ...meta } = content;
          t.deepEqual(data, rest.body.data, `${name} over ${era}: data = REST data`);
          t.deepEqual(meta, restMeta, `${name} over ${era}: market, period = REST meta`);
        }
        const records = isListKind(capability) ? (content.items as unknown[]) : [content.data];
        for (const [path, scope] of Object.entries(capability.fieldScopes ?? {})) {
          if (scopes.includes(scope)) continue;
          t.false(records.some((r) => fieldPresent(r, path.split('.'))), `${name} over ${era}: ${path} is absent without ${scope}`);
        }
      }
    }
  } finally {
    await modern.close();
    await legacy.client.close();
  }
}

test('When every tool and its REST counterpart are called with a full key, then the business data and list metadata are identical', async (t) => {
  await compareAll(t, await issueKey(t.context.database.db), allScopes);
});

test('When every tool and its REST counterpart are called without personal-data:read and purchase-prices:read, then the data is identical and those fields are absent', async (t) => {
  const scopes = allScopes.filter((s) => !RESTRICTED.includes(s));
  await compareAll(t, await issueKey(t.context.database.db, { scopes }), scopes);
});

test('When orders are read over MCP without personal-data:read, then customers carry city and country but no name, e-mail, phone or street', async (t) => {
  const key = await issueKey(t.context.database.db, { scopes: ['orders:read'] });
  const client = await connectModern(t.context.server, key);
  try {
    const listed = await client.callTool({ name: 'orders_list', arguments: { market: 'sk', limit: 5 } });
    const orders = (listed.structuredContent as { items: Array<{ code: string; customer: Record<string, unknown> }> }).items;
    const one = await client.callTool({ name: 'orders_get', arguments: { market: 'sk', orderCode: orders[0].code } });
    for (const order of [...orders, (one.structuredContent as { data: { customer: Record<string, unknown> } }).data]) {
      t.deepEqual(Object.keys(order.customer).sort(), ['city', 'country']);
    }
    t.false(JSON.stringify(listed.content).includes('"email"'), 'nor in the text rendering');
  } finally {
    await client.close();
  }
});
