/**
 * The Automations page's rules over real HTTP (the browser test drives it with a worker): who reads, who acts, shops,
 * CSRF, validation problems shown, publish → enable → run → disable through the same domain services as the CLI, and
 * an event that never runs one automation twice. No Temporal here: the page records runs and says the worker starts them.
 */
import { createDraft, publishAutomation, updateDraft } from '../../src/automations/drafts.js';
import { deleteEndpoint } from '../../src/webhooks/endpoints.js';
import { FormClient, makePerson, applicationServerTest, csrfOf } from '../helpers/application.js';
import { orderEvent, personActor, sampleRule } from '../helpers/automations.js';
import type { TestDatabase } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { fakeDns, makeEndpoint, testSettings } from '../helpers/webhooks.js';

const test = applicationServerTest();
type Context = { database: TestDatabase; server: TestServer };

let seq = 0;

async function draft(t: { context: Context }, rule = sampleRule()): Promise<string> {
  const row = await createDraft(t.context.database.db, await personActor(t.context.database.db), { clientRequestId: `page-${++seq}`, rule });
  return row.workflow_id;
}

async function signedIn(t: { context: Context }, options: Parameters<typeof makePerson>[1]): Promise<FormClient> {
  const person = await makePerson(t.context.database.db, options);
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  return client;
}

test.serial('When a person allowed to edit automations publishes, enables, runs and disables a draft, then each takes effect and an event runs it once', async (t) => {
  const { db } = t.context.database;
  const workflowId = await draft(t, sampleRule({ name: 'Tag paid orders', trigger: { id: 'paid', event: 'order.paid', markets: ['sk'] } }));
  const { eventId } = await orderEvent(db, 'order.paid');
  const editor = await signedIn(t, { role: 'member', permissions: ['automations:edit'] });
  const list = await editor.get('/app/automations');
  t.is(list.status, 200);
  t.regex(list.text, new RegExp(`id="drafts"[\\s\\S]*data-workflow-id="${workflowId}"`));
  const page = await editor.get(`/app/automations/${workflowId}`);
  t.regex(page.text, /The rule is valid/);
  t.notRegex(page.text, /Run it now/, 'a draft cannot be run');
  const _csrf = csrfOf(page.text);

  t.is((await editor.post(`/app/automations/${workflowId}/enable`, { _csrf })).status, 409, 'a draft is published before it is enabled');
  const published = await editor.post(`/app/automations/${workflowId}/publish`, { _csrf });
  t.is(published.status, 303);
  t.like(await db('automations').where({ workflow_id: workflowId }).first(), { state: 'published', enabled: false, published_version: 1 });
  t.is((await editor.post(`/app/automations/${workflowId}/enable`, { _csrf })).status, 303);
  t.true((await db('automations').where({ workflow_id: workflowId }).first()).enabled);

  const runnable = await editor.get(`/app/automations/${workflowId}`);
  t.regex(runnable.text, new RegExp(`<option value="${eventId}"`), 'the recent event of its trigger is offered');
  const run = await editor.post(`/app/automations/${workflowId}/run`, { _csrf, eventId });
  t.is(run.status, 303);
  t.regex(run.headers.get('location')!, /done=run-later/, 'no Temporal here: the worker starts it');
  const row = await db('automation_runs').where({ event_id: eventId }).first();
  t.like(row, { run_workflow_id: `automation-run-${workflowId}-${eventId}`, manual: true, status: 'pending' });
  t.is((await editor.post(`/app/automations/${workflowId}/run`, { _csrf, eventId })).status, 409, 'an event never runs one automation twice');
  t.regex((await editor.get(`/app/automations/${workflowId}`)).text, new RegExp(`data-run="automation-run-${workflowId}-${eventId}"`));

  const disabled = await editor.post(`/app/automations/${workflowId}/disable`, { _csrf });
  t.regex(disabled.headers.get('location')!, /done=disable-later/);
  t.false((await db('automations').where({ workflow_id: workflowId }).first()).enabled);
});

test.serial('When a person lacks automations:edit or the form lacks its CSRF token, then the page is read-only and every action is refused', async (t) => {
  const { db } = t.context.database;
  const workflowId = await draft(t);
  const reader = await signedIn(t, { role: 'member', permissions: [] });
  const page = await reader.get(`/app/automations/${workflowId}`);
  t.is(page.status, 200);
  t.regex(page.text, /Read-only/);
  t.notRegex(page.text, /action="\/app\/automations\/[^"]+\/publish"/);
  const _csrf = csrfOf(page.text);
  for (const action of ['publish', 'enable', 'disable', 'run']) {
    t.is((await reader.post(`/app/automations/${workflowId}/${action}`, { _csrf, eventId: 'x' })).status, 403, action);
  }
  const editor = await signedIn(t, { role: 'owner' });
  t.is((await editor.post(`/app/automations/${workflowId}/publish`, {})).status, 403, 'no CSRF token');
  t.is((await editor.post(`/app/automations/${workflowId}/publish`, { _csrf: csrfOf((await editor.get('/app/automations')).text) }, { Origin: 'https://evil.example' })).status, 403, 'another origin');
  t.is((await db('automations').where({ workflow_id: workflowId }).first()).state, 'draft');
});

