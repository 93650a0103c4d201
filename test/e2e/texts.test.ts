/**
 * The Texts screens in headless Chromium against the real server, a real Temporal dev server with our worker (the
 * webhook dispatcher), the demo shop's adapter and Postgres: a person edits a product text on its card and the
 * content event (`source: ui`, the write batch as `source_run_id`) arrives at a webhook receiver; a bulk edit across
 * chosen products; an import previewed (only real changes) and confirmed; a category edited on its screen.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import ExcelJS from 'exceljs';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import type { WebhookSettings } from '../../src/webhooks/settings.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { connectBrowser, signInInBrowser, freshPagePerTest } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import type { TestServer } from '../helpers/server.js';
import { fakeDns, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  browser: Browser;
  worker: InProcessWorker;
  receiver: Receiver;
  browserContext: BrowserContext;
  page: Page;
}
const test = anyTest as TestFn<Context>;

/** SPEC "Content-change events": the SHA-256 of the UTF-8 text, written out here rather than taken from the service. */
const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  const options = testApplicationOptions();
  const settings: WebhookSettings = testSettings({ secretsKey: options.key, resolve: fakeDns().resolve });
  const worker = await startInProcessWorker(database.db, { prefix: 'test-texts', webhookWorkflows: true, webhooks: settings });
  const receiver = await startReceiver();
  receiver.secret = (await makeEndpoint(database.db, settings, { url: receiver.url, events: ['product_content.changed', 'category_content.changed'], shops: ['sk'] })).secret;
  const server = await startApplicationServer(database.db, options, undefined, { platforms: createPlatformRegistry({ db: database.db }) });
  Object.assign(t.context, {
    database, server, browser: await connectBrowser(), worker, receiver,
  });
});

