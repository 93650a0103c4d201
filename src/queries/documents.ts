/**
 * Reads of accounting documents (invoices, proformas, credit notes), always within one shop: listings newest first by
 * business date, searches on the pg_trgm and b-tree indexes of migration 007, one invoice with its relations, and the
 * stored PDF.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest, PageResult } from '../capabilities/types.js';
import { ensureDocumentPdfs } from '../documents/store.js';
import { money } from '../money.js';

export type DocumentType = 'invoice' | 'proforma' | 'credit_note';
export type Validity = 'valid' | 'cancelled' | 'all';
export type Lifecycle = 'issued' | 'paid' | 'settled' | 'partially_credited' | 'credited' | 'cancelled';

const COLUMNS = [
  'd.id', 'd.type', 'd.code', 'd.order_code', 'd.related_code', 'd.issued_at', 'd.currency', 'd.total_with_vat', 'd.total_without_vat', 'd.total_vat',
  'd.variable_symbol', 'd.payment_method', 'd.customer_email_hash', 'd.lines', 'd.vat_breakdown', 'd.lifecycle', 'd.source_state', 'd.valid',
  'd.updated_at', 'd.pdf_available', 'd.customer_first_name', 'd.customer_last_name', 'd.customer_company', 'd.customer_email', 'd.customer_phone',
  'd.customer_street', 'd.customer_city', 'd.customer_zip', 'd.customer_country',
];

type DocumentRow = Record<string, any> & { id: string };

/** Calendar dates as text: the pg driver would turn a `date` into a Date at local midnight. */
function selectDocuments(db: Db | Knex.Transaction) {
  return db('documents as d').select(COLUMNS).select(db.raw(`to_char(d.issue_date, 'YYYY-MM-DD') as issue_date, to_char(d.tax_date, 'YYYY-MM-DD') as tax_date,
    to_char(d.due_date, 'YYYY-MM-DD') as due_date, to_char(d.business_date, 'YYYY-MM-DD') as business_date`));
}

function toDocument(row: DocumentRow) {
  const currency = row.currency.trim();
  return {
    documentType: row.type as DocumentType,
    code: row.code as string,
    orderCode: row.order_code as string | null,
    relatedInvoiceCode: row.related_code as string | null,
    issuedAt: (row.issued_at as Date).toISOString(),
    issueDate: row.issue_date as string | null,
    taxDate: row.tax_date as string | null,
    dueDate: row.due_date as string | null,
    businessDate: row.business_date as string | null,
    currency,
    totalWithVat: money(row.total_with_vat, currency),
    totalWithoutVat: money(row.total_without_vat, currency),
    totalVat: money(row.total_vat, currency),
    vatBreakdown: (row.vat_breakdown as Array<Record<string, string>>).map((v) => ({
      vatRate: v.vatRate, base: money(v.base, currency), vat: money(v.vat, currency), total: money(v.total, currency),
    })),
    variableSymbol: row.variable_symbol as string | null,
    paymentMethod: row.payment_method as string | null,
    customerEmailHash: row.customer_email_hash?.trim() ?? null,
    lifecycle: row.lifecycle as Lifecycle,
    sourceState: row.source_state as string | null,
    valid: row.valid as boolean,
    updatedAt: row.updated_at ? (row.updated_at as Date).toISOString() : null,
    pdfAvailable: row.pdf_available as boolean,
    customer: {
      firstName: row.customer_first_name,
      lastName: row.customer_last_name,
      company: row.customer_company,
      email: row.customer_email,
      phone: row.customer_phone,
      street: row.customer_street,
      zip: row.customer_zip,
      city: row.customer_city,
      country: row.customer_country?.trim() ?? null,
    },
    items: (row.lines as Array<Record<string, any>>).map((l) => ({
      lineNo: l.lineNo as number,
      kind: l.kind as 'product' | 'shipping' | 'discount',
      productCode: l.productCode as string | null,
      name: l.name as string,
      quantity: l.quantity as string,
      unitPriceWithVat: money(l.unitPriceWithVat, currency),
      totalWithVat: money(l.totalWithVat, currency),
      totalWithoutVat: money(l.totalWithoutVat, currency),
      vatRate: l.vatRate as string,
    })),
  };
}

export type DocumentRecord = ReturnType<typeof toDocument>;

export interface DocumentFilters {
  validity: Validity;
  lifecycle?: string;
}

