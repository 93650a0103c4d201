/**
 * The outbox's SMTP sender (D30) against a real local SMTP server (the `smtp-server` package): a partner's approval
 * e-mail arrives with its subject, recipient and the agreement attached; an automation e-mail goes to the account's
 * people; a refused e-mail is retried after a delay and ends `failed` after the last attempt; without a due e-mail
 * nothing is sent.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { PDFParse } from 'pdf-parse';
import { SMTPServer } from 'smtp-server';
import { appTest } from '../helpers/app.js';
import { makePerson } from '../helpers/application.js';
import { TEST_NOW } from '../helpers/constants.js';
import { createTransport, sendDueEmails, sendNextEmail, startEmailSender } from '../../src/email/sender.js';
import { queueEmail } from '../../src/email/outbox.js';
import { setPartnerState } from '../../src/affiliate/writes/partners.js';
import { findShopByCode } from '../../src/queries/shops.js';

interface Received { from: string; to: string[]; raw: string }
interface Extra { smtp: SMTPServer; port: number; received: Received[]; refuse: { on: boolean }; logins: Array<{ user: string; pass: string }> }

const test = appTest<Extra>({}, async () => {
  const received: Received[] = [];
  const refuse = { on: false };
  const logins: Array<{ user: string; pass: string }> = [];
  const smtp = new SMTPServer({
    authOptional: true, allowInsecureAuth: true, disabledCommands: ['STARTTLS'], logger: false,
    onAuth(auth, _session, callback) {
      logins.push({ user: auth.username ?? '', pass: auth.password ?? '' });
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      if (refuse.on) return callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return { smtp, port: (smtp.server.address() as AddressInfo).port, received, refuse, logins };
});
test.after.always(async (t) => { await new Promise<void>((resolve) => (t.context.smtp ? t.context.smtp.close(() => resolve()) : resolve())); });

const FROM = 'Partner programme <partners@demo.example>';

test.serial('When a partner is approved and the sender runs, then the e-mail arrives with the agreement attached and is marked sent', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const shop = (await findShopByCode(db, String(account.id), 'sk'))!;
  const [partner] = await db('affiliate_partners').insert({
    account_id: account.id, handle: 'SMTPTEST', state: 'waiting', state_changed_at: TEST_NOW, kind: 'blogger', language: 'en',
    contact_name: 'Sam Smtp', email: 'sam@partners.example', registered_at: TEST_NOW,
  }).returning('id');
  const result = await setPartnerState(db, { accountId: String(account.id), shop, now: TEST_NOW }, { partnerId: String(partner.id), action: 'approve' });
  t.is(result.email?.status, 'queued');

  // Credentials come from the URL, percent-decoded.
  const transport = createTransport(`smtp://mailer%40demo:p%40ss%3Aword@127.0.0.1:${t.context.port}`);
  const n = await sendDueEmails(db, transport, FROM, () => new Date());
  transport.close();
  t.true(n >= 1);
  const mail = t.context.received.find((m) => m.to.includes('sam@partners.example'));
  t.truthy(mail, 'the SMTP server received the e-mail');
  t.is(mail!.from, 'partners@demo.example');
  t.deepEqual(t.context.logins[0], { user: 'mailer@demo', pass: 'p@ss:word' });
  const parsed = await simpleParser(mail!.raw);
  t.is(parsed.subject, 'Your Partner programme account is approved');
  t.true(String(parsed.html).includes('Hello Sam Smtp'));
  // The agreement arrives as a real PDF with its own content type, its text naming the partner.
  t.deepEqual(parsed.attachments.map((a) => [a.filename, a.contentType]), [['partner-agreement-en-v1.pdf', 'application/pdf']]);
  t.is(parsed.attachments[0].content.subarray(0, 5).toString('latin1'), '%PDF-');
  const parser = new PDFParse({ data: new Uint8Array(parsed.attachments[0].content) });
  try {
    t.regex((await parser.getText()).text, /SMTPTEST/);
  } finally {
    await parser.destroy();
  }
  t.is(parsed.headers.get('x-service-email-id'), result.email!.emailId);
  const row = await db('email_outbox').where({ id: result.email!.emailId }).first();
  t.is(row.status, 'sent');
  t.is(row.attempts, 1);
  t.truthy(row.sent_at);
  // Nothing is due any more: a second run sends nothing again.
  const again = createTransport(`smtp://127.0.0.1:${t.context.port}`);
  const before = t.context.received.length;
  await sendDueEmails(db, again, FROM, () => new Date());
  again.close();
  t.is(t.context.received.length, before);
});

test.serial('When an e-mail queued before PDFs carries a text attachment without a content type, then it is still sent as text/plain', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  await queueEmail(db, {
    accountId: String(account.id), source: 'affiliate', event: 'account_approved', recipient: 'legacy@partners.example', subject: 'Legacy attachment', bodyHtml: '<p>x</p>', now: new Date(),
    attachments: [{ documentKey: 'partner-agreement', title: 'Partner agreement', language: 'en', version: 1, fileName: 'partner-agreement-en-v1.txt', kind: 'published_text', content: 'LEGACY WORDING' }],
  });
  const transport = createTransport(`smtp://127.0.0.1:${t.context.port}`);
  await sendDueEmails(db, transport, FROM, () => new Date());
  transport.close();
  const mail = t.context.received.find((m) => m.to.includes('legacy@partners.example'));
  t.truthy(mail);
  const parsed = await simpleParser(mail!.raw);
  t.deepEqual(parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString('utf8')]), [['partner-agreement-en-v1.txt', 'text/plain', 'LEGACY WORDING']]);
});

test.serial('When an e-mail is addressed to the account\'s people, then every person of the account gets it', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const a = await makePerson(db, { email: 'owner-smtp@example.com' });
  const b = await makePerson(db, { role: 'member', email: 'member-smtp@example.com' });
  const queued = await queueEmail(db, { accountId: String(account.id), source: 'automation', event: 'order_attention', dedupeKey: 'automation:test:mail', recipientGroup: 'account_people', subject: 'Order needs attention', bodyHtml: '<p>Order 1</p>', now: new Date() });
  const transport = createTransport(`smtp://127.0.0.1:${t.context.port}`);
  await sendDueEmails(db, transport, FROM, () => new Date());
  transport.close();
  const mail = t.context.received.find((m) => m.raw.includes('Order needs attention'));
  t.truthy(mail);
  t.true(mail!.to.includes(a.email) && mail!.to.includes(b.email));
  t.is((await db('email_outbox').where({ id: queued.emailId }).first()).status, 'sent');
});

test.serial('When the SMTP server refuses an e-mail, then it is retried after a delay and is failed after the last attempt', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const queued = await queueEmail(db, { accountId: String(account.id), source: 'affiliate', event: 'account_rejected', recipient: 'nobody@partners.example', subject: 'Refused', bodyHtml: '<p>x</p>', now: TEST_NOW });
  t.context.refuse.on = true;
  const transport = createTransport(`smtp://127.0.0.1:${t.context.port}`);
  try {
    const start = new Date(TEST_NOW.getTime() + 1000);
    const first = await sendNextEmail(db, transport, FROM, start, [60_000]);
    t.deepEqual(first, { emailId: queued.emailId, status: 'queued' });
    let row = await db('email_outbox').where({ id: queued.emailId }).first();
    t.is(row.attempts, 1);
    t.regex(row.last_error, /Mailbox unavailable|550/);
    t.is(row.next_attempt_at.getTime(), start.getTime() + 60_000);
    t.is(await sendNextEmail(db, transport, FROM, new Date(start.getTime() + 30_000), [60_000]), null, 'not due before its delay');
    const last = await sendNextEmail(db, transport, FROM, new Date(start.getTime() + 60_000), [60_000]);
    t.deepEqual(last, { emailId: queued.emailId, status: 'failed' });
    row = await db('email_outbox').where({ id: queued.emailId }).first();
    t.is(row.status, 'failed');
    t.is(row.attempts, 2);
  } finally {
    t.context.refuse.on = false;
    transport.close();
  }
  t.false(t.context.received.some((m) => m.to.includes('nobody@partners.example')));
});

test.serial('When the SMTP server keeps refusing, then the service retries after 1, 5, 15 and 60 minutes and fails it after the fifth attempt (AW8)', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const queued = await queueEmail(db, { accountId: String(account.id), source: 'affiliate', event: 'account_rejected', recipient: 'never@partners.example', subject: 'Refused always', bodyHtml: '<p>x</p>', now: TEST_NOW });
  t.context.refuse.on = true;
  const transport = createTransport(`smtp://127.0.0.1:${t.context.port}`);
  try {
    // The service's own schedule: no delays passed in.
    let now = new Date(TEST_NOW.getTime() + 2000);
    const delays = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      t.deepEqual(await sendNextEmail(db, transport, FROM, now), { emailId: queued.emailId, status: 'queued' }, `attempt ${attempt}`);
      const row = await db('email_outbox').where({ id: queued.emailId }).first('attempts', 'next_attempt_at');
      t.is(row.attempts, attempt);
      delays.push(row.next_attempt_at.getTime() - now.getTime());
      t.is(await sendNextEmail(db, transport, FROM, new Date(row.next_attempt_at.getTime() - 1)), null, `not due a millisecond before attempt ${attempt + 1}`);
      now = row.next_attempt_at;
    }
    t.deepEqual(delays, [60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000]);
    t.deepEqual(await sendNextEmail(db, transport, FROM, now), { emailId: queued.emailId, status: 'failed' }, 'the fifth attempt is the last');
    t.like(await db('email_outbox').where({ id: queued.emailId }).first('status', 'attempts'), { status: 'failed', attempts: 5 });
  } finally {
    t.context.refuse.on = false;
    transport.close();
  }
});

test.serial('When the sender runs in the process, then an e-mail queued later is sent without anyone calling it, and stop() ends the loop', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const sender = startEmailSender(db, { smtpUrl: `smtp://127.0.0.1:${t.context.port}`, from: FROM, idleMs: 50 });
  try {
    const queued = await queueEmail(db, { accountId: String(account.id), source: 'affiliate', event: 'payout_paid', recipient: 'loop@partners.example', subject: 'Loop', bodyHtml: '<p>loop</p>', now: new Date() });
    const deadline = Date.now() + 10_000;
    let status = 'queued';
    while (status !== 'sent' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await db('email_outbox').where({ id: queued.emailId }).first('status')).status;
    }
    t.is(status, 'sent');
    t.true(t.context.received.some((m) => m.to.includes('loop@partners.example')));
  } finally {
    await sender.stop();
  }
  const after = await queueEmail(db, { accountId: String(account.id), source: 'affiliate', event: 'payout_paid', recipient: 'after@partners.example', subject: 'After', bodyHtml: '<p>x</p>', now: new Date() });
  await new Promise((r) => setTimeout(r, 300));
  t.is((await db('email_outbox').where({ id: after.emailId }).first('status')).status, 'queued', 'a stopped sender sends nothing');
});

test.serial('When an e-mail is addressed to the account\'s people, then exactly that account\'s people get it, not another account\'s nor a disabled person', async (t) => {
  const { db } = t.context.database;
  const account = await db('accounts').where({ code: 'demo' }).first('id');
  const own = await makePerson(db, { email: 'own-people@example.com' });
  const other = await makePerson(db, { account: 'acme', email: 'other-account@example.com' });
  // A disabled person has left the account (no sessions, connections or keys): no longer one of its people.
  const left = await makePerson(db, { role: 'member', email: 'left-people@example.com' });
  await db('people').where({ id: left.id }).update({ disabled_at: new Date() });
  await queueEmail(db, { accountId: String(account.id), source: 'automation', event: 'order_attention', dedupeKey: 'automation:test:own-people', recipientGroup: 'account_people', subject: 'Only for demo people', bodyHtml: '<p>Order 2</p>', now: new Date() });
  const transport = createTransport(`smtp://127.0.0.1:${t.context.port}`);
  await sendDueEmails(db, transport, FROM, () => new Date());
  transport.close();
  const mail = t.context.received.find((m) => m.raw.includes('Only for demo people'));
  t.truthy(mail);
  t.true(mail!.to.includes(own.email));
  t.false(mail!.to.includes(other.email), 'a person of another account got the e-mail');
  t.false(mail!.to.includes(left.email), 'a disabled person got the e-mail');
  const people = (await db('people').where({ account_id: account.id }).whereNull('disabled_at').pluck('email')).sort();
  t.deepEqual([...mail!.to].sort(), people);
});
