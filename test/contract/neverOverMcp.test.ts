/**
 * SPEC.md "Not available over MCP" (issue 13 point 7), proven over the whole registry — generically, so a write tool
 * added later is held to the same rules: every item of SPEC's list has a check here; no capability but a `write`
 * claims to change anything; every write is a tool SPEC.md (or D29) names, has no REST route, and neither its name nor
 * its parameters reach a forbidden action or field; and through real MCP clients every write tool is absent for a
 * `read_only` key or connection and for a key without its scope.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { appTest } from '../helpers/app.js';
import { connectLegacy, connectModern, mcpUrl } from '../helpers/mcp.js';
import { makePerson } from '../helpers/application.js';
import { issueKey } from '../helpers/server.js';
import { readSpec, vendoredSpecDir } from '../helpers/spec.js';
import { capabilities, restCapabilities } from '../../src/capabilities/registry.js';
import type { Capability } from '../../src/capabilities/types.js';
import { allScopes, type Scope } from '../../src/auth/scopes.js';
import { buildOpenApiDocument } from '../../api/openapi.js';
import { loadPerson } from '../../src/people/people.js';
import { recordConsent } from '../../src/oauth/connections.js';
import { postgresAdapter } from '../../src/oauth/adapter.js';

const test = appTest();

const writes = capabilities.filter((c) => c.kind === 'write');

/** Every property name and every enum/const value of a capability's parameters, however deeply nested. */
function parameterVocabulary(capability: Capability): { names: string[]; values: string[] } {
  const names: string[] = [];
  const values: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    if (schema.properties && typeof schema.properties === 'object') names.push(...Object.keys(schema.properties));
    if (Array.isArray(schema.enum)) values.push(...schema.enum.map(String));
    if (schema.const !== undefined) values.push(String(schema.const));
    for (const value of Object.values(schema)) walk(value);
  };
  walk(z.toJSONSchema(capability.params, { io: 'input', unrepresentable: 'any' }));
  return { names, values };
}

const words = (name: string) => name.split(/[_.]/);
/** Parameter names that would reach operational data, money out, files or credentials (exact names, case-insensitive). */
const FORBIDDEN_PARAMS = /^(orders?|orderCodes?|orderIds?|orderStatus(Id)?|invoices?|invoiceCode|creditNotes?|documents?|documentFile|stock|quantity|stockQuantity|refunds?|refundAmount|claims?|claimCodes?|claimStatus|shipments?|trackingNumber|carrier(Credentials)?|endpointUrl|webhookUrl|file|files|pdf|apiKey|password|secret|accessToken|credentials?|iban|bankAccount|payouts?|commissions?|commissionBase|commissionPercent|commissionState|price|prices|purchasePrice)$/i;
/** Substrings that are never a write's business, whatever the rest of the parameter's name. */
const FORBIDDEN_PARAM_PARTS = /(payout|commission|iban|password|secret|credential|upload|webhook)/i;

/**
 * SPEC.md's list, item by item, with what proves it for one write capability (null = fine). Every item of the SPEC
 * line must have an entry: a new item in SPEC.md fails the first test until it is checked here.
 */
