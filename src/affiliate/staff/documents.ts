/**
 * Document wording uploaded by a person (issue 24 point 3; SPEC: "wording is uploaded in the application"): a PDF or
 * an HTML file becomes a new draft version of one document in one language, with the fingerprints every version has
 * (`text_sha256` = SHA-256 of the stored text, `pdf_sha256` = SHA-256 of the version's PDF file); publishing a draft
 * supersedes the published version, so a document has at most one published version per language. Never over MCP.
 */
import crypto from 'node:crypto';
import type { Db } from '../../db/knex.js';
import { AppError } from '../../errors.js';
import type { Person } from '../../people/model.js';
import { CONTENT_LANGUAGES } from '../content.js';
import { sanitiseHtml } from '../writes/text.js';
import { requireAffiliateManager } from './commissions.js';
import { blocksText, htmlBlocks, renderWordingPdf, textBlocks } from './documentWording.js';

/** The largest file a person may upload (an agreement with a few pages and embedded fonts is far below it). */
export const DOCUMENT_UPLOAD_MAX_BYTES = 4 * 1024 * 1024;
/** The longest wording text kept (a signature copies it; a whole book is no agreement). */
export const DOCUMENT_TEXT_MAX_CHARS = 200_000;

const sha256 = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');
const invalid = (reason: string, message: string) => new AppError('DOCUMENT_FILE_INVALID', message, { reason });

export interface StaffDocumentVersion {
  id: string;
  language: string;
  version: number;
  status: 'draft' | 'published' | 'superseded';
  source: string;
  format: 'pdf' | 'html' | 'text';
  textSha256: string;
  pdfSha256: string | null;
  fileName: string | null;
  bytes: number | null;
  createdAt: Date;
  publishedAt: Date | null;
}

export interface StaffDocument {
  id: string;
  key: string;
  title: string;
  enabled: boolean;
  languages: Array<{ language: string; versions: StaffDocumentVersion[] }>;
}

/** The account's documents with every version per programme language, newest first. */
export async function documentsForStaff(db: Db, person: Person): Promise<StaffDocument[]> {
  const documents = await db('affiliate_documents').where({ account_id: person.accountId }).orderBy('key').select('id', 'key', 'title', 'enabled');
  const versions = documents.length === 0 ? [] : await db('affiliate_document_versions').whereIn('document_id', documents.map((d) => d.id))
    .orderBy([{ column: 'language' }, { column: 'version', order: 'desc' }])
    .select('id', 'document_id', 'language', 'version', 'status', 'source', 'text_sha256', 'pdf_sha256', 'pdf', db.raw('html is not null as has_html'), db.raw('file is not null as has_file'), 'created_at', 'published_at');
  return documents.map((d) => {
    const own = versions.filter((v) => String(v.document_id) === String(d.id));
    const languages = [...new Set([...CONTENT_LANGUAGES, ...own.map((v) => v.language as string)])];
    return {
      id: String(d.id), key: d.key, title: d.title, enabled: d.enabled,
      languages: languages.map((language) => ({
        language,
        versions: own.filter((v) => v.language === language).map((v) => ({
          id: String(v.id), language: v.language, version: v.version, status: v.status, source: v.source,
          format: v.has_html ? 'html' as const : v.has_file ? 'pdf' as const : 'text' as const,
          textSha256: v.text_sha256.trim(), pdfSha256: v.pdf_sha256 === null ? null : v.pdf_sha256.trim(),
          fileName: v.pdf?.fileName ?? null, bytes: v.pdf?.bytes ?? null, createdAt: v.created_at, publishedAt: v.published_at,
        })),
      })),
    };
  });
}

/** Documents are account-wide (A13): a person limited to some shops would change every shop's portal, so may not. */
function requireDocumentManager(person: Person): void {
  requireAffiliateManager(person);
  if (person.shopCodes) throw new AppError('INSUFFICIENT_SCOPE', 'Document wording is the same for every shop of the account; a person limited to some shops cannot change it.', { permission: 'affiliate:manage' });
}

async function ownDocument(db: Db, person: Person, documentId: string) {
  const document = /^\d{1,18}$/.test(documentId)
    ? await db('affiliate_documents').where({ id: documentId, account_id: person.accountId }).first('id', 'key', 'title')
    : undefined;
  if (!document) throw new AppError('NOT_FOUND', `No document \`${documentId}\`.`, { param: 'documentId' });
  return document;
}

