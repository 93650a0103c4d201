/**
 * Proposal workflows on Temporal's time-skipping test server (seven days pass in seconds) against a real Postgres and
 * the demo platform: every state of every kind — approve, reject, expire, partial and failed writes with per-item
 * results, autonomous texts — the decision as an Update refused once decided, the reconcile path, and the
 * content-change events checked against hashes computed here from what the demo shop stored.
 */
import anyTest, { type TestFn } from 'ava';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WriteMode } from '../../src/auth/scopes.js';
import { fieldHash } from '../../src/content/hash.js';
import type { Db } from '../../src/db/knex.js';
import { createAvailabilityProposal, createClaimsProposal, createTextProposal, type ProposalAuthor } from '../../src/proposals/create.js';
import { getDraft } from '../../src/proposals/queries.js';
import { getCategoryContent, getProductContent } from '../../src/queries/content.js';
import { findAccountByCode, findShopByCode } from '../../src/queries/shops.js';
import { decideProposal, reconcileProposalWorkflows, startProposalWorkflow } from '../../src/temporal/proposals.js';
import { proposalWorkflowId } from '../../src/proposals/model.js';
import { AppError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startTimeSkippingWorker } from '../helpers/timeSkipping.js';

interface Context { database: TestDatabase; env: TestWorkflowEnvironment; taskQueue: string; stop: () => Promise<void>; accountId: string }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  // A completed workflow's result is the proposal's final state, stored by its last activity.
  completedStatus = async (workflowId) => (await database.db('proposals').where({ draft_id: workflowId.replace(/^proposal-/, '') }).first('status')).status;
  const { env, taskQueue, stop } = await startTimeSkippingWorker(database.db, { queuePrefix: 'test-proposals' });
  const account = await findAccountByCode(database.db, 'demo');
  t.context = { database, env, taskQueue, stop, accountId: account!.id };
});

test.after.always(async (t) => {
  await t.context.stop?.();
  await t.context.database?.drop();
});

async function author(t: { context: Context }, shopCode: string, writeMode: WriteMode = 'proposals'): Promise<ProposalAuthor> {
  const shop = await findShopByCode(t.context.database.db, t.context.accountId, shopCode);
  return { accountId: t.context.accountId, shop: shop!, writeMode, createdBy: 'key:test' };
}

/** Products of a shop with their texts, the first `n` by code. */
async function products(db: Db, shopId: string, n: number): Promise<string[]> {
  return (await db('products').where({ shop_id: shopId }).whereNotNull('description').orderBy('code').limit(n).select('code')).map((r) => r.code);
}

/** The test server's clock (it jumps when a test waits for a result): proposals expire seven days after it. */
async function clock(t: { context: Context }): Promise<Date> {
  return new Date(await t.context.env.currentTimeMs());
}

/**
 * Waits until the workflow completed and returns its result — without `handle.result()`, which lets the test server
 * skip time while it waits and would expire every other proposal still waiting (only the expiry test wants that).
 */
async function completed(handle: { describe: () => Promise<{ status: { name: string } }>; workflowId: string }): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const { status } = await handle.describe();
    if (status.name === 'COMPLETED') return completedStatus(handle.workflowId);
    if (status.name !== 'RUNNING') throw new Error(`${handle.workflowId} ${status.name}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${handle.workflowId} did not complete`);
}

let completedStatus: (workflowId: string) => Promise<string>;

async function start(t: { context: Context }, draftId: string) {
  await startProposalWorkflow(t.context.database.db, t.context.env.client, draftId, t.context.taskQueue);
  return t.context.env.client.workflow.getHandle(proposalWorkflowId(draftId));
}

