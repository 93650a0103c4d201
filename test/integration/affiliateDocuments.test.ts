/**
 * Document wording uploaded in the application (issue 24 point 3) over real HTTP with the application's CSRF: HTML
 * (sanitised) and PDF uploads per language become drafts with their fingerprints; bad files, files over the limit,
 * people without `affiliate:manage` and another account's ids are refused with codes; publishing supersedes the
 * published version (one published per document and language, a second publish refused); and the approval e-mail
 * attaches the published agreement as a real PDF holding the wording (read back with pdf-parse).
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import PDFDocument from 'pdfkit';
import { PDFParse } from 'pdf-parse';
import { FormClient, csrfOf, makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';
import { TEST_NOW } from '../helpers/constants.js';

interface Context { database: TestDatabase; server: TestServer; accountId: string; agreementId: string }
const test = anyTest as TestFn<Context>;

/** SPEC/brief figures, written out: the upload limit is 4 MiB; the demo's agreement has sk versions 1–3 (2 published) and en version 1. */
const MAX_BYTES = 4_194_304;

const sha256 = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');

test.before(async (t) => {
  const database = await createTestDatabase();
  const account = await database.db('accounts').where({ code: 'demo' }).first('id');
  const agreement = await database.db('affiliate_documents').where({ account_id: account.id, key: 'partner-agreement' }).first('id');
  t.context = { database, server: await startApplicationServer(database.db, testApplicationOptions()), accountId: String(account.id), agreementId: String(agreement.id) };
});
test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

async function signedIn(t: { context: Context }, options: Parameters<typeof makePerson>[1]): Promise<FormClient> {
  const person = await makePerson(t.context.database.db, options);
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn(person.email, person.password);
  return client;
}
const manager = (t: { context: Context }) => signedIn(t, { role: 'member', permissions: ['affiliate:manage'] });

/** Uploads a file as the page's form does (multipart, the page's CSRF token). */
async function upload(client: FormClient, documentId: string, language: string, name: string, bytes: Buffer, type = 'application/octet-stream') {
  const page = await client.get('/app/affiliate/documents');
  const form = new FormData();
  form.append('_csrf', csrfOf(page.text));
  form.append('language', language);
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
  return client.request(`/app/affiliate/documents/${documentId}/upload`, { method: 'POST', body: form, headers: { Origin: client.baseUrl } });
}

async function publish(client: FormClient, versionId: string) {
  const page = await client.get('/app/affiliate/documents');
  return client.post(`/app/affiliate/documents/versions/${versionId}/publish`, { _csrf: csrfOf(page.text) });
}

/** A real PDF with a text layer (pdfkit's standard font), or without any text (a drawing, as a scan would be). */
function makePdf(lines: string[]): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: 50 });
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    if (lines.length === 0) doc.rect(50, 50, 200, 100).fill('#333333');
    for (const line of lines) doc.fontSize(12).text(line);
    doc.end();
  });
}

async function pdfText(bytes: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    return (await parser.getText()).text.replace(/\s+/g, ' ');
  } finally {
    await parser.destroy();
  }
}


