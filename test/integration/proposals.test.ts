/**
 * The proposal tools over MCP with the official clients (SDK 2.x pinned to 2026-07-28 and SDK 1.x speaking 2025-11-25)
 * against the real server, a real Temporal dev server with our worker, and Postgres: listing by write mode and scope,
 * validation errors, the drafts paths over REST (status, preview, per-item results; scope, kind and shop rules), a
 * person's decision carried out, and autonomous texts with their content-change event.
 */
import anyTest, { type TestFn } from 'ava';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { allScopes } from '../../src/auth/scopes.js';
import { fieldHash } from '../../src/content/hash.js';
import { createTextProposal, prepareTextItems } from '../../src/proposals/create.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { findAccountByCode, findShopByCode } from '../../src/queries/shops.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { decideProposal, startProposalReconciler } from '../../src/temporal/proposals.js';
import { waitUntil } from '../helpers/wait.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { AppError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectLegacy, connectModern, toolError } from '../helpers/mcp.js';
import { api, issueKey, startTestServer, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  bare: TestServer;
  temporal: TemporalAccess;
  worker: InProcessWorker;
  key: string;
  modern: ModernClient;
}
const test = anyTest as TestFn<Context>;

const PROPOSE_TOOLS = ['availabilities_propose', 'categories_content_propose', 'claims_settings_propose', 'products_content_propose'];
const call = (client: ModernClient, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
const data = (result: unknown) => (result as { structuredContent: { data: any } }).structuredContent.data;

test.before(async (t) => {
  const database = await createTestDatabase();
  const { db } = database;
  const worker = await startInProcessWorker(db, { prefix: 'test-proposals' });
  const { taskQueue } = worker;
  const temporal: TemporalAccess = { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue };
  const platforms = createPlatformRegistry({ db });
  // A real clock: proposals expire seven days after it.
  const server = await startTestServer(db, () => new Date(), undefined, { platforms, temporal });
  const bare = await startTestServer(db, () => new Date());
  const key = await issueKey(db, { scopes: allScopes });
  const modern = await connectModern(server, key);
  t.context = { database, server, bare, temporal, worker, key, modern };
});

test.after.always(async (t) => {
  await t.context.modern?.close();
  await t.context.server?.close();
  await t.context.bare?.close();
  await t.context.temporal?.close();
  await t.context.worker?.stop();
  await t.context.database?.drop();
});

async function product(t: { context: Context }, shop: string, offset = 0) {
  const { db } = t.context.database;
  const account = (await findAccountByCode(db, 'demo'))!;
  const shopRef = (await findShopByCode(db, account.id, shop))!;
  const row = await db('products').where({ shop_id: shopRef.id }).whereNotNull('meta_title').orderBy('code').offset(offset).first('code');
  const read = await api(t.context.server, `/products/${encodeURIComponent(row.code)}/content?market=${shop}`, t.context.key);
  return { code: row.code as string, content: read.body.data, shop: shopRef };
}

test.serial('When tools are listed, then the proposal tools follow the write mode and the scopes, with honest annotations', async (t) => {
  const { tools } = await t.context.modern.listTools();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  for (const name of PROPOSE_TOOLS) t.true(byName.has(name), name);
  const products = byName.get('products_content_propose')!;
  t.like(products.annotations, { readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  t.like(byName.get('availabilities_propose')!.annotations, { readOnlyHint: false, idempotentHint: false });
  t.is((products.inputSchema as any).properties.products.maxItems, 50);

  const readOnly = await connectModern(t.context.server, await issueKey(t.context.database.db, { scopes: allScopes, writeMode: 'read_only' }));
  const readOnlyTools = (await readOnly.listTools()).tools.map((tool) => tool.name);
  for (const name of PROPOSE_TOOLS) t.false(readOnlyTools.includes(name), `${name} absent for read_only`);
  await readOnly.close();
  const noDraft = await connectModern(t.context.server, await issueKey(t.context.database.db, { scopes: allScopes.filter((s) => s !== 'availabilities:draft') }));
  const noDraftTools = (await noDraft.listTools()).tools.map((tool) => tool.name);
  t.false(noDraftTools.includes('availabilities_propose'));
  t.true(noDraftTools.includes('products_content_propose'));
  await noDraft.close();
});

test.serial('When a 2026-07-28 client proposes product texts and a person approves, then the drafts path shows the preview, then the result per item', async (t) => {
  const p = await product(t, 'sk', 10);
  const result = await call(t.context.modern, 'products_content_propose', {
    market: 'sk', products: [{ code: p.code, fingerprint: p.content.fingerprint, fields: { metaTitle: 'Approved title', metaDescription: p.content.fields.metaDescription.value ?? '' } }], note: 'SEO',
  });
  const draft = data(result);
  t.is(draft.status, 'awaiting_approval');
  t.is(draft.kind, 'product_texts');
  t.deepEqual(draft.items[0].preview.map((f: any) => f.field), ['metaTitle'], 'an unchanged field is not part of the proposal');
  t.is(draft.items[0].preview[0].before, p.content.fields.metaTitle.value);
  t.is(draft.items[0].preview[0].beforeHash, p.content.fields.metaTitle.hash);
  t.is(draft.items[0].result, null);

  const read = await api(t.context.server, `/catalog/product-content-drafts/${draft.draftId}`, t.context.key);
  t.is(read.status, 200);
  t.deepEqual(read.body.data, draft);

  const outcome = await decideProposal(await t.context.temporal.client(), draft.draftId, { approve: true, by: 'person:1' });
  t.is(outcome.status, 'written');
  const after = (await api(t.context.server, `/catalog/product-content-drafts/${draft.draftId}`, t.context.key)).body.data;
  t.is(after.status, 'written');
  t.is(after.items[0].status, 'written');
  t.deepEqual(after.items[0].result.afterHash, { metaTitle: fieldHash('Approved title') });
  const content = (await api(t.context.server, `/products/${encodeURIComponent(p.code)}/content?market=sk`, t.context.key)).body.data;
  t.is(content.fields.metaTitle.value, 'Approved title');

  // The kind, the scope and the shop are checked on the drafts paths.
  t.is((await api(t.context.server, `/catalog/category-content-drafts/${draft.draftId}`, t.context.key)).status, 404);
  t.is((await api(t.context.server, '/catalog/product-content-drafts/prp_0000000000000000', t.context.key)).status, 404);
  t.is((await api(t.context.server, '/catalog/product-content-drafts/not-an-id', t.context.key)).status, 404);
  const otherShop = await issueKey(t.context.database.db, { shops: ['cz'] });
  t.is((await api(t.context.server, `/catalog/product-content-drafts/${draft.draftId}`, otherShop)).status, 404);
  const noScope = await issueKey(t.context.database.db, { scopes: ['products:read'] });
  const forbidden = await api(t.context.server, `/catalog/product-content-drafts/${draft.draftId}`, noScope);
  t.is(forbidden.status, 403);
  t.is(forbidden.body.error.code, 'INSUFFICIENT_SCOPE');
});

test.serial('When the catalogue syncs after an approved write, then it reads back what the shop stored: no divergence, and no content event from the sync', async (t) => {
  const { db } = t.context.database;
  const p = await product(t, 'sk', 50);
  const draft = data(await call(t.context.modern, 'products_content_propose', {
    market: 'sk', products: [{ code: p.code, fingerprint: p.content.fingerprint, fields: { description: '<p>Kept</p><script>dropped()</script>' } }],
  }));
  t.is((await decideProposal(await t.context.temporal.client(), draft.draftId, { approve: true, by: 'person:1' })).status, 'written_with_warnings');
  const stored = (await db('demo_shop_writes').where({ shop_id: p.shop.id, kind: 'product_texts', key: p.code }).first()).value.description;
  t.is(stored, '<p>Kept</p>');
  // Our copy is lost (as if an older sync had overwritten it); the next catalogue sync must bring back what the shop stores.
  await db('products').where({ shop_id: p.shop.id, code: p.code }).update({ description: p.content.fields.description.value });
  const events = await db('outbox_events').count('* as n').first();
  const platform = new DemoPlatform({ db });
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  await syncArea(db, platform, shop, 'catalogue', platform.now(shop), { batchSize: 500 });
  const served = (await api(t.context.server, `/products/${encodeURIComponent(p.code)}/content?market=sk`, t.context.key)).body.data;
  t.is(served.fields.description.value, stored);
  t.is(served.fields.description.hash, fieldHash(stored));
  t.deepEqual(await db('outbox_events').count('* as n').first(), events, 'the sync announces nothing');
});

test.serial('When a 2025-11-25 client proposes category texts, the dictionary and claims settings, then each drafts path serves its proposal', async (t) => {
  const { client } = await connectLegacy(t.context.server, t.context.key, '2025-11-25');
  const guid = (await api(t.context.server, '/categories?market=sk', t.context.key)).body.data[0].guid;
  const content = (await api(t.context.server, `/categories/${guid}/content?market=sk`, t.context.key)).body.data;
  const category = await client.callTool({ name: 'categories_content_propose', arguments: { market: 'sk', categories: [{ guid, fingerprint: content.fingerprint, fields: { descriptionBottom: '<p>Legacy lower text</p>' } }] } });
  const categoryDraft = (category.structuredContent as any).data;
  t.is(categoryDraft.status, 'awaiting_approval');
  t.is((await api(t.context.server, `/catalog/category-content-drafts/${categoryDraft.draftId}`, t.context.key)).body.data.items[0].preview[0].after, '<p>Legacy lower text</p>');

  const entries = (await api(t.context.server, '/availabilities?market=sk', t.context.key)).body.data;
  const dictionary = await client.callTool({ name: 'availabilities_propose', arguments: { market: 'sk', entries: [{ id: entries[0].id, deliveryHours: (entries[0].deliveryHours ?? 0) + 12 }] } });
  const dictionaryDraft = (dictionary.structuredContent as any).data;
  t.is(dictionaryDraft.status, 'pending');
  const dictRead = await api(t.context.server, `/availabilities/drafts/${dictionaryDraft.draftId}`, t.context.key);
  t.is(dictRead.body.data.items[0].preview[0].field, 'deliveryHours');

  const claims = await client.callTool({ name: 'claims_settings_propose', arguments: { market: 'sk', form: { allowsPhotos: false } } });
  const claimsDraft = (claims.structuredContent as any).data;
  t.is(claimsDraft.status, 'waiting');
  t.deepEqual((await api(t.context.server, `/claims/config-drafts/${claimsDraft.draftId}`, t.context.key)).body.data.items[0].preview[0], {
    field: 'value', before: true, after: false, beforeHash: null, afterHash: null,
  });
  t.is((await decideProposal(await t.context.temporal.client(), claimsDraft.draftId, { approve: false, by: 'person:1', reason: 'Photos help us' })).status, 'rejected');
  t.is((await api(t.context.server, `/claims/config-drafts/${claimsDraft.draftId}`, t.context.key)).body.data.status, 'rejected');
  await client.close();
});

test.serial('When a proposal is invalid, then nothing is stored and the error has a clear code, over both protocol revisions', async (t) => {
  const { db } = t.context.database;
  const before = await db('proposals').count('* as n').first();
  const p = await product(t, 'sk', 20);
  const hu = await product(t, 'hu', 0);
  const { client: legacy } = await connectLegacy(t.context.server, t.context.key, '2025-11-25');
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['products_content_propose', { market: 'sk', products: [{ code: 'NO-SUCH-PRODUCT', fingerprint: p.content.fingerprint, fields: { metaTitle: 'x' } }] }, 'PROPOSAL_TARGET_NOT_FOUND'],
    ['products_content_propose', { market: 'hu', products: [{ code: hu.code, fingerprint: hu.content.fingerprint, fields: { description: 'x' } }] }, 'FIELD_NOT_WRITABLE'],
    ['products_content_propose', { market: 'sk', products: [{ code: p.code, fingerprint: '0'.repeat(64), fields: { metaTitle: 'x' } }] }, 'STALE_FINGERPRINT'],
    ['products_content_propose', { market: 'sk', products: [{ code: p.code, fingerprint: p.content.fingerprint, fields: { metaTitle: p.content.fields.metaTitle.value } }] }, 'PROPOSAL_EMPTY'],
    ['products_content_propose', { market: 'sk', products: [{ code: p.code, fingerprint: p.content.fingerprint, fields: { metaTitle: 'x'.repeat(256) } }] }, 'INVALID_PARAMETER'],
    ['products_content_propose', { market: 'sk', products: [{ code: p.code, fingerprint: p.content.fingerprint, fields: { title: 'x' } }] }, 'UNKNOWN_PARAMETER'],
    ['availabilities_propose', { market: 'cz', entries: [{ id: 'skladom', name: 'x' }] }, 'DICTIONARY_NOT_MANAGEABLE'],
    ['availabilities_propose', { market: 'sk', entries: [{ id: 'no-such-entry', name: 'x' }] }, 'PROPOSAL_TARGET_NOT_FOUND'],
    ['claims_settings_propose', { market: 'sk' }, 'PROPOSAL_EMPTY'],
  ];
  for (const [name, args, code] of cases) {
    t.is(toolError(await call(t.context.modern, name, args)).error.code, code, `${name} modern ${code}`);
    t.is(toolError(await legacy.callTool({ name, arguments: args })).error.code, code, `${name} legacy ${code}`);
  }
  await legacy.close();
  t.deepEqual(await db('proposals').count('* as n').first(), before, 'nothing stored');
  // The platform's limit is also enforced where the tool schema does not reach (e.g. the application's edit form).
  const error = await t.throwsAsync(prepareTextItems(db, p.shop, 'product', [{ id: p.code, fingerprint: p.content.fingerprint, fields: { metaTitle: 'x'.repeat(300) } }], { checkFingerprint: true }));
  t.is((error as AppError).code, 'TEXT_TOO_LONG');
});

test.serial('When the key writes autonomously, then texts are written at once with a content event of source autonomous; the dictionary still waits', async (t) => {
  const { db } = t.context.database;
  const autonomousKey = await issueKey(db, { scopes: allScopes, writeMode: 'autonomous' });
  const client = await connectModern(t.context.server, autonomousKey);
  const p = await product(t, 'sk', 30);
  const draft = data(await call(client, 'products_content_propose', { market: 'sk', products: [{ code: p.code, fingerprint: p.content.fingerprint, fields: { shortDescription: '<b>Now</b><script>x</script>' } }] }));
  t.is(draft.writeMode, 'autonomous');
  t.is(draft.status, 'written_with_warnings');
  const event = await db('outbox_events').where({ event_type: 'product_content.changed', resource_id: p.code }).orderBy('id', 'desc').first();
  t.is(event.data.source, 'autonomous');
  t.is(event.data.source_run_id, draft.draftId);
  t.deepEqual(event.data.after_hash, { shortDescription: fieldHash('<b>Now</b>') });
  const entries = (await api(t.context.server, '/availabilities?market=sk', t.context.key)).body.data;
  const dict = data(await call(client, 'availabilities_propose', { market: 'sk', entries: [{ id: entries[2].id, name: `${entries[2].name} (new)` }] }));
  t.is(dict.status, 'pending');
  await client.close();
});

test.serial('When the server has no write path, then a proposal tool answers WRITES_UNAVAILABLE and stores nothing', async (t) => {
  const client = await connectModern(t.context.bare, t.context.key);
  const p = await product(t, 'sk', 40);
  const result = await call(client, 'products_content_propose', { market: 'sk', products: [{ code: p.code, fingerprint: p.content.fingerprint, fields: { metaTitle: 'nope' } }] });
  t.is(toolError(result).error.code, 'WRITES_UNAVAILABLE');
  await client.close();
});

test.serial('When a proposal\'s workflow could not be started, then the API process\'s reconciler starts it on its next round', async (t) => {
  const { db } = t.context.database;
  const p = await product(t, 'sk', 60);
  const draftId = await createTextProposal(db, { accountId: (await findAccountByCode(db, 'demo'))!.id, shop: p.shop, writeMode: 'proposals', createdBy: 'key:test' },
    'product', [{ id: p.code, fingerprint: p.content.fingerprint, fields: { metaTitle: 'Reconciled' } }], null, new Date(Date.now() - 120_000));
  t.is((await db('proposals').where({ draft_id: draftId }).first()).workflow_started_at, null);
  const stop = startProposalReconciler(db, t.context.temporal, 100);
  try {
    await waitUntil(async () => (await db('proposals').where({ draft_id: draftId }).first()).workflow_started_at !== null, 20_000);
  } finally {
    stop();
  }
  const client = await t.context.temporal.client();
  await waitUntil(async () => (await client.workflow.getHandle(`proposal-${draftId}`).query<string>('state').catch(() => null)) === 'waiting', 20_000);
  t.is((await decideProposal(client, draftId, { approve: true, by: 'person:1' })).status, 'written');
});

test.serial('When a proposal names exactly 50 products, then it is prepared (the limit is "at most 50"); 51 are refused by the tool\'s schema', async (t) => {
  const products = await Promise.all(Array.from({ length: 51 }, (_, i) => product(t, 'sk', 100 + i)));
  t.is(new Set(products.map((p) => p.code)).size, 51, 'fifty-one different products');
  const items = products.map((p, i) => ({ code: p.code, fingerprint: p.content.fingerprint, fields: { metaTitle: `Limit title ${i}` } }));
  const fifty = await call(t.context.modern, 'products_content_propose', { market: 'sk', products: items.slice(0, 50), note: 'fifty' });
  t.falsy(fifty.isError, JSON.stringify(fifty.content));
  const draft = data(fifty);
  t.is(draft.items.length, 50);
  const fiftyOne = await call(t.context.modern, 'products_content_propose', { market: 'sk', products: items, note: 'fifty-one' });
  t.true(fiftyOne.isError === true, 'fifty-one products are refused');
});
