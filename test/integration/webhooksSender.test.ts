/**
 * The dispatcher's sender on its own (issue 15, T10, W3, WR1), on a real Postgres against real receivers, with its clock
 * under the test's control: first attempts, and each retry exactly when due under its claim (the 1, 5, 15, 60,
 * 240-minute schedule; the delivery's workflow records them),
 * nothing for a paused or disabled endpoint or a plan without webhooks, 3xx and private addresses FAILED at once, the
 * pause check after 30 failures in a row, and the per-endpoint bound held across two senders of one process.
 */
import anyTest, { type TestFn } from 'ava';
import type { Db } from '../../src/db/knex.js';
import { DEFAULT_PER_ENDPOINT_CONCURRENCY, DirectSender, FAILING_LANE, requestsUnderWay } from '../../src/webhooks/direct.js';
import { workerName } from '../../src/webhooks/partitions.js';
import { dispatchOutboxBatch } from '../../src/webhooks/dispatch.js';
import { disableEndpoint, enableEndpoint } from '../../src/webhooks/endpoints.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closedPort, startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { accountId, emitOrderEvents, fakeDns, isolateWebhooks, makeEndpoint, testSettings } from '../helpers/webhooks.js';

interface Context {
  database: TestDatabase;
  settings: ReturnType<typeof testSettings>;
  dns: ReturnType<typeof fakeDns>;
  receivers: Receiver[];
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  await isolateWebhooks(database.db);
  await database.db('accounts').where({ code: 'demo' }).update({ plan_code: 'custom' });
  const dns = fakeDns();
  t.context = { database, settings: testSettings({ timeoutMs: 5_000, resolve: dns.resolve }), dns, receivers: [] };
});

test.after.always(async (t) => {
  for (const r of t.context.receivers ?? []) await r.close();
  await t.context.database?.drop();
});

async function receiver(t: { context: Context }, reply?: Receiver['reply']): Promise<Receiver> {
  const r = await startReceiver({ reply });
  t.context.receivers.push(r);
  return r;
}

/** A sender whose clock the test moves; `checks` collects the endpoints it asked the actor about. */
function sender(t: { context: Context }, start = Date.now()) {
  const clock = { now: start };
  const checks: string[] = [];
  const s = new DirectSender(t.context.database.db, t.context.settings, { checkEndpoint: async (id) => { checks.push(id); }, now: () => clock.now });
  /** Takes what is due, waits until it is sent and recorded; returns how many it took. */
  const round = async () => {
    const taken = await s.fill();
    await waitUntil(async () => s.active === 0, 20_000);
    return taken;
  };
  return { s, clock, checks, round };
}

/** Only this test's endpoint gets the next events: earlier ones are switched off. */
async function onlyEndpoint(t: { context: Context }, url: string, rcv?: Receiver) {
  const { db } = t.context.database;
  await db('webhook_endpoints').whereNot('state', 'disabled').update({ state: 'disabled' });
  const endpoint = await makeEndpoint(db, t.context.settings, { url, events: ['order.created'], shops: 'all' });
  if (rcv) rcv.secret = endpoint.secret;
  return endpoint;
}

async function deliveryOf(db: Db, eventId: string) {
  return db('webhook_deliveries').where({ event_id: eventId }).first();
}