test.after.always(async (t) => {
  await t.context.worker?.stop();
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.receiver?.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

async function productCodes(t: { context: Context }, offset: number, count: number): Promise<string[]> {
  const { db } = t.context.database;
  const shop = await db('shops').where({ code: 'sk' }).first('id');
  return (await db('products').where({ shop_id: shop.id }).orderBy('code').offset(offset).limit(count).select('code')).map((r) => r.code as string);
}

const contentEvents = (t: { context: Context }, code: string) => t.context.database.db('outbox_events').where({ event_type: 'product_content.changed', resource_id: code }).orderBy('occurred_at');

test.serial('When a person edits a product text on its card, then the shop keeps it and the event arrives at a webhook receiver; saving the same text again emits nothing', async (t) => {
  const { page, receiver } = t.context;
  const { db } = t.context.database;
  const [code] = await productCodes(t, 200, 1);
  const person = await makePerson(db, { role: 'member', permissions: ['texts:edit'] });
  await signInInBrowser(page, person.email, person.password);
  await page.click('header nav a:has-text("Products")');
  await page.selectOption('#product-filters select[name=market]', 'sk');
  await page.fill('#product-filters input[name=search]', code);
  await page.click('#product-filters button[type=submit]');
  await page.click(`#products tr[data-code="${code}"] a`);
  await page.waitForURL(new RegExp(`/app/products/sk/${encodeURIComponent(code)}$`));

  const text = 'Nový krátky popis z karty produktu';
  await page.fill('textarea[name=shortDescription]', text);
  await page.click('#edit-content button[type=submit]');
  await page.waitForSelector('#save-outcome');
  t.regex(await page.innerText('#save-outcome'), /Saved: shortDescription/);
  t.is(await page.innerText('.text-field[data-field="shortDescription"] code.hash'), sha256(text), 'the card shows the new text\'s hash');
  t.regex(await page.innerText('#writes'), /shortDescription[\s\S]*wb_/, 'the last writes list the batch');

  await receiver.waitFor((requests) => requests.some((r) => r.body?.event_type === 'product_content.changed' && r.body?.data?.entity_id === code), 60_000);
  const delivered = receiver.requests.find((r) => r.body?.data?.entity_id === code)!;
  t.is(delivered.verifyError, null, 'the delivery is signed');
  t.is(delivered.body.data.source, 'ui');
  t.regex(delivered.body.data.source_run_id, /^wb_[0-9a-f]{16}$/);
  t.deepEqual(delivered.body.data.changed_fields, ['shortDescription']);
  t.deepEqual(delivered.body.data.after_hash, { shortDescription: sha256(text) });
  t.is((await db('text_edit_batches').where({ id: delivered.body.data.source_run_id }).first()).person_id, person.id);

  // Saved again unchanged: the page says nothing changed (the positive signal), and no second event exists.
  await page.click('#edit-content button[type=submit]');
  await page.waitForSelector('#save-outcome:has-text("Nothing changed")');
  t.is((await contentEvents(t, code)).length, 1);
});

test.serial('When a person sets one field on chosen products in a bulk edit, then each product that really changes gets one event with the batch id; one already holding the text gets none', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const codes = await productCodes(t, 210, 3);
  const person = await makePerson(db, { role: 'member', permissions: ['texts:edit'] });
  await signInInBrowser(page, person.email, person.password);
  const text = 'Spoločný titulok pre výber';
  const bulk = async (chosen: string[]) => {
    await page.goto(`/app/products?market=sk&page=${Math.floor(210 / 50) + 1}`);
    for (const code of chosen) await page.check(`#products tr[data-code="${code}"] input[name=codes]`);
    await page.selectOption('#bulk-edit select[name=field]', 'metaTitle');
    await page.fill('#bulk-edit textarea[name=text]', text);
    await page.click('#bulk-edit button[type=submit]');
    await page.waitForSelector('#bulk-outcome');
    return /Bulk edit (wb_[0-9a-f]+)/.exec(await page.innerText('#bulk-outcome'))![1];
  };
  await bulk([codes[0]]);
  const batchId = await bulk(codes);
  t.is(await page.getAttribute(`#bulk-outcome li[data-code="${codes[0]}"]`, 'data-status'), 'unchanged');
  t.is(await page.getAttribute(`#bulk-outcome li[data-code="${codes[1]}"]`, 'data-status'), 'written');
  t.is(await page.getAttribute(`#bulk-outcome li[data-code="${codes[2]}"]`, 'data-status'), 'written');
  const events = await db('outbox_events').where({ event_type: 'product_content.changed' }).whereRaw(`data->>'source_run_id' = ?`, [batchId]);
  t.deepEqual(events.map((e) => e.resource_id).sort(), [codes[1], codes[2]].sort());
  t.is((await contentEvents(t, codes[0])).length, 1, 'the first batch\'s event only');
  for (const e of events) t.deepEqual(e.data.after_hash, { metaTitle: sha256(text) });
});

test.serial('When a person imports a CSV file, then the preview lists only the real changes and confirming writes them once as one batch', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const [changed, same] = await productCodes(t, 220, 2);
  const shop = await db('shops').where({ code: 'sk' }).first('id');
  const current = (await db('products').where({ shop_id: shop.id, code: same }).first('meta_title')).meta_title as string;
  const person = await makePerson(db, { role: 'member', permissions: ['texts:edit'] });
  await signInInBrowser(page, person.email, person.password);
  await page.goto('/app/products?market=sk');
  await page.click('#import-link');
  t.is(await page.inputValue('#import-form select[name=market]'), 'sk', 'the import starts in the shop of the list');
  const csv = `code,metaTitle,metaDescription\r\n${changed},"Titulok z importu, s čiarkou",\r\n${same},"${current.replace(/"/g, '""')}",\r\nNO-SUCH-CODE,Niečo,\r\n`;
  await page.setInputFiles('#import-form input[name=file]', { name: 'texty.csv', mimeType: 'text/csv', buffer: Buffer.from(csv, 'utf8') });
  await page.click('#import-form button[type=submit]');
  await page.waitForSelector('#import-summary');
  t.regex(await page.innerText('#import-summary'), /^1 product\(s\) change; 1 row\(s\) already hold these texts/);
  t.deepEqual(await page.locator('#import-changes tbody tr').evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-code')}:${r.getAttribute('data-field')}`)), [`${changed}:metaTitle`]);
  t.regex(await page.innerText('#import-problems'), /NO-SUCH-CODE[\s\S]*PROPOSAL_TARGET_NOT_FOUND/);
  t.is((await contentEvents(t, changed)).length, 0, 'a preview writes nothing');

  await page.click('#confirm-import button[type=submit]');
  await page.waitForSelector('#import-outcome');
  t.is(await page.getAttribute(`#import-outcome li[data-code="${changed}"]`, 'data-status'), 'written');
  const batchId = /\/app\/products\/import\/(wb_[0-9a-f]+)$/.exec(page.url())![1];
  const events = await contentEvents(t, changed);
  t.is(events.length, 1);
  t.is(events[0].data.source_run_id, batchId);
  t.deepEqual(events[0].data.after_hash, { metaTitle: sha256('Titulok z importu, s čiarkou') });
  t.is((await contentEvents(t, same)).length, 0);
  t.is(await page.locator('#confirm-import').count(), 0, 'a written import offers no second confirmation');
});

test.serial('When a person imports an XLSX file, then its rows are previewed like a CSV', async (t) => {
  const { page } = t.context;
  const [code] = await productCodes(t, 230, 1);
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Texty');
  sheet.addRow(['code', 'metaDescription']);
  sheet.addRow([code, 'Popis z tabuľky']);
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: ['texts:edit'] });
  await signInInBrowser(page, person.email, person.password);
  await page.goto('/app/products/import?market=sk');
  await page.setInputFiles('#import-form input[name=file]', { name: 'texty.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: Buffer.from(await workbook.xlsx.writeBuffer()) });
  await page.click('#import-form button[type=submit]');
  await page.waitForSelector('#import-changes');
  t.is(await page.locator(`#import-changes tr[data-code="${code}"][data-field="metaDescription"] ins`).innerText(), 'Popis z tabuľky');
});

test.serial('When a person uploads a file that is not a text import, then the page shows the coded error and nothing is stored', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const person = await makePerson(db, { role: 'member', permissions: ['texts:edit'] });
  await signInInBrowser(page, person.email, person.password);
  for (const [name, content, reason] of [['notes.txt', 'code,metaTitle\r\nX,Y\r\n', /\.csv or \.xlsx/], ['texty.csv', 'code,price\r\nX,10\r\n', /Unknown column `price`/], ['texty.csv', 'metaTitle\r\nY\r\n', /`code` column/]] as const) {
    await page.goto('/app/products/import');
    await page.setInputFiles('#import-form input[name=file]', { name, mimeType: 'text/plain', buffer: Buffer.from(content) });
    const response = page.waitForResponse((r) => r.url().endsWith('/app/products/import') && r.request().method() === 'POST');
    await page.click('#import-form button[type=submit]');
    t.is((await response).status(), 400);
    await page.waitForSelector('#import-error');
    t.regex(await page.innerText('#import-error'), reason);
    t.regex(await page.innerText('#import-error'), /IMPORT_FILE_INVALID/);
  }
  t.is((await db('text_edit_batches').where({ person_id: person.id })).length, 0);
});