/** Text of a PDF (pdf-parse, the pdf.js text layer): what a signature of the version keeps. */
async function pdfText(bytes: Buffer): Promise<{ text: string; pages: number }> {
  const { PDFParse } = await import('pdf-parse');
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    const result = await parser.getText({ pageJoiner: '' });
    const text = result.pages.map((p) => p.text.replace(/[ \t]+\n/g, '\n').trim()).filter(Boolean).join('\n\n');
    return { text, pages: result.total };
  } catch {
    throw invalid('unreadable', 'The PDF could not be read.');
  } finally {
    await parser.destroy();
  }
}

export interface UploadedWording {
  /** The file's name as the browser sent it: only its extension is used. */
  name: string;
  bytes: Buffer;
}

interface PreparedWording {
  format: 'pdf' | 'html';
  text: string;
  html: string | null;
  /** The PDF to keep: the uploaded one, or null to render it once the version number is known. */
  pdf: Buffer | null;
  pages: number | null;
  /** Whether sanitising removed anything from the HTML (scripts, styles, handlers, unknown tags). */
  sanitised: boolean;
}

/** Checks a file and reads its wording: a PDF by its magic bytes, HTML sanitised like every partner-visible HTML. */
export async function readWordingFile(file: UploadedWording): Promise<PreparedWording> {
  const extension = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase() ?? '';
  if (file.bytes.length === 0) throw invalid('empty', 'The file is empty.');
  if (file.bytes.length > DOCUMENT_UPLOAD_MAX_BYTES) throw invalid('too_large', `The file is larger than ${DOCUMENT_UPLOAD_MAX_BYTES} bytes.`);
  const isPdf = file.bytes.subarray(0, 5).toString('latin1') === '%PDF-';
  let prepared: PreparedWording;
  if (extension === 'pdf') {
    // A file named .pdf that is not one (a renamed Word file, an HTML page) is refused before any parser sees it.
    if (!isPdf) throw invalid('not_pdf', 'The file is named .pdf but is not a PDF (it does not start with %PDF-).');
    const { text, pages } = await pdfText(file.bytes);
    if (!text.trim()) throw invalid('no_text', 'The PDF has no text (a scan?): a signature keeps the text it signs. Upload a PDF with text, or the wording as HTML.');
    prepared = { format: 'pdf', text, html: null, pdf: file.bytes, pages, sanitised: false };
  } else if (extension === 'html' || extension === 'htm') {
    if (isPdf) throw invalid('format', 'The file is a PDF named .html; upload it as .pdf.');
    const raw = new TextDecoder('utf-8', { fatal: false }).decode(file.bytes);
    if (raw.includes('\u0000') || raw.includes('\ufffd')) throw invalid('format', 'The HTML file is not UTF-8 text.');
    // A whole page (head, styles, scripts) keeps only its allowed body content.
    const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(raw)?.[1] ?? raw;
    const clean = sanitiseHtml(body);
    const html = clean.html.trim();
    const text = blocksText(htmlBlocks(html));
    if (!text.trim()) throw invalid('empty', 'The HTML file has no wording.');
    prepared = { format: 'html', text, html, pdf: null, pages: null, sanitised: clean.changed };
  } else {
    throw invalid('format', 'Upload a .pdf or an .html file.');
  }
  if (prepared.text.length > DOCUMENT_TEXT_MAX_CHARS) throw invalid('too_long', `The wording is longer than ${DOCUMENT_TEXT_MAX_CHARS} characters.`);
  return prepared;
}

export interface UploadResult {
  versionId: string;
  version: number;
  language: string;
  format: 'pdf' | 'html';
  textSha256: string;
  pdfSha256: string;
  sanitised: boolean;
}

