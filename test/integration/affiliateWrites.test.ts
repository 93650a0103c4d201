/**
 * The affiliate writes over MCP (issue 13 point 6): each tool's rules — partner transitions, reasons, code reservations
 * (one code, one partner), financial settings refused, sanitised HTML and unknown variables, articles never deleted, a
 * reward never invented, the document policy — and the e-mail each produces, read from the outbox. Tools are called
 * with the official 2026-07-28 client; the last tests repeat calls through a 2025-11-25 client. Tests that change
 * account-wide records (settings, the document policy, an event's template) are serial, so they run first and put
 * things back before the concurrent ones.
 */
import { appTest } from '../helpers/app.js';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import type { Db } from '../../src/db/knex.js';
import { connectLegacy, connectModern, toolError } from '../helpers/mcp.js';
import { api, issueKey } from '../helpers/server.js';
import { PortalBrowser } from '../helpers/portal.js';
import { TEST_NOW } from '../helpers/constants.js';
import { PDFParse } from 'pdf-parse';

interface Extra { client: ModernClient; accountId: string; skShopId: string }

const test = appTest<Extra>({}, async ({ database, server, key }) => {
  const account = await database.db('accounts').where({ code: 'demo' }).first('id');
  const shop = await database.db('shops').where({ account_id: account.id, code: 'sk' }).first('id');
  return { client: await connectModern(server, key), accountId: String(account.id), skShopId: String(shop.id) };
});
test.after.always(async (t) => { await t.context.client?.close(); });

const call = (client: ModernClient, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
const data = (result: unknown) => {
  const r = result as { isError?: boolean; structuredContent?: { data: any }; content?: unknown };
  if (r.isError) throw new Error(`tool error: ${JSON.stringify(r.content)}`);
  return r.structuredContent!.data;
};

let seq = 0;
/** A fresh partner of the demo account in a given state (each test works on its own partners). */
async function newPartner(db: Db, accountId: string, options: { state?: string; language?: string; kind?: string; email?: string | null } = {}) {
  seq += 1;
  const handle = `TESTP${seq}${Math.floor(Math.random() * 1e6)}`;
  const [row] = await db('affiliate_partners').insert({
    account_id: accountId, handle, state: options.state ?? 'waiting', state_changed_at: TEST_NOW, kind: options.kind ?? 'blogger', language: options.language ?? 'sk',
    contact_name: `Test Person ${seq}`, email: options.email === undefined ? `${handle.toLowerCase()}@partners.example` : options.email, registered_at: TEST_NOW,
  }).returning(['id', 'handle']);
  return { id: String(row.id), handle: row.handle as string };
}

async function newCodeRequest(db: Db, shopId: string, partnerId: string, code: string) {
  const [row] = await db('affiliate_code_requests').insert({ shop_id: shopId, partner_id: partnerId, requested_code: code, state: 'pending', requested_at: TEST_NOW }).returning('id');
  return String(row.id);
}

const outboxRow = (db: Db, emailId: string) => db('email_outbox').where({ id: emailId }).first();

/** The text of a PDF attachment (pdf-parse, as the documents tests read PDFs). */
async function pdfText(bytes: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

test('When a waiting partner is approved, then the state changes and the Account approved e-mail with the agreement is in the outbox', async (t) => {
  const { db } = t.context.database;
  const p = await newPartner(db, t.context.accountId);
  const result = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'approve' }));
  t.is(result.previousState, 'waiting');
  t.is(result.state, 'approved');
  t.is(result.stateChangedAt, TEST_NOW.toISOString());
  t.is(result.email.event, 'account_approved');
  t.is(result.email.status, 'queued');
  t.deepEqual(result.email.attachments.map((a: any) => [a.documentKey, a.language, a.version, a.kind]), [['partner-agreement', 'sk', 2, 'published_text']]);
  const stored = await db('affiliate_partners').where({ id: p.id }).first('state', 'state_changed_at');
  t.is(stored.state, 'approved');

  const mail = await outboxRow(db, result.email.emailId);
  t.is(mail.recipient, `${p.handle.toLowerCase()}@partners.example`);
  t.is(mail.source, 'affiliate');
  t.is(mail.status, 'queued');
  t.is(mail.language, 'sk');
  t.is(mail.subject, 'Váš účet v programe Partner programme je schválený');
  t.true(mail.body_html.includes(`Test Person`), 'the partner\'s name is filled in');
  t.true(mail.body_html.includes(`/r/${p.handle.toLowerCase()}`), 'the partner\'s link is filled in');
  t.false(mail.body_html.includes('{{'), 'no variable is left unfilled');
  const [attachment] = mail.attachments;
  t.is(attachment.fileName, 'partner-agreement-sk-v2.pdf');
  t.is(attachment.contentType, 'application/pdf');
  const pdf = Buffer.from(attachment.content, 'base64');
  t.is(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  const text = await pdfText(pdf);
  t.true(text.includes(p.handle), 'the agreement names the partner');
  t.false(text.includes('{{'));
});