test.serial('When every attempt is refused, then the sender makes each retry under its claim exactly 1, 5, 15, 60 and 240 minutes after the previous attempt ended, none early, and the delivery is FAILED after six (WR1)', async (t) => {
  const { db } = t.context.database;
  const endpoint = await onlyEndpoint(t, `http://127.0.0.1:${await closedPort()}/hooks`);
  const [eventId] = await emitOrderEvents(db, 1, { prefix: 'S' });
  await dispatchOutboxBatch(db);
  const { s, clock, round } = sender(t);
  t.is(await round(), 1, 'the first attempt at once');
  t.like(await deliveryOf(db, eventId), { status: 'PENDING', attempts: 1, claimed_attempt: null }, 'a first attempt needs no claim');
  for (const [i, delay] of [1, 5, 15, 60, 240].map((minutes) => minutes * 60_000).entries()) {
    const delivery = await deliveryOf(db, eventId);
    t.like(delivery, { status: 'PENDING', attempts: i + 1 });
    const due = (delivery.next_attempt_at as Date).getTime();
    t.is(await s.nextDueAt(), due, 'the dispatcher would sleep until exactly then');
    clock.now = due - 1;
    t.is(await round(), 0, `attempt ${i + 2} is not made a millisecond early`);
    clock.now = due;
    t.is(await round(), 1, `attempt ${i + 2} is made when due`);
    t.like(await deliveryOf(db, eventId), { claimed_attempt: i + 2, claimed_by: workerName }, 'under the dispatcher\'s claim');
    const attempts = await db('webhook_delivery_attempts').where({ delivery_id: delivery.id }).orderBy('attempt');
    const [previous, last] = attempts.slice(-2);
    t.is((last.attempted_at as Date).getTime() - ((previous.attempted_at as Date).getTime() + previous.duration_ms), delay);
  }
  const attempts = await db('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.event_id', eventId).orderBy('a.attempt').select('a.attempt', 'a.outcome');
  t.deepEqual(attempts.map((a) => [a.attempt, a.outcome]), [1, 2, 3, 4, 5, 6].map((n) => [n, 'connection_error']));
  t.like(await deliveryOf(db, eventId), { status: 'FAILED', attempts: 6, next_attempt_at: null });
  t.truthy((await deliveryOf(db, eventId)).completed_at);
  clock.now += 24 * 3_600_000;
  t.is(await round(), 0, 'nothing after the last attempt');
  t.is(await s.nextDueAt(), null);
  t.is((await db('webhook_endpoints').where({ id: endpoint.id }).first()).consecutive_failures, 6);
});

test.serial('When the endpoint is paused, then the sender takes none of its first attempts until a re-enable; a 302 and an address that turned private are FAILED at once; a disable makes a waiting one SKIPPED', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t, (req) => (String(req.body.data.order_code).startsWith('R302') ? { status: 302, headers: { Location: '/x' } } : { status: 200 }));
  const endpoint = await onlyEndpoint(t, rcv.url, rcv);
  const demo = await accountId(db);
  await db('webhook_endpoints').where({ id: endpoint.id }).update({ state: 'paused', pause_reason: 'consecutive_failures', paused_at: db.fn.now() });
  const [first] = await emitOrderEvents(db, 1, { prefix: 'P' });
  await dispatchOutboxBatch(db);
  const { clock, round } = sender(t);
  t.is(await round(), 0, 'a paused endpoint gets nothing');
  t.like(await deliveryOf(db, first), { status: 'PENDING', attempts: 0 });
  await enableEndpoint(db, demo, endpoint.id);
  t.is(await round(), 1, 're-enabled: the held delivery goes at once');
  t.like(await deliveryOf(db, first), { status: 'SENT', attempts: 1 });

  await emitOrderEvents(db, 1, { prefix: 'R302' });
  await dispatchOutboxBatch(db);
  t.is(await round(), 1);
  t.like(await db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'FAILED' }).first(), { attempts: 1, last_http_status: 302, next_attempt_at: null });

  // The name resolved to loopback when the endpoint was saved; at delivery it answers a private address.
  t.context.dns.set('hooks.receiver.test', ['127.0.0.1']);
  const renamed = await onlyEndpoint(t, rcv.url.replace('127.0.0.1', 'hooks.receiver.test'), rcv);
  t.context.dns.set('hooks.receiver.test', ['10.20.30.40']);
  const [rejected] = await emitOrderEvents(db, 1, { prefix: 'A' });
  await dispatchOutboxBatch(db);
  t.is(await round(), 1);
  t.like(await deliveryOf(db, rejected), { status: 'FAILED', attempts: 1, next_attempt_at: null });
  t.deepEqual((await db('webhook_delivery_attempts').where({ delivery_id: (await deliveryOf(db, rejected)).id })).map((a) => a.outcome), ['address_rejected']);

  await db('webhook_endpoints').where({ id: renamed.id }).update({ state: 'paused', pause_reason: 'consecutive_failures', paused_at: db.fn.now() });
  const [second] = await emitOrderEvents(db, 1, { prefix: 'Q' });
  await dispatchOutboxBatch(db);
  t.is((await disableEndpoint(db, demo, renamed.id)).skipped, 1);
  clock.now += 24 * 3_600_000;
  t.is(await round(), 0);
  t.like(await deliveryOf(db, second), { status: 'SKIPPED', attempts: 0 });
  t.is(rcv.requests.length, 2, 'P once, the 302 once; nothing reached the private address');
  t.true(rcv.requests.every((r) => r.verifyError === null && r.standardVerifyError === null));
});

