/**
 * The affiliate programme's content over the real HTTP server and a real Postgres: help articles with unsubstituted
 * variables, e-mail templates with the approval attachments, documents with fingerprints and acceptance, signatures as
 * immutable records (unchanged after a new document version), partners lacking a signature, the variable registry.
 */
import crypto from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { appTest, type AppContext } from '../helpers/app.js';
import { issueKey } from '../helpers/server.js';
import { get } from '../helpers/rest.js';

const test = appTest({ scopes: ['affiliate:read'] });
type Context = AppContext;
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

async function accountId(t: ExecutionContext<Context>): Promise<string> {
  return String((await t.context.database.db('accounts').where({ code: 'demo' }).first('id')).id);
}

test.serial('When help articles are read, then the wording keeps its variables and names the unknown ones', async (t) => {
  const list = await get(t, '/affiliate/articles');
  t.is(list.status, 200);
  t.deepEqual(list.body.data.map((a: any) => a.position), [1, 2, 3, 4, 5]);
  const custom = list.body.data.find((a: any) => !a.isDefault);
  t.truthy(custom);
  const one = await get(t, `/affiliate/articles/${custom.key}?language=en`);
  t.is(one.status, 200);
  t.is(one.body.data.translations.length, 1);
  t.regex(one.body.data.translations[0].html, /\{\{shop\.name\}\}/);
  t.deepEqual(one.body.data.translations[0].unknownVariables, ['partner.instagram']);
  t.is((await get(t, '/affiliate/articles/no-such-article')).status, 404);
  t.is((await get(t, '/affiliate/articles/Bad_Key')).status, 400);
});

test.serial('When e-mail templates are read, then Account approved carries the published agreement of its language as an attachment', async (t) => {
  const res = await get(t, '/affiliate/email-templates');
  t.is(res.status, 200);
  const approved = res.body.data.filter((e: any) => e.event === 'account_approved');
  t.deepEqual(approved.map((e: any) => e.language), ['en', 'sk']);
  for (const e of approved) {
    t.is(e.automaticAttachments.length, 1);
    t.is(e.automaticAttachments[0].documentKey, 'partner-agreement');
    t.is(e.automaticAttachments[0].language, e.language);
  }
  t.is(approved.find((e: any) => e.language === 'sk').automaticAttachments[0].version, 2);
  t.true(res.body.data.filter((e: any) => e.event !== 'account_approved').every((e: any) => e.automaticAttachments.length === 0));
});

test.serial('When documents are read, then fingerprints are the texts\' SHA-256, drafts are listed, and acceptance counts equal the raw signatures', async (t) => {
  const db = t.context.database.db;
  const docs = await get(t, '/affiliate/documents');
  t.is(docs.status, 200);
  const agreement = docs.body.data.find((d: any) => d.key === 'partner-agreement');
  const raw = await db('affiliate_signatures as s').join('affiliate_documents as d', 'd.id', 's.document_id').where({ 'd.key': 'partner-agreement', 'd.account_id': await accountId(t) }).select('s.version', 's.language');
  t.is(agreement.acceptance.signatures, raw.length);
  t.is(agreement.acceptance.ofCurrentVersion, raw.filter((s) => (s.language === 'sk' && s.version === 2) || (s.language === 'en' && s.version === 1)).length);
  t.true(agreement.readiness.ready);
  t.false(docs.body.data.find((d: any) => d.key === 'code-of-conduct').readiness.ready);
  const content = await get(t, '/affiliate/documents/partner-agreement/content?language=sk');
  t.is(content.status, 200);
  const sk = content.body.data.languages[0];
  t.is(sk.current.version, 2);
  t.is(sk.current.fingerprints.textSha256, sha256(sk.current.storedText));
  t.is(sk.current.pdf.sha256, sk.current.fingerprints.pdfSha256);
  t.deepEqual(sk.openDrafts.map((d: any) => d.version), [3]);
  t.deepEqual(sk.history.map((h: any) => h.version), [1]);
});

