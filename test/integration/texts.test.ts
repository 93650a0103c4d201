/**
 * The rules of a person's text writes (src/texts) against a real Postgres and the demo shop's adapter, and the
 * directory search over the real HTTP server: identical text emits nothing, a bulk edit's entries fail one by one,
 * an import preview keeps only real changes and is confirmed once, a product changed after the preview fails alone,
 * the file's bounds on both sides, the right `texts:edit`, and a search that never reveals what a scope hides.
 */
import ExcelJS from 'exceljs';
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { csrfOf, FormClient, makePerson } from '../helpers/application.js';
import { get } from '../helpers/rest.js';
import { issueKey, startTestServer } from '../helpers/server.js';
import { shopId } from '../helpers/shops.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { loadPerson } from '../../src/people/people.js';
import type { Person } from '../../src/people/model.js';
import { findShopByCode } from '../../src/queries/shops.js';
import { confirmImport, parseImportFile, previewImport } from '../../src/texts/imports.js';
import { saveEntityTexts, writeTextBatch } from '../../src/texts/writes.js';
import { getProductContent } from '../../src/queries/content.js';

const test = appTest({ scopes: ['customers:read', 'personal-data:read'] });

const NOW = () => new Date();

async function personWith(t: { context: { database: { db: any } } }, permissions: string[]): Promise<Person> {
  const { id } = await makePerson(t.context.database.db, { role: 'member', permissions });
  return (await loadPerson(t.context.database.db, id))!;
}

async function codesAt(db: any, offset: number, count: number): Promise<string[]> {
  // The demo shop sk has a few hundred products; each test takes its own.
  return (await db('products').where({ shop_id: await shopId(db, 'demo', 'sk') }).orderBy('code').offset(offset).limit(count).select('code')).map((r: { code: string }) => r.code);
}

const eventsOf = (db: any, code: string) => db('outbox_events').where({ event_type: 'product_content.changed', resource_id: code });

test.serial('When a card saves the text the shop already holds, then nothing is written and no event is recorded; a changed text records exactly one', async (t) => {
  const { db } = t.context.database;
  const platforms = createPlatformRegistry({ db });
  const editor = await personWith(t, ['texts:edit']);
  const [code] = await codesAt(db, 10, 1);
  const shop = (await findShopByCode(db, editor.accountId, 'sk'))!;
  const before = (await getProductContent(db, shop.id, code))!;
  const same = await saveEntityTexts(db, platforms, editor, 'sk', 'product', code, before.fingerprint, { metaTitle: before.fields.metaTitle.value ?? '' }, NOW());
  t.is(same.status, 'unchanged');
  t.is((await eventsOf(db, code)).length, 0);
  const changed = await saveEntityTexts(db, platforms, editor, 'sk', 'product', code, before.fingerprint, { metaTitle: 'Iný titulok' }, NOW());
  t.is(changed.status, 'written');
  const events = await eventsOf(db, code);
  t.is(events.length, 1);
  t.is(events[0].data.source_run_id, changed.batchId);
  // The old fingerprint is stale now: the card refuses to overwrite blindly.
  const stale = await t.throwsAsync(saveEntityTexts(db, platforms, editor, 'sk', 'product', code, before.fingerprint, { metaTitle: 'Ďalší' }, NOW()));
  t.is((stale as any).code, 'STALE_FINGERPRINT');
});

test.serial('When a bulk edit names an unknown product, then that entry fails and the others are written under one batch id', async (t) => {
  const { db } = t.context.database;
  const editor = await personWith(t, ['texts:edit']);
  const [a, b] = await codesAt(db, 20, 2);
  const shop = (await findShopByCode(db, editor.accountId, 'sk'))!;
  const entries = [a, 'NO-SUCH', b].map((id) => ({ id, fingerprint: '', fields: { metaDescription: 'Hromadný popis' } }));
  const { batchId, results } = await writeTextBatch(db, createPlatformRegistry({ db }), editor, shop, 'product', entries, { kind: 'bulk', checkFingerprint: false }, NOW());
  t.deepEqual(results.map((r) => [r.id, r.status, r.code ?? null]), [[a, 'written', null], ['NO-SUCH', 'failed', 'PROPOSAL_TARGET_NOT_FOUND'], [b, 'written', null]]);
  for (const code of [a, b]) t.deepEqual((await eventsOf(db, code)).map((e: any) => e.data.source_run_id), [batchId]);
  t.is((await db('text_edit_batches').where({ id: batchId }).first()).kind, 'bulk');
});

