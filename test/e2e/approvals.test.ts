/**
 * The Approvals page in headless Chromium, against the real server, a real Temporal dev server
 * with our worker and Postgres: a proposal an assistant made over MCP shown with its diff, approved (the page shows the
 * state the workflow's Update reached), another rejected with a reason, the history and the permission gate. A
 * person's own text edits are test/e2e/texts.test.ts.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allScopes } from '../../src/auth/scopes.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { createWorker } from '../../src/entry/compose.js';
import { testWorkerDeps } from '../helpers/service.js';
import { makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { connectBrowser, signInInBrowser, freshPagePerTest } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectModern } from '../helpers/mcp.js';
import { api, issueKey, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  browser: Browser;
  worker: Worker;
  running: Promise<void>;
  connection: NativeConnection;
  temporal: TemporalAccess;
  key: string;
  browserContext: BrowserContext;
  page: Page;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const taskQueue = `test-approvals-${crypto.randomBytes(4).toString('hex')}`;
  const { worker, connection } = await createWorker(testWorkerDeps({ db: database.db, temporalAddress: process.env.TEMPORAL_ADDRESS!, namespace: 'default', taskQueue }));
  const running = worker.run();
  const temporal: TemporalAccess = { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue };
  const server = await startApplicationServer(database.db, testApplicationOptions(), undefined, { platforms: createPlatformRegistry({ db: database.db }), temporal });
  Object.assign(t.context, { database, server, browser: await connectBrowser(), worker, running, connection, temporal, key: await issueKey(database.db, { scopes: allScopes }) });
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.temporal?.close();
  t.context.worker?.shutdown();
  await t.context.running;
  await t.context.connection?.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

/** An assistant's product-text proposal over MCP; returns its draft id and the product. */
async function propose(t: { context: Context }, offset: number, metaTitle: string) {
  const { db } = t.context.database;
  const shop = await db('shops').where({ code: 'sk' }).first('id');
  const code = (await db('products').where({ shop_id: shop.id }).orderBy('code').offset(offset).first('code')).code as string;
  const content = (await api(t.context.server, `/products/${encodeURIComponent(code)}/content?market=sk`, t.context.key)).body.data;
  const client = await connectModern(t.context.server, t.context.key);
  const result = await client.callTool({ name: 'products_content_propose', arguments: { market: 'sk', products: [{ code, fingerprint: content.fingerprint, fields: { metaTitle } }] } });
  await client.close();
  return { draftId: (result.structuredContent as any).data.draftId as string, code, before: content.fields.metaTitle.value as string };
}

test.serial('When a person approves and rejects proposals on the Approvals page, then it shows the diff, the outcome of each decision and the history', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const approved = await propose(t, 100, 'Titulok od asistenta');
  const rejected = await propose(t, 101, 'Zamietnutý titulok');
  const person = await makePerson(db, { role: 'member', permissions: ['proposals:approve'] });
  await signInInBrowser(page, person.email, person.password);
  await page.click('header nav a:has-text("Approvals")');
  await page.waitForURL(/\/app\/approvals$/);

  const card = page.locator(`article[data-draft-id="${approved.draftId}"]`);
  t.regex(await card.locator('tr[data-field="metaTitle"] ins').innerText(), /asistenta/);
  t.true((await card.locator('tr[data-field="metaTitle"] del').count()) > 0, 'the replaced words are shown removed');

  await card.locator('button[value=approve]').click();
  await page.waitForSelector('#decision-outcome');
  t.is(await page.getAttribute('#decision-outcome strong', 'data-status'), 'written', 'the page shows the state the Update reached');
  t.is(await page.locator(`article[data-draft-id="${approved.draftId}"]`).count(), 0);
  t.is((await api(t.context.server, `/products/${encodeURIComponent(approved.code)}/content?market=sk`, t.context.key)).body.data.fields.metaTitle.value, 'Titulok od asistenta');

  // Rejecting without a reason is refused by the page; with one it is carried out.
  const second = page.locator(`article[data-draft-id="${rejected.draftId}"]`);
  await second.locator('button[value=reject]').click();
  await page.waitForSelector('p.error');
  t.regex(await page.innerText('p.error'), /reason/);
  // A reason of spaces only is no reason either: refused, the proposal still undecided.
  await page.locator(`article[data-draft-id="${rejected.draftId}"] input[name=reason]`).fill('   ');
  await page.locator(`article[data-draft-id="${rejected.draftId}"] button[value=reject]`).click();
  await page.waitForSelector('p.error');
  t.regex(await page.innerText('p.error'), /A rejection needs a reason/);
  t.is((await db('proposals').where({ draft_id: rejected.draftId }).first()).decided_by, null);
  await page.locator(`article[data-draft-id="${rejected.draftId}"] input[name=reason]`).fill('Príliš dlhé');
  await page.locator(`article[data-draft-id="${rejected.draftId}"] button[value=reject]`).click();
  await page.waitForSelector('#decision-outcome');
  t.is(await page.getAttribute('#decision-outcome strong', 'data-status'), 'rejected');
  const history = await page.innerText('#history');
  t.regex(history, new RegExp(`${approved.draftId}[\\s\\S]*written`));
  t.regex(history, /Príliš dlhé/);
  t.is((await db('proposals').where({ draft_id: rejected.draftId }).first()).decided_by, `person:${person.id}`);
});

test.serial('When a person without the permission opens Approvals, then the page is refused and not in the navigation', async (t) => {
  const { page } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: [] });
  await signInInBrowser(page, person.email, person.password);
  t.is(await page.locator('header nav a:has-text("Approvals")').count(), 0);
  const response = await page.goto('/app/approvals');
  t.is(response!.status(), 403);
});