test.serial('When signatures are read, then each is the record of what was signed, and the partners lacking the current version are listed', async (t) => {
  const db = t.context.database.db;
  const signatures: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(t, `/affiliate/signatures?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    signatures.push(...res.body.data);
    cursor = res.body.meta.nextCursor;
  } while (cursor);
  const raw = await db('affiliate_signatures').where({ account_id: await accountId(t) }).select('id');
  t.is(signatures.length, raw.length);
  t.true(signatures.every((s) => s.status === 'signed' && s.market === 'sk'));
  const lacking = await get(t, '/affiliate/signatures?status=lacking');
  t.is(lacking.status, 200);
  const handles = lacking.body.data.map((l: any) => l.partnerHandle).sort();
  // Partners 3–5 signed only version 1; partner 11 waits for approval and has not signed; partner 9 is suspended (not asked).
  t.deepEqual(handles, ['DOMACNOST', 'GURMAN', 'PETRA', 'ZUZA']);
  const one = await get(t, `/affiliate/signatures/${signatures[0].signatureId}`);
  t.is(one.status, 200);
  t.is(one.body.data.valuesSnapshot['partner.handle'], signatures[0].partnerHandle);
  t.false(/\{\{/.test(one.body.data.signedText), 'the signed text has its values filled in');
  t.true(one.body.data.signedText.includes(signatures[0].partnerHandle));
  const czOnly = await issueKey(db, { scopes: ['affiliate:read'], shops: ['cz'] });
  t.is((await get(t, `/affiliate/signatures/${signatures[0].signatureId}`, czOnly)).status, 404, 'signed on another shop');
});

test.serial('When the variable registry is read with a text, then it names the variables used, their canonical names and the unknown ones', async (t) => {
  const all = await get(t, '/affiliate/variables');
  t.is(all.status, 200);
  t.is(all.body.data.check, null);
  t.true(all.body.data.variables.some((v: any) => v.name === 'partner.discount_code' && v.aliases.includes('coupon_code')));
  const text = encodeURIComponent('Hi {{ name }}, use {{coupon_code}} at {{shop.url}} — {{partner.tiktok}}');
  const res = await get(t, `/affiliate/variables?surface=articles&text=${text}`);
  t.is(res.status, 200);
  t.deepEqual(res.body.data.check.used, [
    { written: 'name', canonical: 'partner.name' }, { written: 'coupon_code', canonical: 'partner.discount_code' }, { written: 'shop.url', canonical: 'shop.url' },
  ]);
  t.deepEqual(res.body.data.check.unknown, ['partner.tiktok']);
  t.deepEqual(res.body.data.check.unavailableOnSurface, ['name']);
  t.true(res.body.data.variables.every((v: any) => v.surfaces.includes('articles')));
  t.is((await get(t, `/affiliate/variables?text=${'x'.repeat(4001)}`)).status, 400);
});

// Last: it publishes a new version, which the tests above must not see (serial tests run in this order).
test.serial('When the signed document gets a new version, then every signature reads exactly as before and cannot be changed', async (t) => {
  const db = t.context.database.db;
  const before = await get(t, '/affiliate/signatures?limit=250');
  const details = await Promise.all(before.body.data.map((s: any) => get(t, `/affiliate/signatures/${s.signatureId}`)));
  const doc = await db('affiliate_documents').where({ account_id: await accountId(t), key: 'partner-agreement' }).first('id');
  await db.transaction(async (trx) => {
    await trx('affiliate_document_versions').where({ document_id: doc.id, language: 'sk', status: 'published' }).update({ status: 'superseded' });
    const text = 'Zmluva o partnerskom programe {{programme.name}} (verzia 4).';
    await trx('affiliate_document_versions').insert({
      document_id: doc.id, language: 'sk', version: 4, status: 'published', stored_text: text, public_text: text, text_sha256: sha256(text),
      pdf_sha256: sha256(`pdf ${text}`), source: 'upload', pdf: JSON.stringify({ fileName: 'v4.pdf' }), created_at: new Date(), published_at: new Date(),
    });
  });
  const after = await get(t, '/affiliate/signatures?limit=250');
  t.deepEqual(after.body.data, before.body.data);
  for (const d of details) t.deepEqual((await get(t, `/affiliate/signatures/${d.body.data.signatureId}`)).body.data, d.body.data);
  await t.throwsAsync(db('affiliate_signatures').where({ id: before.body.data[0].signatureId }).update({ signed_text: 'forged' }), { message: /immutable/ });
  // Everyone must now sign version 4.
  const lacking = await get(t, '/affiliate/signatures?status=lacking');
  t.true(lacking.body.data.filter((l: any) => l.currentVersion === 4).length >= 10);
});
