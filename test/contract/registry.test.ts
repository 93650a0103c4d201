/** Invariants over the whole capability registry, and every capability called for real with full and minimal scopes. */
import { appTest } from '../helpers/app.js';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { capabilities, restCapabilities } from '../../src/capabilities/registry.js';
import { isListKind } from '../../src/capabilities/run.js';
import { allScopes } from '../../src/auth/scopes.js';
import { errorCodes, errorCodesMarkdown } from '../../src/errors.js';
import { projectRoot } from '../../src/config/projectRoot.js';
import { buildOpenApiDocument } from '../../api/openapi.js';
import { api, issueKey } from '../helpers/server.js';
import { sampleArgs, sampleValues } from '../helpers/samples.js';
import { readSpec, vendoredSpecDir } from '../helpers/spec.js';

const test = appTest({}, async ({ database }) => ({ samples: await sampleValues(database.db) }));

/** SPEC.md's endpoint table: path → { scope, tool }. */
function specTable(): Map<string, { scope: string; tool: string | null }> {
  const rows = new Map<string, { scope: string; tool: string | null }>();
  for (const line of readSpec().split('\n')) {
    const m = /^\| (\/[^ |]+) \| ([a-z:-]+) \| ([a-z_]+|-) \|/.exec(line);
    if (m) rows.set(m[1].replace(/:(\w+)/g, '{$1}'), { scope: m[2], tool: m[3] === '-' ? null : m[3] });
  }
  return rows;
}

test('When the registry is walked, then names, paths and tool names are unique', (t) => {
  for (const key of ['name', 'path'] as const) {
    const values = capabilities.map((c) => c[key]).filter((v) => v !== null);
    t.is(new Set(values).size, values.length, key);
  }
  const tools = capabilities.map((c) => c.mcpTool).filter(Boolean);
  t.is(new Set(tools).size, tools.length);
});

test('When a capability is compared with SPEC.md\'s table, then its path, scope and MCP tool name agree', (t) => {
  const table = specTable();
  t.true(table.size > 80, 'the SPEC table was parsed');
  for (const c of restCapabilities) {
    const paramNames = [...c.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const specRow = [...table.entries()].find(([p]) => p.replace(/\{\w+\}/g, '{}') === c.path.replace(/\{\w+\}/g, '{}'));
    t.truthy(specRow, `${c.path} is in SPEC.md`);
    t.is(specRow![1].scope, c.scope, `${c.name} scope`);
    t.is(specRow![1].tool, c.mcpTool, `${c.name} tool`);
    t.true(paramNames.every((p) => p in c.params.shape), `${c.name} declares its path parameters`);
  }
});

test('When a capability is defined, then it has a scope, a summary, a description, all annotations and a strict schema', (t) => {
  for (const c of capabilities) {
    t.true((allScopes as readonly string[]).includes(c.scope), c.name);
    t.true(c.summary.length > 5 && c.description.length > 40, `${c.name} is described`);
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) t.is(typeof c.annotations[hint], 'boolean', `${c.name} ${hint}`);
    if (c.kind !== 'write') t.true(c.annotations.readOnlyHint && !c.annotations.destructiveHint, `${c.name} reads only`);
    t.false(c.params.safeParse({ __unknown: 1, ...Object.fromEntries([]) }).success, `${c.name} params are strict`);
    t.is('market' in c.params.shape, c.market === 'required', `${c.name} market declared iff required`);
  }
});

test('When a capability has no REST path, then it is an MCP tool of SPEC.md\'s MCP-only table with that scope, and every write is MCP-only', (t) => {
  const mcpOnly = new Map<string, string>();
  for (const line of readSpec().split('\n')) {
    const m = /^\| ([a-z_]+) \| ([a-z:-]+) \| /.exec(line);
    if (m) mcpOnly.set(m[1], m[2]);
  }
  t.true(mcpOnly.has('automations_create_draft'), 'the MCP-only table was parsed');
  // D29 names the proposal tools SPEC.md leaves unnamed, with their scopes.
  for (const m of fs.readFileSync(path.join(vendoredSpecDir, 'DECISIONS.md'), 'utf8').matchAll(/`([a-z_]+_propose)`\s+\(scope\s+`([a-z:-]+)`\)/g)) mcpOnly.set(m[1], m[2]);
  t.true(mcpOnly.has('availabilities_propose') && mcpOnly.has('claims_settings_propose'), 'D29 was parsed');
  for (const c of capabilities) {
    if (c.kind === 'write') t.is(c.path, null, `${c.name} is a write and has no REST path`);
    if (c.path !== null) continue;
    t.truthy(c.mcpTool, `${c.name} without a path is an MCP tool`);
    t.is(mcpOnly.get(c.mcpTool!), c.scope, `${c.name} scope as in SPEC.md`);
    if (c.kind === 'write') t.false(c.annotations.readOnlyHint, `${c.name} is not read-only`);
  }
});