test('When a transition is not allowed or lacks its reason, then it is refused and nothing changes', async (t) => {
  const { db } = t.context.database;
  const p = await newPartner(db, t.context.accountId);
  const suspendWaiting = toolError(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'suspend', reason: 'spam' }));
  t.is(suspendWaiting.error.code, 'STATE_CONFLICT');
  t.deepEqual(suspendWaiting.error.details?.allowedFrom, ['approved']);
  const noReason = toolError(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'reject' }));
  t.is(noReason.error.code, 'MISSING_PARAMETER');
  t.is(noReason.error.details?.param, 'reason');
  const blankReason = toolError(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'reject', reason: '   ' }));
  t.is(blankReason.error.code, 'MISSING_PARAMETER');
  const back = toolError(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'return_to_waiting' }));
  t.is(back.error.code, 'STATE_CONFLICT');
  t.is((await db('affiliate_partners').where({ id: p.id }).first('state')).state, 'waiting');
  t.is((await db('email_outbox').where({ partner_id: p.id })).length, 0, 'no e-mail for a refused change');

  const unknown = toolError(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: '999999999', action: 'approve' }));
  t.is(unknown.error.code, 'NOT_FOUND');
  const badAction = toolError(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'delete' }));
  t.is(badAction.error.code, 'INVALID_PARAMETER');
});

test('When a partner goes approve → suspend → return to waiting → reject, then each step is recorded and only approval and rejection e-mail', async (t) => {
  const { db } = t.context.database;
  const p = await newPartner(db, t.context.accountId, { language: 'en' });
  const approve = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'approve' }));
  t.is(approve.email.language, 'en');
  t.is(approve.email.subject, 'Your Partner programme account is approved');
  const again = toolError(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'approve' }));
  t.is(again.error.code, 'STATE_CONFLICT');
  const suspend = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'suspend', reason: 'Bidding on the brand.' }));
  t.is(suspend.state, 'suspended');
  t.is(suspend.stateReason, 'Bidding on the brand.');
  t.is(suspend.email, null);
  const waiting = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'return_to_waiting' }));
  t.is(waiting.state, 'waiting');
  t.is(waiting.stateReason, null);
  const reject = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'reject', reason: 'Not a fit <b>for</b> us.' }));
  t.is(reject.state, 'rejected');
  t.is(reject.email.event, 'account_rejected');
  const mail = await outboxRow(db, reject.email.emailId);
  t.true(mail.body_html.includes('Reason: Not a fit &lt;b&gt;for&lt;/b&gt; us.'), 'the reason is told, escaped');
  const mails = await db('email_outbox').where({ partner_id: p.id }).orderBy('id').pluck('event');
  t.deepEqual(mails, ['account_approved', 'account_rejected']);
  // The REST read sees the state and reason.
  const rest = await api(t.context.server, `/affiliate/partners/${p.id}?market=sk`, t.context.key);
  t.is(rest.body.data.state, 'rejected');
  t.is(rest.body.data.stateReason, 'Not a fit <b>for</b> us.');
});

test.serial('When a suspended partner with a signed agreement is approved again, then the signed copy is attached; with the policy off nothing is', async (t) => {
  const { db } = t.context.database;
  // A demo partner who signed version 2 (registered after it was published) and is suspended.
  const suspended = await db('affiliate_partners as p').join('affiliate_signatures as s', 's.partner_id', 'p.id').join('affiliate_document_versions as v', 'v.id', 's.version_id')
    .where({ 'p.account_id': t.context.accountId, 'p.state': 'suspended', 'v.status': 'published' }).first('p.id', 'p.handle');
  t.truthy(suspended, 'the demo has a suspended partner who signed the current agreement');
  const approve = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: String(suspended.id), action: 'approve' }));
  t.is(approve.previousState, 'suspended');
  t.deepEqual(approve.email.attachments.map((a: any) => a.kind), ['signed_copy']);
  const mail = await outboxRow(db, approve.email.emailId);
  t.is(mail.attachments[0].fileName, 'partner-agreement-sk-v2-signed.pdf');
  t.is(mail.attachments[0].contentType, 'application/pdf');
  const signedText = await pdfText(Buffer.from(mail.attachments[0].content, 'base64'));
  t.true(signedText.includes(suspended.handle));
  t.regex(signedText, /Signed electronically by/);

  const policy = data(await call(t.context.client, 'affiliate_documents_update', { key: 'partner-agreement', emailAttachment: false }));
  t.false(policy.document.policy.emailAttachment);
  const p = await newPartner(db, t.context.accountId);
  const plain = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'approve' }));
  t.deepEqual(plain.email.attachments, []);
  const rest = await api(t.context.server, '/affiliate/documents', t.context.key);
  t.false(rest.body.data.find((d: any) => d.key === 'partner-agreement').policy.emailAttachment);
  data(await call(t.context.client, 'affiliate_documents_update', { key: 'partner-agreement', emailAttachment: true }));
  const badPolicy = toolError(await call(t.context.client, 'affiliate_documents_update', { key: 'partner-agreement', appliesTo: 'everyone' }));
  t.is(badPolicy.error.code, 'INVALID_PARAMETER');
  const wording = toolError(await call(t.context.client, 'affiliate_documents_update', { key: 'partner-agreement', text: 'New wording' }));
  t.is(wording.error.code, 'UNKNOWN_PARAMETER', 'the wording is never changed over MCP');
});

