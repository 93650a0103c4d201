/**
 * The scope matrix (issue 22): a credential of the SAME account and shops that lacks exactly one scope. For every scope
 * of SPEC.md "Authentication" (src/auth/scopes.ts):
 *   1. every capability needing it (its scope read from SPEC.md's tables, not from the registry) is refused — REST 403
 *      INSUFFICIENT_SCOPE naming it; over MCP the tool is absent from tools/list and tools/call is refused (a key: the
 *      unknown-tool protocol error -32602; an OAuth token: the 403 step-up challenge naming the scope) — while a key
 *      holding ONLY that scope lists exactly those tools and passes their scope check;
 *   2. /capabilities lists exactly the REST calls the key may make;
 *   3. MCP Apps (`ui://` resources), resource templates, prompts and tasks follow the scopes of their tools;
 *   4. for the field scopes (personal data, purchase prices, reports, claims settings, conversations) every field under
 *      that scope is absent — by the registry's `fieldScopes` and by the field NAMES SPEC.md gives — anywhere in the
 *      answer of every read (lists, single records, nested objects; REST, MCP structuredContent and MCP text), while
 *      the full key gets the declared fields on at least one record;
 *   5. a search by a personal field (last name, e-mail) finds nothing without personal-data:read, and a write's answer
 *      (affiliate_code_requests_decide) is projected like a read.
 */
import type { ExecutionContext } from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { ProtocolError, type Client as ModernClient } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { allScopes, type Scope } from '../../src/auth/scopes.js';
import { capabilities } from '../../src/capabilities/registry.js';
import { isListKind } from '../../src/capabilities/run.js';
import { isRestCapability, type Capability, type RestCapability } from '../../src/capabilities/types.js';
import { appTest, type AppContext } from '../helpers/app.js';
import { fieldPresent } from '../helpers/fields.js';
import { sampleRule } from '../helpers/automations.js';
import { connectLegacy, connectModern, modernRequest, rawMcp } from '../helpers/mcp.js';
import { mintOAuthToken } from '../helpers/oauthToken.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { api, issueKey } from '../helpers/server.js';
import { readSpec, vendoredSpecDir } from '../helpers/spec.js';

// ---------- The oracle: SPEC.md ----------

/** SPEC.md's REST table (path with `{}` for parameters → scope) and MCP-only table plus D29's propose tools (tool → scope). */
function specScopes(): { byPath: Map<string, string>; byTool: Map<string, string> } {
  const byPath = new Map<string, string>();
  const byTool = new Map<string, string>();
  for (const line of readSpec().split('\n')) {
    const rest = /^\| (\/[^ |]+) \| ([a-z:-]+) \| ([a-z_]+|-) \|/.exec(line);
    if (rest) {
      byPath.set(rest[1].replace(/:\w+/g, '{}'), rest[2]);
      if (rest[3] !== '-') byTool.set(rest[3], rest[2]);
      continue;
    }
    const tool = /^\| ([a-z_]+) \| ([a-z:-]+) \| /.exec(line);
    if (tool) byTool.set(tool[1], tool[2]);
  }
  for (const m of fs.readFileSync(path.join(vendoredSpecDir, 'DECISIONS.md'), 'utf8').matchAll(/`([a-z_]+_propose)`\s+\(scope\s+`([a-z:-]+)`\)/g)) byTool.set(m[1], m[2]);
  return { byPath, byTool };
}
const SPEC = specScopes();

/** The scope SPEC.md gives the capability (by its REST path, else by its MCP-only tool). */
function specScope(capability: Capability): Scope {
  const scope = capability.path !== null ? SPEC.byPath.get(capability.path.replace(/\{\w+\}/g, '{}')) : SPEC.byTool.get(capability.mcpTool ?? '');
  if (!scope) throw new Error(`SPEC.md names no scope for ${capability.name}`);
  return scope as Scope;
}

/**
 * Field NAMES under a field scope, literally from SPEC.md ("Customer records", "Order, document and financial
 * fields", "Scope-to-data rules"): checked anywhere in an answer, whatever the registry declares.
 */