test.serial('When an import is previewed and confirmed, then only real changes are listed, a product changed in between fails alone and a second confirmation is refused', async (t) => {
  const { db } = t.context.database;
  const platforms = createPlatformRegistry({ db });
  const editor = await personWith(t, ['texts:edit']);
  const [changes, same, raced] = await codesAt(db, 30, 3);
  const shop = (await findShopByCode(db, editor.accountId, 'sk'))!;
  const current = (await getProductContent(db, shop.id, same))!.fields.shortDescription.value ?? '';
  const csv = `code;shortDescription;metaTitle\n${changes};Nový;\n${same};"${current.replace(/"/g, '""')}";\n${raced};Pretekár;\n`;
  const { batchId, preview } = await previewImport(db, editor, 'sk', 'texty.csv', Buffer.from(csv), NOW());
  t.deepEqual(preview.changes.map((c) => [c.id, Object.keys(c.changes)]), [[changes, ['shortDescription']], [raced, ['shortDescription']]]);
  t.is(preview.unchanged, 1);
  t.deepEqual(preview.problems, []);
  // Someone changes `raced` after the preview.
  const racedContent = (await getProductContent(db, shop.id, raced))!;
  await saveEntityTexts(db, platforms, editor, 'sk', 'product', raced, racedContent.fingerprint, { metaTitle: 'Medzitým' }, NOW());
  const other = await personWith(t, ['texts:edit']);
  t.is((await t.throwsAsync(confirmImport(db, platforms, other, batchId, NOW())) as any).code, 'NOT_FOUND', 'only who previewed confirms');
  const results = await confirmImport(db, platforms, editor, batchId, NOW());
  t.deepEqual(results.map((r) => [r.id, r.status, r.code ?? null]), [[changes, 'written', null], [raced, 'failed', 'STALE_FINGERPRINT']]);
  t.deepEqual((await eventsOf(db, changes)).map((e: any) => e.data.source_run_id), [batchId]);
  t.is((await eventsOf(db, same)).length, 0);
  t.is((await t.throwsAsync(confirmImport(db, platforms, editor, batchId, NOW())) as any).code, 'IMPORT_ALREADY_CONFIRMED');
  t.is((await eventsOf(db, changes)).length, 1);
});

/** A `texts:edit` member signed in on a server with the shops' platforms, as the application's own (the file's server has no write path). */
async function signedInEditor(t: ExecutionContext<AppContext>) {
  const { db } = t.context.database;
  const editor = await makePerson(db, { role: 'member', permissions: ['texts:edit'] });
  const server = await startTestServer(db, undefined, undefined, { platforms: createPlatformRegistry({ db }) });
  t.teardown(() => server.close());
  const client = new FormClient(server.baseUrl);
  t.is((await client.signIn(editor.email, editor.password)).status, 303);
  return { db, editor, server, client };
}

test('When a bulk edit names 51 products it is refused; 50 are taken as one batch (UT4)', async (t) => {
  const { db, server, client } = await signedInEditor(t);
  const _csrf = csrfOf((await client.get('/app/products?market=sk')).text);
  // Codes the shop does not have: each entry fails on its own, so the bound is tested without writing 50 texts.
  const codes = (n: number) => Array.from({ length: n }, (_, i) => `NO-SUCH-${i}`);
  const bulk = (n: number) => client.post('/app/products/bulk', { _csrf, market: 'sk', field: 'metaTitle', text: 'Bulk', codes: codes(n) });
  const over = await bulk(51);
  t.is(over.status, 400);
  t.regex(over.text, /at most 50 products/);
  const at = await bulk(50);
  t.is(at.status, 303, at.text.slice(0, 300));
  const batchId = new URL(at.headers.get('location')!, server.baseUrl).searchParams.get('batch');
  const batch = await db('text_edit_batches').where({ id: batchId }).first('kind', 'results');
  t.is(batch.kind, 'bulk');
  t.is(batch.results.length, 50);
});

