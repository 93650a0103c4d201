/**
 * The partner programme pages for staff (issue 24 point 3) over real HTTP: commission approval one by one and in bulk
 * (a second approval refused with a code), payouts drawn up as drafts, confirmed and marked paid by a person (a
 * second payment refused), the PDF statement, the partner queue with the same rules as the MCP tool, read-only for a
 * person without `affiliate:manage`, and partner-entered HTML escaped. No Temporal here: the pages decide in process;
 * test/workflows/affiliatePayouts.test.ts runs the same through the workflows.
 */
import anyTest, { type TestFn } from 'ava';
import { FormClient, makePerson, startApplicationServer, testApplicationOptions, csrfOf } from '../helpers/application.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';

interface Context { database: TestDatabase; server: TestServer; accountId: string }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const account = await database.db('accounts').where({ code: 'demo' }).first('id');
  t.context = { database, server: await startApplicationServer(database.db, testApplicationOptions()), accountId: String(account.id) };
});
test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});


async function signedIn(t: { context: Context }, options: Parameters<typeof makePerson>[1]): Promise<{ client: FormClient; id: string }> {
  const person = await makePerson(t.context.database.db, options);
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  return { client, id: person.id };
}

/** Commissions of the demo account waiting for a person (the demo's manual campaigns), oldest first. */
async function awaiting(t: { context: Context }, n: number, market = 'sk') {
  const db = t.context.database.db;
  return db('affiliate_conversions as cv').join('shops as s', 's.id', 'cv.shop_id').where({ 's.account_id': t.context.accountId, 's.code': market, 'cv.commission_state': 'pending', 'cv.state_reason': 'awaiting_manual_approval' })
    .orderBy('cv.id').limit(n).select('cv.id');
}

test.serial('When a manager approves a commission awaiting approval, then it is approved by them; a second approval is refused with STATE_CONFLICT', async (t) => {
  const db = t.context.database.db;
  const { client, id: personId } = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'] });
  const [c] = await awaiting(t, 1);
  t.truthy(c, 'the demo has commissions awaiting manual approval');
  const page = await client.get('/app/affiliate/commissions?market=sk');
  t.is(page.status, 200);
  t.regex(page.text, new RegExp(`data-id="${c.id}" data-state="pending" data-reason="awaiting_manual_approval"`));
  t.regex(page.text, /Return period ends/);
  const first = await client.post(`/app/affiliate/commissions/${c.id}/decide`, { _csrf: csrfOf(page.text), decision: 'approve', reason: '' });
  t.is(first.status, 200);
  t.regex(first.text, new RegExp(`Commission ${c.id}: approved`));
  const row = await db('affiliate_conversions').where({ id: c.id }).first('commission_state', 'state_reason', 'approved_at', 'decided_by_person_id');
  t.is(row.commission_state, 'approved');
  t.is(row.state_reason, 'approved_manually');
  t.truthy(row.approved_at);
  t.is(String(row.decided_by_person_id), personId);
  const second = await client.post(`/app/affiliate/commissions/${c.id}/decide`, { _csrf: csrfOf(page.text), decision: 'approve', reason: '' });
  t.is(second.status, 409);
  t.regex(second.text, /STATE_CONFLICT/);
  // A pending commission not awaiting a person (its return period still running, say) cannot be approved (AP2-3).
  const early = await db('affiliate_conversions as cv').join('shops as s', 's.id', 'cv.shop_id')
    .where({ 's.account_id': t.context.accountId, 's.code': 'sk', 'cv.commission_state': 'pending' }).whereNot('cv.state_reason', 'awaiting_manual_approval').whereNull('cv.payout_id')
    .orderBy('cv.id').first('cv.id', 'cv.state_reason');
  t.truthy(early, 'the demo has pending commissions not awaiting approval');
  const refused = await client.post(`/app/affiliate/commissions/${early.id}/decide`, { _csrf: csrfOf(page.text), decision: 'approve', reason: '' });
  t.is(refused.status, 409);
  t.regex(refused.text, /STATE_CONFLICT/);
  t.like(await db('affiliate_conversions').where({ id: early.id }).first('commission_state', 'state_reason', 'manual_decision'), { commission_state: 'pending', state_reason: early.state_reason, manual_decision: null });
});