test.serial('When a manager uploads HTML wording in Slovak, then it is sanitised and stored as draft version 4 with its fingerprints and a rendered PDF', async (t) => {
  const client = await manager(t);
  const html = '<html><head><style>p{color:red}</style><script>alert(1)</script></head><body><h2>Zmluva HTMLSK</h2>'
    + '<p onclick="steal()">Partner {{partner.handle}} súhlasí s províziou {{programme.commission_percent}} %.</p>'
    + '<ul><li>Prvý bod</li><li>Druhý <a href="javascript:alert(1)">bod</a></li></ul><img src=x onerror=alert(2)></body></html>';
  const res = await upload(client, t.context.agreementId, 'sk', 'zmluva.html', Buffer.from(html), 'text/html');
  t.is(res.status, 200, res.text.slice(0, 300));
  t.regex(res.text, /Version 4 \(sk\) uploaded as a draft from HTML; the HTML was sanitised/);
  const row = await t.context.database.db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'sk', version: 4 }).first();
  t.truthy(row);
  t.is(row.status, 'draft');
  t.is(row.source, 'upload');
  t.is(row.published_at, null);
  t.false(/script|onclick|onerror|javascript:|<img|<style/i.test(row.html), row.html);
  t.true(row.html.includes('<h2>Zmluva HTMLSK</h2>'));
  t.is(row.stored_text, 'Zmluva HTMLSK\n\nPartner {{partner.handle}} súhlasí s províziou {{programme.commission_percent}} %.\n\n• Prvý bod\n\n• Druhý bod');
  t.is(row.public_text, row.stored_text);
  // The fingerprint rules of every version: SHA-256 of the stored text, SHA-256 of the version's PDF.
  t.is(row.text_sha256, sha256(row.stored_text));
  t.is(row.file.subarray(0, 5).toString('latin1'), '%PDF-');
  t.is(row.pdf_sha256, sha256(row.file));
  t.like(row.pdf, { fileName: 'partner-agreement-sk-v4.pdf', bytes: row.file.length, sha256: row.pdf_sha256, uploadedAs: 'html' });
  t.regex(await pdfText(row.file), /Zmluva HTMLSK.*Partner \{\{partner\.handle\}\} súhlasí/);
  // The page lists it as a draft with a Publish button; the published version 2 is still the current one.
  const page = await client.get('/app/affiliate/documents');
  t.regex(page.text, new RegExp(`data-version-id="${row.id}" data-version="4" data-status="draft"`));
  t.regex(page.text, new RegExp(`/app/affiliate/documents/versions/${row.id}/publish`));
  t.regex(page.text, /data-version="2" data-status="published"/);
  // View and download give the stored PDF itself.
  const view = await fetchBytes(client, `/app/affiliate/documents/versions/${row.id}/pdf`);
  t.is(view.type, 'application/pdf');
  t.regex(view.disposition, /^inline; filename="partner-agreement-sk-v4\.pdf"$/);
  t.true(view.bytes.equals(row.file));
  const download = await fetchBytes(client, `/app/affiliate/documents/versions/${row.id}/pdf?download=1`);
  t.regex(download.disposition, /^attachment; /);
});