test('When a product card saves an SEO title of 255 characters it is written; with 256 it is refused TEXT_TOO_LONG and nothing is written', async (t) => {
  // The card's form has no schema limit in front of it: the platform's limit is the only check (metaTitle: 255).
  const { db, editor, client } = await signedInEditor(t);
  const [code] = await codesAt(db, 45, 1);
  const path = `/app/products/sk/${encodeURIComponent(code)}`;
  const shop = (await findShopByCode(db, (await loadPerson(db, editor.id))!.accountId, 'sk'))!;
  const before = (await getProductContent(db, shop.id, code))!;
  const save = async (metaTitle: string) => client.post(path, { _csrf: csrfOf((await client.get(path)).text), fingerprint: before.fingerprint, metaTitle });

  const over = await save('x'.repeat(256));
  t.is(over.status, 400, over.text.slice(0, 300));
  t.regex(over.text, /TEXT_TOO_LONG/);
  t.is((await getProductContent(db, shop.id, code))!.fields.metaTitle.value, before.fields.metaTitle.value, 'the shop\'s title is untouched');
  t.is((await eventsOf(db, code)).length, 0);

  const at = await save('x'.repeat(255));
  t.is(at.status, 303, at.text.slice(0, 300));
  t.is((await getProductContent(db, shop.id, code))!.fields.metaTitle.value, 'x'.repeat(255));
  t.is((await eventsOf(db, code)).length, 1);
});

test('When an import file has 500 rows it is read, with 501 it is refused; other bad files are refused with their reason', async (t) => {
  const rows = (n: number) => Buffer.from(`code,metaTitle\r\n${Array.from({ length: n }, (_, i) => `P${i},T${i}`).join('\r\n')}\r\n`);
  t.is((await parseImportFile('a.csv', rows(500))).length, 500);
  const reason = async (name: string, bytes: Buffer) => ((await t.throwsAsync(parseImportFile(name, bytes))) as any).details.reason;
  t.is(await reason('a.csv', rows(501)), 'too_many_rows');
  // UT5: at most 2 MB (2 × 1024 × 1024 bytes): a one-row file of exactly that size is read, one byte more is refused.
  const ofSize = (size: number) => {
    const head = 'code,description\r\nP1,';
    return Buffer.from(`${head}${'x'.repeat(size - head.length - 2)}\r\n`);
  };
  t.is(ofSize(2 * 1024 * 1024).length, 2_097_152);
  t.is((await parseImportFile('a.csv', ofSize(2 * 1024 * 1024))).length, 1);
  t.is(await reason('a.csv', ofSize(2 * 1024 * 1024 + 1)), 'too_large');
  t.is(await reason('a.txt', rows(1)), 'format');
  t.is(await reason('a.csv', Buffer.alloc(0)), 'empty');
  t.is(await reason('a.csv', Buffer.from('metaTitle\r\nX\r\n')), 'no_code_column');
  t.is(await reason('a.csv', Buffer.from('code,name\r\nX,Y\r\n')), 'unknown_column');
  t.is(await reason('a.csv', Buffer.from('code,metaTitle\r\nX,Y\r\nX,Z\r\n')), 'duplicate_code');
  t.is(await reason('a.csv', Buffer.from('code,metaTitle\r\nX,"open\r\n')), 'unreadable');
  t.is(await reason('a.xlsx', Buffer.from('not a zip')), 'unreadable');
  // Quoted commas, doubled quotes, line breaks inside a value, a BOM; an empty cell leaves the field out.
  const parsed = await parseImportFile('a.csv', Buffer.from('\uFEFFcode,metaTitle,description\r\nX,"a, ""b""","line1\r\nline2"\r\nY,,only\r\n'));
  t.deepEqual(parsed, [{ row: 2, code: 'X', fields: { metaTitle: 'a, "b"', description: 'line1\nline2' } }, { row: 3, code: 'Y', fields: { description: 'only' } }]);
  const workbook = new ExcelJS.Workbook();
  workbook.addWorksheet('S').addRows([['code', 'metaTitle'], ['X', 'Z']]);
  t.deepEqual(await parseImportFile('b.XLSX', Buffer.from(await workbook.xlsx.writeBuffer())), [{ row: 2, code: 'X', fields: { metaTitle: 'Z' } }]);
});