test.serial('When the plan has no webhooks, then nothing is sent until it is restored', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t);
  await onlyEndpoint(t, rcv.url, rcv);
  const [eventId] = await emitOrderEvents(db, 1, { prefix: 'T' });
  await dispatchOutboxBatch(db);
  await db('accounts').where({ code: 'demo' }).update({ plan_code: 'trial' });
  const { clock, round } = sender(t);
  t.is(await round(), 0);
  await db('accounts').where({ code: 'demo' }).update({ plan_code: 'custom' });
  // The entitlement is re-read at most once a second (by the sender's clock).
  clock.now += 1_001;
  t.is(await round(), 1);
  t.like(await deliveryOf(db, eventId), { status: 'SENT', attempts: 1 });
});

test.serial('When 30 attempts in a row fail, then the sender asks the endpoint\'s actor to check its limits', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t, () => ({ status: 500 }));
  const endpoint = await onlyEndpoint(t, rcv.url, rcv);
  await emitOrderEvents(db, 30, { prefix: 'U' });
  await dispatchOutboxBatch(db);
  const { checks, round } = sender(t);
  let taken = 0;
  while (taken < 30) taken += await round();
  await waitUntil(async () => checks.includes(endpoint.id));
  t.is((await db('webhook_endpoints').where({ id: endpoint.id }).first()).consecutive_failures, 30);
  t.true(rcv.maxOpen <= DEFAULT_PER_ENDPOINT_CONCURRENCY);
});

test.serial('When two senders of one process run at once (a dispatcher run and its successor), then one endpoint still has at most 16 requests open', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t, () => 'hang');
  await onlyEndpoint(t, rcv.url, rcv);
  await emitOrderEvents(db, 40, { prefix: 'V' });
  await dispatchOutboxBatch(db);
  const first = sender(t);
  const second = sender(t);
  const taken = (await first.s.fill()) + (await second.s.fill());
  t.is(taken, DEFAULT_PER_ENDPOINT_CONCURRENCY);
  await rcv.waitFor((reqs) => reqs.length >= DEFAULT_PER_ENDPOINT_CONCURRENCY);
  t.is(await second.s.fill(), 0, 'the lane is full for both');
  rcv.release(200);
  await waitUntil(async () => first.s.active === 0 && second.s.active === 0);
  // Refilled as the lane frees, never beyond it.
  for (let round = 0; rcv.requests.length < 40 && round < 20; round++) {
    await Promise.all([first.s.fill(), second.s.fill()]);
    await new Promise((r) => setTimeout(r, 100));
    rcv.release(200);
    await waitUntil(async () => first.s.active === 0 && second.s.active === 0);
  }
  t.is(rcv.requests.length, 40);
  t.true(rcv.maxOpen <= DEFAULT_PER_ENDPOINT_CONCURRENCY, `at most ${DEFAULT_PER_ENDPOINT_CONCURRENCY} open (${rcv.maxOpen})`);
  t.is(new Set(rcv.requests.map((r) => r.body.event_id)).size, 40, 'each delivery sent once');
});

test.serial('When two partitions served by one process fill at once, then together they start no more requests than the process\'s bound (WS5, WS8)', async (t) => {
  const { db } = t.context.database;
  await db('webhook_endpoints').whereNot('state', 'disabled').update({ state: 'disabled' });
  const receivers = [await receiver(t, () => 'hang'), await receiver(t, () => 'hang')];
  const endpoints = [];
  for (const [i, rcv] of receivers.entries()) {
    const endpoint = await makeEndpoint(db, t.context.settings, { url: rcv.url, events: ['order.created'], shops: 'all', name: `partition ${i}` });
    rcv.secret = endpoint.secret;
    endpoints.push(endpoint);
  }
  const partitionOf = (id: string) => Number(BigInt(id) % 2n);
  t.not(partitionOf(endpoints[0].id), partitionOf(endpoints[1].id), 'one endpoint in each partition');
  await emitOrderEvents(db, 16, { prefix: 'PB' });
  await dispatchOutboxBatch(db);
  // Both runs see the whole room of 12 before their look-ups; the second to get its rows must find it taken.
  const senders = endpoints.map((e) => new DirectSender(db, t.context.settings, { checkEndpoint: async () => {}, maxInFlight: 12, stuckAfterMs: 600_000, partition: { index: partitionOf(e.id), partitions: 2 } }));
  const taken = await Promise.all(senders.map((s) => s.fill()));
  t.is(taken[0] + taken[1], 12, `12 in all (${taken.join(' + ')})`);
  await waitUntil(async () => receivers[0].requests.length + receivers[1].requests.length >= 12);
  t.is(await senders[0].fill() + await senders[1].fill(), 0, 'no room left for either');
  t.is(receivers[0].requests.length + receivers[1].requests.length, 12);
  for (const rcv of receivers) rcv.release(200);
  await waitUntil(async () => senders.every((s) => s.active === 0));
  await db('webhook_endpoints').whereIn('id', endpoints.map((e) => e.id)).update({ state: 'disabled' });
});