const CHECKS: Record<string, (c: Capability, vocabulary: { names: string[]; values: string[] }) => string | null> = {
  'commission approval': (c) => (words(c.mcpTool!).some((w) => ['commission', 'commissions', 'conversion', 'conversions'].includes(w)) ? 'a commission or conversion tool' : null),
  payouts: (c, v) => (words(c.mcpTool!).some((w) => w.startsWith('payout')) || v.names.some((n) => /payout/i.test(n)) ? 'touches payouts' : null),
  'commission base': (_c, v) => (v.names.some((n) => /commission/i.test(n)) ? 'a commission parameter' : null),
  'document file upload': (c, v) => (words(c.mcpTool!).some((w) => ['upload', 'file', 'files', 'pdf'].includes(w)) || v.names.some((n) => /^(file|files|pdf|upload|fileBase64|content_?base64|pdfBase64)$/i.test(n) || /upload/i.test(n)) ? 'uploads a file' : null),
  'deletion of articles': (c, v) => (words(c.mcpTool!).includes('articles') && (words(c.mcpTool!).some((w) => ['delete', 'remove', 'destroy'].includes(w)) || v.values.some((x) => /^(delete|deleted|remove|removed|destroy)$/i.test(x))) ? 'deletes articles' : null),
  'any change to orders': (c, v) => (['orders', 'order'].includes(words(c.mcpTool!)[0]) || v.names.some((n) => /^(orders?|orderCodes?|orderIds?|orderStatus(Id)?)$/i.test(n)) ? 'changes orders' : null),
  products: (c, v) => ((words(c.mcpTool!)[0] === 'products' && words(c.mcpTool!)[1] !== 'content') || v.names.some((n) => /^(price|prices|purchasePrice|productName|ean|vatRate)$/i.test(n)) ? 'changes products beyond proposed texts' : null),
  stock: (c, v) => (['stock', 'inventory'].includes(words(c.mcpTool!)[0]) || v.names.some((n) => /^(stock|quantity|stockQuantity|onStock)$/i.test(n)) ? 'changes stock' : null),
  documents: (c, v) => (['documents', 'invoices', 'credit'].includes(words(c.mcpTool!)[0]) || v.names.some((n) => /^(invoices?|invoiceCode|creditNotes?|documentFile)$/i.test(n)) ? 'changes accounting documents' : null),
  refunds: (c, v) => (words(c.mcpTool!).some((w) => w.startsWith('refund')) || v.names.some((n) => /^(refunds?|refundAmount|refundId)$/i.test(n)) ? 'changes refunds' : null),
  claims: (c, v) => ((words(c.mcpTool!)[0] === 'claims' && words(c.mcpTool!)[1] !== 'settings') || v.names.some((n) => /^(claims?|claimCodes?|claimStatus)$/i.test(n)) ? 'changes claims beyond proposed settings' : null),
  shipments: (c, v) => (['shipments', 'shipping'].includes(words(c.mcpTool!)[0]) || v.names.some((n) => /^(shipments?|trackingNumber|carrier)$/i.test(n)) ? 'changes shipments' : null),
  'webhook endpoints': (c, v) => (words(c.mcpTool!)[0] === 'webhooks' || v.names.some((n) => /webhook|^endpointUrl$/i.test(n)) ? 'changes webhook endpoints' : null),
  'carrier/shop/analytics credentials': (c, v) => (words(c.mcpTool!).some((w) => ['credentials', 'keys', 'secret', 'stores', 'account'].includes(w)) || v.names.some((n) => /password|secret|credential|^apiKey$|^accessToken$/i.test(n)) ? 'changes credentials' : null),
};

/** The items of SPEC.md's "Not available over MCP:" sentence. */
function specForbiddenItems(): string[] {
  const line = readSpec().split('\n').find((l) => l.startsWith('Not available over MCP:'))!;
  const list = line.slice('Not available over MCP:'.length, line.indexOf('.')).split(',').map((s) => s.trim());
  return list;
}

/** Tool names SPEC.md's MCP-only table and DECISIONS D29 allow. */
function namedWriteTools(): Set<string> {
  const names = new Set<string>();
  for (const line of readSpec().split('\n')) {
    const m = /^\| ([a-z_]+) \| ([a-z:-]+) \| /.exec(line);
    if (m) names.add(m[1]);
  }
  const decisions = fs.readFileSync(path.join(vendoredSpecDir, 'DECISIONS.md'), 'utf8');
  const d29 = decisions.slice(decisions.indexOf('- D29.'), decisions.indexOf('- D30.'));
  for (const m of d29.matchAll(/`([a-z_]+_propose)`/g)) names.add(m[1]);
  return names;
}

test('When SPEC.md\'s "Not available over MCP" list is read, then every item has a check in this test', (t) => {
  const items = specForbiddenItems();
  t.true(items.length >= 14, items.join(' | '));
  for (const item of items) t.truthy(CHECKS[item], `no check for "${item}"`);
});

