/** Accounting documents: invoices, proformas and credit notes of one shop, their relations and their stored PDFs. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { moneySchema } from '../../money.js';
import { getDocumentPdf, getInvoice, listDocuments, searchDocuments, type DocumentType } from '../../queries/documents.js';
import { listParams, market, query } from '../params.js';
import type { FieldScopes } from '../projection.js';
import { defineCapability, readOnly } from '../types.js';

export const DOCUMENT_TYPES = ['invoice', 'proforma', 'credit_note'] as const;
const LIFECYCLES = ['issued', 'paid', 'settled', 'partially_credited', 'credited', 'cancelled'] as const;
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const documentCode = z.string().min(1).max(64);

const personal = (text = '') => `${text}Needs \`personal-data:read\`; absent without it.`.trim();

const documentItem = z.object({
  lineNo: z.number().int(),
  kind: z.enum(['product', 'shipping', 'discount']).describe('`product`: goods; `shipping`: the shipping charge; `discount`: a coupon\'s discount at one VAT rate (negative, no product), as on the order.'),
  productCode: z.string().nullable(),
  name: z.string(),
  quantity: z.string().describe('Decimal string; negative on a credit note.'),
  unitPriceWithVat: moneySchema,
  totalWithVat: moneySchema,
  totalWithoutVat: moneySchema,
  vatRate: z.string().describe('VAT rate in percent, decimal string.'),
});

const vatRate = z.object({
  vatRate: z.string().describe('VAT rate in percent, decimal string.'),
  base: moneySchema.describe('Amount without VAT at this rate.'),
  vat: moneySchema,
  total: moneySchema.describe('Amount with VAT at this rate.'),
});

export const documentSchema = z.object({
  documentType: z.enum(DOCUMENT_TYPES),
  code: z.string().describe('Document number in the shop.'),
  orderCode: z.string().nullable().describe('The order the document belongs to.'),
  relatedInvoiceCode: z.string().nullable().describe('For a credit note: the invoice it corrects; null otherwise.'),
  issuedAt: z.string().describe('Issue instant, ISO 8601 UTC with milliseconds.'),
  issueDate: date.nullable().describe('Issue date in the shop\'s time zone.'),
  taxDate: date.nullable().describe('Tax date; null for a proforma (D21).'),
  dueDate: date.nullable(),
  businessDate: date.nullable().describe('The date that places the document in a period: the tax date, or the issue date when the tax date is empty.'),
  currency: z.string().length(3).describe('The document\'s own currency; every amount is in it.'),
  totalWithVat: moneySchema,
  totalWithoutVat: moneySchema,
  totalVat: moneySchema,
  vatBreakdown: z.array(vatRate).describe('Amounts per VAT rate, highest rate first; they add up to the totals.'),
  variableSymbol: z.string().nullable().describe('Payment reference.'),
  paymentMethod: z.string().nullable(),
  customerEmailHash: z.string().nullable().describe('Pseudonym of the buyer: equals `customerKey` of the customer directory.'),
  lifecycle: z.enum(LIFECYCLES).describe('Where the document stands: `issued`; `paid` (invoice, proforma); `settled` (a proforma followed by its invoice); `partially_credited`/`credited` (an invoice corrected by credit notes); `cancelled` (voided in the shop).'),
  sourceState: z.string().nullable().describe('The state exactly as the shop platform names it.'),
  valid: z.boolean().describe('False once the shop cancelled (voided) the document.'),
  updatedAt: z.string().nullable().describe('Last change of the state in the shop.'),
  pdfAvailable: z.boolean().describe('Whether /documents/{documentType}/{code}/pdf has the PDF; false for a document the shop holds no printable form of.'),
  customer: z.object({
    firstName: z.string().nullable().optional().describe(personal()),
    lastName: z.string().nullable().optional().describe(personal()),
    company: z.string().nullable().optional().describe(personal()),
    email: z.string().nullable().optional().describe(personal()),
    phone: z.string().nullable().optional().describe(personal()),
    street: z.string().nullable().optional().describe(personal()),
    zip: z.string().nullable().optional().describe(personal()),
    city: z.string().nullable(),
    country: z.string().nullable().describe('ISO 3166-1 alpha-2.'),
  }).describe('The buyer. Without `personal-data:read` only `city` and `country` are present.'),
  items: z.array(documentItem).describe('Lines as printed: goods, shipping, discount lines; they add up to the totals.'),
});

/** Personal data on documents (SPEC rule 5 of "Rules that hold on every new path"): removed without the scope. */
const documentFieldScopes: FieldScopes = {
  'customer.firstName': 'personal-data:read',
  'customer.lastName': 'personal-data:read',
  'customer.company': 'personal-data:read',
  'customer.email': 'personal-data:read',
  'customer.phone': 'personal-data:read',
  'customer.street': 'personal-data:read',
  'customer.zip': 'personal-data:read',
};

