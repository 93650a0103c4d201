/**
 * Reads of the programme's content: help articles, e-mail templates, legal documents with versions, and electronic
 * signatures (immutable records) with the partners lacking one. Account-wide; signatures carry the shop they were made on.
 */
import type { Db } from '../db/knex.js';
import type { PageRequest } from '../capabilities/types.js';
import { checkText } from '../affiliate/variables.js';
import { iso, keysetPage, toPage } from './keyset.js';

type Translation = { title: string; slug: string; html: string; status: 'default' | 'custom' | 'missing' };

/** The portal's help articles in display order, with each language's status. */
export async function listArticles(db: Db, accountId: string) {
  const rows = await db('affiliate_articles').where({ account_id: accountId }).orderBy(['position', 'id'])
    .select('key', 'is_default', 'enabled', 'position', 'translations', 'updated_at');
  return rows.map((r) => ({
    key: r.key, isDefault: r.is_default, enabled: r.enabled, position: r.position,
    languages: Object.entries(r.translations as Record<string, Translation>).map(([language, t]) => ({ language, title: t.title, slug: t.slug, status: t.status })),
    updatedAt: r.updated_at.toISOString(),
  }));
}

/** One article with its HTML wording in all languages or one, variables not substituted (and any unknown ones named); null when absent. */
export async function getArticle(db: Db, accountId: string, key: string, language: string | undefined) {
  const r = await db('affiliate_articles').where({ account_id: accountId, key }).first('key', 'is_default', 'enabled', 'position', 'translations', 'updated_at');
  if (!r) return null;
  const translations = Object.entries(r.translations as Record<string, Translation>)
    .filter(([lang]) => language === undefined || lang === language)
    .map(([lang, t]) => {
      const check = checkText(`${t.title} ${t.html}`);
      return { language: lang, title: t.title, slug: t.slug, html: t.html, status: t.status, variables: check.used.map((u) => u.canonical), unknownVariables: check.unknown };
    });
  return { key: r.key, isDefault: r.is_default, enabled: r.enabled, position: r.position, translations, updatedAt: r.updated_at.toISOString() };
}

/** The documents sent automatically with the "Account approved" e-mail, per language: enabled, e-mail attachment, published. */
async function approvalAttachments(db: Db, accountId: string) {
  return db('affiliate_documents as d').join('affiliate_document_versions as v', 'v.document_id', 'd.id')
    .where({ 'd.account_id': accountId, 'd.enabled': true, 'd.email_attachment': true, 'v.status': 'published' })
    .orderBy(['d.key', 'v.language']).select('d.key', 'd.title', 'v.language', 'v.version', 'v.pdf');
}

/** Partner e-mail templates per event and language; the "Account approved" ones carry their automatic attachments. */
export async function listEmailTemplates(db: Db, accountId: string) {
  const [rows, attachments] = await Promise.all([
    db('affiliate_email_templates').where({ account_id: accountId }).orderBy(['event', 'language'])
      .select('event', 'language', 'subject', 'body_html', 'enabled', 'customised', 'updated_at'),
    approvalAttachments(db, accountId),
  ]);
  return rows.map((r) => ({
    event: r.event, language: r.language, subject: r.subject, bodyHtml: r.body_html, enabled: r.enabled, customised: r.customised,
    updatedAt: r.updated_at.toISOString(),
    automaticAttachments: r.event !== 'account_approved' ? [] : attachments.filter((a) => a.language === r.language).map((a) => ({
      documentKey: a.key, title: a.title, language: a.language, version: a.version, fileName: (a.pdf as { fileName?: string }).fileName ?? null,
    })),
  }));
}

/** Partners who must confirm a document (approved or waiting) but have no signature of its current version in their language. */
async function partnersLacking(db: Db, accountId: string, documentId?: string) {
  const q = db('affiliate_documents as d')
    .join('affiliate_partners as p', 'p.account_id', 'd.account_id')
    .join('affiliate_document_versions as v', function current() {
      this.on('v.document_id', '=', 'd.id').andOn('v.language', '=', 'p.language').andOnVal('v.status', '=', 'published');
    })
    .where({ 'd.account_id': accountId, 'd.enabled': true }).whereNot('d.confirm_when', 'never').whereIn('p.state', ['approved', 'waiting'])
    .whereRaw(`(d.applies_to = 'all_partners' or (d.applies_to = 'influencers' and p.kind = 'influencer'))`)
    .whereNotExists(db('affiliate_signatures as s').whereRaw('s.partner_id = p.id and s.version_id = v.id'))
    .select('d.key', 'd.title', 'p.id as partner_id', 'p.handle', 'p.state', 'p.registered_at', 'v.version', 'v.language')
    .orderBy(['d.key', 'p.registered_at', 'p.id']);
  if (documentId) q.where('d.id', documentId);
  return q;
}