async function fetchBytes(client: FormClient, path: string) {
  const res = await fetch(`${client.baseUrl}${path}`, { headers: { Cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', disposition: res.headers.get('content-disposition') ?? '', bytes: Buffer.from(await res.arrayBuffer()) };
}

test.serial('When a manager uploads a PDF in English, then the file is kept byte for byte as draft version 2 and its text is extracted for signatures', async (t) => {
  const client = await manager(t);
  const pdf = await makePdf(['Partner agreement PDFWORDING-EN', 'The partner earns a commission on every order.']);
  const res = await upload(client, t.context.agreementId, 'en', 'Agreement.PDF', pdf, 'application/pdf');
  t.is(res.status, 200, res.text.slice(0, 300));
  t.regex(res.text, /Version 2 \(en\) uploaded as a draft from PDF\./);
  const row = await t.context.database.db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'en', version: 2 }).first();
  t.is(row.status, 'draft');
  t.true(row.file.equals(pdf), 'the uploaded PDF as it was uploaded');
  t.is(row.pdf_sha256, sha256(pdf));
  t.is(row.html, null);
  t.regex(row.stored_text, /Partner agreement PDFWORDING-EN\s+The partner earns a commission on every order\./);
  t.is(row.text_sha256, sha256(row.stored_text));
  t.like(row.pdf, { fileName: 'partner-agreement-en-v2.pdf', pages: 1, bytes: pdf.length, uploadedAs: 'pdf' });
});

test.serial('When the file is of another type, not really a PDF, a PDF without text, or over 4 MiB, then it is refused with DOCUMENT_FILE_INVALID and no version is made', async (t) => {
  const db = t.context.database.db;
  const client = await manager(t);
  const count = async () => Number((await db('affiliate_document_versions').where({ document_id: t.context.agreementId }).count('* as n').first())!.n);
  const before = await count();
  const cases: Array<[string, Buffer, string]> = [
    ['wording.docx', Buffer.from('PK\u0003\u0004 not wording'), 'format'],
    ['wording.txt', Buffer.from('Plain text wording'), 'format'],
    ['fake.pdf', Buffer.from('<html><body>I am HTML named pdf</body></html>'), 'not_pdf'],
    ['renamed.html', await makePdf(['A PDF renamed to .html']), 'format'],
    ['scan.pdf', await makePdf([]), 'no_text'],
    ['empty.html', Buffer.from('<script>only a script</script>'), 'empty'],
    ['broken.pdf', Buffer.from('%PDF-1.7\nthis is no PDF structure at all'), 'unreadable'],
    // One byte over the limit: refused by the upload's own check (the request's body limit leaves room for the form).
    ['large.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(MAX_BYTES + 1 - 9, 0x20)]), 'too_large'],
  ];
  for (const [name, bytes, reason] of cases) {
    const res = await upload(client, t.context.agreementId, 'sk', name, bytes);
    t.is(res.status, 400, `${name}: ${res.text.slice(0, 200)}`);
    t.true(res.text.includes('DOCUMENT_FILE_INVALID'), name);
    t.regex(res.text, REASON_MESSAGES[reason], `${name}: ${reason}`);
  }
  // Exactly at the limit the size is fine (the file is then refused for what it is, not for its size).
  const atLimit = await upload(client, t.context.agreementId, 'sk', 'limit.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(MAX_BYTES - 9, 0x20)]));
  t.is(atLimit.status, 400);
  t.false(/larger than/.test(atLimit.text), 'a file of exactly 4 MiB is not too large');
  // Far over the limit: the request body itself is refused before it is read.
  const huge = await upload(client, t.context.agreementId, 'sk', 'huge.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(MAX_BYTES + 200_000, 0x20)]));
  t.is(huge.status, 400);
  t.regex(huge.text, /DOCUMENT_FILE_INVALID/);
  const badLanguage = await upload(client, t.context.agreementId, 'de', 'ok.html', Buffer.from('<p>Vertrag</p>'));
  t.is(badLanguage.status, 400);
  t.regex(badLanguage.text, /INVALID_PARAMETER/);
  const noFile = await client.post(`/app/affiliate/documents/${t.context.agreementId}/upload`, { _csrf: csrfOf((await client.get('/app/affiliate/documents')).text), language: 'sk' });
  t.is(noFile.status, 400);
  t.regex(noFile.text, /DOCUMENT_FILE_INVALID/);
  t.is(await count(), before, 'no version was made');
});

/** What the page says for each refusal reason (it shows the code and the message). */
const REASON_MESSAGES: Record<string, RegExp> = {
  format: /Upload a \.pdf or an \.html file|a PDF named \.html|not UTF-8/, not_pdf: /is not a PDF/, no_text: /has no text/, empty: /no wording|is empty/,
  unreadable: /could not be read/, too_large: /larger than 4194304 bytes/,
};

test.serial('When a manager publishes a draft, then the published version is superseded, exactly one is published, and a second publish is refused', async (t) => {
  const db = t.context.database.db;
  const client = await manager(t);
  const draft = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'sk', version: 4 }).first('id');
  const res = await publish(client, String(draft.id));
  t.is(res.status, 200, res.text.slice(0, 300));
  t.regex(res.text, /Version 4 \(sk\) published; version 2 is superseded\./);
  const sk = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'sk' }).orderBy('version').select('version', 'status', 'published_at');
  t.deepEqual(sk.map((v) => [v.version, v.status]), [[1, 'superseded'], [2, 'superseded'], [3, 'draft'], [4, 'published']]);
  t.truthy(sk[3].published_at);
  const again = await publish(client, String(draft.id));
  t.is(again.status, 409);
  t.regex(again.text, /STATE_CONFLICT: Version 4 \(sk\) is published/);
  const superseded = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'sk', version: 2 }).first('id');
  const old = await publish(client, String(superseded.id));
  t.is(old.status, 409);
  t.regex(old.text, /is superseded/);
  // English is its own line: its version 1 stays published until an English draft is published.
  const en = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'en' }).orderBy('version').select('version', 'status');
  t.deepEqual(en.map((v) => [v.version, v.status]), [[1, 'published'], [2, 'draft']]);
  // The database holds the rule too: a second published version of one language cannot be written.
  const error = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'sk', version: 3 }).update({ status: 'published' }).catch((e: { code?: string }) => e);
  t.is((error as { code?: string }).code, '23505');
});

test.serial('When a person without affiliate:manage opens the page, then it is read only and upload and publish are refused with 403', async (t) => {
  const db = t.context.database.db;
  const reader = await signedIn(t, { role: 'member', permissions: [] });
  const page = await reader.get('/app/affiliate/documents');
  t.is(page.status, 200);
  t.regex(page.text, /data-key="partner-agreement"/);
  t.regex(page.text, /data-status="published"/);
  t.false(page.text.includes('/publish"'), 'no Publish button');
  t.false(page.text.includes('enctype="multipart/form-data"'), 'no upload form');
  const before = await db('affiliate_document_versions').count('* as n').first();
  const refused = await upload(reader, t.context.agreementId, 'sk', 'x.html', Buffer.from('<p>Reader wording</p>'));
  t.is(refused.status, 403);
  const draft = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'en', status: 'draft' }).first('id');
  const publishRefused = await publish(reader, String(draft.id));
  t.is(publishRefused.status, 403);
  t.is((await db('affiliate_document_versions').where({ id: draft.id }).first('status')).status, 'draft');
  // Reading the PDFs is for everyone signed in.
  t.is((await fetchBytes(reader, `/app/affiliate/documents/versions/${draft.id}/pdf`)).status, 200);
  // A manager limited to some shops would change every shop's wording: read only too.
  const limited = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'], shops: ['sk'] });
  t.false((await limited.get('/app/affiliate/documents')).text.includes('enctype="multipart/form-data"'));
  const limitedUpload = await upload(limited, t.context.agreementId, 'sk', 'x.html', Buffer.from('<p>Limited wording</p>'));
  t.is(limitedUpload.status, 403);
  t.regex(limitedUpload.text, /INSUFFICIENT_SCOPE/);
  t.deepEqual(await db('affiliate_document_versions').count('* as n').first(), before);
  // Without a session nothing is shown.
  const anonymous = new FormClient(t.context.server.baseUrl);
  t.not((await anonymous.get('/app/affiliate/documents')).status, 200);
});