test.serial('When a manager rejects without a reason, then it is refused; with a reason the commission is rejected and the sync\'s recomputation keeps the decision', async (t) => {
  const db = t.context.database.db;
  const { client } = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'] });
  const [c] = await awaiting(t, 1);
  const page = await client.get('/app/affiliate/commissions');
  const refused = await client.post(`/app/affiliate/commissions/${c.id}/decide`, { _csrf: csrfOf(page.text), decision: 'reject', reason: '  ' });
  t.is(refused.status, 400);
  t.regex(refused.text, /MISSING_PARAMETER/);
  t.is((await db('affiliate_conversions').where({ id: c.id }).first('commission_state')).commission_state, 'pending');
  const ok = await client.post(`/app/affiliate/commissions/${c.id}/decide`, { _csrf: csrfOf(page.text), decision: 'reject', reason: 'Self-referral <b>fraud</b>' });
  t.is(ok.status, 200);
  // As the sync recomputes states after a batch (the same function).
  const { refreshCommissionStates } = await import('../../src/affiliate/attribution.js');
  const { knexRunner } = await import('../../src/affiliate/sql.js');
  const shop = await db('affiliate_conversions').where({ id: c.id }).first('shop_id', 'order_code');
  await db.transaction((trx) => refreshCommissionStates(knexRunner(trx), String(shop.shop_id), TEST_NOW, [shop.order_code]));
  const row = await db('affiliate_conversions').where({ id: c.id }).first('commission_state', 'state_reason', 'manual_reason');
  t.deepEqual(row, { commission_state: 'rejected', state_reason: 'rejected_manually', manual_reason: 'Self-referral <b>fraud</b>' });
  const shown = await client.get('/app/affiliate/commissions?state=rejected');
  t.true(shown.text.includes('Self-referral &lt;b&gt;fraud&lt;/b&gt;'), 'the reason is escaped');
  t.false(shown.text.includes('<b>fraud</b>'));
});

test.serial('When a manager approves several commissions in bulk, then each is approved; one already decided is listed as refused and the rest still go through', async (t) => {
  const db = t.context.database.db;
  const { client } = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'] });
  const rows = await awaiting(t, 3);
  t.is(rows.length, 3);
  const decided = await db('affiliate_conversions').where({ commission_state: 'rejected', state_reason: 'rejected_manually' }).first('id');
  const page = await client.get('/app/affiliate/commissions');
  const res = await client.post('/app/affiliate/commissions/bulk', { _csrf: csrfOf(page.text), decision: 'approve', reason: '', ids: [...rows.map((r) => String(r.id)), String(decided.id)] });
  t.is(res.status, 200);
  t.regex(res.text, /3 decided \(approve\), 1 refused/);
  t.regex(res.text, new RegExp(`data-id="${decided.id}">${decided.id}: STATE_CONFLICT`));
  const states = await db('affiliate_conversions').whereIn('id', rows.map((r) => r.id)).pluck('state_reason');
  t.deepEqual(states, ['approved_manually', 'approved_manually', 'approved_manually']);
});