test.serial('When a person edits a category on its screen, then one category event of source ui arrives without a batch id (SPEC)', async (t) => {
  const { page, receiver } = t.context;
  const { db } = t.context.database;
  const shop = await db('shops').where({ code: 'sk' }).first('id');
  const guid = (await db('categories').where({ shop_id: shop.id }).orderBy('guid').offset(3).first('guid')).guid as string;
  const person = await makePerson(db, { role: 'member', permissions: ['texts:edit'] });
  await signInInBrowser(page, person.email, person.password);
  await page.click('header nav a:has-text("Categories")');
  await page.selectOption('#category-filters select[name=market]', 'sk');
  await page.click('#category-filters button[type=submit]');
  await page.click(`#categories tr[data-guid="${guid}"] a`);
  await page.fill('textarea[name=metaTitle]', 'Kategória upravená ručne');
  await page.click('#edit-content button[type=submit]');
  await page.waitForSelector('#save-outcome');
  await receiver.waitFor((requests) => requests.some((r) => r.body?.event_type === 'category_content.changed' && r.body?.data?.entity_id === guid), 60_000);
  const delivered = receiver.requests.find((r) => r.body?.event_type === 'category_content.changed' && r.body?.data?.entity_id === guid)!;
  t.is(delivered.body.data.source, 'ui');
  t.is(delivered.body.data.source_run_id, null);
  t.deepEqual(delivered.body.data.after_hash, { metaTitle: sha256('Kategória upravená ručne') });
});

test.serial('When a person without texts:edit opens a product card, then the texts are read only and the write paths are refused', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const [code] = await productCodes(t, 240, 1);
  const person = await makePerson(db, { role: 'member', permissions: ['proposals:approve'] });
  await signInInBrowser(page, person.email, person.password);
  await page.goto(`/app/products/sk/${encodeURIComponent(code)}`);
  await page.waitForSelector('#read-only');
  t.is(await page.locator('#edit-content').count(), 0);
  t.is(await page.locator('textarea[name]').count(), 0, 'no editable field');
  await page.goto('/app/products');
  t.is(await page.locator('#bulk-edit input[name=codes]').count(), 0, 'no bulk edit');
  t.is(await page.locator('#import-link').count(), 0);
  t.is((await page.goto('/app/products/import'))!.status(), 403);
  // A forged POST with the person's own session and CSRF token is refused by the server.
  const csrf = await page.getAttribute('input[name=_csrf]', 'value');
  const refused = await page.request.post(`/app/products/sk/${encodeURIComponent(code)}`, { form: { _csrf: csrf!, shortDescription: 'Zakázaná zmena', fingerprint: 'x' }, headers: { Origin: t.context.server.baseUrl } });
  t.is(refused.status(), 403);
  const bulk = await page.request.post('/app/products/bulk', { form: { _csrf: csrf!, market: 'sk', codes: code, field: 'metaTitle', text: 'Zakázané' }, headers: { Origin: t.context.server.baseUrl } });
  t.is(bulk.status(), 403);
  t.is((await contentEvents(t, code)).length, 0);
  t.is((await db('text_edit_batches').where({ person_id: person.id })).length, 0);
});