async function waitForState(t: { context: Context }, draftId: string, state = 'waiting'): Promise<void> {
  const handle = t.context.env.client.workflow.getHandle(proposalWorkflowId(draftId));
  for (let i = 0; i < 200; i++) {
    if ((await handle.query<string>('state').catch(() => null)) === state) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  const last = await handle.query<string>('state').catch((e) => String(e));
  const row = await t.context.database.db('proposals').where({ draft_id: draftId }).first();
  throw new Error(`workflow ${draftId} not ${state}: ${last}, ${row.status}, expires ${row.expires_at.toISOString()}, server ${new Date(await t.context.env.currentTimeMs()).toISOString()}`);
}

test.serial('When a person approves product texts, then the shop stores them, the event hashes what it stored, and a second decision is refused', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const [code1, code2] = await products(db, a.shop.id, 2);
  // The second product's page address is unknown (as on a platform that does not know its storefront).
  await db('products').where({ shop_id: a.shop.id, code: code2 }).update({ url: null });
  const c1 = (await getProductContent(db, a.shop.id, code1))!;
  const c2 = (await getProductContent(db, a.shop.id, code2))!;
  const proposed = '<p onclick="steal()">Nový popis</p><script>alert(1)</script><p>Druhý odsek</p>';
  const draftId = await createTextProposal(db, a, 'product', [
    { id: code1, fingerprint: c1.fingerprint, fields: { description: proposed, metaTitle: 'Nový titulok' } },
    { id: code2, fingerprint: c2.fingerprint, fields: { shortDescription: 'Krátky popis' } },
  ], 'better texts', await clock(t));
  const before = await getDraft(db, t.context.accountId, null, draftId);
  t.is(before.status, 'awaiting_approval');
  t.deepEqual(before.items[0].preview.map((p) => [p.field, p.before, p.after]), [['description', c1.fields.description.value, proposed], ['metaTitle', c1.fields.metaTitle.value, 'Nový titulok']]);
  t.is(before.items[0].preview[0].beforeHash, c1.fields.description.hash);

  const handle = await start(t, draftId);
  await waitForState(t, draftId);
  const outcome = await decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1', reason: null });
  t.is(outcome.status, 'written_with_warnings', 'the shop stripped markup: a shop warning');
  t.is(await completed(handle), 'written_with_warnings');

  // What the demo shop stored, read straight from its own table.
  const stored = (await db('demo_shop_writes').where({ shop_id: a.shop.id, kind: 'product_texts', key: code1 }).first()).value;
  t.false(stored.description.includes('<script'));
  t.false(stored.description.includes('onclick'));
  const after = await getDraft(db, t.context.accountId, null, draftId);
  t.is(after.items[0].status, 'written');
  t.is(after.items[0].result!.afterHash!.description, fieldHash(stored.description));
  t.true(after.items[0].result!.warnings.length > 0);
  t.is(after.decision!.by, 'person:1');

  const events = await db('outbox_events').where({ event_type: 'product_content.changed', shop_id: a.shop.id }).orderBy('id');
  t.is(events.length, 2, 'one event per written product');
  const e1 = events.find((e) => e.resource_id === code1)!;
  t.deepEqual(e1.data.changed_fields, ['description', 'metaTitle']);
  t.deepEqual(e1.data.before_hash, { description: c1.fields.description.hash, metaTitle: c1.fields.metaTitle.hash });
  t.deepEqual(e1.data.after_hash, { description: fieldHash(stored.description), metaTitle: fieldHash('Nový titulok') });
  t.not(e1.data.after_hash.description, fieldHash(proposed), 'after_hash is what the shop stored, not what was proposed');
  t.is(e1.data.source, 'mcp');
  t.is(e1.data.source_run_id, draftId);
  t.is(e1.data.store_id, 'sk');
  t.is(e1.data.entity, 'product');
  // The page address the demo platform gave with its catalogue (SPEC: the public address if known, else null).
  t.is(e1.data.canonical_url, `https://www.domov-kuchyna.sk/p/${code1.toLowerCase()}`);
  t.is(events.find((e) => e.resource_id === code2)!.data.canonical_url, null);
  // What the service serves is what the shop stores.
  const served = (await getProductContent(db, a.shop.id, code1))!;
  t.is(served.fields.description.value, stored.description);
  t.is(served.fields.description.hash, e1.data.after_hash.description);

  const again = await t.throwsAsync(decideProposal(t.context.env.client, draftId, { approve: false, by: 'person:1', reason: 'too late' }));
  t.is((again as AppError).code, 'PROPOSAL_ALREADY_DECIDED');
});