test.serial('When payouts are drawn up, confirmed and marked paid, then each step is a person\'s; a repeated run adds nothing and a second payment is refused', async (t) => {
  const db = t.context.database.db;
  const { client } = await signedIn(t, { role: 'owner' });
  const before = await db('affiliate_payouts').where({ account_id: t.context.accountId }).count({ n: '*' }).first();
  const page = await client.get('/app/affiliate/payouts');
  t.is(page.status, 200);
  const drawn = await client.post('/app/affiliate/payouts/draw-up', { _csrf: csrfOf(page.text), period: '2026-11' });
  t.is(drawn.status, 200);
  const created = Number(/(\d+) drawn up as drafts/.exec(drawn.text)?.[1]);
  t.true(created > 0, `some payouts were drawn up (${created})`);
  const drafts = await db('affiliate_payouts').where({ account_id: t.context.accountId, state: 'requested', period_to: '2026-11-30' }).select('id', 'amount', 'conversions', 'currency', 'partner_id', 'shop_id');
  t.is(drafts.length, created);
  // Each draft's amount is the sum of its commissions, each approved before December and of an approved partner.
  for (const d of drafts) {
    const lines = await db('affiliate_conversions').where({ payout_id: d.id }).select('commission', 'commission_state', 'approved_at');
    t.is(lines.length, d.conversions);
    t.is(lines.reduce((s, l) => s + Math.round(Number(l.commission) * 100), 0), Math.round(Number(d.amount) * 100));
    t.true(lines.every((l) => l.commission_state === 'approved' && l.approved_at < new Date('2026-12-01T00:00:00Z')));
  }
  const again = await client.post('/app/affiliate/payouts/draw-up', { _csrf: csrfOf(page.text), period: '2026-11' });
  t.regex(again.text, /0 drawn up as drafts/);
  const after = await db('affiliate_payouts').where({ account_id: t.context.accountId }).count({ n: '*' }).first();
  t.is(Number(after!.n), Number(before!.n) + created);

  const [payout] = drafts;
  t.is((await client.post(`/app/affiliate/payouts/${payout.id}/paid`, { _csrf: csrfOf(page.text), reference: 'x' })).status, 409, 'a draft is confirmed before it is paid');
  t.is((await client.post(`/app/affiliate/payouts/${payout.id}/confirm`, { _csrf: csrfOf(page.text) })).status, 200);
  // Only a draft can be cancelled: a confirmed payout keeps its state and its commissions.
  const lineCount = Number((await db('affiliate_conversions').where({ payout_id: payout.id }).count({ n: '*' }).first())!.n);
  t.true(lineCount > 0);
  const cancelConfirmed = await client.post(`/app/affiliate/payouts/${payout.id}/cancel`, { _csrf: csrfOf(page.text) });
  t.is(cancelConfirmed.status, 409);
  t.regex(cancelConfirmed.text, /STATE_CONFLICT/);
  t.is((await db('affiliate_payouts').where({ id: payout.id }).first('state')).state, 'approved');
  t.is(Number((await db('affiliate_conversions').where({ payout_id: payout.id }).count({ n: '*' }).first())!.n), lineCount);
  const paid = await client.post(`/app/affiliate/payouts/${payout.id}/paid`, { _csrf: csrfOf(page.text), reference: 'SEPA 2026-12-07' });
  t.is(paid.status, 200);
  const row = await db('affiliate_payouts').where({ id: payout.id }).first('state', 'paid_at', 'payment_reference');
  t.is(row.state, 'paid');
  t.truthy(row.paid_at);
  t.is(row.payment_reference, 'SEPA 2026-12-07');
  t.deepEqual([...new Set(await db('affiliate_conversions').where({ payout_id: payout.id }).pluck('commission_state'))], ['paid']);
  const twice = await client.post(`/app/affiliate/payouts/${payout.id}/paid`, { _csrf: csrfOf(page.text), reference: 'again' });
  t.is(twice.status, 409);
  t.regex(twice.text, /STATE_CONFLICT/);

  const pdf = await client.get(`/app/affiliate/payouts/${payout.id}/statement.pdf`);
  t.is(pdf.status, 200);
  t.is(pdf.headers.get('content-type'), 'application/pdf');
  t.true(pdf.text.startsWith('%PDF-'));
  t.regex(pdf.text, /DejaVuSans/, 'the font is embedded');

  // A cancelled draft frees its commissions for a later run.
  const other = drafts[1];
  if (other) {
    t.is((await client.post(`/app/affiliate/payouts/${other.id}/cancel`, { _csrf: csrfOf(page.text) })).status, 200);
    t.is(Number((await db('affiliate_conversions').where({ payout_id: other.id }).count({ n: '*' }).first())!.n), 0);
  }
});

test('When a person without affiliate:manage opens the pages, then they read them without any decision form, and a decision is refused with 403', async (t) => {
  const db = t.context.database.db;
  const { client } = await signedIn(t, { role: 'member', permissions: [] });
  const page = await client.get('/app/affiliate/commissions');
  t.is(page.status, 200);
  t.regex(page.text, /read only/);
  t.notRegex(page.text, /name="decision" value="approve"/);
  const [c] = await awaiting(t, 1, 'cz');
  const res = await client.post(`/app/affiliate/commissions/${c.id}/decide`, { _csrf: csrfOf(page.text), decision: 'approve' });
  t.is(res.status, 403);
  t.is((await db('affiliate_conversions').where({ id: c.id }).first('commission_state')).commission_state, 'pending');
  t.is((await client.post('/app/affiliate/payouts/draw-up', { _csrf: csrfOf(page.text), period: '2026-10' })).status, 403);
  const payouts = await client.get('/app/affiliate/payouts');
  t.is(payouts.status, 200);
  t.notRegex(payouts.text, /Draw up payouts/);
});

test('When a person limited to one shop looks at another shop\'s commission, then it is not found for them', async (t) => {
  const { client } = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'], shops: ['sk'] });
  const [c] = await awaiting(t, 1, 'cz');
  const page = await client.get('/app/affiliate/commissions');
  t.notRegex(page.text, new RegExp(`data-id="${c.id}"`));
  const res = await client.post(`/app/affiliate/commissions/${c.id}/decide`, { _csrf: csrfOf(page.text), decision: 'approve' });
  t.is(res.status, 404);
});