test('When every capability is walked, then only writes may change anything, and every write is MCP-only, named by SPEC.md or D29, and reaches none of the forbidden actions', (t) => {
  t.true(writes.length >= 4, 'the registry has write tools');
  for (const c of capabilities) {
    if (c.kind !== 'write') t.true(c.annotations.readOnlyHint && !c.annotations.destructiveHint, `${c.name} is a read`);
    if (!c.annotations.readOnlyHint) t.is(c.kind, 'write', `${c.name} changes something, so it must be a write`);
  }
  const named = namedWriteTools();
  t.true(named.has('coupons_remove') && named.has('automations_create_draft'), 'SPEC.md\'s table was parsed');
  for (const c of writes) {
    t.is(c.path, null, `${c.name} has no REST route`);
    t.truthy(c.mcpTool, `${c.name} is an MCP tool`);
    t.true(named.has(c.mcpTool!), `${c.mcpTool} is named in SPEC.md's MCP-only table or D29`);
    const vocabulary = parameterVocabulary(c);
    for (const [item, check] of Object.entries(CHECKS)) t.is(check(c, vocabulary), null, `${c.mcpTool}: ${item}`);
    const bad = vocabulary.names.filter((n) => FORBIDDEN_PARAMS.test(n) || FORBIDDEN_PARAM_PARTS.test(n));
    t.deepEqual(bad, [], `${c.mcpTool} takes no forbidden parameter`);
    // The only deletion SPEC allows over MCP is coupons_remove.
    if (words(c.mcpTool!).some((w) => ['delete', 'remove', 'destroy', 'purge'].includes(w))) t.is(c.mcpTool, 'coupons_remove');
  }
});

test('When the checks are given forbidden tools, then they catch them (the checks can fail)', (t) => {
  const fake = (mcpTool: string, params: z.ZodObject) => ({ ...writes[0], name: mcpTool, mcpTool, params }) as Capability;
  const caught = (c: Capability) => Object.entries(CHECKS).filter(([, check]) => check(c, parameterVocabulary(c)) !== null).map(([item]) => item);
  t.deepEqual(caught(fake('affiliate_commissions_approve', z.object({ id: z.string() }))), ['commission approval']);
  t.true(caught(fake('affiliate_payouts_create', z.object({ partnerId: z.string() }))).includes('payouts'));
  t.true(caught(fake('affiliate_settings_update', z.object({ commissionBase: z.enum(['without_vat', 'with_vat']) }))).includes('commission base'));
  t.true(caught(fake('affiliate_documents_update', z.object({ pdfBase64: z.string() }))).includes('document file upload'));
  t.true(caught(fake('affiliate_articles_set_state', z.object({ state: z.enum(['enabled', 'disabled', 'deleted']) }))).includes('deletion of articles'));
  t.true(caught(fake('coupons_update', z.object({ changes: z.object({ orderCode: z.string() }) }))).includes('any change to orders'));
  t.true(caught(fake('products_set_price', z.object({ price: z.string() }))).includes('products'));
  t.true(caught(fake('inventory_adjust', z.object({ quantity: z.number() }))).includes('stock'));
  t.true(caught(fake('invoices_cancel', z.object({ invoiceCode: z.string() }))).includes('documents'));
  t.true(caught(fake('claims_refund', z.object({ refundAmount: z.string() }))).includes('refunds'));
  t.true(caught(fake('claims_close', z.object({ claimCode: z.string() }))).includes('claims'));
  t.true(caught(fake('shipping_relabel', z.object({ trackingNumber: z.string() }))).includes('shipments'));
  t.true(caught(fake('webhooks_endpoint_update', z.object({ endpointUrl: z.string() }))).includes('webhook endpoints'));
  t.true(caught(fake('stores_credentials_set', z.object({ apiKey: z.string() }))).includes('carrier/shop/analytics credentials'));
  t.deepEqual(caught(fake('claims_settings_propose', z.object({ refundCouponValidityDays: z.number() }))), [], 'a settings proposal is not a claim change');
});