test.serial('When an endpoint\'s latest attempt failed, then it gets 2 requests at once until one succeeds, and failing endpoints together hold at most a quarter of the process while a healthy one takes the rest (T21)', async (t) => {
  const { db } = t.context.database;
  await db('webhook_endpoints').whereNot('state', 'disabled').update({ state: 'disabled' });
  const [healthy, failingOne, failingTwo] = [await receiver(t, () => 'hang'), await receiver(t, () => 'hang'), await receiver(t, () => 'hang')];
  const endpoints = [];
  for (const [i, rcv] of [healthy, failingOne, failingTwo].entries()) {
    const endpoint = await makeEndpoint(db, t.context.settings, { url: rcv.url, events: ['order.created'], shops: 'all', name: `lane ${i}` });
    rcv.secret = endpoint.secret;
    endpoints.push(endpoint);
  }
  // Judged by Postgres: this process has not heard from them yet.
  await db('webhook_endpoints').whereIn('id', [endpoints[1].id, endpoints[2].id]).update({ consecutive_failures: 3 });
  await emitOrderEvents(db, 20, { prefix: 'L' });
  await dispatchOutboxBatch(db);
  // 12 at once in this process: the failing share is 3. (Nothing counts as stuck here: T22 has its own test.)
  const s = new DirectSender(db, t.context.settings, { checkEndpoint: async () => {}, maxInFlight: 12, stuckAfterMs: 600_000 });
  t.is(await s.fill(), 12);
  await healthy.waitFor((reqs) => reqs.length >= 9);
  await waitUntil(async () => failingOne.requests.length + failingTwo.requests.length >= 3);
  t.is(healthy.requests.length, 9, 'the healthy endpoint got everything the failing share left');
  t.is(failingOne.requests.length + failingTwo.requests.length, 3, 'the failing endpoints together: a quarter of 12');
  t.true(failingOne.requests.length <= 2 && failingTwo.requests.length <= 2, 'each failing lane at most 2');
  t.is(await s.fill(), 0, 'everything is taken');

  // A success opens the lane again: the first failing endpoint answers, and its next round is a whole lane.
  failingOne.release(200);
  healthy.release(200);
  await waitUntil(async () => s.active === failingTwo.requests.length);
  const before = failingOne.requests.length;
  const wide = new DirectSender(db, t.context.settings, { checkEndpoint: async () => {} });
  await wide.fill();
  await failingOne.waitFor((reqs) => reqs.length >= before + DEFAULT_PER_ENDPOINT_CONCURRENCY);
  t.is(failingOne.requests.length, before + DEFAULT_PER_ENDPOINT_CONCURRENCY, 'a whole lane at once');
  t.true(failingOne.maxOpen > FAILING_LANE, `more than ${FAILING_LANE} open after the success (${failingOne.maxOpen})`);
  t.true(failingTwo.maxOpen <= FAILING_LANE, 'the other still probes with at most 2');
  for (const rcv of [healthy, failingOne, failingTwo]) rcv.release(200);
  await waitUntil(async () => s.active === 0 && wide.active === 0, 20_000);
  await db('webhook_endpoints').whereIn('id', endpoints.map((e) => e.id)).update({ state: 'disabled' });
});