test.serial('When a person sees only some shops, then they see the rules of their shops and change only rules wholly inside them', async (t) => {
  const { db } = t.context.database;
  const everyShop = await draft(t, sampleRule({ trigger: { id: 'created', event: 'order.created' } }));
  const skOnly = await draft(t, sampleRule({ trigger: { id: 'created', event: 'order.created', markets: ['sk'] } }));
  const skAndCz = await draft(t, sampleRule({ trigger: { id: 'created', event: 'order.created', markets: ['sk', 'cz'] } }));
  const editor = await signedIn(t, { role: 'member', permissions: ['automations:edit'], shops: ['sk'] });
  const list = await editor.get('/app/automations');
  t.false(list.text.includes(everyShop));
  t.true(list.text.includes(skOnly));
  t.true(list.text.includes(skAndCz));
  t.is((await editor.get(`/app/automations/${everyShop}`)).status, 404);
  const shared = await editor.get(`/app/automations/${skAndCz}`);
  t.regex(shared.text, /Read-only/);
  const _csrf = csrfOf(shared.text);
  t.is((await editor.post(`/app/automations/${skAndCz}/publish`, { _csrf })).status, 403);
  t.is((await editor.post(`/app/automations/${skOnly}/publish`, { _csrf })).status, 303);
  t.is((await db('automations').where({ workflow_id: skAndCz }).first()).state, 'draft');
});

test.serial('When a draft no longer validates, then the page lists every problem with its node and publishing is refused', async (t) => {
  const { db } = t.context.database;
  const endpoint = await makeEndpoint(db, testSettings({ resolve: fakeDns({ 'erp.example.com': ['93.184.215.14'] }).resolve }), { url: 'https://erp.example.com/hook', name: 'ERP' });
  const workflowId = await draft(t, sampleRule({
    steps: [{ id: 'erp', action: 'send_webhook', endpointId: endpoint.id }, { id: 'erp-again', action: 'send_webhook', endpointId: endpoint.id }],
  }));
  await deleteEndpoint(db, (await personActor(db)).accountId, endpoint.id);
  const editor = await signedIn(t, { role: 'owner' });
  const page = await editor.get(`/app/automations/${workflowId}`);
  t.regex(page.text, /The rule has 2 problems/);
  t.regex(page.text, /<code>erp<\/code><\/td><td><code>\/steps\/0\/endpointId<\/code>/);
  t.regex(page.text, /<code>erp-again<\/code><\/td><td><code>\/steps\/1\/endpointId<\/code>/);
  const refused = await editor.post(`/app/automations/${workflowId}/publish`, { _csrf: csrfOf(page.text) });
  t.is(refused.status, 400);
  t.regex(refused.text, /does not validate/);
  t.is((await db('automations').where({ workflow_id: workflowId }).first()).state, 'draft');
});

test.serial('When a draft was written as a change of a published automation, then its page names that automation, and publishing it replaces that automation\'s rule', async (t) => {
  const { db } = t.context.database;
  const actor = await personActor(db);
  const source = await draft(t);
  await publishAutomation(db, actor, source);
  const changed = await updateDraft(db, actor, { workflowId: source, expectedVersion: 1, rule: sampleRule({ name: 'Tag every order in sk, v2' }) });
  const editor = await signedIn(t, { role: 'owner' });
  const page = await editor.get(`/app/automations/${changed.workflow_id}`);
  t.regex(page.text, new RegExp(`id="replaces"[^]*href="/app/automations/${source}"[^]*replaces that automation's rule`));
  t.notRegex((await editor.get(`/app/automations/${source}`)).text, /id="replaces"/);
  const published = await editor.post(`/app/automations/${changed.workflow_id}/publish`, { _csrf: csrfOf(page.text) });
  t.is(published.status, 303);
  t.is(published.headers.get('location'), `/app/automations/${source}?done=replace`);
  const after = await editor.get(`/app/automations/${source}?done=replace`);
  t.regex(after.text, /Published as this automation&#39;s new version/);
  t.regex(after.text, /Tag every order in sk, v2/);
  t.is((await editor.get(`/app/automations/${changed.workflow_id}`)).status, 404);
});

test.serial('When a person limited to sk runs their automation for an event of shop cz, then the event is not found for them and no run is made', async (t) => {
  const { db } = t.context.database;
  const czEvent = await orderEvent(db, 'order.created', { shop: 'cz' });
  const skOnly = await draft(t, sampleRule({ trigger: { id: 'created', event: 'order.created', markets: ['sk'] } }));
  const editor = await signedIn(t, { role: 'member', permissions: ['automations:edit'], shops: ['sk'] });
  const _csrf = csrfOf((await editor.get(`/app/automations/${skOnly}`)).text);
  t.is((await editor.post(`/app/automations/${skOnly}/publish`, { _csrf })).status, 303);
  // Not found (the event's existence in a shop they cannot see is not told), not the automation's own shop conflict.
  const run = await editor.post(`/app/automations/${skOnly}/run`, { _csrf, eventId: czEvent.eventId });
  t.is(run.status, 404);
  t.regex(run.text, new RegExp(`No event ${czEvent.eventId} in your shops`));
  t.is((await db('automation_runs').where({ event_id: czEvent.eventId })).length, 0);
  // The other side: a person of every shop is told the automation's shops do not include cz.
  const everyShop = await signedIn(t, { role: 'member', permissions: ['automations:edit'] });
  const conflict = await everyShop.post(`/app/automations/${skOnly}/run`, { _csrf: csrfOf((await everyShop.get(`/app/automations/${skOnly}`)).text), eventId: czEvent.eventId });
  t.is(conflict.status, 409);
});