/**
 * The application's partner-programme actions (issue 24): each, were it ever offered as a tool under the name it has
 * in the application, is caught by the SPEC item it falls under, and no capability (of any kind) carries it.
 */
const APPLICATION_ONLY_ACTIONS: Array<[string, z.ZodObject, string]> = [
  ['affiliate_commissions_decide', z.object({ conversionId: z.string(), decision: z.enum(['approve', 'reject']), reason: z.string() }), 'commission approval'],
  ['affiliate_conversions_decide_bulk', z.object({ conversionIds: z.array(z.string()), decision: z.enum(['approve', 'reject']) }), 'commission approval'],
  ['affiliate_payouts_draw_up', z.object({ period: z.string() }), 'payouts'],
  ['affiliate_payouts_confirm', z.object({ payoutId: z.string() }), 'payouts'],
  ['affiliate_payouts_mark_paid', z.object({ payoutId: z.string(), reference: z.string() }), 'payouts'],
  ['affiliate_payouts_cancel', z.object({ payoutId: z.string() }), 'payouts'],
  ['affiliate_payouts_statement', z.object({ payoutId: z.string() }), 'payouts'],
  ['affiliate_documents_upload', z.object({ documentKey: z.string(), fileBase64: z.string() }), 'document file upload'],
  // The application's upload form as it is: a document id, a language and the file (PDF or HTML).
  ['affiliate_documents_upload_version', z.object({ documentId: z.string(), language: z.enum(['sk', 'en']), file: z.string() }), 'document file upload'],
  ['affiliate_document_pdf_upload', z.object({ documentId: z.string(), language: z.string(), html: z.string() }), 'document file upload'],
];

test('When the application\'s partner-programme actions are named as tools, then the checks catch each, and no capability carries one', (t) => {
  const fake = (mcpTool: string, params: z.ZodObject) => ({ ...writes[0], name: mcpTool, mcpTool, params }) as Capability;
  const toolNames = new Set(capabilities.flatMap((c) => [c.name, c.mcpTool ?? '']));
  for (const [name, params, item] of APPLICATION_ONLY_ACTIONS) {
    t.is(CHECKS[item](fake(name, params), parameterVocabulary(fake(name, params))) !== null, true, `${name} is caught as ${item}`);
    t.false(toolNames.has(name), `${name} is no capability`);
  }
  // The only payout and commission capabilities are reads.
  for (const c of capabilities.filter((x) => /payout|commission|conversion/i.test(`${x.name} ${x.mcpTool ?? ''}`))) t.not(c.kind, 'write', c.name);
  // Wording is uploaded and published in the application only: the one document write over MCP is the policy.
  t.deepEqual(writes.filter((c) => /document/i.test(c.mcpTool ?? '')).map((c) => c.mcpTool), ['affiliate_documents_update']);
});

test('When the OpenAPI document is built, then it has GET operations only and no write tool appears in it', (t) => {
  const document = buildOpenApiDocument() as { paths: Record<string, Record<string, { operationId?: string }>> };
  const writeNames = new Set(writes.flatMap((c) => [c.name, c.mcpTool]));
  for (const [p, operations] of Object.entries(document.paths)) {
    t.deepEqual(Object.keys(operations).filter((m) => ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'].includes(m)), ['get'], p);
    t.false(writeNames.has(operations.get.operationId ?? ''), `${p} is not a write`);
  }
  t.false(restCapabilities.some((c) => c.kind === 'write'));
});

test('When the REST API is sent a write method, then it is 405 whatever the path, before the key is examined', async (t) => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    for (const p of ['/coupons', '/coupons/VITAJ10', '/orders', '/affiliate/payouts', '/webhooks/endpoints']) {
      const res = await fetch(`${t.context.server.baseUrl}/api/v1${p}?market=sk`, { method });
      t.is(res.status, 405, `${method} ${p}`);
    }
  }
});