test.serial('When a person rejects a category-text proposal, then nothing is written and the reason is kept; a rejection without a reason is refused', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const guid = (await db('categories').where({ shop_id: a.shop.id }).orderBy('guid').first('guid')).guid;
  const c = (await getCategoryContent(db, a.shop.id, guid))!;
  const draftId = await createTextProposal(db, a, 'category', [{ id: guid, fingerprint: c.fingerprint, fields: { descriptionBottom: '<p>Spodný text</p>' } }], null, await clock(t));
  const handle = await start(t, draftId);
  await waitForState(t, draftId);
  const noReason = await t.throwsAsync(decideProposal(t.context.env.client, draftId, { approve: false, by: 'person:1', reason: ' ' }));
  t.is((noReason as AppError).code, 'INVALID_PARAMETER');
  const outcome = await decideProposal(t.context.env.client, draftId, { approve: false, by: 'person:1', reason: 'Not our tone' });
  t.is(outcome.status, 'rejected');
  t.is(await completed(handle), 'rejected');
  const draft = await getDraft(db, t.context.accountId, null, draftId);
  t.is(draft.status, 'rejected');
  t.is(draft.decision!.reason, 'Not our tone');
  t.is(draft.items[0].status, 'pending');
  t.is(await db('demo_shop_writes').where({ shop_id: a.shop.id, kind: 'category_texts', key: guid }).first(), undefined);
  t.is((await db('outbox_events').where({ event_type: 'category_content.changed' })).length, 0);
});

test.serial('When a dictionary proposal is approved after one entry changed in the shop, then it is partial with a result per item; all changed: failed; none: executed', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const entries = await db('availabilities').where({ shop_id: a.shop.id }).orderBy('position').limit(3);
  const run = async (stale: number[]) => {
    const fresh = await db('availabilities').where({ shop_id: a.shop.id }).orderBy('position').limit(3);
    const draftId = await createAvailabilityProposal(db, a, fresh.map((e) => ({ id: e.availability_id, name: `${e.name} +`, onStockHours: (e.on_stock_hours ?? 0) + 1 })), null, await clock(t));
    t.is((await getDraft(db, t.context.accountId, null, draftId)).status, 'pending');
    // The shop changed these entries after the proposal was prepared (as a sync would bring them).
    for (const i of stale) await db('availabilities').where({ shop_id: a.shop.id, availability_id: fresh[i].availability_id }).update({ name: `${fresh[i].name} (shop)` });
    const handle = await start(t, draftId);
    await waitForState(t, draftId);
    const outcome = await decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1' });
    t.is(await completed(handle), outcome.status);
    return getDraft(db, t.context.accountId, null, draftId);
  };
  const partial = await run([1]);
  t.is(partial.status, 'partial');
  t.deepEqual(partial.items.map((i) => i.status), ['written', 'failed', 'written']);
  t.is(partial.items[1].result!.error!.code, 'STALE_FINGERPRINT');
  const written = (await db('demo_shop_writes').where({ shop_id: a.shop.id, kind: 'availability', key: entries[0].availability_id }).first()).value;
  t.is(written.name, `${entries[0].name} +`);
  t.is((await db('availabilities').where({ shop_id: a.shop.id, availability_id: entries[0].availability_id }).first()).name, `${entries[0].name} +`);
  t.is((await run([0, 1, 2])).status, 'failed');
  const executed = await run([]);
  t.is(executed.status, 'executed');
  t.deepEqual(executed.items.map((i) => i.status), ['written', 'written', 'written']);
});

