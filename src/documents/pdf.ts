/**
 * The printable form of an invoice, proforma or credit note, rendered with pdfkit from the STORED document only, so a
 * PDF rendered when the sync stores a document and one rendered on a first read of a loaded document are the same
 * bytes. Rendering is deterministic: the creation date is the issue instant, the metadata is fixed, and the fonts are
 * embedded DejaVu Sans (covers Slovak, Czech, Hungarian and Polish; the PDF standard fonts do not).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type PDFKitModule from 'pdfkit';

export interface PdfLine {
  name: string;
  quantity: string;
  unitPriceWithVat: string;
  totalWithoutVat: string;
  totalWithVat: string;
  vatRate: string;
}

export interface PdfVatRate {
  vatRate: string;
  base: string;
  vat: string;
  total: string;
}

/** Everything printed on the document, as stored (decimal strings of D4). */
export interface PdfInput {
  shopName: string;
  language: string;
  type: 'invoice' | 'proforma' | 'credit_note';
  code: string;
  orderCode: string | null;
  relatedCode: string | null;
  issuedAt: Date;
  issueDate: string | null;
  taxDate: string | null;
  dueDate: string | null;
  currency: string;
  variableSymbol: string | null;
  paymentMethod: string | null;
  buyer: string[];
  lines: PdfLine[];
  vatBreakdown: PdfVatRate[];
  totalWithoutVat: string;
  totalVat: string;
  totalWithVat: string;
}

export interface RenderedPdf {
  content: Buffer;
  sha256: string;
  sizeBytes: number;
}

type Labels = Record<'invoice' | 'proforma' | 'credit_note' | 'order' | 'corrects' | 'issued' | 'taxDate' | 'due' | 'vs' | 'payment' | 'buyer' | 'item' | 'qty' | 'unit' | 'rate' | 'base' | 'vat' | 'total' | 'totalDue', string>;

/** Labels in the shop's language (the language its customers read the document in). */
const LABELS: Record<string, Labels> = {
  sk: {
    invoice: 'Faktúra', proforma: 'Zálohová faktúra', credit_note: 'Dobropis', order: 'Objednávka', corrects: 'K faktúre', issued: 'Dátum vystavenia',
    taxDate: 'Dátum dodania', due: 'Splatnosť', vs: 'Variabilný symbol', payment: 'Spôsob úhrady', buyer: 'Odberateľ', item: 'Položka', qty: 'Množstvo',
    unit: 'Cena/ks s DPH', rate: 'DPH %', base: 'Základ', vat: 'DPH', total: 'Spolu s DPH', totalDue: 'Celkom na úhradu',
  },
  cs: {
    invoice: 'Faktura', proforma: 'Zálohová faktura', credit_note: 'Opravný daňový doklad', order: 'Objednávka', corrects: 'K faktuře', issued: 'Datum vystavení',
    taxDate: 'DUZP', due: 'Splatnost', vs: 'Variabilní symbol', payment: 'Způsob úhrady', buyer: 'Odběratel', item: 'Položka', qty: 'Množství',
    unit: 'Cena/ks s DPH', rate: 'DPH %', base: 'Základ', vat: 'DPH', total: 'Celkem s DPH', totalDue: 'Celkem k úhradě',
  },
  hu: {
    invoice: 'Számla', proforma: 'Előlegbekérő', credit_note: 'Jóváíró számla', order: 'Rendelés', corrects: 'Helyesbített számla', issued: 'Kiállítás dátuma',
    taxDate: 'Teljesítés dátuma', due: 'Fizetési határidő', vs: 'Közlemény', payment: 'Fizetési mód', buyer: 'Vevő', item: 'Tétel', qty: 'Mennyiség',
    unit: 'Egységár bruttó', rate: 'ÁFA %', base: 'Nettó', vat: 'ÁFA', total: 'Bruttó', totalDue: 'Fizetendő összesen',
  },
  pl: {
    invoice: 'Faktura', proforma: 'Faktura proforma', credit_note: 'Faktura korygująca', order: 'Zamówienie', corrects: 'Do faktury', issued: 'Data wystawienia',
    taxDate: 'Data sprzedaży', due: 'Termin płatności', vs: 'Tytuł płatności', payment: 'Sposób płatności', buyer: 'Nabywca', item: 'Pozycja', qty: 'Ilość',
    unit: 'Cena jedn. brutto', rate: 'VAT %', base: 'Netto', vat: 'VAT', total: 'Brutto', totalDue: 'Razem do zapłaty',
  },
};

