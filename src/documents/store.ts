/**
 * Stored PDFs of documents: rendered once from the stored document and kept as bytes with their SHA-256, never
 * regenerated. The sync renders a document that arrives as news in the transaction that stores it; history (the demo
 * loader's bulk COPY, a first backfill) is rendered on its first PDF read. Both render from the same stored row with
 * the same deterministic renderer, and `on conflict do nothing` keeps the first stored bytes whatever happens after.
 */
import type { Knex } from 'knex';
import { renderDocumentPdf, type PdfInput } from './pdf.js';

/** A document row joined with its shop, as `documentPdfRows` selects it. */
type PdfSourceRow = Record<string, any> & { id: string };

const SOURCE_COLUMNS = [
  'd.id', 'd.type', 'd.code', 'd.order_code', 'd.related_code', 'd.issued_at', 'd.issue_date', 'd.tax_date', 'd.due_date', 'd.currency',
  'd.variable_symbol', 'd.payment_method', 'd.lines', 'd.vat_breakdown', 'd.total_with_vat', 'd.total_without_vat', 'd.total_vat',
  'd.customer_first_name', 'd.customer_last_name', 'd.customer_company', 'd.customer_street', 'd.customer_city', 'd.customer_zip', 'd.customer_country',
  's.name as shop_name', 's.language as shop_language',
];

/** Dates come back from Postgres as Dates at local midnight; the printed date is the calendar date as stored. */
function calendarDate(value: Date | string | null): string | null {
  if (value === null) return null;
  if (typeof value === 'string') return value.slice(0, 10);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}

/**
 * What the PDF of one document prints, read from the same stored row the PDF is rendered from: the application's
 * document view shows this, so the screen and the PDF's bytes come from one source. null when there is no such
 * document in the shop or it has no printable form.
 */
export async function documentPdfSource(knex: Knex, shopId: string, type: string, code: string): Promise<PdfInput | null> {
  const row: PdfSourceRow | undefined = await knex('documents as d').join('shops as s', 's.id', 'd.shop_id')
    .where({ 'd.shop_id': shopId, 'd.type': type, 'd.code': code, 'd.pdf_available': true }).first(SOURCE_COLUMNS);
  return row ? pdfInputOf(row) : null;
}

function pdfInputOf(row: PdfSourceRow): PdfInput {
  const name = [row.customer_first_name, row.customer_last_name].filter(Boolean).join(' ');
  const buyer = [row.customer_company, name, row.customer_street, [row.customer_zip, row.customer_city].filter(Boolean).join(' '), row.customer_country?.trim()]
    .filter((v): v is string => typeof v === 'string' && v.length > 0);
  return {
    shopName: row.shop_name, language: row.shop_language, type: row.type, code: row.code, orderCode: row.order_code, relatedCode: row.related_code,
    issuedAt: row.issued_at, issueDate: calendarDate(row.issue_date), taxDate: calendarDate(row.tax_date), dueDate: calendarDate(row.due_date),
    currency: row.currency.trim(), variableSymbol: row.variable_symbol, paymentMethod: row.payment_method, buyer,
    lines: row.lines, vatBreakdown: row.vat_breakdown,
    totalWithoutVat: row.total_without_vat, totalVat: row.total_vat, totalWithVat: row.total_with_vat,
  };
}

/** Renders and stores the PDFs of these documents that have none yet (and whose shop has a printable form); returns how many were stored. */
export async function ensureDocumentPdfs(knex: Knex | Knex.Transaction, documentIds: Array<string | number>): Promise<number> {
  if (!documentIds.length) return 0;
  const rows: PdfSourceRow[] = await knex('documents as d').join('shops as s', 's.id', 'd.shop_id')
    .leftJoin('document_pdfs as p', 'p.document_id', 'd.id')
    .whereIn('d.id', documentIds).where('d.pdf_available', true).whereNull('p.document_id')
    .select(SOURCE_COLUMNS).orderBy('d.id');
  let stored = 0;
  for (const row of rows) {
    const pdf = await renderDocumentPdf(pdfInputOf(row));
    const inserted = await knex('document_pdfs')
      .insert({ document_id: row.id, sha256: pdf.sha256, size_bytes: pdf.sizeBytes, content: pdf.content, rendered_at: new Date() })
      .onConflict('document_id').ignore().returning('document_id');
    stored += inserted.length;
  }
  return stored;
}