test('When a field needs an extra scope, then it is optional in the result schema (absent, not null)', (t) => {
  for (const c of capabilities) {
    for (const fieldPath of Object.keys(c.fieldScopes ?? {})) {
      let schema: any = z.toJSONSchema(c.result, { io: 'output', unrepresentable: 'any' });
      const segments = fieldPath.split('.');
      const last = segments.pop()!;
      for (const segment of segments) {
        schema = schema.properties[segment.replace('[]', '')];
        if (segment.endsWith('[]')) schema = schema.items;
        if (schema.anyOf) schema = schema.anyOf.find((s: any) => s.type === 'object');
      }
      t.truthy(schema.properties?.[last], `${c.name}: ${fieldPath} exists`);
      t.false((schema.required ?? []).includes(last), `${c.name}: ${fieldPath} is optional`);
    }
  }
});

test('When the OpenAPI document is generated, then it is valid 3.1 with every path, parameter and error code, and matches docs/openapi.json', async (t) => {
  const document = buildOpenApiDocument();
  const validator = new Validator();
  const result = await validator.validate(JSON.parse(JSON.stringify(document)));
  t.true(result.valid, JSON.stringify(result.errors));
  t.is(validator.version, '3.1');
  for (const c of restCapabilities) {
    const operation = (document.paths as any)[c.path].get;
    t.truthy(operation, c.path);
    t.deepEqual(operation.parameters.map((p: any) => p.name).sort(), Object.keys(c.params.shape).sort(), `${c.name} parameters`);
  }
  t.deepEqual((document.components.schemas.ErrorCode as any).enum, errorCodes);
  const committed = path.join(projectRoot, 'docs', 'openapi.json');
  t.deepEqual(JSON.parse(fs.readFileSync(committed, 'utf8')), JSON.parse(JSON.stringify(document)), 'docs/openapi.json is current: run npm run docs');
});

test('When every capability is called with all scopes and with only its own scope, then results parse against their schemas', async (t) => {
  const full = await issueKey(t.context.database.db);
  for (const c of restCapabilities) {
    const minimal = await issueKey(t.context.database.db, { scopes: [c.scope] });
    const args = sampleArgs(c, t.context.samples);
    const pathWithParams = c.path.replace(/\{(\w+)\}/g, (_m, name) => encodeURIComponent(String(args[name])));
    const query = new URLSearchParams(Object.entries(args).filter(([k]) => !c.path.includes(`{${k}}`)).map(([k, v]): [string, string] => [k, String(v)]));
    for (const key of [full, minimal]) {
      const res = await api(t.context.server, `${pathWithParams}?${query}`, key);
      t.is(res.status, 200, `${c.name}: ${JSON.stringify(res.body)}`);
      const schema = isListKind(c) ? z.array(c.result) : c.result;
      const parsed = schema.safeParse(res.body.data);
      t.true(parsed.success, `${c.name}: ${parsed.error?.message}`);
      if (isListKind(c)) t.true(res.body.data.length > 0, `${c.name} returns records for the samples`);
    }
  }
});

test('When the REST guide lists error codes, then it is the table generated from the error module', (t) => {
  const readme = fs.readFileSync(path.join(projectRoot, 'docs/rest.md'), 'utf8');
  const start = readme.indexOf('\n', readme.indexOf('<!-- error-codes:start')) + 1;
  const end = readme.indexOf('<!-- error-codes:end -->');
  t.is(readme.slice(start, end).trim(), errorCodesMarkdown(), 'docs/rest.md error codes are current: run npm run docs');
});
