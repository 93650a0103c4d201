/**
 * Large customer exports in headless Chromium with a real Temporal dev server and our worker: an export over the
 * direct limit runs as the workflow `customer-export-<id>`, its page shows the progress and then a download whose file
 * is exactly the API's directory; an export of exactly the limit stays direct, one row more goes to the workflow; the
 * link is the person's own and expires 24 hours after the file was made.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createWorker, lazyTemporalAccess } from '../../src/entry/compose.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { testWorkerDeps } from '../helpers/service.js';
import { makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { connectBrowser, freshPagePerTest, signInInBrowser } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { issueKey, type TestServer } from '../helpers/server.js';

interface Context {
  database: TestDatabase;
  browser: Browser;
  worker: Worker;
  running: Promise<void>;
  closeWorkerConnection: () => Promise<void>;
  connection: Connection;
  client: Client;
  temporal: TemporalAccess;
  servers: TestServer[];
  /** customerKeys of shop sk as the API lists them for every directory scope, in order. */
  directory: string[];
  server: TestServer;
  browserContext: BrowserContext;
  page: Page;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const taskQueue = `test-export-${crypto.randomBytes(4).toString('hex')}`;
  const address = process.env.TEMPORAL_ADDRESS!;
  const { worker, connection: workerConnection } = await createWorker(testWorkerDeps({ db: database.db, temporalAddress: address, namespace: 'default', taskQueue }));
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const temporal: TemporalAccess = { ...lazyTemporalAccess(address, 'default'), taskQueue };
  // The base server (its own limit of 5000) is where the directory is read over the API.
  const server = await startApplicationServer(database.db, testApplicationOptions(), undefined, { temporal });
  const key = await issueKey(database.db, { scopes: ['customers:read', 'personal-data:read', 'reports:read'] as never });
  const directory: string[] = [];
  let cursor = '';
  do {
    const response = await fetch(`${server.baseUrl}/api/v1/customers?market=sk&limit=250${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { Authorization: `Bearer ${key}` } });
    const body = await response.json() as { data: Array<{ customerKey: string }>; meta: { nextCursor: string | null } };
    directory.push(...body.data.map((c) => c.customerKey));
    cursor = body.meta.nextCursor ?? '';
  } while (cursor);
  Object.assign(t.context, {
    database, browser: await connectBrowser(), worker, running, closeWorkerConnection: () => workerConnection.close(), connection,
    client: new Client({ connection, namespace: 'default' }), temporal, servers: [server], directory, server,
  });
});

test.after.always(async (t) => {
  t.context.worker?.shutdown();
  await t.context.running;
  await t.context.closeWorkerConnection?.();
  await t.context.temporal?.close();
  await t.context.connection?.close();
  await t.context.browser?.close();
  for (const server of t.context.servers ?? []) await server.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

/** A server of the same database whose direct export limit is `limit` rows. */
async function serverWithLimit(t: { context: Context }, limit: number): Promise<TestServer> {
  const server = await startApplicationServer(t.context.database.db, testApplicationOptions({ customerExportDirectMaxRows: limit }), undefined, { temporal: t.context.temporal });
  t.context.servers.push(server);
  return server;
}

async function readDownload(download: import('playwright-core').Download): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const keysOfCsv = (bytes: Buffer) => {
  const [header, ...rows] = bytes.subarray(3).toString('utf8').trimEnd().split('\r\n').map((line) => line.split(','));
  return rows.map((r) => r[header.indexOf('customerKey')]);
};

test.serial('When an export is larger than the direct limit, then it runs as a workflow whose page shows the progress and offers the file, exactly the directory', async (t) => {
  const { page, directory } = t.context;
  t.true(directory.length > 100, 'the demo shop has enough customers to cross a small limit');
  const server = await serverWithLimit(t, 100);
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  await page.goto(`${server.baseUrl}/app/sign-in`);
  await page.fill('input[name=email]', owner.email);
  await page.fill('input[name=password]', owner.password);
  await page.click('button[type=submit]');
  await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
  await page.goto(`${server.baseUrl}/app/customers?market=sk`);
  await page.click('#export-csv');
  await page.waitForURL(/\/app\/customers\/exports\/cex_[0-9a-f]+$/);
  const exportId = /cex_[0-9a-f]+$/.exec(page.url())![0];
  // The page refreshes itself until the workflow has stored the file.
  await page.waitForSelector('#export-progress[data-status="ready"]', { timeout: 120_000 });
  t.regex(await page.innerText('#export-progress'), new RegExp(`^${directory.length} customers`));

  const description = await t.context.client.workflow.getHandle(`customer-export-${exportId}`).describe();
  t.is(description.type, 'customerExportWorkflow');
  t.is(description.status.name, 'COMPLETED');

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-download')]);
  t.regex(download.suggestedFilename(), /^customers-sk-\d{4}-\d{2}-\d{2}\.csv$/);
  t.deepEqual(keysOfCsv(await readDownload(download)), directory);

  const row = await t.context.database.db('customer_exports').where({ id: exportId }).first();
  t.is(row.expires_at.getTime() - row.finished_at.getTime(), 24 * 60 * 60 * 1000, 'the link works 24 hours');
  t.is(row.rows_done, directory.length);
});

test.serial('When the directory has exactly the direct limit of rows, then the export is direct; one row fewer allowed and it goes to the workflow', async (t) => {
  const { page, directory } = t.context;
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  // Every server shares the database and the cookie's host: one sign-in serves them all.
  await signInInBrowser(page, owner.email, owner.password);
  for (const [limit, direct] of [[directory.length, true], [directory.length - 1, false]] as const) {
    const server = await serverWithLimit(t, limit);
    await page.goto(`${server.baseUrl}/app/customers?market=sk`);
    if (direct) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-xlsx')]);
      t.regex(download.suggestedFilename(), /\.xlsx$/, `limit ${limit}: direct`);
    } else {
      await page.click('#export-xlsx');
      await page.waitForURL(/\/app\/customers\/exports\/cex_[0-9a-f]+$/);
      await page.waitForSelector('#export-progress[data-status="ready"]', { timeout: 120_000 });
      t.regex(await page.innerText('#export-progress'), new RegExp(`^${directory.length} customers`), `limit ${limit}: by the workflow`);
    }
  }
});

test.serial('When another person opens an export or its link has expired, then the file is refused', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const owner = await makePerson(db, { role: 'owner' });
  const ownerId = owner.id;
  const account = await db('people').where({ id: ownerId }).first('account_id');
  const shop = await db('shops').where({ code: 'sk', account_id: account.account_id }).first('id');
  const finished = new Date();
  const insert = async (expiresAt: Date) => {
    const id = `cex_${crypto.randomBytes(10).toString('hex')}`;
    await db('customer_exports').insert({
      id, account_id: account.account_id, shop_id: shop.id, person_id: ownerId, format: 'csv', query: JSON.stringify({ market: 'sk' }), status: 'ready',
      rows_total: 1, rows_done: 1, file: Buffer.from('\uFEFFcustomerKey\r\nabc\r\n'), file_name: 'customers-sk-2026-11-26.csv', created_at: finished, finished_at: finished, expires_at: expiresAt,
    });
    return id;
  };
  const live = await insert(new Date(Date.now() + 60_000));
  const expired = await insert(new Date(Date.now() - 1_000));
  const other = await makePerson(db, { role: 'owner' });
  await signInInBrowser(page, other.email, other.password);
  t.is((await page.goto(`/app/customers/exports/${live}`))!.status(), 404, 'another person of the account does not see it');
  t.is((await page.request.get(`/app/customers/exports/${live}/download`)).status(), 404);
  await page.context().clearCookies();
  await signInInBrowser(page, owner.email, owner.password);
  const ok = await page.request.get(`/app/customers/exports/${live}/download`);
  t.is(ok.status(), 200, 'before expiry the link works');
  t.is((await ok.body()).toString('utf8'), '\uFEFFcustomerKey\r\nabc\r\n');
  const gone = await page.request.get(`/app/customers/exports/${expired}/download`);
  t.is(gone.status(), 404, 'after expiry it is refused');
  t.regex(await gone.text(), /expired/);
  t.is((await db('customer_exports').where({ id: expired }).first('file')).file, null, 'the expired file is dropped');
});