test.serial('When a claims-settings proposal is approved, then the setting is written; rejected, it is not', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'cz');
  const current = (await db('claims_settings').where({ shop_id: a.shop.id }).first()).settings;
  const draftId = await createClaimsProposal(db, a, { 'refundOptions.refundCouponValidityDays': current.refundOptions.refundCouponValidityDays + 30, 'configuration.form.requiresOrderNumber': false }, null, await clock(t));
  t.is((await getDraft(db, t.context.accountId, null, draftId)).status, 'waiting');
  const handle = await start(t, draftId);
  await waitForState(t, draftId);
  t.is((await decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1' })).status, 'written');
  t.is(await completed(handle), 'written');
  const now = (await db('claims_settings').where({ shop_id: a.shop.id }).first()).settings;
  t.is(now.refundOptions.refundCouponValidityDays, current.refundOptions.refundCouponValidityDays + 30);
  t.false(now.configuration.form.requiresOrderNumber);

  const second = await createClaimsProposal(db, a, { 'refundOptions.couponInForm': !now.refundOptions.couponInForm }, null, await clock(t));
  const h2 = await start(t, second);
  await waitForState(t, second);
  t.is((await decideProposal(t.context.env.client, second, { approve: false, by: 'person:1', reason: 'no' })).status, 'rejected');
  t.is(await completed(h2), 'rejected');
  t.is((await db('claims_settings').where({ shop_id: a.shop.id }).first()).settings.refundOptions.couponInForm, now.refundOptions.couponInForm);
});

test.serial('When product or category texts are proposed in autonomous mode, then they are written at once with source autonomous; identical stored text emits nothing', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'pl', 'autonomous');
  const [code] = await products(db, a.shop.id, 1);
  const c = (await getProductContent(db, a.shop.id, code))!;
  // The shop removes the script, so the stored description equals the current one: no change, no event for that field.
  const draftId = await createTextProposal(db, a, 'product', [{ id: code, fingerprint: c.fingerprint, fields: { description: `${c.fields.description.value ?? ''}<script>x()</script>`, metaTitle: 'Autonomous title' } }], null, await clock(t));
  const handle = await start(t, draftId);
  t.is(await completed(handle), 'written_with_warnings');
  const draft = await getDraft(db, t.context.accountId, null, draftId);
  t.is(draft.decision!.by, 'autonomous');
  const events = await db('outbox_events').where({ event_type: 'product_content.changed', shop_id: a.shop.id });
  t.is(events.length, 1);
  t.is(events[0].data.source, 'autonomous');
  t.deepEqual(events[0].data.changed_fields, ['metaTitle'], 'the description the shop stored is the old one: not a change');

  // Category texts are texts too (D13): written at once, announced with source autonomous.
  const cat = await author(t, 'sk', 'autonomous');
  const guid = (await db('categories').where({ shop_id: cat.shop.id }).orderBy('guid').offset(3).first('guid')).guid;
  const cc = (await getCategoryContent(db, cat.shop.id, guid))!;
  const catDraft = await createTextProposal(db, cat, 'category', [{ id: guid, fingerprint: cc.fingerprint, fields: { metaTitle: 'Autonomní titulek' } }], null, await clock(t));
  t.is(await completed(await start(t, catDraft)), 'written');
  t.is((await getDraft(db, t.context.accountId, null, catDraft)).decision!.by, 'autonomous');
  const catEvents = await db('outbox_events').where({ event_type: 'category_content.changed', resource_id: guid });
  t.is(catEvents.length, 1);
  t.like(catEvents[0].data, { entity: 'category', source: 'autonomous', source_run_id: catDraft, changed_fields: ['metaTitle'] });

  // The dictionary never goes autonomous: it waits for a person.
  const skA = await author(t, 'sk', 'autonomous');
  const entry = await db('availabilities').where({ shop_id: skA.shop.id }).orderBy('position').offset(3).first();
  const dict = await createAvailabilityProposal(db, skA, [{ id: entry.availability_id, meaning: entry.meaning === 'backorder' ? 'preorder' : 'backorder' }], null, await clock(t));
  await start(t, dict);
  await waitForState(t, dict);
  t.is((await getDraft(db, t.context.accountId, null, dict)).status, 'pending');
});