test.serial('When an event\'s e-mail is disabled or the partner has no address, then the e-mail is recorded as skipped with the reason', async (t) => {
  const { db } = t.context.database;
  data(await call(t.context.client, 'affiliate_email_templates_update', { event: 'account_rejected', enabled: false }));
  const p = await newPartner(db, t.context.accountId);
  const reject = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'reject', reason: 'Duplicate account.' }));
  t.is(reject.email.status, 'skipped');
  t.regex(reject.email.reason, /disabled/);
  t.is((await outboxRow(db, reject.email.emailId)).status, 'skipped');
  data(await call(t.context.client, 'affiliate_email_templates_update', { event: 'account_rejected', enabled: true }));

  const noMail = await newPartner(db, t.context.accountId, { email: null });
  const approve = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: noMail.id, action: 'approve' }));
  t.is(approve.email.status, 'skipped');
  t.is(approve.email.reason, 'the partner has no e-mail address');
});

test('When a code request is approved, then the code is reserved for the partner and the partner is e-mailed; a decided request cannot be decided again', async (t) => {
  const { db } = t.context.database;
  const p = await newPartner(db, t.context.accountId, { state: 'approved' });
  const requestId = await newCodeRequest(db, t.context.skShopId, p.id, `${p.handle}15`);
  const noReason = toolError(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId, decision: 'reject' }));
  t.is(noReason.error.code, 'MISSING_PARAMETER');
  t.is(noReason.error.details?.param, 'reason');
  const approved = data(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId, decision: 'approve' }));
  t.is(approved.state, 'approved');
  t.deepEqual(approved.reservation, { code: `${p.handle}15`, reservedAt: TEST_NOW.toISOString() });
  t.is(approved.email.event, 'code_request_decided');
  const mail = await outboxRow(db, approved.email.emailId);
  t.is(mail.recipient, `${p.handle.toLowerCase()}@partners.example`);
  t.true(mail.body_html.includes(`Kód ${p.handle}15 je schválený`), 'the decision is in the e-mail');
  t.truthy(await db('affiliate_code_reservations').where({ shop_id: t.context.skShopId, partner_id: p.id, code: `${p.handle}15` }).first());
  const again = toolError(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId, decision: 'reject', reason: 'changed our mind' }));
  t.is(again.error.code, 'STATE_CONFLICT');
  const rest = await api(t.context.server, '/affiliate/code-requests?market=sk', t.context.key);
  t.is(rest.body.data.find((r: any) => r.requestId === requestId).state, 'approved');
  // Another shop does not see this shop's request.
  const otherShop = toolError(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'cz', requestId, decision: 'approve' }));
  t.is(otherShop.error.code, 'NOT_FOUND');
});

test('When a code request is rejected with a reason, then the partner is told the reason and nothing is reserved', async (t) => {
  const { db } = t.context.database;
  const p = await newPartner(db, t.context.accountId, { state: 'approved', language: 'en' });
  const requestId = await newCodeRequest(db, t.context.skShopId, p.id, 'FREEBIES');
  const rejected = data(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId, decision: 'reject', reason: 'Reads like free goods.' }));
  t.is(rejected.state, 'rejected');
  t.is(rejected.reason, 'Reads like free goods.');
  t.is(rejected.reservation, null);
  const mail = await outboxRow(db, rejected.email.emailId);
  t.true(mail.body_html.includes('The code FREEBIES was not approved. Reason: Reads like free goods.'));
  t.falsy(await db('affiliate_code_reservations').whereRaw('upper(code) = ?', ['FREEBIES']).first());
});

test('When two partners want the same code, then only one gets it, also when both approvals race; a code of another partner or a coupon is refused', async (t) => {
  const { db } = t.context.database;
  const a = await newPartner(db, t.context.accountId, { state: 'approved' });
  const b = await newPartner(db, t.context.accountId, { state: 'approved' });
  const first = await newCodeRequest(db, t.context.skShopId, a.id, 'SUMMERX');
  const second = await newCodeRequest(db, t.context.skShopId, b.id, 'summerx');
  data(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId: first, decision: 'approve' }));
  const taken = toolError(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId: second, decision: 'approve' }));
  t.is(taken.error.code, 'CODE_ALREADY_RESERVED');
  t.regex(String(taken.error.details?.heldBy), new RegExp(a.handle));
  t.is((await db('affiliate_code_requests').where({ id: second }).first('state')).state, 'pending', 'the refused request stays pending');
  t.is((await db('email_outbox').where({ partner_id: b.id })).length, 0);

  // Racing approvals of one code for two partners: exactly one reservation.
  const c = await newPartner(db, t.context.accountId, { state: 'approved' });
  const d = await newPartner(db, t.context.accountId, { state: 'approved' });
  const rc = await newCodeRequest(db, t.context.skShopId, c.id, 'RACE10');
  const rd = await newCodeRequest(db, t.context.skShopId, d.id, 'RACE10');
  const other = await connectModern(t.context.server, t.context.key);
  try {
    const results = await Promise.all([
      call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId: rc, decision: 'approve' }),
      call(other, 'affiliate_code_requests_decide', { market: 'sk', requestId: rd, decision: 'approve' }),
    ]);
    const ok = results.filter((r) => !(r as { isError?: boolean }).isError);
    t.is(ok.length, 1, 'one approval wins');
    t.is(toolError(results.find((r) => (r as { isError?: boolean }).isError)!).error.code, 'CODE_ALREADY_RESERVED');
  } finally {
    await other.close();
  }
  t.is((await db('affiliate_code_reservations').where({ shop_id: t.context.skShopId, code: 'RACE10' })).length, 1);

  // A code that is already another partner's discount code (any case), or an existing coupon of the shop.
  const existing = await db('affiliate_discount_codes').where({ shop_id: t.context.skShopId }).first('code');
  const e = await newPartner(db, t.context.accountId, { state: 'approved' });
  const re = await newCodeRequest(db, t.context.skShopId, e.id, existing.code.toLowerCase());
  t.is(toolError(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId: re, decision: 'approve' })).error.code, 'CODE_ALREADY_RESERVED');
  const coupon = await db('coupons as c').where({ 'c.shop_id': t.context.skShopId })
    .whereNotExists(db('affiliate_discount_codes as d').whereRaw('d.shop_id = c.shop_id and upper(d.code) = upper(c.code)')).first('c.code');
  const rf = await newCodeRequest(db, t.context.skShopId, e.id, coupon.code);
  const couponTaken = toolError(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId: rf, decision: 'approve' }));
  t.is(couponTaken.error.code, 'CODE_ALREADY_RESERVED');
  t.is(couponTaken.error.details?.heldBy, 'an existing coupon of the shop');

  // A code for a partner who is not approved is refused.
  const w = await newPartner(db, t.context.accountId);
  const rw = await newCodeRequest(db, t.context.skShopId, w.id, 'WAITING1');
  t.is(toolError(await call(t.context.client, 'affiliate_code_requests_decide', { market: 'sk', requestId: rw, decision: 'approve' })).error.code, 'STATE_CONFLICT');
});