test.serial('When a person without texts:edit writes, then every path refuses and nothing is stored', async (t) => {
  const { db } = t.context.database;
  const platforms = createPlatformRegistry({ db });
  const reader = await personWith(t, ['proposals:approve']);
  const [code] = await codesAt(db, 40, 1);
  const shop = (await findShopByCode(db, reader.accountId, 'sk'))!;
  const content = (await getProductContent(db, shop.id, code))!;
  for (const attempt of [
    () => saveEntityTexts(db, platforms, reader, 'sk', 'product', code, content.fingerprint, { metaTitle: 'X' }, NOW()),
    () => writeTextBatch(db, platforms, reader, shop, 'product', [{ id: code, fingerprint: '', fields: { metaTitle: 'X' } }], { kind: 'bulk', checkFingerprint: false }, NOW()),
    () => previewImport(db, reader, 'sk', 'a.csv', Buffer.from(`code,metaTitle\n${code},X\n`), NOW()),
  ]) t.is(((await t.throwsAsync(attempt())) as any).code, 'INSUFFICIENT_SCOPE');
  const limited = await (async () => {
    const { id } = await makePerson(db, { role: 'member', permissions: ['texts:edit'], shops: ['cz'] });
    return (await loadPerson(db, id))!;
  })();
  t.is(((await t.throwsAsync(saveEntityTexts(db, platforms, limited, 'sk', 'product', code, content.fingerprint, { metaTitle: 'X' }, NOW()))) as any).code, 'SHOP_FORBIDDEN');
  t.is((await eventsOf(db, code)).length, 0);
});

test('When the directory is searched, then a customerKey prefix finds the customer for everyone and an e-mail only with personal data', async (t) => {
  const first = (await get(t, '/customers?market=sk&limit=1')).body.data[0];
  const emailPart = (first.email as string).split('@')[0];
  const byEmail = await get(t, `/customers?market=sk&search=${encodeURIComponent(emailPart)}&limit=250`);
  t.is(byEmail.status, 200);
  t.true(byEmail.body.data.some((c: any) => c.customerKey === first.customerKey));
  for (const c of byEmail.body.data) t.true(c.customerKey.startsWith(emailPart.toLowerCase()) || `${c.firstName} ${c.lastName} ${c.company} ${c.email}`.toLowerCase().includes(emailPart.toLowerCase()));
  const byKey = await get(t, `/customers?market=sk&search=${first.customerKey.slice(0, 12)}`);
  t.deepEqual(byKey.body.data.map((c: any) => c.customerKey), [first.customerKey]);

  const noPersonal = await issueKey(t.context.database.db, { scopes: ['customers:read'] as never });
  t.deepEqual((await get(t, `/customers?market=sk&search=${first.customerKey.slice(0, 12)}`, noPersonal)).body.data.map((c: any) => c.customerKey), [first.customerKey]);
  const hidden = await get(t, `/customers?market=sk&search=${encodeURIComponent(first.email)}`, noPersonal);
  t.is(hidden.status, 200);
  t.deepEqual(hidden.body.data, [], 'an e-mail is not searched without personal-data:read');
  // Bounds: 2 and 100 characters are taken, 1 and 101 refused.
  t.is((await get(t, '/customers?market=sk&search=ab')).status, 200);
  t.is((await get(t, `/customers?market=sk&search=${'a'.repeat(100)}`)).status, 200);
  t.is((await get(t, '/customers?market=sk&search=a')).body.error.code, 'INVALID_PARAMETER');
  t.is((await get(t, `/customers?market=sk&search=${'a'.repeat(101)}`)).body.error.code, 'INVALID_PARAMETER');
});