test.serial('When a category-text proposal is approved, then it is written with one category event; product and dictionary proposals can be rejected too', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const guid = (await db('categories').where({ shop_id: a.shop.id }).orderBy('guid').offset(1).first('guid')).guid;
  const c = (await getCategoryContent(db, a.shop.id, guid))!;
  const draftId = await createTextProposal(db, a, 'category', [{ id: guid, fingerprint: c.fingerprint, fields: { description: '<p>Nový horný text</p>', metaDescription: 'Nový popis' } }], null, await clock(t));
  const handle = await start(t, draftId);
  await waitForState(t, draftId);
  t.is((await decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:2' })).status, 'written');
  t.is(await completed(handle), 'written');
  const stored = (await db('demo_shop_writes').where({ shop_id: a.shop.id, kind: 'category_texts', key: guid }).first()).value;
  const events = await db('outbox_events').where({ event_type: 'category_content.changed', resource_id: guid });
  t.is(events.length, 1);
  t.like(events[0].data, { entity: 'category', entity_id: guid, source: 'mcp', source_run_id: draftId, changed_fields: ['description', 'metaDescription'] });
  t.deepEqual(events[0].data.before_hash, { description: c.fields.description.hash, metaDescription: c.fields.metaDescription.hash });
  t.deepEqual(events[0].data.after_hash, { description: fieldHash(stored.description), metaDescription: fieldHash(stored.metaDescription) });
  t.is((await getCategoryContent(db, a.shop.id, guid))!.fields.description.value, stored.description);

  const [code] = await products(db, a.shop.id, 7).then((x) => x.slice(6));
  const p = (await getProductContent(db, a.shop.id, code))!;
  const entry = await db('availabilities').where({ shop_id: a.shop.id }).orderBy('position').offset(4).first();
  for (const draft of [
    await createTextProposal(db, a, 'product', [{ id: code, fingerprint: p.fingerprint, fields: { metaTitle: 'Rejected title' } }], null, await clock(t)),
    await createAvailabilityProposal(db, a, [{ id: entry.availability_id, name: 'Rejected name' }], null, await clock(t)),
  ]) {
    const h = await start(t, draft);
    await waitForState(t, draft);
    t.is((await decideProposal(t.context.env.client, draft, { approve: false, by: 'person:2', reason: 'No' })).status, 'rejected');
    t.is(await completed(h), 'rejected');
    t.deepEqual((await getDraft(db, t.context.accountId, null, draft)).items.map((i) => i.status), ['pending']);
  }
  t.is((await getProductContent(db, a.shop.id, code))!.fields.metaTitle.value, p.fields.metaTitle.value);
  t.is((await db('availabilities').where({ shop_id: a.shop.id, availability_id: entry.availability_id }).first()).name, entry.name);
});

test.serial('When a proposal was stored but its workflow never started, then the reconcile path starts it once', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const draftId = await createClaimsProposal(db, a, { 'refundOptions.askAccountNumber': 'never' }, null, new Date((await clock(t)).getTime() - 60_000));
  const started = await reconcileProposalWorkflows(db, t.context.env.client, t.context.taskQueue, await clock(t));
  t.true(started >= 1);
  t.not((await db('proposals').where({ draft_id: draftId }).first()).workflow_started_at, null);
  await waitForState(t, draftId);
  t.is(await reconcileProposalWorkflows(db, t.context.env.client, t.context.taskQueue, await clock(t)), 0, 'started once');
});

// Last: the time-skipping server moves its clock seven days on, past the expiry of proposals prepared after this.
test.serial('When two decisions are sent at once, then exactly one wins and the other is refused with PROPOSAL_ALREADY_DECIDED', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const guid = (await db('categories').where({ shop_id: a.shop.id }).orderBy('guid').offset(7).first('guid')).guid;
  const cat = (await getCategoryContent(db, a.shop.id, guid))!;
  const draftId = await createTextProposal(db, a, 'category', [{ id: guid, fingerprint: cat.fingerprint, fields: { metaTitle: 'Raced title' } }], null, await clock(t));
  const handle = await start(t, draftId);
  await waitForState(t, draftId);
  const results = await Promise.allSettled([
    decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1', reason: null }),
    decideProposal(t.context.env.client, draftId, { approve: false, by: 'person:2', reason: 'not now' }),
  ]);
  const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
  t.is(won.length, 1, `exactly one decision wins: ${JSON.stringify(results.map((r) => r.status))}`);
  const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  t.is((lost.reason as AppError).code, 'PROPOSAL_ALREADY_DECIDED');
  const final = await completed(handle);
  if (won[0] === 0) t.regex(final, /^written/);
  else t.is(final, 'rejected');
  const row = await db('proposals').where({ draft_id: draftId }).first('decision', 'decided_by');
  t.deepEqual([row.decision, row.decided_by], won[0] === 0 ? ['approve', 'person:1'] : ['reject', 'person:2'], 'the stored decision is the winner\'s');
});