test.serial('When a financial setting is named, then the whole call is refused and nothing changes; non-financial settings change', async (t) => {
  const before = (await api(t.context.server, '/affiliate/settings', t.context.key)).body.data;
  for (const field of ['commissions', 'commissionBase', 'defaultCommissionPercent', 'payouts', 'referrals', 'clicks']) {
    const refused = toolError(await call(t.context.client, 'affiliate_settings_update', { name: 'Renamed', [field]: field === 'commissions' ? { defaultPercent: '20' } : 5 }));
    t.is(refused.error.code, 'FINANCIAL_SETTING_READ_ONLY', field);
    t.deepEqual(refused.error.details?.params, [field]);
  }
  t.deepEqual((await api(t.context.server, '/affiliate/settings', t.context.key)).body.data, before, 'nothing changed, not even the name');

  const updated = data(await call(t.context.client, 'affiliate_settings_update', {
    name: 'Partneri <i>Demo</i>', autoApprovePartners: true, contactPerson: { name: 'Eva', email: 'eva@demo.example' },
    colours: { primaryColour: '#112233' }, privacyPolicyUrl: 'https://demo.example/privacy', registration: [{ shop: 'cz', open: false, closedReason: 'Paused for the summer.' }],
  }));
  t.is(updated.settings.name, 'Partneri Demo', 'tags are removed from the name');
  t.true(updated.settings.registration.autoApprovePartners);
  t.deepEqual(updated.settings.contactPerson, { name: 'Eva', email: 'eva@demo.example' });
  t.deepEqual(updated.settings.colours, { primaryColour: '#112233' });
  t.is(updated.settings.commissions.defaultPercent, before.commissions.defaultPercent);
  t.deepEqual(updated.registration, [{ market: 'cz', registration: { open: false, closedReason: 'Paused for the summer.' } }]);
  const portals = (await api(t.context.server, '/affiliate/portal', t.context.key)).body.data.portals;
  t.false(portals.find((p: any) => p.market === 'cz').registration.open);

  const noReason = toolError(await call(t.context.client, 'affiliate_settings_update', { registration: [{ shop: 'cz', open: false }] }));
  t.is(noReason.error.code, 'MISSING_PARAMETER');
  const badColour = toolError(await call(t.context.client, 'affiliate_settings_update', { colours: { primaryColour: 'red' } }));
  t.is(badColour.error.code, 'INVALID_PARAMETER');
  const httpLink = toolError(await call(t.context.client, 'affiliate_settings_update', { privacyPolicyUrl: 'javascript:alert(1)' }));
  t.is(httpLink.error.code, 'INVALID_PARAMETER');
  const nothing = toolError(await call(t.context.client, 'affiliate_settings_update', {}));
  t.is(nothing.error.code, 'MISSING_PARAMETER');

  // Account-wide settings go back, so the other tests' e-mails keep the programme's name.
  data(await call(t.context.client, 'affiliate_settings_update', { name: before.name, registration: [{ shop: 'cz', open: true }] }));
  const skOnly = await issueKey(t.context.database.db, { shops: ['sk'] });
  const limited = await connectModern(t.context.server, skOnly);
  try {
    const forbidden = toolError(await call(limited, 'affiliate_settings_update', { registration: [{ shop: 'cz', open: true }] }));
    t.is(forbidden.error.code, 'SHOP_FORBIDDEN');
    const forbiddenDecision = toolError(await call(limited, 'affiliate_partners_set_state', { market: 'cz', partnerId: '1', action: 'approve' }));
    t.is(forbiddenDecision.error.code, 'SHOP_FORBIDDEN');
  } finally {
    await limited.close();
  }
});