/** Stores an uploaded file as the next draft version of a document in one language. */
export async function uploadDocumentVersion(db: Db, person: Person, documentId: string, language: string, file: UploadedWording | undefined, now: Date): Promise<UploadResult> {
  requireDocumentManager(person);
  // Another account's document is not found, whatever was sent with it.
  const document = await ownDocument(db, person, documentId);
  if (!file || typeof file !== 'object' || !Buffer.isBuffer(file.bytes)) throw invalid('empty', 'Choose a .pdf or .html file to upload.');
  if (!(CONTENT_LANGUAGES as readonly string[]).includes(language)) {
    throw new AppError('INVALID_PARAMETER', `The language is one of ${CONTENT_LANGUAGES.join(', ')}.`, { param: 'language', allowed: CONTENT_LANGUAGES });
  }
  const wording = await readWordingFile(file);
  return db.transaction(async (trx) => {
    // The document's row lock orders concurrent uploads: each gets the next number.
    await trx('affiliate_documents').where({ id: document.id }).forUpdate().first('id');
    const last = await trx('affiliate_document_versions').where({ document_id: document.id, language }).max('version as n').first();
    const version = Number(last?.n ?? 0) + 1;
    const fileName = `${document.key}-${language}-v${version}.pdf`;
    const pdf = wording.pdf
      ? { content: wording.pdf, sha256: sha256(wording.pdf), pages: wording.pages }
      : await renderWordingPdf({ title: document.title, subtitle: `Version ${version} · ${language}`, blocks: htmlBlocks(wording.html!), createdAt: now });
    const textSha256 = sha256(wording.text);
    const [row] = await trx('affiliate_document_versions').insert({
      document_id: document.id, language, version, status: 'draft', stored_text: wording.text, public_text: wording.text, text_sha256: textSha256,
      pdf_sha256: pdf.sha256, source: 'upload', html: wording.html, file: pdf.content, created_by_person_id: person.id, created_at: now,
      pdf: JSON.stringify({ fileName, pages: pdf.pages, bytes: pdf.content.length, sha256: pdf.sha256, uploadedAs: wording.format }),
    }).returning('id');
    return {
      versionId: String(row.id), version, language, format: wording.format, textSha256, pdfSha256: pdf.sha256,
      sanitised: wording.sanitised,
    };
  });
}

/** Publishes a draft: the published version of its document and language becomes superseded, in one transaction. */
export async function publishDocumentVersion(db: Db, person: Person, versionId: string, now: Date): Promise<{ versionId: string; version: number; language: string; superseded: number | null }> {
  requireDocumentManager(person);
  if (!/^\d{1,18}$/.test(versionId)) throw new AppError('NOT_FOUND', `No document version \`${versionId}\`.`, { param: 'versionId' });
  try {
    return await db.transaction(async (trx) => {
      const v = await trx('affiliate_document_versions as v').join('affiliate_documents as d', 'd.id', 'v.document_id')
        .where({ 'v.id': versionId, 'd.account_id': person.accountId }).forUpdate('v').first('v.id', 'v.document_id', 'v.language', 'v.version', 'v.status');
      if (!v) throw new AppError('NOT_FOUND', `No document version \`${versionId}\`.`, { param: 'versionId' });
      if (v.status !== 'draft') {
        throw new AppError('STATE_CONFLICT', `Version ${v.version} (${v.language}) is ${v.status}; only a draft is published.`, { state: v.status });
      }
      const previous = await trx('affiliate_document_versions').where({ document_id: v.document_id, language: v.language, status: 'published' })
        .update({ status: 'superseded' }).returning('version');
      await trx('affiliate_document_versions').where({ id: v.id }).update({ status: 'published', published_at: now });
      return { versionId: String(v.id), version: v.version, language: v.language, superseded: previous[0]?.version ?? null };
    });
  } catch (error) {
    // Two publishes of drafts racing: the partial unique index (one published per document and language) lets one in.
    if ((error as { code?: string }).code === '23505') throw new AppError('STATE_CONFLICT', 'Another version was published at the same moment; reload and try again.', {});
    throw error;
  }
}

/** The PDF of a version to view or download: the one kept at upload, else (the demo's text versions) rendered now. */
export async function documentVersionPdf(db: Db, person: Person, versionId: string): Promise<{ fileName: string; content: Buffer }> {
  const v = /^\d{1,18}$/.test(versionId)
    ? await db('affiliate_document_versions as v').join('affiliate_documents as d', 'd.id', 'v.document_id')
      .where({ 'v.id': versionId, 'd.account_id': person.accountId }).first('d.key', 'd.title', 'v.language', 'v.version', 'v.file', 'v.public_text', 'v.created_at')
    : undefined;
  if (!v) throw new AppError('NOT_FOUND', `No document version \`${versionId}\`.`, { param: 'versionId' });
  const fileName = `${v.key}-${v.language}-v${v.version}.pdf`;
  if (v.file) return { fileName, content: v.file };
  const rendered = await renderWordingPdf({ title: v.title, subtitle: `Version ${v.version} · ${v.language}`, blocks: textBlocks(v.public_text), createdAt: v.created_at });
  return { fileName, content: rendered.content };
}