/** The printed labels of a document in the shop's language: the PDF and the application's document view use the same. */
export function documentLabels(language: string): Labels {
  return LABELS[language] ?? LABELS.sk;
}

const require = createRequire(import.meta.url);

/**
 * A new pdfkit document. pdfkit (with fontkit and its tables) is loaded on the first PDF, not when a process starts:
 * most processes never render one, and loading it costs each about 0.2 s of CPU (decision Q16).
 */
export function newPdfDocument(options: PDFKit.PDFDocumentOptions): PDFKit.PDFDocument {
  const PDFDocument = require('pdfkit') as typeof PDFKitModule;
  return new PDFDocument(options);
}
let fonts: { regular: Buffer; bold: Buffer } | null = null;

/** The embedded fonts, read once per process. */
export function loadFonts(): { regular: Buffer; bold: Buffer } {
  fonts ??= {
    regular: fs.readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
    bold: fs.readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
  };
  return fonts;
}

const COLUMNS = [
  { x: 40, width: 215, align: 'left' as const },
  { x: 255, width: 50, align: 'right' as const },
  { x: 305, width: 80, align: 'right' as const },
  { x: 385, width: 45, align: 'right' as const },
  { x: 430, width: 125, align: 'right' as const },
];

function row(doc: PDFKit.PDFDocument, cells: string[], y: number): number {
  let height = 0;
  cells.forEach((text, i) => {
    const c = COLUMNS[i];
    doc.text(text, c.x, y, { width: c.width, align: c.align });
    height = Math.max(height, doc.heightOfString(text, { width: c.width }));
  });
  return y + height + 4;
}

/** Renders the document; the same input always gives the same bytes. */
export function renderDocumentPdf(input: PdfInput): Promise<RenderedPdf> {
  const labels = documentLabels(input.language);
  const { regular, bold } = loadFonts();
  const title = `${labels[input.type]} ${input.code}`;
  const doc = newPdfDocument({
    size: 'A4', margin: 40, compress: true,
    info: { Title: title, Author: input.shopName, Creator: 'store-operations data service', Producer: 'pdfkit', CreationDate: input.issuedAt, ModDate: input.issuedAt },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<RenderedPdf>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('error', reject);
    doc.on('end', () => {
      const content = Buffer.concat(chunks);
      resolve({ content, sha256: crypto.createHash('sha256').update(content).digest('hex'), sizeBytes: content.length });
    });
  });
  doc.registerFont('regular', regular);
  doc.registerFont('bold', bold);

  doc.font('bold').fontSize(16).text(input.shopName, 40, 40);
  doc.fontSize(14).text(title, 40, 64);
  doc.font('regular').fontSize(9);
  const facts: Array<[string, string | null]> = [
    [labels.order, input.orderCode],
    [labels.corrects, input.relatedCode],
    [labels.issued, input.issueDate],
    [labels.taxDate, input.taxDate],
    [labels.due, input.dueDate],
    [labels.vs, input.variableSymbol],
    [labels.payment, input.paymentMethod],
  ];
  let y = 92;
  for (const [label, value] of facts) {
    if (value === null) continue;
    doc.text(`${label}: ${value}`, 40, y);
    y += 13;
  }
  doc.font('bold').text(labels.buyer, 330, 92);
  doc.font('regular');
  input.buyer.forEach((line, i) => doc.text(line, 330, 105 + i * 13, { width: 225 }));
  y = Math.max(y, 105 + input.buyer.length * 13) + 16;

  doc.font('bold');
  y = row(doc, [labels.item, labels.qty, labels.unit, labels.rate, `${labels.total} (${input.currency})`], y);
  doc.font('regular');
  for (const line of input.lines) {
    if (y > 760) {
      doc.addPage();
      y = 40;
    }
    y = row(doc, [line.name, line.quantity, line.unitPriceWithVat, line.vatRate, line.totalWithVat], y);
  }
  y += 10;
  doc.font('bold');
  y = row(doc, [labels.rate, '', labels.base, labels.vat, labels.total], y);
  doc.font('regular');
  for (const v of input.vatBreakdown) y = row(doc, [`${v.vatRate} %`, '', v.base, v.vat, v.total], y);
  y += 10;
  doc.font('bold').fontSize(12);
  doc.text(`${labels.totalDue}: ${input.totalWithVat} ${input.currency}`, 40, y, { width: 515, align: 'right' });
  doc.font('regular').fontSize(9);
  doc.text(`${labels.base}: ${input.totalWithoutVat} ${input.currency}   ${labels.vat}: ${input.totalVat} ${input.currency}`, 40, y + 18, { width: 515, align: 'right' });
  doc.end();
  return done;
}