test('When a portal page is written, then its HTML is sanitised, unknown variables are listed, and the default can be restored', async (t) => {
  const written = data(await call(t.context.client, 'affiliate_portal_pages_update', {
    market: 'sk', page: 'programme_description', language: 'sk',
    html: '<h2 onclick="steal()">Program {{programme.name}}</h2><script>alert(1)</script><p>Kód: {{partner.discount_code}} {{partner.tiktok}} <a href="javascript:alert(1)">x</a> <a href="{{partner.link}}">link</a></p><p>{{payout.amount}}</p>',
  }));
  t.is(written.status, 'published');
  t.true(written.sanitised);
  t.false(written.html.includes('<script'));
  t.false(written.html.includes('onclick'));
  t.false(written.html.includes('javascript:'));
  t.true(written.html.includes('<a href="{{partner.link}}">link</a>'), 'a variable as a link stays');
  t.deepEqual(written.unknownVariables, ['partner.tiktok']);
  t.deepEqual(written.variablesNotOnSurface, ['payout.amount']);
  t.true(written.variables.includes('programme.name'));
  const portal = (await api(t.context.server, '/affiliate/portal', t.context.key)).body.data.portals.find((p: any) => p.market === 'sk');
  t.is(portal.texts.find((x: any) => x.page === 'programme_description' && x.language === 'sk').status, 'published');

  const draft = data(await call(t.context.client, 'affiliate_portal_pages_update', { market: 'sk', page: 'login', language: 'en', html: '<p>Welcome back</p>', publish: false }));
  t.is(draft.status, 'draft');
  t.false(draft.sanitised);
  // A draft is not shown to partners (AW6): the sign-in page keeps the built-in wording until the text is published.
  const signIn = async () => (await new PortalBrowser(t.context.server.baseUrl, { language: 'en' }).get('/portal/demo/sk/sign-in')).html;
  t.false((await signIn()).includes('Welcome back'), 'the draft is not on the portal');
  t.is(data(await call(t.context.client, 'affiliate_portal_pages_update', { market: 'sk', page: 'login', language: 'en', html: '<p>Welcome back</p>' })).status, 'published');
  t.true((await signIn()).includes('<p>Welcome back</p>'), 'the published text is');
  t.is(data(await call(t.context.client, 'affiliate_portal_pages_update', { market: 'sk', page: 'login', language: 'en', restoreDefault: true })).status, 'default');
  t.false((await signIn()).includes('Welcome back'), 'the default is back');
  const restored = data(await call(t.context.client, 'affiliate_portal_pages_update', { market: 'sk', page: 'programme_description', language: 'sk', restoreDefault: true }));
  t.is(restored.status, 'default');
  t.is(restored.html, null);
  const both = toolError(await call(t.context.client, 'affiliate_portal_pages_update', { market: 'sk', page: 'login', language: 'sk', html: '<p>x</p>', restoreDefault: true }));
  t.is(both.error.code, 'INVALID_PARAMETER_COMBINATION');
  const badPage = toolError(await call(t.context.client, 'affiliate_portal_pages_update', { market: 'sk', page: 'checkout', language: 'sk', html: '<p>x</p>' }));
  t.is(badPage.error.code, 'INVALID_PARAMETER');
});

test('When an article is created, then it exists in all languages at once, sanitised, with unknown variables listed; one language missing or a used key is refused', async (t) => {
  const created = data(await call(t.context.client, 'affiliate_articles_create', {
    key: 'tiktok-tips',
    translations: {
      sk: { title: 'Tipy pre TikTok', slug: 'tipy-tiktok', html: '<p>Použite {{partner.discount_code}} a {{partner.tiktok}}</p><img src=x onerror="alert(1)">' },
      en: { title: 'TikTok <b>tips</b>', slug: 'tiktok-tips', html: '<p>Use {{partner.discount_code}}</p>' },
    },
  }));
  t.true(created.sanitised);
  t.deepEqual(created.unknownVariables, ['partner.tiktok']);
  t.false(created.article.isDefault);
  t.true(created.article.enabled);
  const byLanguage = Object.fromEntries(created.article.translations.map((x: any) => [x.language, x]));
  t.deepEqual(Object.keys(byLanguage).sort(), ['en', 'sk']);
  t.true(created.article.translations.every((x: any) => x.status === 'custom'));
  t.false(byLanguage.sk.html.includes('onerror'));
  t.is(byLanguage.en.title, 'TikTok tips');
  const list = (await api(t.context.server, '/affiliate/articles', t.context.key)).body.data;
  t.is(list[list.length - 1].key, 'tiktok-tips', 'placed last');

  const again = toolError(await call(t.context.client, 'affiliate_articles_create', { key: 'tiktok-tips', translations: { sk: { title: 'a', slug: 'a', html: 'a' }, en: { title: 'a', slug: 'a', html: 'a' } } }));
  t.is(again.error.code, 'ALREADY_EXISTS');
  const oneLanguage = toolError(await call(t.context.client, 'affiliate_articles_create', { key: 'only-sk', translations: { sk: { title: 'a', slug: 'a', html: 'a' } } }));
  t.true(['MISSING_PARAMETER', 'INVALID_PARAMETER'].includes(oneLanguage.error.code));
  t.is(oneLanguage.error.details?.param, 'translations.en');
  t.falsy(await t.context.database.db('affiliate_articles').where({ key: 'only-sk' }).first());
});