const SENSITIVE_NAMES: Partial<Record<Scope, readonly string[]>> = {
  // Names, company, e-mail, phone, street (and the postcode of the street address), marketing gender; partner and supplier contacts.
  'personal-data:read': ['firstName', 'lastName', 'company', 'email', 'phone', 'street', 'zip', 'marketingGender', 'genderSource', 'genderConfidence', 'contact'],
  // Purchase cost, profit and margin fields.
  'purchase-prices:read': ['purchasePrice', 'purchasePriceWithoutVat', 'purchaseCostWithoutVat', 'cogs', 'cogsCoverage', 'grossProfit', 'grossMargin',
    'resultAfterCosts', 'profit', 'margin', 'marginWithoutVat', 'marginPercent', 'cost'],
  // Revenue, average order and LTV in the directory.
  'reports:read': ['revenue', 'averageOrder', 'lifetimeRevenue', 'lifetimeAverageOrder', 'periodRevenueByCurrency'],
};

/** Names that are sensitive in one place only: a supplier offer's `price` is a purchase price (SPEC "Scope-to-data rules"). */
const SENSITIVE_PATHS: Partial<Record<Scope, readonly RegExp[]>> = {
  'purchase-prices:read': [/\.offers\[\d+\]\.price$/],
};

/**
 * Where a name of SENSITIVE_NAMES is no one's personal data, by SPEC.md's own tables: the partner programme's contact
 * person (staff of the shop, shown on the public portal: "/affiliate/portal … contact person") and the shop's own
 * return addresses in the claims settings.
 */
const NOT_PERSONAL = [/\.contactPerson\.(email|name)$/, /\.addresses\[\d+\]\.(street|zip|company|email|phone)$/];

/** Extra arguments under which more fields appear: the directory's period fields need `purchaseFrom`/`purchaseTo`. */
const PURCHASE_PERIOD = { purchaseFrom: '2025-12-01', purchaseTo: '2026-11-20' };
/** Declared fields a capability's answer cannot carry (customers.get takes no purchase period, it shares the list's declarations). */
const NEVER_ANSWERED: Record<string, readonly string[]> = { 'customers.get': ['periodRevenueByCurrency'] };

/** The ui:// apps and the tools they draw (issue 26.4 in docs/decisions.md), written out here. */
const APPS: Record<string, readonly string[]> = {
  'ui://store-ops/sales-summary': ['reports_financial_summary'],
  'ui://store-ops/shipping-stats': ['shipping_stats'],
  'ui://store-ops/proposal-preview': ['products_content_propose', 'categories_content_propose', 'availabilities_propose', 'claims_settings_propose'],
};

/** The proposal tools that may run as tasks (issue 26.2). */
const TASK_TOOLS = ['products_content_propose', 'categories_content_propose', 'availabilities_propose', 'claims_settings_propose'] as const;
const TASK_DRAFT_SAMPLE: Record<(typeof TASK_TOOLS)[number], string> = {
  products_content_propose: 'products.content_draft:draftId',
  categories_content_propose: 'categories.content_draft:draftId',
  availabilities_propose: 'availabilities.draft:draftId',
  claims_settings_propose: 'claims.config_draft:draftId',
};

// ---------- Set-up ----------

interface Extra {
  samples: Record<string, string>;
  /** Per scope: a key and an OAuth token of demo (all shops, AI write mode `proposals`) holding every scope but that one. */
  lacking: Map<Scope, { key: string; token: string }>;
  /** Per scope: a key holding that scope only. */
  only: Map<Scope, string>;
  full: string;
}
type Context = AppContext & Extra;

// The tests run one after another: 66 at once on a loaded machine all finished together, after ava's 3-minute
// timeout (which restarts whenever a test completes); one at a time, each completes in seconds.
const test = appTest({}, async ({ database, server }) => {
  const db = database.db;
  const samples = await sampleValues(db);
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  // One task per propose tool, made from the sample proposals as tasks/call would record it (no workflow needed to list them).
  await db('mcp_tasks').insert(TASK_TOOLS.map((tool) => ({ task_id: samples[TASK_DRAFT_SAMPLE[tool]], account_id: demo.id, created_by: 'key:0', tool, ttl_ms: null })));
  const lacking = new Map<Scope, { key: string; token: string }>();
  const only = new Map<Scope, string>();
  await mapLimit([...allScopes], 4, async (scope) => {
    const scopes = allScopes.filter((s) => s !== scope);
    lacking.set(scope, { key: await issueKey(db, { scopes, writeMode: 'proposals' }), token: await mintOAuthToken(db, server, { scopes, writeMode: 'proposals' }) });
    only.set(scope, await issueKey(db, { scopes: [scope], writeMode: 'proposals' }));
  });
  return { samples, lacking, only, full: await issueKey(db, { writeMode: 'proposals' }) } satisfies Extra;
});