async function listedTools(t: { context: { server: any } }, key: string, revision: '2026-07-28' | '2025-11-25'): Promise<Set<string>> {
  if (revision === '2026-07-28') {
    const client = await connectModern(t.context.server, key);
    try {
      return new Set((await client.listTools()).tools.map((tool) => tool.name));
    } finally {
      await client.close();
    }
  }
  const { client } = await connectLegacy(t.context.server, key, revision);
  try {
    return new Set((await client.listTools()).tools.map((tool) => tool.name));
  } finally {
    await client.close();
  }
}

test('When real MCP clients list tools, then every write is there for a writing key, absent for a read_only key and for a key without its scope, and a call is refused', async (t) => {
  const db = t.context.database.db;
  const writing = await issueKey(db, { writeMode: 'proposals' });
  const readOnly = await issueKey(db, { writeMode: 'read_only' });
  for (const revision of ['2026-07-28', '2025-11-25'] as const) {
    const all = await listedTools(t, writing, revision);
    for (const c of writes) t.true(all.has(c.mcpTool!), `${revision}: ${c.mcpTool} listed for a writing key`);
    const none = await listedTools(t, readOnly, revision);
    for (const c of writes) t.false(none.has(c.mcpTool!), `${revision}: ${c.mcpTool} absent for read_only`);
    t.true(none.has('coupons_list'), 'reads stay');
  }
  const readOnlyClient = await connectModern(t.context.server, readOnly);
  try {
    // The tool does not exist for this credential: the protocol's "tool not found", nothing runs.
    for (const c of writes) await t.throwsAsync(readOnlyClient.callTool({ name: c.mcpTool!, arguments: {} }), { message: new RegExp(`Tool ${c.mcpTool} not found`) }, c.mcpTool!);
  } finally {
    await readOnlyClient.close();
  }
  // Per scope: a key with every scope but this write's lists every other write and not this one.
  for (const scope of new Set(writes.map((c) => c.scope))) {
    const key = await issueKey(db, { scopes: allScopes.filter((s) => s !== scope) as Scope[], writeMode: 'autonomous' });
    const tools = await listedTools(t, key, '2026-07-28');
    for (const c of writes) t.is(tools.has(c.mcpTool!), c.scope !== scope, `${c.mcpTool} without ${scope}`);
    const client = await connectModern(t.context.server, key);
    try {
      for (const c of writes.filter((w) => w.scope === scope)) {
        await t.throwsAsync(client.callTool({ name: c.mcpTool!, arguments: {} }), { message: new RegExp(`Tool ${c.mcpTool} not found`) }, `${c.mcpTool} called without ${scope}`);
      }
    } finally {
      await client.close();
    }
  }
});

test('When an OAuth connection\'s AI write mode is read_only, then its token lists no write tool; the same person\'s connection in proposals mode lists them', async (t) => {
  const db = t.context.database.db;
  const { id } = await makePerson(db);
  const person = (await loadPerson(db, id))!;
  const Adapter = postgresAdapter(db);
  const tokenFor = async (writeMode: string): Promise<string> => {
    const grantId = crypto.randomBytes(16).toString('base64url');
    await recordConsent(db, person, { grantId, clientId: 'https://client.example.com/oauth/client-metadata.json', clientName: 'Test', requested: allScopes, scopes: allScopes, shops: null, writeMode });
    // Stored the way the authorization server stores an access token it issues for this grant (oidc-provider's adapter).
    const token = crypto.randomBytes(32).toString('base64url');
    await new Adapter('AccessToken').upsert(token, { grantId, scope: allScopes.join(' '), aud: mcpUrl(t.context.server).toString(), accountId: person.id }, 3600);
    return token;
  };
  const readOnly = await listedTools(t, await tokenFor('read_only'), '2026-07-28');
  t.true(readOnly.has('coupons_list'), 'the token works');
  for (const c of writes) t.false(readOnly.has(c.mcpTool!), `${c.mcpTool} absent for a read_only connection`);
  const proposals = await listedTools(t, await tokenFor('proposals'), '2025-11-25');
  for (const c of writes) t.true(proposals.has(c.mcpTool!), `${c.mcpTool} listed for a proposals connection`);
});