test('When an article is edited in one language or restored, then only that language changes; a custom article has no default to restore', async (t) => {
  const edited = data(await call(t.context.client, 'affiliate_articles_update', { key: 'getting-started', language: 'en', html: '<p>Hi {{partner.handle}} {{bogus}}</p>' }));
  t.deepEqual(edited.unknownVariables, ['bogus']);
  t.is(edited.article.translations.length, 1);
  t.is(edited.article.translations[0].status, 'custom');
  t.is(edited.article.translations[0].title, 'Getting started', 'the title is kept');
  const full = (await api(t.context.server, '/affiliate/articles/getting-started', t.context.key)).body.data;
  t.is(full.translations.find((x: any) => x.language === 'sk').status, 'default', 'the other language is untouched');

  const restored = data(await call(t.context.client, 'affiliate_articles_update', { key: 'getting-started', language: 'en', restoreDefault: true }));
  t.is(restored.article.translations[0].status, 'default');
  t.is(restored.article.translations[0].html, '<h2>Welcome to {{programme.name}}</h2><p>Share your link {{partner.link}} or your code {{partner.discount_code}}.</p>');
  t.deepEqual(restored.unknownVariables, []);

  const custom = toolError(await call(t.context.client, 'affiliate_articles_update', { key: 'brand-guidelines', language: 'sk', restoreDefault: true }));
  t.is(custom.error.code, 'STATE_CONFLICT');
  const neither = toolError(await call(t.context.client, 'affiliate_articles_update', { key: 'getting-started', language: 'sk' }));
  t.is(neither.error.code, 'INVALID_PARAMETER_COMBINATION');
  const missing = toolError(await call(t.context.client, 'affiliate_articles_update', { key: 'no-such-article', language: 'sk', title: 'x' }));
  t.is(missing.error.code, 'NOT_FOUND');
});

test('When a default article is disabled, then it is kept (never deleted) and can be enabled again; no tool deletes an article', async (t) => {
  const defaults = async () => (await api(t.context.server, '/affiliate/articles', t.context.key)).body.data.filter((a: any) => a.isDefault).map((a: any) => a.key);
  const before = await defaults();
  const disabled = data(await call(t.context.client, 'affiliate_articles_set_state', { key: 'commission-rules', enabled: false }));
  t.false(disabled.article.enabled);
  t.true(disabled.article.isDefault);
  const list = (await api(t.context.server, '/affiliate/articles', t.context.key)).body.data;
  t.deepEqual(await defaults(), before, 'nothing was deleted');
  t.false(list.find((a: any) => a.key === 'commission-rules').enabled);
  const enabled = data(await call(t.context.client, 'affiliate_articles_set_state', { key: 'commission-rules', enabled: true }));
  t.true(enabled.article.enabled);
  t.true(enabled.article.translations.every((x: any) => x.html.length > 0), 'the wording is intact');
  const tools = (await t.context.client.listTools()).tools.map((tool) => tool.name);
  t.false(tools.some((name) => name.startsWith('affiliate_') && /delete|remove/.test(name)));
  const annotations = (await t.context.client.listTools()).tools.find((tool) => tool.name === 'affiliate_articles_set_state')!.annotations!;
  t.false(annotations.destructiveHint);
});

test('When an e-mail template is edited, then subject and body are stored sanitised with unknown variables listed; editing needs a language', async (t) => {
  const updated = data(await call(t.context.client, 'affiliate_email_templates_update', {
    event: 'code_request_decided', language: 'en', subject: 'About {{partner.discount_code}} <b>now</b>', bodyHtml: '<p>Hi {{partner.name}} {{partner.shoe_size}}</p><style>p{}</style>',
  }));
  t.true(updated.sanitised);
  t.deepEqual(updated.unknownVariables, ['partner.shoe_size']);
  const [template] = updated.templates;
  t.is(template.subject, 'About {{partner.discount_code}} now');
  t.is(template.bodyHtml, '<p>Hi {{partner.name}} {{partner.shoe_size}}</p>');
  t.true(template.customised);
  const noLanguage = toolError(await call(t.context.client, 'affiliate_email_templates_update', { event: 'code_request_decided', subject: 'x' }));
  t.is(noLanguage.error.code, 'MISSING_PARAMETER');
  t.is(noLanguage.error.details?.param, 'language');
  const badEvent = toolError(await call(t.context.client, 'affiliate_email_templates_update', { event: 'birthday', enabled: false }));
  t.is(badEvent.error.code, 'INVALID_PARAMETER');
});

// Serial: it adds campaigns to sk, whose count the concurrent campaign test compares before and after its own.
test.serial('When a campaign is created without an approval, then its conversions are approved manually; with approval automatic they are automatic (AW6)', async (t) => {
  const db = t.context.database.db;
  const plain = data(await call(t.context.client, 'affiliate_campaigns_create', { market: 'sk', name: 'No approval given', reward: { type: 'percent', percent: 4 } })).campaign;
  t.is(plain.conversionApproval, 'manual');
  t.is((await db('affiliate_campaigns').where({ id: plain.campaignId }).first('approval')).approval, 'manual');
  const automatic = data(await call(t.context.client, 'affiliate_campaigns_create', { market: 'sk', name: 'Automatic approval', reward: { type: 'percent', percent: 4 }, approval: 'automatic' })).campaign;
  t.is(automatic.conversionApproval, 'automatic');
  t.is((await db('affiliate_campaigns').where({ id: automatic.campaignId }).first('approval')).approval, 'automatic');
  // REST reads the same defaults back.
  t.is((await api(t.context.server, `/affiliate/campaigns/${plain.campaignId}?market=sk`, t.context.key)).body.data.conversionApproval, 'manual');
});