/** A page of one kind of document, newest first by business date (then id), optionally within a period of business dates. */
export async function listDocuments(db: Db, shopId: string, type: DocumentType, filters: DocumentFilters, period: Period | null, page: PageRequest): Promise<PageResult<DocumentRecord>> {
  const q = selectDocuments(db).where({ 'd.shop_id': shopId, 'd.type': type });
  if (filters.validity !== 'all') q.where('d.valid', filters.validity === 'valid');
  if (filters.lifecycle) q.where('d.lifecycle', filters.lifecycle);
  if (period) q.whereBetween('d.business_date', [period.from, period.to]);
  if (page.after) q.whereRaw('(d.business_date, d.id) < (?::date, ?::bigint)', [page.after.key, page.after.id]);
  const rows: DocumentRow[] = await q.orderBy([{ column: 'd.business_date', order: 'desc' }, { column: 'd.id', order: 'desc' }]).limit(page.limit + 1);
  const hasMore = rows.length > page.limit;
  const kept = hasMore ? rows.slice(0, page.limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(toDocument), hasMore, last: last ? { key: last.business_date, id: String(last.id) } : null };
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The search's SQL: one arm per index, ranked; exported so a test can EXPLAIN exactly what runs. */
export function documentSearchSql(shopId: string, type: DocumentType, text: string, limit: number, withCustomer: boolean): { sql: string; bindings: Knex.RawBinding[] } {
  const needle = text.toLowerCase();
  const contains = `%${escapeLike(needle)}%`;
  const arms: Array<[string, Knex.RawBinding[]]> = [
    ['select id, 0 as rank, 1::real as score from documents where shop_id = ? and type = ? and code = ?', [shopId, type, text.toUpperCase()]],
    ['select id, 0, 1::real from documents where shop_id = ? and type = ? and order_code = ?', [shopId, type, text]],
    ['select id, 0, 1::real from documents where shop_id = ? and type = ? and variable_symbol = ?', [shopId, type, text]],
    ['select id, 1, similarity(number_search, ?) from documents where number_search like ? and shop_id = ? and type = ?', [needle, contains, shopId, type]],
  ];
  if (withCustomer) {
    arms.push(['select id, 2, similarity(customer_search, ?) from documents where customer_search like ? and shop_id = ? and type = ?', [needle, contains, shopId, type]]);
  }
  return {
    sql: `select id, min(rank) as rank, max(score) as score from (${arms.map((a) => a[0]).join(' union all ')}) hits group by id order by min(rank), max(score) desc, id desc limit ?`,
    bindings: [...arms.flatMap((a) => a[1]), limit],
  };
}

/**
 * Search by document number, order number and variable symbol — and, when `withCustomer`, by the customer's name or
 * company — most relevant first: exact numbers, then numbers containing the text (by trigram similarity), then
 * customers (by similarity). Each arm runs on its own index (b-tree for exact numbers, pg_trgm GIN for the rest).
 */
export async function searchDocuments(db: Db, shopId: string, type: DocumentType, text: string, limit: number, withCustomer: boolean): Promise<DocumentRecord[]> {
  const { sql, bindings } = documentSearchSql(shopId, type, text, limit, withCustomer);
  const ranked = await db.raw(sql, bindings);
  const ids: string[] = ranked.rows.map((r: { id: string }) => String(r.id));
  if (!ids.length) return [];
  const rows: DocumentRow[] = await selectDocuments(db).whereIn('d.id', ids);
  const byId = new Map(rows.map((r) => [String(r.id), r]));
  return ids.map((id) => toDocument(byId.get(id)!));
}

/** One document of a shop by kind and code, or null. */
export async function getDocument(db: Db, shopId: string, type: DocumentType, code: string): Promise<DocumentRecord | null> {
  const row: DocumentRow | undefined = await selectDocuments(db).where({ 'd.shop_id': shopId, 'd.type': type, 'd.code': code }).first();
  return row ? toDocument(row) : null;
}

const relation = (d: DocumentRecord) => ({ code: d.code, issuedAt: d.issuedAt, businessDate: d.businessDate, totalWithVat: d.totalWithVat, lifecycle: d.lifecycle, valid: d.valid });

/** One invoice with its credit notes and the proformas of its order. */
export async function getInvoice(db: Db, shopId: string, code: string) {
  const invoice = await getDocument(db, shopId, 'invoice', code);
  if (!invoice) return null;
  const related: DocumentRow[] = await selectDocuments(db).where('d.shop_id', shopId)
    .where((w) => w.where({ 'd.type': 'credit_note', 'd.related_code': code }).orWhere((o) => o.where({ 'd.type': 'proforma' }).where('d.order_code', invoice.orderCode ?? '')))
    .orderBy([{ column: 'd.issued_at' }, { column: 'd.id' }]);
  const documents = related.map(toDocument);
  return {
    ...invoice,
    creditNotes: documents.filter((d) => d.documentType === 'credit_note').map(relation),
    proformas: documents.filter((d) => d.documentType === 'proforma').map(relation),
  };
}

export type PdfLookup =
  | { status: 'not_found' }
  | { status: 'unavailable' }
  | { status: 'ok'; sha256: string; sizeBytes: number; content: Buffer };

/** The stored PDF of a document; rendered and stored on this first read when the document came as history. */
export async function getDocumentPdf(db: Db, shopId: string, type: DocumentType, code: string): Promise<PdfLookup> {
  const read = () => db('documents as d').leftJoin('document_pdfs as p', 'p.document_id', 'd.id')
    .where({ 'd.shop_id': shopId, 'd.type': type, 'd.code': code })
    .first('d.id', 'd.pdf_available', 'p.sha256', 'p.size_bytes', 'p.content');
  let row = await read();
  if (!row) return { status: 'not_found' };
  if (!row.pdf_available) return { status: 'unavailable' };
  if (!row.content) {
    await ensureDocumentPdfs(db, [row.id]);
    row = await read();
  }
  return { status: 'ok', sha256: row.sha256, sizeBytes: row.size_bytes, content: row.content };
}