test.serial('When a process\'s every slot is held by a receiver that does not answer, then once they are stuck those requests stop counting, their endpoint gets no more, a healthy endpoint is served while they are still open, and the bound on open requests holds (T22)', async (t) => {
  const { db } = t.context.database;
  await db('webhook_endpoints').whereNot('state', 'disabled').update({ state: 'disabled' });
  const hanging = await receiver(t, () => 'hang');
  const healthy = await receiver(t);
  const hangingEndpoint = await makeEndpoint(db, t.context.settings, { url: hanging.url, events: ['order.created'], shops: 'all', name: 'stuck' });
  hanging.secret = hangingEndpoint.secret;
  await emitOrderEvents(db, 6, { prefix: 'S' });
  t.like(await dispatchOutboxBatch(db), { events: 6, deliveries: 6 });
  // 4 at once in this process, 8 open at most; a request under way 3 s is stuck (far longer than the set-up below
  // takes even on a loaded machine, so "young" really is young).
  const stuckAfterMs = 3_000;
  // The receiver time-out (5 s in this file) is lifted so that no request ends before the test releases it.
  const s = new DirectSender(db, { ...t.context.settings, timeoutMs: 60_000 }, { checkEndpoint: async () => {}, maxInFlight: 4, maxOpen: 8, stuckAfterMs });
  t.is(await s.fill(), 4);
  await hanging.waitFor((reqs) => reqs.length >= 4);
  const healthyEndpoint = await makeEndpoint(db, t.context.settings, { url: healthy.url, events: ['order.created'], shops: 'all', name: 'healthy' });
  healthy.secret = healthyEndpoint.secret;
  await emitOrderEvents(db, 3, { prefix: 'T' });
  t.like(await dispatchOutboxBatch(db), { events: 3, deliveries: 6 });
  t.is(await s.fill(), 0, 'no room while the hanging requests are young');
  await new Promise((r) => setTimeout(r, stuckAfterMs + 100));
  // The 4 stuck requests free 4 slots, and they are the healthy endpoint's: the hanging one counts as failing (a lane of
  // 2, which its 4 open requests more than fill), although it has 5 deliveries waiting.
  t.is(await s.fill(), 3, 'the healthy endpoint\'s three deliveries');
  t.is(requestsUnderWay(hangingEndpoint.id), 4, 'and not one more for the receiver that does not answer');
  await healthy.waitFor((reqs) => reqs.length >= 3);
  t.is(healthy.requests.length, 3, 'the healthy endpoint got all its deliveries');
  t.is(hanging.open, 4, 'while the first hanging requests were still open');
  await waitUntil(async () => s.active === 4);

  // The bound on open requests: a second receiver that does not answer takes the 4 slots, and once its requests are
  // stuck too (8 stuck, so the 512-style bound would give 4 more) the bound of 8 open keeps a new endpoint waiting.
  await db('webhook_endpoints').where('id', healthyEndpoint.id).update({ state: 'disabled' });
  const hangingTwo = await receiver(t, () => 'hang');
  const hangingTwoEndpoint = await makeEndpoint(db, t.context.settings, { url: hangingTwo.url, events: ['order.created'], shops: 'all', name: 'stuck too' });
  hangingTwo.secret = hangingTwoEndpoint.secret;
  await emitOrderEvents(db, 4, { prefix: 'U' });
  t.like(await dispatchOutboxBatch(db), { events: 4, deliveries: 8 });
  t.is(await s.fill(), 4, 'the second hanging endpoint takes the room');
  await hangingTwo.waitFor((reqs) => reqs.length >= 4);
  await new Promise((r) => setTimeout(r, stuckAfterMs + 100));
  const late = await receiver(t);
  const lateEndpoint = await makeEndpoint(db, t.context.settings, { url: late.url, events: ['order.created'], shops: 'all', name: 'late' });
  late.secret = lateEndpoint.secret;
  await emitOrderEvents(db, 1, { prefix: 'V' });
  t.like(await dispatchOutboxBatch(db), { events: 1, deliveries: 3 });
  t.is(await s.fill(), 0, 'eight open, all stuck: the ninth waits');
  t.is(hanging.open + hangingTwo.open, 8, 'as many open as the bound allows');
  // A slot that frees serves the waiting endpoint.
  hangingTwo.release(200);
  await waitUntil(async () => (await s.fill()) >= 0 && late.requests.length >= 1);
  t.is(late.requests.length, 1, 'the late endpoint is served once requests end');
  // Released until nothing is under way: a delivery still waiting is sent on a slot that frees and is held again.
  await waitUntil(async () => {
    hanging.release(200);
    hangingTwo.release(200);
    return s.active === 0;
  }, 60_000);
  await db('webhook_endpoints').whereIn('id', [hangingEndpoint.id, healthyEndpoint.id, hangingTwoEndpoint.id, lateEndpoint.id]).update({ state: 'disabled' });
});