test('When a campaign is created without a reward, then it is refused (never invented); with one it is created and can be updated', async (t) => {
  const noReward = toolError(await call(t.context.client, 'affiliate_campaigns_create', { market: 'sk', name: 'Autumn' }));
  t.is(noReward.error.code, 'MISSING_PARAMETER');
  t.is(noReward.error.details?.param, 'reward');
  const noValue = toolError(await call(t.context.client, 'affiliate_campaigns_create', { market: 'sk', name: 'Autumn', reward: { type: 'percent' } }));
  t.is(noValue.error.code, 'INVALID_PARAMETER');
  const zero = toolError(await call(t.context.client, 'affiliate_campaigns_create', { market: 'sk', name: 'Autumn', reward: { type: 'fixed', amount: 0 } }));
  t.is(zero.error.code, 'INVALID_PARAMETER');
  const count = await t.context.database.db('affiliate_campaigns').where({ shop_id: t.context.skShopId }).count<{ n: number }[]>({ n: '*' });

  const created = data(await call(t.context.client, 'affiliate_campaigns_create', {
    market: 'sk', name: 'Autumn', reward: { type: 'percent', percent: 12.5 }, approval: 'automatic', descriptions: { sk: '<p>Jeseň {{shop.name}}</p>' },
  }));
  const c = created.campaign;
  t.is(c.name, 'Autumn');
  t.is(c.reward.type, 'percent');
  t.is(c.attributionWindowDays, 30, 'the window is the programme\'s click window');
  t.is(c.reward.percent, '12.50');
  t.deepEqual(c.availability, { to: 'all', partnerIds: [] });
  t.is(c.conversionApproval, 'automatic');
  t.true(c.enabled);
  const rest = await api(t.context.server, `/affiliate/campaigns/${c.campaignId}?market=sk`, t.context.key);
  // Counts move with other tests' partners; everything else is the same record.
  t.deepEqual({ ...rest.body.data, counts: null }, { ...c, counts: null });
  const after = await t.context.database.db('affiliate_campaigns').where({ shop_id: t.context.skShopId }).count<{ n: number }[]>({ n: '*' });
  t.is(Number(after[0].n), Number(count[0].n) + 1, 'one campaign and only after a reward was given');

  const partner = await newPartner(t.context.database.db, t.context.accountId, { state: 'approved' });
  const updated = data(await call(t.context.client, 'affiliate_campaigns_update', {
    market: 'sk', campaignId: c.campaignId, reward: { type: 'fixed', amount: 3.5 }, availability: 'chosen', partnerIds: [partner.id], enabled: false, descriptions: { sk: null, en: '<p>Autumn</p>' },
  }));
  t.is(updated.campaign.reward.type, 'fixed');
  t.deepEqual(updated.campaign.availability, { to: 'chosen', partnerIds: [partner.id] });
  t.false(updated.campaign.enabled);
  t.deepEqual(updated.campaign.descriptions, { en: '<p>Autumn</p>' });
  t.is(updated.campaign.counts.partners, 1);
  const chosenWithout = toolError(await call(t.context.client, 'affiliate_campaigns_update', { market: 'sk', campaignId: c.campaignId, availability: 'all', partnerIds: [partner.id] }));
  t.is(chosenWithout.error.code, 'INVALID_PARAMETER_COMBINATION');
  const otherShop = toolError(await call(t.context.client, 'affiliate_campaigns_update', { market: 'cz', campaignId: c.campaignId, name: 'x' }));
  t.is(otherShop.error.code, 'NOT_FOUND');
});

test('When the tools are listed, then each affiliate write has affiliate:write, honest annotations, and is absent for read_only or without the scope', async (t) => {
  const tools = (await t.context.client.listTools()).tools;
  const writes = tools.filter((tool) => /^affiliate_.*_(set_state|decide|update|create)$/.test(tool.name));
  t.deepEqual(writes.map((tool) => tool.name).sort(), [
    'affiliate_articles_create', 'affiliate_articles_set_state', 'affiliate_articles_update', 'affiliate_campaigns_create', 'affiliate_campaigns_update',
    'affiliate_code_requests_decide', 'affiliate_documents_update', 'affiliate_email_templates_update', 'affiliate_partners_set_state',
    'affiliate_portal_pages_update', 'affiliate_settings_update',
  ]);
  for (const tool of writes) t.false(tool.annotations?.readOnlyHint, tool.name);
  const decide = tools.find((tool) => tool.name === 'affiliate_partners_set_state')!;
  t.like(decide.annotations, { destructiveHint: true, idempotentHint: false, openWorldHint: true });

  const readOnly = await issueKey(t.context.database.db, { writeMode: 'read_only' });
  const readOnlyOnly = await issueKey(t.context.database.db, { scopes: ['affiliate:read'] });
  for (const key of [readOnly, readOnlyOnly]) {
    const client = await connectModern(t.context.server, key);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      t.false(names.some((name) => writes.some((w) => w.name === name)));
      t.true(names.includes('affiliate_settings'));
      // The tool does not exist for this client: the call is a protocol error, and nothing changes.
      await t.throwsAsync(call(client, 'affiliate_settings_update', { name: 'Not allowed' }));
    } finally {
      await client.close();
    }
  }
  t.not((await api(t.context.server, '/affiliate/settings', t.context.key)).body.data.name, 'Not allowed');
  // REST stays GET-only: a write has no route.
  const post = await api(t.context.server, '/affiliate/settings', t.context.key, { method: 'POST' });
  t.is(post.status, 405);
});