const documentQuery = query.describe('Switches the listing to a search by document number, order number or variable symbol — and, with `personal-data:read`, the customer\'s name or company — ordered by relevance: at most `limit` records, not paginated, not restricted by period.');

/** One listing/search capability per document kind that SPEC gives two modes (invoices, credit notes). */
function documentSearch(type: DocumentType, names: { name: string; path: string; tool: string; plural: string }) {
  return defineCapability({
    name: names.name,
    summary: `${names.plural[0].toUpperCase()}${names.plural.slice(1)} of a shop: listing by business date, or search.`,
    description: `Without \`query\`: the ${names.plural} of the shop \`market\`, newest first by \`businessDate\` (tax date, or issue date when it is empty), in pages (send \`nextCursor\` back as \`cursor\`), optionally with \`businessDate\` within \`from\`/\`to\`. With \`query\`: a search by document number, order number and variable symbol (and, only with \`personal-data:read\`, customer name or company), ordered by relevance (exact numbers first), at most \`limit\` records (default 20, max 100), not paginated and not restricted by period — \`query\` with \`cursor\`, \`from\` or \`to\` is an error. Amounts are in the document's own currency.`,
    path: names.path,
    scope: 'invoices:read',
    mcpTool: names.tool,
    kind: 'list',
    market: 'required',
    period: { default: 'all' },
    searchParam: 'query',
    params: z.object({ ...listParams, query: documentQuery.optional() }).strict(),
    result: documentSchema,
    fieldScopes: documentFieldScopes,
    annotations: readOnly,
    handler: async ({ params, ctx, period, page }) => {
      if (params.query !== undefined) {
        return searchDocuments(ctx.db, ctx.shop!.id, type, params.query, page.limit, ctx.caller.scopes.has('personal-data:read'));
      }
      return listDocuments(ctx.db, ctx.shop!.id, type, { validity: 'all' }, period, page);
    },
  });
}

/** Lists or searches a shop's invoices. */
export const invoicesSearch = documentSearch('invoice', { name: 'invoices.search', path: '/invoices', tool: 'invoices_search', plural: 'invoices' });

/** Lists or searches a shop's credit notes. */
export const creditNotesSearch = documentSearch('credit_note', { name: 'credit_notes.search', path: '/credit-notes', tool: 'credit_notes_search', plural: 'credit notes' });

const relatedDocument = z.object({
  code: z.string(),
  issuedAt: z.string(),
  businessDate: date.nullable(),
  totalWithVat: moneySchema,
  lifecycle: z.enum(LIFECYCLES),
  valid: z.boolean(),
});

/** Reads one invoice with items, amounts, credit notes, proformas and order number. */
export const invoicesGet = defineCapability({
  name: 'invoices.get',
  summary: 'One invoice with items, amounts, credit notes, proformas and order number.',
  description: 'Returns one invoice of the shop `market` by its number: items, VAT per rate, totals in the invoice\'s currency, lifecycle, the credit notes that correct it, the proformas of its order, and the order number. An invoice of another shop is not found.',
  path: '/invoices/{invoiceCode}',
  scope: 'invoices:read',
  mcpTool: 'invoices_get',
  kind: 'get',
  market: 'required',
  params: z.object({ market, invoiceCode: documentCode.describe('Invoice number in the shop.') }).strict(),
  result: documentSchema.extend({
    creditNotes: z.array(relatedDocument).describe('Credit notes correcting this invoice, oldest first.'),
    proformas: z.array(relatedDocument).describe('Proformas of the same order, oldest first.'),
  }),
  fieldScopes: documentFieldScopes,
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const invoice = await getInvoice(ctx.db, ctx.shop!.id, params.invoiceCode);
    if (!invoice) throw new AppError('NOT_FOUND', `No invoice \`${params.invoiceCode}\` in shop \`${ctx.shop!.code}\`.`, { param: 'invoiceCode' });
    return invoice;
  },
});

