/**
 * The Automations page in headless Chromium against a real worker on the Temporal dev server: a person allowed to edit
 * automations publishes and enables an assistant's draft, sees the run an order event starts wait in the page, disables
 * the automation and sees the waiting run cancelled; runs a published automation manually for a recent event and sees
 * its steps done; a person without the permission sees the page read-only.
 */
import anyTest, { type TestFn } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createDraft, publishAutomation } from '../../src/automations/drafts.js';
import type { Rule } from '../../src/automations/rule.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { orderEvent, personActor, sampleRule } from '../helpers/automations.js';
import { connectBrowser, signInInBrowser, freshPagePerTest } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';
import { isolateWebhooks, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  browser: Browser;
  worker: InProcessWorker;
  temporal: TemporalAccess;
  browserContext: BrowserContext;
  page: Page;
}

const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  const worker = await startInProcessWorker(database.db, { prefix: 'test-app-automations', automationWorkflows: true, webhooks: testSettings() });
  const address = process.env.TEMPORAL_ADDRESS!;
  // The page reaches Temporal as `npm start` does: lazily, on the workers' task queue.
  const temporal = lazyTemporalAccess(address, 'default');
  Object.assign(t.context, {
    database, worker, temporal,
    server: await startApplicationServer(database.db, testApplicationOptions({ taskQueue: worker.taskQueue }), undefined, { temporal }), browser: await connectBrowser(),
  });
});

test.after.always(async (t) => {
  await t.context.worker?.stop();
  await t.context.temporal?.close();
  await t.context.browser?.close();
  await t.context.server?.close();
  await t.context.database?.drop();
});

freshPagePerTest(test);

let seq = 0;
async function draftOf(t: { context: Context }, rule: Rule): Promise<string> {
  const { db } = t.context.database;
  return (await createDraft(db, await personActor(db), { clientRequestId: `e2e-${++seq}`, rule })).workflow_id;
}

/** Reloads until the run row of the page shows `status`. */
async function runShows(page: Page, runWorkflowId: string, status: RegExp): Promise<string> {
  let text = '';
  for (let i = 0; i < 100; i++) {
    await page.reload();
    text = await page.locator(`tr[data-run="${runWorkflowId}"]`).textContent().catch(() => '') ?? '';
    if (status.test(text)) return text;
    await page.waitForTimeout(200);
  }
  return text;
}

test.serial('When a person publishes and enables a draft in the page, then an event starts a run that waits, and disabling cancels it at once', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const workflowId = await draftOf(t, sampleRule({
    name: 'Tag an order a day later', steps: [{ id: 'wait', action: 'wait', duration: '1d' }, { id: 'tag', action: 'add_tag', target: 'order', tag: 'a-day-later' }],
  }));
  const editor = await makePerson(db, { role: 'member', permissions: ['automations:edit'] });
  await signInInBrowser(page, editor.email, editor.password);
  await page.click('header a:has-text("Automations")');
  await page.click(`#drafts tr[data-workflow-id="${workflowId}"] a`);
  t.regex(await page.textContent('#validation') ?? '', /valid/);
  await page.click('button:has-text("Publish")');
  await page.waitForSelector('.notice');
  t.regex(await page.textContent('#automation-state') ?? '', /published, disabled/);
  await page.click('button:has-text("Enable")');
  await page.waitForSelector('text=Enabled: new events');
  t.regex(await page.textContent('#automation-state') ?? '', /published, enabled/);

  const { eventId } = await orderEvent(db, 'order.created');
  const runId = `automation-run-${workflowId}-${eventId}`;
  const waiting = await runShows(page, runId, /waiting/);
  t.regex(waiting, /wait wait: waiting until/);

  const started = Date.now();
  await page.click('button:has-text("Disable")');
  await page.waitForURL(/done=disable/);
  t.regex(await page.textContent('.notice') ?? '', /waiting runs were cancelled/, 'the page cancelled them through Temporal itself');
  await waitUntil(async () => (await db('automation_runs').where({ event_id: eventId }).first())?.status === 'cancelled', 30_000);
  t.true(Date.now() - started < 10_000);
  t.regex(await runShows(page, runId, /cancelled/), /cancelled/);
  await waitUntil(async () => (await t.context.worker.client.workflow.getHandle(runId).describe()).status.name === 'CANCELLED', 30_000);
  t.falsy(await db('automation_tags').where({ tag: 'a-day-later' }).first());
});

test.serial('When a person runs a published automation for a recent event in the page, then its workflow runs the steps and the page shows them done', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const { eventId, orderCode } = await orderEvent(db, 'order.paid');
  const workflowId = await draftOf(t, sampleRule({ name: 'Tag paid orders by hand', trigger: { id: 'paid', event: 'order.paid', markets: ['sk'] }, steps: [{ id: 'tag', action: 'add_tag', target: 'order', tag: 'by-hand' }] }));
  await publishAutomation(db, await personActor(db), workflowId);
  const owner = await makePerson(db, { role: 'owner' });
  await signInInBrowser(page, owner.email, owner.password);
  await page.goto(`/app/automations/${workflowId}`);
  await page.selectOption('#run-automation select[name=eventId]', eventId);
  await page.click('#run-automation button[type=submit]');
  await page.waitForURL(/done=run$/);
  t.regex(await page.textContent('.notice') ?? '', /The run has started/);
  const runId = `automation-run-${workflowId}-${eventId}`;
  const row = await runShows(page, runId, /completed/);
  t.regex(row, /completed/);
  t.regex(row, /\(manual\)/);
  t.regex(row, /tag add_tag: done/);
  t.truthy(await db('automation_tags').where({ tag: 'by-hand', entity_code: orderCode }).first());
});

test.serial('When a person without automations:edit opens the page, then they read rules and validation but get no action', async (t) => {
  const { page } = t.context;
  const { db } = t.context.database;
  const workflowId = await draftOf(t, sampleRule({ name: 'Read-only view' }));
  const reader = await makePerson(db, { role: 'member', permissions: [] });
  await signInInBrowser(page, reader.email, reader.password);
  await page.goto('/app/automations');
  t.regex(await page.textContent('main') ?? '', /need the automations:edit permission/);
  await page.click(`#drafts tr[data-workflow-id="${workflowId}"] a`);
  t.regex(await page.textContent('#rule') ?? '', /"event": "order.created"/);
  t.is(await page.$('button:has-text("Publish")'), null);
  t.regex(await page.textContent('main') ?? '', /Read-only/);
});