test.serial('When a person of another account uses demo\'s document or version ids, then upload, publish and view are 404 and nothing changes', async (t) => {
  const db = t.context.database.db;
  const acme = await signedIn(t, { account: 'acme', role: 'owner' });
  const draft = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'en', status: 'draft' }).first('id');
  const before = await db('affiliate_document_versions').where({ document_id: t.context.agreementId }).orderBy('id').select('id', 'status');
  const up = await upload(acme, t.context.agreementId, 'sk', 'x.html', Buffer.from('<p>ACME wording</p>'));
  t.is(up.status, 404);
  const pub = await publish(acme, String(draft.id));
  t.is(pub.status, 404);
  const view = await fetchBytes(acme, `/app/affiliate/documents/versions/${draft.id}/pdf`);
  t.is(view.status, 404);
  t.not(view.type, 'application/pdf');
  const page = await acme.get('/app/affiliate/documents');
  t.false(page.text.includes(`data-id="${t.context.agreementId}"`), 'acme does not see demo\'s documents');
  t.deepEqual(await db('affiliate_document_versions').where({ document_id: t.context.agreementId }).orderBy('id').select('id', 'status'), before);
});

test.serial('When a partner is approved after publishing, then the e-mail attaches the agreement as a real PDF: rendered HTML with values filled in, or the uploaded PDF as is', async (t) => {
  const db = t.context.database.db;
  const client = await manager(t);
  const newPartner = async (handle: string, language: string) => (await db('affiliate_partners').insert({
    account_id: t.context.accountId, handle, state: 'waiting', state_changed_at: TEST_NOW, kind: 'blogger', language,
    contact_name: 'Doc Tester', email: `${handle.toLowerCase()}@partners.example`, registered_at: TEST_NOW,
  }).returning('id'))[0].id as string;
  const approve = async (partnerId: string) => {
    const page = await client.get('/app/affiliate/partners');
    const res = await client.post(`/app/affiliate/partners/${partnerId}/state`, { _csrf: csrfOf(page.text), action: 'approve', market: 'sk', reason: '' });
    t.is(res.status, 200, res.text.slice(0, 300));
    return (await db('email_outbox').where({ partner_id: partnerId, event: 'account_approved' }).first('attachments')).attachments;
  };

  // Slovak: the published version 4 was uploaded as HTML.
  const [sk] = await approve(await newPartner('DOCPDFSK', 'sk'));
  t.is(sk.fileName, 'partner-agreement-sk-v4.pdf');
  t.is(sk.contentType, 'application/pdf');
  t.is(sk.encoding, 'base64');
  t.is(sk.version, 4);
  const skPdf = Buffer.from(sk.content, 'base64');
  t.is(skPdf.subarray(0, 5).toString('latin1'), '%PDF-');
  const skText = await pdfText(skPdf);
  t.regex(skText, /Zmluva HTMLSK/);
  t.regex(skText, /Partner DOCPDFSK súhlasí s províziou 8 %/, 'the partner\'s values are filled in (the demo programme pays 8 %)');
  t.false(skText.includes('{{'));

  // English: publish the uploaded PDF; the e-mail carries exactly those bytes.
  const enDraft = await db('affiliate_document_versions').where({ document_id: t.context.agreementId, language: 'en', version: 2 }).first('id', 'file');
  t.is((await publish(client, String(enDraft.id))).status, 200);
  const [en] = await approve(await newPartner('DOCPDFEN', 'en'));
  t.is(en.fileName, 'partner-agreement-en-v2.pdf');
  t.is(en.contentType, 'application/pdf');
  const enPdf = Buffer.from(en.content, 'base64');
  t.true(enPdf.equals(enDraft.file), 'the uploaded PDF is attached as is');
  t.regex(await pdfText(enPdf), /PDFWORDING-EN/);
});