/** Programme documents with their policy, versions per language, readiness and acceptance counts. */
export async function listDocuments(db: Db, accountId: string) {
  const docs = await db('affiliate_documents').where({ account_id: accountId }).orderBy('key')
    .select('id', 'key', 'title', 'applies_to', 'confirm_when', 'signed_copy', 'email_attachment', 'enabled');
  const versions = await db('affiliate_document_versions').whereIn('document_id', docs.map((d) => d.id)).orderBy(['language', 'version'])
    .select('id', 'document_id', 'language', 'version', 'status', 'published_at');
  const signatures: Array<{ document_id: string; version_id: string; n: number }> = await db('affiliate_signatures').where({ account_id: accountId })
    .groupBy('document_id', 'version_id').select('document_id', 'version_id').count<Array<{ document_id: string; version_id: string; n: number }>>({ n: '*' });
  const lacking = await partnersLacking(db, accountId);
  return docs.map((d) => {
    const own = versions.filter((v) => String(v.document_id) === String(d.id));
    const languages = [...new Set(own.map((v) => v.language))].sort();
    const current = own.filter((v) => v.status === 'published');
    const currentIds = new Set(current.map((v) => String(v.id)));
    const sigs = signatures.filter((s) => String(s.document_id) === String(d.id));
    const reasons: string[] = [];
    if (!d.enabled) reasons.push('The document is disabled.');
    for (const lang of ['sk', 'en']) if (!current.some((v) => v.language === lang)) reasons.push(`No published version in \`${lang}\`.`);
    return {
      key: d.key, title: d.title,
      policy: { appliesTo: d.applies_to, confirmWhen: d.confirm_when, signedCopy: d.signed_copy, emailAttachment: d.email_attachment, enabled: d.enabled },
      languages: languages.map((lang) => {
        const cur = current.find((v) => v.language === lang);
        return {
          language: lang, currentVersion: cur ? cur.version : null, publishedAt: cur ? iso(cur.published_at) : null,
          versions: own.filter((v) => v.language === lang).length, openDrafts: own.filter((v) => v.language === lang && v.status === 'draft').length,
        };
      }),
      readiness: { ready: reasons.length === 0, reasons },
      acceptance: {
        signatures: sigs.reduce((a, s) => a + Number(s.n), 0),
        ofCurrentVersion: sigs.filter((s) => currentIds.has(String(s.version_id))).reduce((a, s) => a + Number(s.n), 0),
        partnersLacking: lacking.filter((l) => l.key === d.key).length,
      },
    };
  });
}

/** One document per language: current stored and public text, version, fingerprints, source, PDF metadata, and open drafts; null when absent. */
export async function getDocumentContent(db: Db, accountId: string, key: string, language: string | undefined) {
  const d = await db('affiliate_documents').where({ account_id: accountId, key }).first('id', 'key', 'title');
  if (!d) return null;
  const q = db('affiliate_document_versions').where({ document_id: d.id }).orderBy(['language', 'version'])
    .select('language', 'version', 'status', 'stored_text', 'public_text', 'text_sha256', 'pdf_sha256', 'source', 'pdf', 'created_at', 'published_at');
  if (language !== undefined) q.where({ language });
  const versions = await q;
  const languages = [...new Set(versions.map((v) => v.language))];
  const view = (v: Record<string, any>) => ({
    version: v.version, status: v.status, storedText: v.stored_text, publicText: v.public_text,
    fingerprints: { textSha256: v.text_sha256, pdfSha256: v.pdf_sha256 }, source: v.source,
    pdf: Object.keys(v.pdf).length ? v.pdf : null, createdAt: v.created_at.toISOString(), publishedAt: iso(v.published_at),
  });
  return {
    key: d.key, title: d.title,
    languages: languages.map((lang) => {
      const own = versions.filter((v) => v.language === lang);
      const current = own.find((v) => v.status === 'published');
      return {
        language: lang,
        current: current ? view(current) : null,
        openDrafts: own.filter((v) => v.status === 'draft').map(view),
        history: own.filter((v) => v.status === 'superseded').map((v) => ({ version: v.version, publishedAt: iso(v.published_at), textSha256: v.text_sha256 })),
      };
    }),
  };
}

const signatureColumns = [
  's.id', 's.partner_id', 'p.handle', 'd.key as document_key', 'd.title as document_title', 's.version', 's.language', 'sh.code as market',
  's.signed_at', 's.method', 's.verification', 's.text_sha256', 's.pdf_sha256', 's.state',
];

function signatureQuery(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null) {
  const q = db('affiliate_signatures as s')
    .join('affiliate_partners as p', 'p.id', 's.partner_id')
    .join('affiliate_documents as d', 'd.id', 's.document_id')
    .leftJoin('shops as sh', 'sh.id', 's.shop_id')
    .where('s.account_id', accountId);
  // A key restricted to some shops sees the signatures made on them (and none made elsewhere).
  if (shopCodes) q.whereIn('sh.code', [...shopCodes]);
  return q;
}

function toSignature(r: Record<string, any>) {
  return {
    signatureId: String(r.id), partnerId: String(r.partner_id), partnerHandle: r.handle, documentKey: r.document_key, documentTitle: r.document_title,
    version: r.version, language: r.language, market: r.market, signedAt: r.signed_at.toISOString(), method: r.method, verification: r.verification,
    fingerprints: { textSha256: r.text_sha256.trim(), pdfSha256: r.pdf_sha256 === null ? null : r.pdf_sha256.trim() }, state: r.state,
  };
}

/** A page of signatures, newest first. */
export async function listSignatures(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null, page: PageRequest) {
  const rows = await keysetPage(signatureQuery(db, accountId, shopCodes).select(signatureColumns), 's.signed_at', 's.id', page);
  const result = toPage(rows as Array<Record<string, any> & { id: string }>, page, (r) => r.signed_at, toSignature);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/** Partners lacking a signature of the current version of a document they must confirm. */
export async function listLackingSignatures(db: Db, accountId: string) {
  const rows = await partnersLacking(db, accountId);
  return rows.map((r) => ({
    partnerId: String(r.partner_id), partnerHandle: r.handle, partnerState: r.state, documentKey: r.key, documentTitle: r.title,
    currentVersion: r.version, language: r.language,
  }));
}

/** One signature with the text as signed and the snapshot of the values filled in; null when absent or on another shop. */
export async function getSignature(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null, signatureId: string) {
  const r = await signatureQuery(db, accountId, shopCodes).where('s.id', signatureId).select([...signatureColumns, 's.signed_text', 's.values_snapshot']).first();
  if (!r) return null;
  return { ...toSignature(r), signedText: r.signed_text, valuesSnapshot: r.values_snapshot as Record<string, string> };
}