/** Lists one kind of accounting document with lifecycle, state in the source, validity and PDF availability. */
export const documentsList = defineCapability({
  name: 'documents.list',
  summary: 'Accounting documents of one kind in pages, with lifecycle, state in the source, validity and PDF availability.',
  description: 'Returns the documents of one kind (`documentType`: `invoice`, `proforma` or `credit_note`) of the shop `market`, newest first by `businessDate`, in pages (send `nextCursor` back as `cursor` with the other parameters unchanged). `validity` keeps only valid (`valid`) or only cancelled (`cancelled`) documents (default `all`); `lifecycle` keeps one state; `from`/`to` restrict `businessDate`. `pdfAvailable` tells whether the PDF can be read at /documents/{documentType}/{code}/pdf.',
  path: '/documents',
  scope: 'invoices:read',
  mcpTool: null,
  kind: 'list',
  market: 'required',
  period: { default: 'all' },
  params: z.object({
    ...listParams,
    documentType: z.enum(DOCUMENT_TYPES).describe('The kind of document: one kind per call.'),
    validity: z.enum(['valid', 'cancelled', 'all']).optional().describe('`valid`: only documents not cancelled in the shop; `cancelled`: only cancelled ones; `all` (default).'),
    lifecycle: z.enum(LIFECYCLES).optional().describe('Only documents in this state.'),
  }).strict(),
  result: documentSchema,
  fieldScopes: documentFieldScopes,
  annotations: readOnly,
  handler: ({ params, ctx, period, page }) =>
    listDocuments(ctx.db, ctx.shop!.id, params.documentType, { validity: params.validity ?? 'all', lifecycle: params.lifecycle }, period, page),
});

/** Returns the stored PDF of one document as base64 with its SHA-256. */
export const documentsPdf = defineCapability({
  name: 'documents.pdf',
  summary: 'PDF of an invoice, proforma or credit note as base64 plus SHA-256.',
  description: 'Returns the PDF of one document of the shop `market`: the bytes rendered once when the document was first stored and never regenerated, so every read (and the application\'s document view) gets the same bytes; `sha256` is the SHA-256 of the decoded bytes. A document without a printable form (`pdfAvailable` false) is a 404 `PDF_NOT_AVAILABLE`; an unknown document a 404 `NOT_FOUND`.',
  path: '/documents/{documentType}/{code}/pdf',
  scope: 'invoices:read',
  mcpTool: null,
  kind: 'get',
  market: 'required',
  params: z.object({ market, documentType: z.enum(DOCUMENT_TYPES).describe('The kind of document.'), code: documentCode.describe('Document number in the shop.') }).strict(),
  result: z.object({
    documentType: z.enum(DOCUMENT_TYPES),
    code: z.string(),
    contentType: z.literal('application/pdf'),
    sizeBytes: z.number().int(),
    sha256: z.string().length(64).describe('Lower-case hex SHA-256 of the PDF bytes.'),
    base64: z.string().describe('The PDF bytes, base64.'),
  }),
  annotations: readOnly,
  handler: async ({ params, ctx }) => {
    const pdf = await getDocumentPdf(ctx.db, ctx.shop!.id, params.documentType, params.code);
    if (pdf.status === 'not_found') throw new AppError('NOT_FOUND', `No ${params.documentType} \`${params.code}\` in shop \`${ctx.shop!.code}\`.`, { param: 'code' });
    if (pdf.status === 'unavailable') {
      throw new AppError('PDF_NOT_AVAILABLE', `The shop has no printable form of ${params.documentType} \`${params.code}\`.`, { param: 'code', documentType: params.documentType, code: params.code });
    }
    return { documentType: params.documentType, code: params.code, contentType: 'application/pdf' as const, sizeBytes: pdf.sizeBytes, sha256: pdf.sha256, base64: pdf.content.toString('base64') };
  },
});