test.serial('When an endpoint that failed 7 times in a row fails twice more, then its count is 9; one success then sets it to 0 (D14: in a row)', async (t) => {
  const { db } = t.context.database;
  let status = 500;
  const rcv = await receiver(t, () => ({ status }));
  const endpoint = await onlyEndpoint(t, rcv.url, rcv);
  await db('webhook_endpoints').where({ id: endpoint.id }).update({ consecutive_failures: 7 });
  await emitOrderEvents(db, 2, { prefix: 'CF' });
  await dispatchOutboxBatch(db);
  const { round } = sender(t);
  t.is(await round(), 2);
  t.is((await db('webhook_endpoints').where({ id: endpoint.id }).first()).consecutive_failures, 9);
  status = 200;
  await emitOrderEvents(db, 1, { prefix: 'CS' });
  await dispatchOutboxBatch(db);
  t.is(await round(), 1, 'the new event; the two failed ones wait for their retry');
  t.is((await db('webhook_endpoints').where({ id: endpoint.id }).first()).consecutive_failures, 0);
});

test.serial('When attempts finish while an earlier record waits, then they are recorded together in the order they finished: a failure before a success leaves the count at 0 (D14, WS8)', async (t) => {
  const { db } = t.context.database;
  // Request 0 succeeds at once; 1 fails after 100 ms; 2 succeeds after 300 ms. The first record waits on a lock of the
  // endpoint's row for a second, so 1 and 2 finish meanwhile and go into the next statement together, failure first.
  const rcv = await receiver(t, (_req, index) => (index === 0 ? { status: 200 } : index === 1 ? { status: 500, delayMs: 100 } : { status: 200, delayMs: 300 }));
  const endpoint = await onlyEndpoint(t, rcv.url, rcv);
  await emitOrderEvents(db, 3, { prefix: 'GC' });
  await dispatchOutboxBatch(db);
  const { s } = sender(t);
  const lock = await db.transaction();
  try {
    await lock('webhook_endpoints').where({ id: endpoint.id }).forUpdate().first();
    t.is(await s.fill(), 3);
    await rcv.waitFor((requests) => requests.length === 3);
    await waitUntil(async () => rcv.open === 0);
    t.is(rcv.requests.length, 3);
  } finally {
    await lock.commit();
  }
  await waitUntil(async () => s.active === 0, 20_000);
  const outcomes = await db('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where('d.endpoint_id', endpoint.id).orderBy('a.id').pluck('a.outcome');
  t.is(outcomes.length, 3);
  t.is((await db('webhook_endpoints').where({ id: endpoint.id }).first()).consecutive_failures, 0);
});

test.serial('When an attempt is already in the log (recorded by another path) as its request ends, then recording it again moves nothing and counts nothing (WS8)', async (t) => {
  const { db } = t.context.database;
  const rcv = await receiver(t, () => 'hang');
  const endpoint = await onlyEndpoint(t, rcv.url, rcv);
  const [eventId] = await emitOrderEvents(db, 1, { prefix: 'TW' });
  await dispatchOutboxBatch(db);
  const { s } = sender(t);
  t.is(await s.fill(), 1);
  await rcv.waitFor((requests) => requests.length === 1);
  const delivery = await deliveryOf(db, eventId);
  await db('webhook_delivery_attempts').insert({ delivery_id: delivery.id, attempt: 1, outcome: 'success', http_status: 200, error: null, attempted_at: new Date(), duration_ms: 5 });
  rcv.release(500);
  await waitUntil(async () => s.active === 0, 20_000);
  t.like(await deliveryOf(db, eventId), { status: 'PENDING', attempts: 0 });
  t.is((await db('webhook_endpoints').where({ id: endpoint.id }).first()).consecutive_failures, 0);
  t.deepEqual(await db('webhook_delivery_attempts').where({ delivery_id: delivery.id }).pluck('outcome'), ['success']);
  await db('webhook_deliveries').where({ id: delivery.id }).update({ status: 'SKIPPED', completed_at: new Date() });
});
