/**
 * Documents: invoices, proformas and credit notes of a shop — listed by business date (the `documents.list`
 * capability) or searched by number, order or variable symbol (`invoices.search`, `credit_notes.search`), run for the
 * signed-in person — and one document's view, shown from the same stored row its PDF is rendered from
 * (src/documents/store.ts `documentPdfSource`), with the stored PDF's bytes to download (`documents.pdf`).
 * The buyer's name and address, on screen and in the PDF, need the personal-data permission (D27).
 */
import crypto from 'node:crypto';
import express, { type Request, type Router } from 'express';
import { creditNotesSearch, DOCUMENT_TYPES, documentsList, documentsPdf, invoicesSearch } from '../../../src/capabilities/areas/documents.js';
import { runCapability } from '../../../src/capabilities/run.js';
import { documentLabels } from '../../../src/documents/pdf.js';
import { documentPdfSource } from '../../../src/documents/store.js';
import { AppError } from '../../../src/errors.js';
import { personAsCaller } from '../../../src/people/asCaller.js';
import { hasPermission } from '../../../src/people/model.js';
import { findShopByCode, listShops } from '../../../src/queries/shops.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePerson } from '../session.js';

const PAGE_SIZE = 50;
type DocumentType = (typeof DOCUMENT_TYPES)[number];
const TYPE_NAMES: Record<DocumentType, string> = { invoice: 'Invoices', proforma: 'Proformas', credit_note: 'Credit notes' };

export function documentsRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  const runDeps = { db, cursorSecret: deps.cursorSecret, now: deps.now };
  const text = (req: Request, name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');

  router.get('/documents', requirePerson, async (req, res) => {
    const person = currentPerson(res);
    const caller = personAsCaller(person);
    const shops = (await listShops(db, person.accountId, person.shopCodes)).map((s) => ({ code: s.code, name: s.name }));
    const market = text(req, 'market') || shops[0]?.code || '';
    const type = (DOCUMENT_TYPES as readonly string[]).includes(text(req, 'type')) ? text(req, 'type') as DocumentType : 'invoice';
    const query = text(req, 'query').trim();
    const base = { title: 'Documents', shops, market, type, types: DOCUMENT_TYPES.map((t) => ({ code: t, name: TYPE_NAMES[t] })), query, next: null, first: null };
    if (!market) return renderPage(res, 'documents', { ...base, documents: [], error: null });
    try {
      let documents: unknown;
      let next: string | null = null;
      let first: string | null = null;
      if (query) {
        if (type === 'proforma') throw new AppError('INVALID_PARAMETER', 'Search works for invoices and credit notes; proformas are listed by date.', { param: 'query' });
        const output = await runCapability(type === 'invoice' ? invoicesSearch : creditNotesSearch, { market, query, limit: PAGE_SIZE }, caller, crypto.randomUUID(), runDeps);
        documents = output.data;
      } else {
        const cursor = text(req, 'cursor');
        const output = await runCapability(documentsList, { market, documentType: type, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }, caller, crypto.randomUUID(), runDeps);
        documents = output.data;
        if (output.list?.nextCursor) next = `/app/documents?${new URLSearchParams({ market, type, cursor: output.list.nextCursor })}`;
        if (cursor) first = `/app/documents?${new URLSearchParams({ market, type })}`;
      }
      renderPage(res, 'documents', { ...base, documents, next, first, error: null });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      renderPage(res, 'documents', { ...base, documents: [], error: error.message }, error.status);
    }
  });

  /** The shop of a document URL, within the person's account and shops; a hidden or unknown shop is not found. */
  const shopOf = async (req: Request, person: ReturnType<typeof currentPerson>) => {
    const market = String(req.params.market);
    const type = String(req.params.type);
    if (person.shopCodes && !person.shopCodes.has(market)) throw new AppError('SHOP_FORBIDDEN', `You may not see shop ${market}.`, { market });
    if (!(DOCUMENT_TYPES as readonly string[]).includes(type)) throw new AppError('NOT_FOUND', 'There is no such document.', { param: 'type' });
    const shop = await findShopByCode(db, person.accountId, market);
    if (!shop) throw new AppError('SHOP_NOT_FOUND', `No shop ${market}.`, { market });
    return { shop, market, type: type as DocumentType, code: String(req.params.code) };
  };

  router.get('/documents/:market/:type/:code', requirePerson, async (req, res) => {
    const person = currentPerson(res);
    const { shop, market, type, code } = await shopOf(req, person);
    const source = await documentPdfSource(db, shop.id, type, code);
    if (!source) throw new AppError('NOT_FOUND', `No ${type.replace('_', ' ')} ${code} with a printable form in shop ${market}.`, { param: 'code' });
    const labels = documentLabels(source.language);
    const personal = hasPermission(person, 'personal-data');
    renderPage(res, 'document', { title: `${labels[type]} ${code}`, market, type, code, doc: source, labels, personal });
  });

  router.get('/documents/:market/:type/:code/pdf', requirePerson, async (req, res) => {
    const person = currentPerson(res);
    const { market, type, code } = await shopOf(req, person);
    // The PDF prints the buyer's name and address: personal data (D27).
    if (!hasPermission(person, 'personal-data')) throw new AppError('INSUFFICIENT_SCOPE', 'The PDF shows the buyer\'s name and address: you need the personal-data permission.', { permission: 'personal-data' });
    const output = await runCapability(documentsPdf, { market, documentType: type, code }, personAsCaller(person), crypto.randomUUID(), runDeps);
    const pdf = output.data as { base64: string; sha256: string };
    res.status(200).type('application/pdf').setHeader('Content-Disposition', `attachment; filename="${type}-${code.replace(/[^\w.-]/g, '_')}.pdf"`)
      .setHeader('X-Content-SHA256', pdf.sha256).send(Buffer.from(pdf.base64, 'base64'));
  });

  return router;
}
