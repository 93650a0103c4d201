/**
 * A worker killed (SIGKILL) in the middle of a proposal's write, on the time-skipping test server: the shop has taken
 * the second item's texts but its result is not stored yet. Another worker finishes the proposal; the first item,
 * whose result was stored, is never written again, and each product gets exactly one content-change event whose
 * `before_hash` is the text before the proposal (not the text the interrupted write had already put in the shop).
 */
import anyTest, { type TestFn } from 'ava';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { fieldHash } from '../../src/content/hash.js';
import { createAvailabilityProposal, createTextProposal } from '../../src/proposals/create.js';
import { proposalWorkflowId } from '../../src/proposals/model.js';
import { getDraft } from '../../src/proposals/queries.js';
import { getProductContent } from '../../src/queries/content.js';
import { findAccountByCode, findShopByCode } from '../../src/queries/shops.js';
import { decideProposal, startProposalWorkflow } from '../../src/temporal/proposals.js';
import { spawnWorkerProcess, crashTestFile, type CrashTestContext } from '../helpers/workerProcess.js';

type Context = CrashTestContext;
const test = anyTest as TestFn<Context>;
crashTestFile(test);

function startWorkerProcess(t: { context: Context }, taskQueue: string, hangAtPosition?: number): { child: ChildProcess; ready: Promise<void>; midWrite: Promise<void> } {
  const { child, printed } = spawnWorkerProcess('proposalWorkerProcess', {
    TEST_DB_URL: t.context.database.url, TEMPORAL_ADDRESS: t.context.env.address, TEST_TASK_QUEUE: taskQueue, LOG_LEVEL: 'warn',
    ...(hangAtPosition === undefined ? {} : { TEST_HANG_AFTER_WRITE_POSITION: String(hangAtPosition) }),
  }, ['ready', 'midwrite'], t.context.children);
  return { child, ready: printed.ready, midWrite: printed.midwrite };
}

test.serial('When the worker is killed after the shop took an item but before its result is stored, then another worker finishes and no item is written twice', async (t) => {
  t.timeout(180_000);
  const { db } = t.context.database;
  const taskQueue = `test-proposal-crash-${crypto.randomBytes(4).toString('hex')}`;
  const account = (await findAccountByCode(db, 'demo'))!;
  const shop = (await findShopByCode(db, account.id, 'sk'))!;
  const codes = (await db('products').where({ shop_id: shop.id }).orderBy('code').limit(3).select('code')).map((r) => r.code as string);
  const contents = await Promise.all(codes.map((code) => getProductContent(db, shop.id, code)));
  const now = new Date(await t.context.env.currentTimeMs());
  const draftId = await createTextProposal(db, { accountId: account.id, shop, writeMode: 'proposals', createdBy: 'key:test' },
    'product', codes.map((code, i) => ({ id: code, fingerprint: contents[i]!.fingerprint, fields: { metaTitle: `Crash test title ${i}` } })), null, now);

  const first = startWorkerProcess(t, taskQueue, 1);
  await first.ready;
  await startProposalWorkflow(db, t.context.env.client, draftId, taskQueue);
  // The page's patience is long here: the take-over waits for the dead worker's heartbeat time-out (10 s).
  const decision = decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1' }, 170_000);
  // Awaited below; a rejection before then must fail that await, not count as an unhandled rejection of the file.
  decision.catch(() => undefined);
  await first.midWrite;
  // The shop has item 1's text; its result is not stored.
  t.is((await db('demo_shop_writes').where({ shop_id: shop.id, kind: 'product_texts', key: codes[1] }).first()).value.metaTitle, 'Crash test title 1');
  t.is((await db('proposal_items').where({ position: 1 }).whereIn('proposal_id', db('proposals').where({ draft_id: draftId }).select('id')).first()).status, 'pending');
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));

  const second = startWorkerProcess(t, taskQueue);
  await second.ready;
  t.is((await decision).status, 'written');
  t.is(await t.context.env.client.workflow.getHandle(proposalWorkflowId(draftId)).result(), 'written');

  const draft = await getDraft(db, account.id, null, draftId);
  t.deepEqual(draft.items.map((i) => i.status), ['written', 'written', 'written']);
  const history = await t.context.env.client.workflow.getHandle(proposalWorkflowId(draftId)).fetchHistory();
  const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeProposalItem');
  t.is(scheduled.length, 3, 'each item\'s write activity was scheduled once; the interrupted one was retried as the same activity');
  const retried = (history.events ?? []).filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
  t.is(retried.length, 1, 'one write was tried again (its attempt 2 finished the run)');
  const events = await db('outbox_events').where({ event_type: 'product_content.changed', shop_id: shop.id }).orderBy('id');
  t.deepEqual(events.map((e) => e.resource_id).sort(), [...codes].sort(), 'one event per product, none twice');
  const e1 = events.find((e) => e.resource_id === codes[1])!;
  t.deepEqual(e1.data.before_hash, { metaTitle: contents[1]!.fields.metaTitle.hash }, 'before is the text before the proposal');
  t.deepEqual(e1.data.after_hash, { metaTitle: fieldHash('Crash test title 1') });
  t.is((await db('content_writes').where({ source_run_id: draftId })).length, 3);
});

test.serial('When the worker dies in the middle of a dictionary write, then the proposal is `writing` meanwhile and ends `executed` with each entry written once', async (t) => {
  t.timeout(180_000);
  const { db } = t.context.database;
  const taskQueue = `test-proposal-crash-${crypto.randomBytes(4).toString('hex')}`;
  const account = (await findAccountByCode(db, 'demo'))!;
  const shop = (await findShopByCode(db, account.id, 'sk'))!;
  const entries = await db('availabilities').where({ shop_id: shop.id }).orderBy('position').limit(2);
  const now = new Date(await t.context.env.currentTimeMs());
  const draftId = await createAvailabilityProposal(db, { accountId: account.id, shop, writeMode: 'proposals', createdBy: 'key:test' },
    entries.map((e) => ({ id: e.availability_id, deliveryHours: (e.delivery_hours ?? 0) + 48 })), null, now);

  const first = startWorkerProcess(t, taskQueue, 0);
  await first.ready;
  await startProposalWorkflow(db, t.context.env.client, draftId, taskQueue);
  // The page's patience is long here: the take-over waits for the dead worker's heartbeat time-out (10 s).
  const decision = decideProposal(t.context.env.client, draftId, { approve: true, by: 'person:1' }, 170_000);
  // Awaited below; a rejection before then must fail that await, not count as an unhandled rejection of the file.
  decision.catch(() => undefined);
  await first.midWrite;
  t.is((await getDraft(db, account.id, null, draftId)).status, 'writing');
  t.is(await t.context.env.client.workflow.getHandle(proposalWorkflowId(draftId)).query<string>('state'), 'writing');
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));

  const second = startWorkerProcess(t, taskQueue);
  await second.ready;
  t.is((await decision).status, 'executed');
  const draft = await getDraft(db, account.id, null, draftId);
  t.deepEqual(draft.items.map((i) => [i.status, i.result?.stored?.deliveryHours]), entries.map((e) => ['written', (e.delivery_hours ?? 0) + 48]));
  const history = await t.context.env.client.workflow.getHandle(proposalWorkflowId(draftId)).fetchHistory();
  t.is((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeProposalItem').length, 2);
  for (const e of entries) t.is((await db('availabilities').where({ shop_id: shop.id, availability_id: e.availability_id }).first()).delivery_hours, (e.delivery_hours ?? 0) + 48);
});