test('When a manager decides a waiting partner in the queue, then the same rules as the MCP tool apply and the partner\'s HTML is shown escaped', async (t) => {
  const db = t.context.database.db;
  const [p] = await db('affiliate_partners').insert({
    account_id: t.context.accountId, handle: `QUEUE${Date.now() % 1e6}`, state: 'waiting', state_changed_at: TEST_NOW, kind: 'blogger', language: 'sk', registered_at: TEST_NOW,
    web: '<script>alert(1)</script>', email: 'queue@partners.example', contact_name: 'Queue Person',
  }).returning(['id', 'handle']);
  const { client } = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'] });
  const page = await client.get('/app/affiliate/partners');
  t.true(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  t.false(page.text.includes('<script>alert(1)</script>'));
  const suspend = await client.post(`/app/affiliate/partners/${p.id}/state`, { _csrf: csrfOf(page.text), market: 'sk', action: 'suspend', reason: 'x' });
  t.is(suspend.status, 409, 'a waiting partner cannot be suspended');
  const approve = await client.post(`/app/affiliate/partners/${p.id}/state`, { _csrf: csrfOf(page.text), market: 'sk', action: 'approve', reason: '' });
  t.is(approve.status, 200);
  t.regex(approve.text, /waiting → approved \(e-mail queued\)/);
  t.is((await db('email_outbox').where({ recipient: 'queue@partners.example' }).count({ n: '*' }).first())!.n, '1');
});

test('When a person limited to shop sk acts on shop cz\'s payouts, partners or on account-wide runs, then each is refused or not found and nothing changes', async (t) => {
  const db = t.context.database.db;
  const { client } = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'], shops: ['sk'] });
  const cz = await db('shops').where({ account_id: t.context.accountId, code: 'cz' }).first('id');
  const czPartner = await db('affiliate_conversions').where({ shop_id: cz.id }).first('partner_id');
  const [payout] = await db('affiliate_payouts').insert({
    account_id: t.context.accountId, shop_id: cz.id, partner_id: czPartner.partner_id, currency: 'CZK', amount: '1234.00', conversions: 0,
    state: 'requested', period_from: '2026-08-01', period_to: '2026-08-31', created_at: TEST_NOW, drawn_up_by: 'test',
  }).returning('id');
  const page = await client.get('/app/affiliate/payouts');
  t.is(page.status, 200);
  t.notRegex(page.text, new RegExp(`data-id="${payout.id}"`), 'no payout of shop cz in the list');
  t.is((await client.get(`/app/affiliate/payouts/${payout.id}/statement.pdf`)).status, 404);
  for (const action of ['confirm', 'paid', 'cancel']) {
    const res = await client.post(`/app/affiliate/payouts/${payout.id}/${action}`, { _csrf: csrfOf(page.text), reference: 'x' });
    t.is(res.status, 404, action);
    t.regex(res.text, /NOT_FOUND/, action);
  }
  t.is((await db('affiliate_payouts').where({ id: payout.id }).first('state')).state, 'requested');
  // A run draws up every shop of the account: refused for a person limited to some.
  const before = await db('affiliate_payouts').where({ account_id: t.context.accountId }).count({ n: '*' }).first();
  const run = await client.post('/app/affiliate/payouts/draw-up', { _csrf: csrfOf(page.text), period: '2026-09' });
  t.is(run.status, 403);
  t.regex(run.text, /covers every shop of the account/);
  t.deepEqual(await db('affiliate_payouts').where({ account_id: t.context.accountId }).count({ n: '*' }).first(), before);
  // A partner is decided for a shop the person may act for: cz refused, sk goes through.
  const [p] = await db('affiliate_partners').insert({
    account_id: t.context.accountId, handle: `LIMITED${Date.now() % 1e6}`, state: 'waiting', state_changed_at: TEST_NOW, kind: 'blogger', language: 'sk', registered_at: TEST_NOW,
  }).returning('id');
  const forCz = await client.post(`/app/affiliate/partners/${p.id}/state`, { _csrf: csrfOf(page.text), market: 'cz', action: 'approve', reason: '' });
  t.is(forCz.status, 403);
  t.regex(forCz.text, /SHOP_FORBIDDEN/);
  t.is((await db('affiliate_partners').where({ id: p.id }).first('state')).state, 'waiting');
  const forSk = await client.post(`/app/affiliate/partners/${p.id}/state`, { _csrf: csrfOf(page.text), market: 'sk', action: 'approve', reason: '' });
  t.is(forSk.status, 200, forSk.text.slice(0, 300));
  t.is((await db('affiliate_partners').where({ id: p.id }).first('state')).state, 'approved');
  // Document wording is account-wide (A13): publishing a draft is refused to a person limited to some shops.
  const draft = await db('affiliate_document_versions as v').join('affiliate_documents as d', 'd.id', 'v.document_id')
    .where({ 'd.account_id': t.context.accountId, 'v.status': 'draft' }).first('v.id');
  const publish = await client.post(`/app/affiliate/documents/versions/${draft.id}/publish`, { _csrf: csrfOf(page.text) });
  t.is(publish.status, 403);
  t.regex(publish.text, /limited to some shops cannot change it/);
  t.is((await db('affiliate_document_versions').where({ id: draft.id }).first('status')).status, 'draft');
});