/** Runs `fn` over `items`, at most `limit` at a time. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  }));
  return results;
}

const reads = capabilities.filter((c) => c.kind !== 'write');
const tools = capabilities.filter((c) => c.mcpTool !== null);
const restReads = reads.filter(isRestCapability);
/** Scopes some field is declared under (registry) or named under (SPEC). */
const FIELD_SCOPES = [...new Set([...capabilities.flatMap((c) => Object.values(c.fieldScopes ?? {})), ...Object.keys(SENSITIVE_NAMES) as Scope[]])].sort();

/** Sample arguments; a write gets none (its parameter check, after the scope check, refuses it: nothing changes). */
function argsOf(t: ExecutionContext<Context>, capability: Capability): Record<string, unknown> {
  if (capability.kind === 'write') return {};
  if (capability.name === 'automations.validate_draft') return { rule: sampleRule() };
  return sampleArgs(capability, t.context.samples);
}

function restPath(capability: RestCapability, args: Record<string, unknown>): string {
  const pathWithParams = capability.path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
  const query = new URLSearchParams(Object.entries(args).filter(([k]) => !capability.path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
  return `${pathWithParams}?${query}`;
}

/** The codes a write's parameter check answers `{}` with: it got past the scope check. */
const PARAMETER_REFUSALS = new Set(['MISSING_PARAMETER', 'INVALID_PARAMETER']);

/** Every problem of a test, reported together at its end (ava shows only the first failed assertion). */
function collector(t: ExecutionContext<Context>) {
  const problems: string[] = [];
  return {
    check: (ok: boolean, message: string) => { if (!ok) problems.push(message); },
    done: () => t.deepEqual(problems, []),
  };
}

async function mcpRaw(t: ExecutionContext<Context>, secret: string, method: string, params: Record<string, unknown>) {
  const { body, headers } = modernRequest(method, params, secret);
  return rawMcp(t.context.server, body, headers);
}

// ---------- 1. Every capability without its scope, and with only its scope ----------

test.serial('When SPEC.md is parsed, then it names a scope of src/auth/scopes.ts for every capability, and every scope guards some capability', (t) => {
  const used = new Set(capabilities.map(specScope));
  t.deepEqual([...used].filter((s) => !(allScopes as readonly string[]).includes(s)), []);
  // personal-data:read and purchase-prices:read are field scopes only ("The scope has no tool of its own").
  t.deepEqual(allScopes.filter((s) => !used.has(s)).sort(), ['personal-data:read', 'purchase-prices:read']);
});

for (const scope of allScopes) {
  test.serial(`When a key and an OAuth token hold every scope but ${scope}, then everything needing ${scope} is refused or absent, and nothing else`, async (t) => {
    t.timeout(120_000);
    const { check, done } = collector(t);
    const { key, token } = t.context.lacking.get(scope)!;
    const needing = capabilities.filter((c) => specScope(c) === scope);
    // REST: 403 INSUFFICIENT_SCOPE naming the scope, for the sample arguments that answer a full key with data.
    await mapLimit(needing.filter(isRestCapability), 4, async (c) => {
      const res = await api(t.context.server, restPath(c, argsOf(t, c)), key);
      check(res.status === 403 && res.body?.error?.code === 'INSUFFICIENT_SCOPE' && res.body.error.details?.requiredScope === scope,
        `${c.name} REST: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    });
    // /capabilities: exactly the REST calls of the other scopes.
    const listed = await api(t.context.server, '/capabilities', key);
    check(listed.status === 200, `/capabilities ${listed.status}`);
    const expectedPaths = restReads.filter((c) => specScope(c) !== scope).map((c) => `/api/v1${c.path}`).sort();
    check(JSON.stringify((listed.body.data as Array<{ path: string }>).map((c) => c.path).sort()) === JSON.stringify(expectedPaths),
      `/capabilities lists ${JSON.stringify((listed.body.data as Array<{ path: string }>).map((c) => c.path).filter((p) => !expectedPaths.includes(p)))} too many, ${JSON.stringify(expectedPaths.filter((p) => !(listed.body.data as Array<{ path: string }>).some((c) => c.path === p)))} missing`);

    const expectedTools = tools.filter((c) => specScope(c) !== scope).map((c) => c.mcpTool!).sort();
    const expectedApps = Object.entries(APPS).filter(([, bound]) => bound.some((tool) => expectedTools.includes(tool))).map(([uri]) => uri).sort();
    for (const [credential, secret] of [['key', key], ['OAuth token', token]] as const) {
      const client = await connectModern(t.context.server, secret);
      try {
        const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
        check(JSON.stringify(names) === JSON.stringify(expectedTools),
          `${credential} tools/list: extra ${JSON.stringify(names.filter((n) => !expectedTools.includes(n)))}, missing ${JSON.stringify(expectedTools.filter((n) => !names.includes(n)))}`);
        // MCP Apps: listed and readable only while one of their tools is.
        const uris = (await client.listResources()).resources.map((r) => r.uri).sort();
        check(JSON.stringify(uris) === JSON.stringify(expectedApps), `${credential} resources/list: ${JSON.stringify(uris)}, expected ${JSON.stringify(expectedApps)}`);
        for (const uri of Object.keys(APPS)) {
          const read = await client.readResource({ uri }).then((r) => r.contents.length, (error: unknown) => error);
          if (expectedApps.includes(uri)) check(read === 1, `${credential} resources/read ${uri}: ${String(read)}`);
          else check(read instanceof ProtocolError, `${credential} resources/read ${uri} without ${scope}: ${String(read)}`);
        }
        // Templates and prompts: the server has none for any credential (one added later joins this matrix here).
        const templates = await client.listResourceTemplates().then((r) => r.resourceTemplates.length, (error: unknown) => (error instanceof ProtocolError ? 0 : error));
        check(templates === 0, `${credential} resources/templates/list: ${String(templates)}`);
        const prompts = await client.listPrompts().then((r) => r.prompts.length, (error: unknown) => (error instanceof ProtocolError ? 0 : error));
        check(prompts === 0, `${credential} prompts/list: ${String(prompts)}`);
      } finally {
        await client.close();
      }
      // tools/call of each tool needing the scope: a key gets the unknown-tool error, an OAuth token the step-up challenge.
      await mapLimit(needing.filter((c) => c.mcpTool !== null), 4, async (c) => {
        const res = await mcpRaw(t, secret, 'tools/call', { name: c.mcpTool, arguments: argsOf(t, c) });
        if (credential === 'key') {
          check(res.status === 200 && res.body?.error?.code === -32602 && res.body.result === undefined, `${c.mcpTool} key tools/call: ${res.status} ${res.text.slice(0, 200)}`);
        } else {
          const challenge = res.headers.get('www-authenticate') ?? '';
          check(res.status === 403 && challenge.startsWith(`Bearer error="insufficient_scope", scope="${scope}"`), `${c.mcpTool} OAuth tools/call: ${res.status} ${challenge} ${res.text.slice(0, 200)}`);
        }
      });
    }

    // Tasks (2025-11-25): a task of a tool needing the scope is neither listed nor found; the other tools' tasks are.
    const legacy = await connectLegacy(t.context.server, key, '2025-11-25');
    try {
      const listedTasks = (await legacy.client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId).sort();
      const expectedTasks = TASK_TOOLS.filter((tool) => SPEC.byTool.get(tool) !== scope).map((tool) => t.context.samples[TASK_DRAFT_SAMPLE[tool]]).sort();
      check(JSON.stringify(listedTasks) === JSON.stringify(expectedTasks), `tasks/list: ${JSON.stringify(listedTasks)}, expected ${JSON.stringify(expectedTasks)}`);
      for (const tool of TASK_TOOLS) {
        const taskId = t.context.samples[TASK_DRAFT_SAMPLE[tool]];
        const got = await legacy.client.experimental.tasks.getTask(taskId).then((task) => task.taskId, (error: unknown) => error);
        if (SPEC.byTool.get(tool) === scope) check(got instanceof McpError && (got.data as { code?: string } | undefined)?.code === 'NOT_FOUND', `tasks/get of ${tool}'s task without ${scope}: ${String(got)}`);
        else check(got === taskId, `tasks/get of ${tool}'s task: ${String(got)}`);
      }
    } finally {
      await legacy.client.close();
    }
    done();
  });

  test.serial(`When a key holds only ${scope}, then it lists exactly the tools and REST calls needing ${scope} and each passes the scope check`, async (t) => {
    t.timeout(120_000);
    const { check, done } = collector(t);
    const key = t.context.only.get(scope)!;
    const needing = capabilities.filter((c) => specScope(c) === scope);
    const listed = await api(t.context.server, '/capabilities', key);
    const expectedPaths = needing.filter(isRestCapability).map((c) => `/api/v1${c.path}`).sort();
    check(JSON.stringify((listed.body.data as Array<{ path: string }>).map((c) => c.path).sort()) === JSON.stringify(expectedPaths), `/capabilities: ${JSON.stringify(listed.body.data.map((c: { path: string }) => c.path))}`);
    await mapLimit(needing.filter(isRestCapability), 4, async (c) => {
      const res = await api(t.context.server, restPath(c, argsOf(t, c)), key);
      check(res.status === 200, `${c.name} REST with only ${scope}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    });
    const client = await connectModern(t.context.server, key);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
      check(JSON.stringify(names) === JSON.stringify(needing.filter((c) => c.mcpTool).map((c) => c.mcpTool!).sort()), `tools/list: ${JSON.stringify(names)}`);
      await mapLimit(needing.filter((c) => c.mcpTool !== null), 4, async (c) => {
        const result = await client.callTool({ name: c.mcpTool!, arguments: argsOf(t, c) }).then((r) => r, (error: unknown) => error);
        if (!(result && typeof result === 'object' && 'content' in result)) return check(false, `${c.mcpTool} with only ${scope}: ${String(result)}`);
        const r = result as { isError?: boolean; content: Array<{ text?: string }> };
        if (c.kind !== 'write') return check(!r.isError, `${c.mcpTool} with only ${scope}: ${r.content[0]?.text?.slice(0, 200)}`);
        const code = r.isError ? JSON.parse(r.content[0].text!).error.code : null;
        check(PARAMETER_REFUSALS.has(code), `${c.mcpTool} (write) with only ${scope}: expected its parameter check, got ${code}`);
      });
    } finally {
      await client.close();
    }
    done();
  });
}

// ---------- 2. Field scopes ----------


/** Every key path in `value` (at any depth, arrays as `[i]`). */
function keyPaths(value: unknown, at = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((element, i) => keyPaths(element, `${at}[${i}]`));
  return Object.entries(value).flatMap(([name, child]) => [`${at}.${name}`, ...keyPaths(child, `${at}.${name}`)]);
}

/** The paths in `value` of a field SPEC.md puts under `scope`, by name or by place. */
function sensitiveFound(value: unknown, scope: Scope): string[] {
  const names = new Set(SENSITIVE_NAMES[scope] ?? []);
  return keyPaths(value).filter((p) => names.has(p.slice(p.lastIndexOf('.') + 1)) || (SENSITIVE_PATHS[scope] ?? []).some((re) => re.test(p)))
    .filter((p) => scope !== 'personal-data:read' || !NOT_PERSONAL.some((re) => re.test(p)));
}

/** The records of an answer's data: every item of a list, or the one object. */
const recordsOf = (capability: Capability, data: unknown): unknown[] => (isListKind(capability) ? (data as unknown[]) : [data]);

/** The business data of one read over REST, MCP structuredContent and MCP text, for a credential. */
async function answers(t: ExecutionContext<Context>, client: ModernClient, key: string, capability: Capability): Promise<Array<{ via: string; data: unknown; whole: unknown }>> {
  const out: Array<{ via: string; data: unknown; whole: unknown }> = [];
  for (const args of argVariants(t, capability)) out.push(...await answersFor(t, client, key, capability, args));
  return out;
}

/** The sample arguments, and with the purchase period where the capability takes one. */
function argVariants(t: ExecutionContext<Context>, capability: Capability): Array<Record<string, unknown>> {
  const args = argsOf(t, capability);
  return 'purchaseFrom' in capability.params.shape ? [args, { ...args, ...PURCHASE_PERIOD }] : [args];
}

async function answersFor(t: ExecutionContext<Context>, client: ModernClient, key: string, capability: Capability, args: Record<string, unknown>): Promise<Array<{ via: string; data: unknown; whole: unknown }>> {
  const out: Array<{ via: string; data: unknown; whole: unknown }> = [];
  if (isRestCapability(capability)) {
    const res = await api(t.context.server, restPath(capability, args), key);
    if (res.status !== 200) throw new Error(`${capability.name} REST: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    out.push({ via: 'REST', data: res.body.data, whole: res.body });
  }
  if (capability.mcpTool) {
    const result = await client.callTool({ name: capability.mcpTool, arguments: args }) as { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: Record<string, unknown> };
    if (result.isError) throw new Error(`${capability.mcpTool}: ${result.content[0]?.text?.slice(0, 200)}`);
    const content = result.structuredContent!;
    out.push({ via: 'MCP structuredContent', data: isListKind(capability) ? content.items : content.data, whole: content });
    const text = JSON.parse(result.content[0].text!) as Record<string, unknown>;
    out.push({ via: 'MCP text', data: isListKind(capability) ? text.items : text.data, whole: text });
  }
  return out;
}

for (const fieldScope of FIELD_SCOPES) {
  test.serial(`When a key holds every scope but ${fieldScope}, then the fields under it are absent from every read (lists, records, nested; REST, MCP, text), and present with the scope`, async (t) => {
    t.timeout(120_000);
    const { check, done } = collector(t);
    const without = t.context.lacking.get(fieldScope)!.key;
    // Every read the key may still call: by name SPEC gives, anywhere; by the registry's declaration, at its path.
    const readable = reads.filter((c) => specScope(c) !== fieldScope && (isRestCapability(c) || c.mcpTool !== null));
    const withoutClient = await connectModern(t.context.server, without);
    const fullClient = await connectModern(t.context.server, t.context.full);
    try {
      await mapLimit(readable, 4, async (c) => {
        const declared = Object.entries(c.fieldScopes ?? {}).filter(([, s]) => s === fieldScope).map(([p]) => p);
        for (const answer of await answers(t, withoutClient, without, c)) {
          const label = `${c.name} ${answer.via} without ${fieldScope}`;
          for (const fieldPath of declared) {
            const shown = recordsOf(c, answer.data).filter((r) => fieldPresent(r, fieldPath.split('.'))).length;
            check(shown === 0, `${label}: ${fieldPath} present in ${shown} record(s)`);
          }
          const found = sensitiveFound(answer.whole, fieldScope);
          check(found.length === 0, `${label}: SPEC's ${fieldScope} fields at ${found.slice(0, 5).join(', ')}`);
        }
        if (declared.length === 0) return;
        // The full key gets every declared field on at least one record: the data has it, so its absence above means something.
        const full = await answers(t, fullClient, t.context.full, c);
        for (const via of new Set(full.map((a) => a.via))) {
          for (const fieldPath of declared.filter((p) => !(NEVER_ANSWERED[c.name] ?? []).includes(p))) {
            const shown = full.filter((a) => a.via === via).some((a) => recordsOf(c, a.data).some((r) => fieldPresent(r, fieldPath.split('.'))));
            check(shown, `${c.name} ${via} with ${fieldScope}: ${fieldPath} on no record`);
          }
        }
      });
    } finally {
      await withoutClient.close();
      await fullClient.close();
    }
    done();
  });
}

// ---------- 3. Searching by a field the key may not see ----------

/**
 * Lists that take a text search and carry personal data: a search must not match what the key cannot read. The
 * personal fields each one searches, as its parameter's description says: documents by the customer's name or
 * company; the directory by name, company or e-mail.
 */
const SEARCHED: Record<string, readonly string[]> = { 'invoices.search': ['lastName'], 'credit_notes.search': ['lastName'], 'customers.list': ['lastName', 'email'] };
const personalSearches = reads.filter((c) => isRestCapability(c) && ('query' in c.params.shape || 'search' in c.params.shape)
  && Object.values(c.fieldScopes ?? {}).includes('personal-data:read'));

test.serial('When a key lacks personal-data:read, then a search by a customer\'s last name or e-mail finds nothing, while the full key finds that very record', async (t) => {
  const { check, done } = collector(t);
  t.deepEqual(personalSearches.map((c) => c.name).sort(), Object.keys(SEARCHED).sort(), 'the searchable lists with personal data');
  const without = t.context.lacking.get('personal-data:read')!.key;
  await mapLimit(personalSearches as RestCapability[], 3, async (c) => {
    const param = 'query' in c.params.shape ? 'query' : 'search';
    const listed = await api(t.context.server, restPath(c, argsOf(t, c)), t.context.full);
    for (const field of SEARCHED[c.name]) {
      const fieldPath = Object.keys(c.fieldScopes!).find((p) => p.split('.').pop() === field)!;
      const valueOf = (record: unknown) => fieldPath.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | null)?.[k], record);
      const value = (listed.body.data as unknown[]).map(valueOf).find((v): v is string => typeof v === 'string' && v.length >= 4);
      if (!value) {
        check(false, `${c.name}: no record with a ${field} to search for`);
        continue;
      }
      const args = { ...argsOf(t, c), [param]: value };
      const found = await api(t.context.server, restPath(c, args), t.context.full);
      check(found.status === 200 && (found.body.data as unknown[]).some((r) => valueOf(r) === value), `${c.name} full key: ${param}=${field} finds no record with it`);
      const hidden = await api(t.context.server, restPath(c, args), without);
      check(hidden.status === 200 && (hidden.body.data as unknown[]).length === 0, `${c.name} without personal-data:read: ${param}=${field} finds ${(hidden.body.data as unknown[] | undefined)?.length} record(s)`);
    }
  });
  done();
});

// ---------- 4. Field scopes of a write's answer ----------

test.serial('When a key lacking personal-data:read decides a code request, then the queued e-mail\'s subject is absent from the answer (structuredContent and text), and present for the full key', async (t) => {
  const { check, done } = collector(t);
  const db = t.context.database.db;
  const declared = capabilities.find((c) => c.mcpTool === 'affiliate_code_requests_decide')!.fieldScopes ?? {};
  t.deepEqual(declared, { 'email.subject': 'personal-data:read' });
  // Two pending requests of shop sk: one decided by each credential (a rejection only changes the request, and queues an e-mail in the outbox).
  const pending = await db('affiliate_code_requests as r').join('shops as s', 's.id', 'r.shop_id').join('accounts as a', 'a.id', 's.account_id')
    .where({ 'a.code': 'demo', 's.code': 'sk', 'r.state': 'pending' }).orderBy('r.id').limit(2).pluck('r.id');
  t.is(pending.length, 2);
  for (const [who, secret, requestId] of [['without', t.context.lacking.get('personal-data:read')!.key, pending[0]], ['full', t.context.full, pending[1]]] as const) {
    const client = await connectModern(t.context.server, secret);
    try {
      const result = await client.callTool({ name: 'affiliate_code_requests_decide', arguments: { market: 'sk', requestId: String(requestId), decision: 'reject', reason: 'Scope matrix test' } }) as { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: { data: { email: Record<string, unknown> } } };
      check(!result.isError, `${who}: ${result.content[0]?.text?.slice(0, 200)}`);
      for (const [via, data] of [['structuredContent', result.structuredContent?.data], ['text', (JSON.parse(result.content[0].text!) as { data: unknown }).data]] as const) {
        check(typeof (data as { email?: unknown } | undefined)?.email === 'object', `${who} ${via}: the e-mail is described`);
        check(fieldPresent(data, ['email', 'subject']) === (who === 'full'), `${who} ${via}: email.subject ${who === 'full' ? 'absent' : 'present'}: ${JSON.stringify(data).slice(0, 300)}`);
        // By name too: nothing personal anywhere (the `email` object is the outbox record; its address is never returned).
        if (who === 'without') {
          const found = sensitiveFound(data, 'personal-data:read').filter((p) => !(p === '.email' && typeof (data as { email: unknown }).email === 'object'));
          check(found.length === 0, `${who} ${via}: personal fields at ${found.join(', ')}`);
        }
      }
    } finally {
      await client.close();
    }
  }
  done();
});