test.serial('When one second is left of the seven days, then the proposal still waits; one second after, it is expired', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const guid = (await db('categories').where({ shop_id: a.shop.id }).orderBy('guid').offset(8).first('guid')).guid;
  const cat = (await getCategoryContent(db, a.shop.id, guid))!;
  const created = await clock(t);
  const draftId = await createTextProposal(db, a, 'category', [{ id: guid, fingerprint: cat.fingerprint, fields: { metaTitle: 'Boundary title' } }], null, created);
  const sevenDaysMs = 7 * 24 * 60 * 60 * 1000; // D30, as the specification states it
  t.is((await db('proposals').where({ draft_id: draftId }).first('expires_at')).expires_at.getTime(), created.getTime() + sevenDaysMs);
  const handle = await start(t, draftId);
  await waitForState(t, draftId);
  // Skip the server's clock to one second before the seven days end.
  await t.context.env.sleep(created.getTime() + sevenDaysMs - 1000 - (await clock(t)).getTime());
  t.is(await handle.query<string>('state'), 'waiting', 'one second before the end it still waits');
  t.is((await getDraft(db, t.context.accountId, null, draftId)).status, 'awaiting_approval');
  await t.context.env.sleep(2000);
  t.is(await completed(handle), 'expired', 'one second after the end it is expired');
  const finished = (await db('proposals').where({ draft_id: draftId }).first('finished_at')).finished_at.getTime();
  t.true(finished >= created.getTime() + sevenDaysMs && finished <= created.getTime() + sevenDaysMs + 1000, `expired at the seven days: ${new Date(finished).toISOString()}`);
  const late = await t.throwsAsync(decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1' }));
  t.is((late as AppError).code, 'PROPOSAL_ALREADY_DECIDED');
});

test.serial('When nobody decides for seven days, then every kind expires on its durable timer and a late decision is refused', async (t) => {
  const { db } = t.context.database;
  const a = await author(t, 'sk');
  const [code] = await products(db, a.shop.id, 5).then((c) => c.slice(4));
  const c = (await getProductContent(db, a.shop.id, code))!;
  const entry = (await db('availabilities').where({ shop_id: a.shop.id }).orderBy('position').first());
  const guid = (await db('categories').where({ shop_id: a.shop.id }).orderBy('guid').offset(5).first('guid')).guid;
  const cat = (await getCategoryContent(db, a.shop.id, guid))!;
  const drafts = [
    await createTextProposal(db, a, 'product', [{ id: code, fingerprint: c.fingerprint, fields: { metaDescription: 'Expiring text' } }], null, await clock(t)),
    await createAvailabilityProposal(db, a, [{ id: entry.availability_id, deliveryHours: (entry.delivery_hours ?? 0) + 24 }], null, await clock(t)),
    await createClaimsProposal(db, a, { 'configuration.form.allowsPhotos': false }, null, await clock(t)),
    await createTextProposal(db, a, 'category', [{ id: guid, fingerprint: cat.fingerprint, fields: { metaTitle: 'Expiring category title' } }], null, await clock(t)),
  ];
  for (const draftId of drafts) {
    const handle = await start(t, draftId);
    t.is(await handle.result(), 'expired');
    t.is((await getDraft(db, t.context.accountId, null, draftId)).status, 'expired');
    const late = await t.throwsAsync(decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1' }));
    t.is((late as AppError).code, 'PROPOSAL_ALREADY_DECIDED');
  }
});