test('When the same calls come through a 2025-11-25 client, then they behave and answer as through a 2026-07-28 client', async (t) => {
  const { db } = t.context.database;
  const { client: legacy } = await connectLegacy(t.context.server, t.context.key, '2025-11-25');
  try {
    const names = (await legacy.listTools()).tools.map((tool) => tool.name);
    t.true(names.includes('affiliate_partners_set_state') && names.includes('affiliate_campaigns_create'));
    const p = await newPartner(db, t.context.accountId);
    const q = await newPartner(db, t.context.accountId);
    const viaLegacy = data(await legacy.callTool({ name: 'affiliate_partners_set_state', arguments: { market: 'sk', partnerId: p.id, action: 'approve' } }));
    const viaModern = data(await call(t.context.client, 'affiliate_partners_set_state', { market: 'sk', partnerId: q.id, action: 'approve' }));
    const shape = (r: any) => ({ ...r, partnerId: 'x', handle: 'x', email: { ...r.email, emailId: 'x', attachments: r.email.attachments.map((a: any) => ({ ...a })) } });
    t.deepEqual(shape(viaLegacy), shape(viaModern));
    t.is((await outboxRow(db, viaLegacy.email.emailId)).event, 'account_approved');

    const refusedLegacy = toolError(await legacy.callTool({ name: 'affiliate_settings_update', arguments: { commissionBase: 'without_vat' } }));
    const refusedModern = toolError(await call(t.context.client, 'affiliate_settings_update', { commissionBase: 'without_vat' }));
    t.is(refusedLegacy.error.code, 'FINANCIAL_SETTING_READ_ONLY');
    t.deepEqual({ ...refusedLegacy.error }, { ...refusedModern.error });

    const rewardLegacy = toolError(await legacy.callTool({ name: 'affiliate_campaigns_create', arguments: { market: 'sk', name: 'No reward' } }));
    t.is(rewardLegacy.error.code, 'MISSING_PARAMETER');
    const article = data(await legacy.callTool({ name: 'affiliate_articles_create', arguments: {
      key: 'legacy-article', translations: { sk: { title: 'A', slug: 'a', html: '<p onclick="x()">{{nope}}</p>' }, en: { title: 'A', slug: 'a', html: '<p>A</p>' } },
    } }));
    t.deepEqual(article.unknownVariables, ['nope']);
    t.true(article.sanitised);
    const w = await newPartner(db, t.context.accountId, { state: 'approved' });
    const requestId = await newCodeRequest(db, t.context.skShopId, w.id, 'LEGACY5');
    const decided = data(await legacy.callTool({ name: 'affiliate_code_requests_decide', arguments: { market: 'sk', requestId, decision: 'approve' } }));
    t.is(decided.reservation.code, 'LEGACY5');
  } finally {
    await legacy.close();
  }
});

test('When the caller lacks personal-data:read, then the decision\'s answer has no rendered subject (it may carry the partner\'s name); the e-mail is queued all the same', async (t) => {
  const { db } = t.context.database;
  const key = await issueKey(db, { scopes: ['affiliate:write', 'affiliate:read'] });
  const client = await connectModern(t.context.server, key);
  try {
    const p = await newPartner(db, t.context.accountId);
    const result = data(await call(client, 'affiliate_partners_set_state', { market: 'sk', partnerId: p.id, action: 'approve' }));
    t.false('subject' in result.email);
    t.is(result.email.status, 'queued');
    t.is((await outboxRow(db, result.email.emailId)).recipient, `${p.handle.toLowerCase()}@partners.example`);
    t.false(JSON.stringify(result).includes('@'), 'no address in the answer');
  } finally {
    await client.close();
  }
});

test.serial('When a campaign names a partner twice, then the campaign is theirs once, on create and on update (partnerIds is a set)', async (t) => {
  const db = t.context.database.db;
  const [p, q] = [await newPartner(db, t.context.accountId, { state: 'approved' }), await newPartner(db, t.context.accountId, { state: 'approved' })];
  const created = data(await call(t.context.client, 'affiliate_campaigns_create', {
    market: 'sk', name: 'Twice', reward: { type: 'percent', percent: 5 }, availability: 'chosen', partnerIds: [p.id, p.id],
  })).campaign;
  t.deepEqual(created.availability, { to: 'chosen', partnerIds: [p.id] });
  const updated = data(await call(t.context.client, 'affiliate_campaigns_update', { market: 'sk', campaignId: created.campaignId, partnerIds: [q.id, p.id, q.id] })).campaign;
  t.deepEqual([...updated.availability.partnerIds].sort(), [p.id, q.id].sort());
  t.is(Number((await db('affiliate_campaign_partners').where({ campaign_id: created.campaignId }).count<{ n: string }[]>({ n: '*' }))[0].n), 2);
});

test.serial('When two assistants create an article of one key at the same moment, then one is created and the other is told ALREADY_EXISTS', async (t) => {
  const translations = { sk: { title: 'Súbeh', slug: 'subeh', html: '<p>a</p>' }, en: { title: 'Race', slug: 'race', html: '<p>a</p>' } };
  // Several pairs, so that at least some really meet at the unique index rather than one after the other.
  for (let i = 0; i < 5; i += 1) {
    const key = `race-${i}-${Math.floor(Math.random() * 1e6)}`;
    const answers = await Promise.all([0, 1].map(() => call(t.context.client, 'affiliate_articles_create', { key, translations })));
    const errors = answers.filter((a) => (a as { isError?: boolean }).isError).map((a) => toolError(a).error.code);
    t.deepEqual(errors, ['ALREADY_EXISTS'], `pair ${i}: one created, one ALREADY_EXISTS`);
  }
});
