/**
 * Importing product texts from a file (issue 25.4): a CSV or XLSX whose first row names the columns — `code` and any
 * of the product text fields (`description`, `shortDescription`, `metaTitle`, `metaDescription`). The preview keeps
 * only what really changes (a text equal to the shop's is left out) with the fingerprint it was compared against; the
 * person confirms it once and it is written as one batch (its id is the events' `source_run_id`).
 */
import type { Db } from '../db/knex.js';
import { AppError, toAppError, type ErrorCode } from '../errors.js';
import type { Person } from '../people/model.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import { prepareTextItems } from '../proposals/create.js';
import { PRODUCT_TEXT_FIELDS, type TextField } from '../proposals/model.js';
import { getProductContent } from '../queries/content.js';
import { newBatchId, requireTextEditor, shopOfPerson, writeTextBatch, type ItemResult } from './writes.js';

/** Most product rows one file may carry (a larger catalogue is imported in parts). */
export const IMPORT_MAX_ROWS = 500;
/** Largest file accepted, in bytes. */
export const IMPORT_MAX_BYTES = 2 * 1024 * 1024;

export interface ImportRow {
  /** 1-based row of the file (the header is row 1). */
  row: number;
  code: string;
  fields: Partial<Record<TextField, string>>;
}

const invalid = (reason: string, message: string, details: Record<string, unknown> = {}) => new AppError('IMPORT_FILE_INVALID', message, { reason, ...details });

/** RFC 4180 records (quoted fields, doubled quotes, CRLF or LF); the delimiter is `,` or, when the header has none, `;`. */
export function parseCsv(text: string): string[][] {
  const body = text.replace(/^\uFEFF/, '');
  const firstLine = body.split(/\r?\n/, 1)[0] ?? '';
  const delimiter = !firstLine.includes(',') && firstLine.includes(';') ? ';' : ',';
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < body.length; i += 1) {
    const c = body[i];
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') { cell += '"'; i += 1; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === delimiter) { record.push(cell); cell = ''; } else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i += 1;
      record.push(cell); records.push(record); record = []; cell = '';
    } else cell += c;
  }
  if (quoted) throw invalid('unreadable', 'The CSV file ends inside a quoted value.', { row: records.length + 1 });
  if (cell !== '' || record.length > 0) { record.push(cell); records.push(record); }
  return records.filter((r) => r.some((v) => v.trim() !== ''));
}

async function xlsxRecords(bytes: Buffer): Promise<string[][]> {
  // exceljs is loaded on first use: it costs every process start about 0.4 s of CPU otherwise (decision Q16).
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch {
    throw invalid('unreadable', 'The XLSX file cannot be read.');
  }
  const sheet = workbook.worksheets[0];
  if (!sheet) throw invalid('empty', 'The XLSX file has no sheet.');
  const records: string[][] = [];
  sheet.eachRow({ includeEmpty: false }, (row) => {
    const values: string[] = [];
    for (let c = 1; c <= row.cellCount; c += 1) values.push(row.getCell(c).text ?? '');
    records.push(values);
  });
  return records.filter((r) => r.some((v) => v.trim() !== ''));
}

/**
 * The rows of an import file. An empty cell leaves that field as it is (a text is never cleared by an import); a
 * column other than `code` and the product text fields, a missing `code` column, a repeated code or more than
 * IMPORT_MAX_ROWS rows refuse the whole file.
 */
export async function parseImportFile(fileName: string, bytes: Buffer): Promise<ImportRow[]> {
  const lower = fileName.toLowerCase();
  if (bytes.length === 0) throw invalid('empty', 'The file is empty.');
  if (bytes.length > IMPORT_MAX_BYTES) throw invalid('too_large', `The file is larger than ${IMPORT_MAX_BYTES} bytes.`);
  let records: string[][];
  if (lower.endsWith('.csv')) records = parseCsv(bytes.toString('utf8'));
  else if (lower.endsWith('.xlsx')) records = await xlsxRecords(bytes);
  else throw invalid('format', 'Upload a .csv or .xlsx file.', { fileName });
  if (records.length === 0) throw invalid('empty', 'The file has no rows.');
  const header = records[0].map((h) => h.trim());
  const codeColumn = header.indexOf('code');
  if (codeColumn < 0) throw invalid('no_code_column', 'The first row must name a `code` column.', { row: 1 });
  const columns = header.map((name, index) => ({ name, index })).filter((c) => c.index !== codeColumn && c.name !== '');
  const unknown = columns.find((c) => !(PRODUCT_TEXT_FIELDS as readonly string[]).includes(c.name));
  if (unknown) throw invalid('unknown_column', `Unknown column \`${unknown.name}\`; use code, ${PRODUCT_TEXT_FIELDS.join(', ')}.`, { column: unknown.name, row: 1 });
  if (records.length - 1 > IMPORT_MAX_ROWS) throw invalid('too_many_rows', `The file has ${records.length - 1} rows; at most ${IMPORT_MAX_ROWS} per import.`, { rows: records.length - 1 });
  const seen = new Set<string>();
  return records.slice(1).map((record, i) => {
    const row = i + 2;
    const code = (record[codeColumn] ?? '').trim();
    if (!code) throw invalid('no_code_column', `Row ${row} has no code.`, { row });
    if (seen.has(code)) throw invalid('duplicate_code', `Code \`${code}\` appears twice (row ${row}).`, { row, code });
    seen.add(code);
    const fields = Object.fromEntries(columns.map((c) => [c.name, (record[c.index] ?? '').replace(/\r\n/g, '\n')]).filter(([, v]) => v !== '')) as Partial<Record<TextField, string>>;
    return { row, code, fields };
  });
}

export interface PreviewChange {
  id: string;
  name: string;
  fingerprint: string;
  /** Only fields whose text differs from the shop's, with the text before. */
  changes: Partial<Record<TextField, string>>;
  before: Partial<Record<TextField, string | null>>;
}

export interface ImportPreview {
  changes: PreviewChange[];
  /** Rows left out because they cannot be written (unknown code, field not writable, too long). */
  problems: Array<{ row: number; code: string; error: ErrorCode; message: string }>;
  /** Rows whose every text equals the shop's. */
  unchanged: number;
}

/** Reads the file against the shop's current texts and keeps the preview as a batch awaiting confirmation. */
export async function previewImport(db: Db, person: Person, shopCode: string, fileName: string, bytes: Buffer, now: Date): Promise<{ batchId: string; preview: ImportPreview }> {
  requireTextEditor(person);
  const shop = await shopOfPerson(db, person, shopCode);
  const rows = await parseImportFile(fileName, bytes);
  const preview: ImportPreview = { changes: [], problems: [], unchanged: 0 };
  for (const row of rows) {
    const content = await getProductContent(db, shop.id, row.code);
    try {
      if (!content) throw new AppError('PROPOSAL_TARGET_NOT_FOUND', `Shop \`${shop.code}\` has no product \`${row.code}\`.`);
      if (Object.keys(row.fields).length === 0) { preview.unchanged += 1; continue; }
      const [item] = await prepareTextItems(db, shop, 'product', [{ id: row.code, fingerprint: content.fingerprint, fields: row.fields }], { checkFingerprint: true });
      if (!item) { preview.unchanged += 1; continue; }
      preview.changes.push({ id: row.code, name: item.entityName ?? content.name, fingerprint: content.fingerprint, changes: item.changes as PreviewChange['changes'], before: item.before as PreviewChange['before'] });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.code === 'INTERNAL_ERROR') throw error;
      preview.problems.push({ row: row.row, code: row.code, error: appError.code, message: appError.message });
    }
  }
  const batchId = newBatchId();
  await db('text_edit_batches').insert({
    id: batchId, account_id: person.accountId, shop_id: shop.id, person_id: person.id, entity: 'product', kind: 'import', status: 'previewed',
    items: JSON.stringify(preview), file_name: fileName.slice(0, 200), created_at: now,
  });
  return { batchId, preview };
}

/** A write batch of this person (an import previewed or written, a bulk edit); another person's or account's is not found. */
export async function getBatch(db: Db, person: Person, batchId: string) {
  const row = await db('text_edit_batches').join('shops', 'shops.id', 'text_edit_batches.shop_id')
    .where({ 'text_edit_batches.id': batchId, 'text_edit_batches.account_id': person.accountId, 'text_edit_batches.person_id': person.id })
    .first('text_edit_batches.*', 'shops.code as shop_code');
  if (!row || (person.shopCodes && !person.shopCodes.has(row.shop_code))) throw new AppError('NOT_FOUND', 'No such write batch.');
  return {
    id: row.id as string, kind: row.kind as string, market: row.shop_code as string, status: row.status as 'previewed' | 'written', fileName: row.file_name as string,
    preview: row.items as ImportPreview, results: (row.results ?? null) as ItemResult[] | null,
    createdAt: (row.created_at as Date).toISOString(), writtenAt: row.written_at ? (row.written_at as Date).toISOString() : null,
  };
}

/**
 * Writes a previewed import once: the batch is claimed (previewed → written) before anything is sent, so a second
 * confirmation is refused; a product whose texts changed since the preview fails with STALE_FINGERPRINT.
 */
export async function confirmImport(db: Db, platforms: PlatformRegistry | undefined, person: Person, batchId: string, now: Date): Promise<ItemResult[]> {
  requireTextEditor(person);
  const batch = await getBatch(db, person, batchId);
  if (batch.kind !== 'import') throw new AppError('NOT_FOUND', 'No such import.');
  const shop = await shopOfPerson(db, person, batch.market);
  const claimed = await db('text_edit_batches').where({ id: batchId, status: 'previewed' }).update({ status: 'written', written_at: now });
  if (claimed === 0) throw new AppError('IMPORT_ALREADY_CONFIRMED', 'This import was already confirmed.');
  const entries = batch.preview.changes.map((c) => ({ id: c.id, fingerprint: c.fingerprint, fields: c.changes }));
  const { results } = await writeTextBatch(db, platforms, person, shop, 'product', entries, { kind: 'import', checkFingerprint: true, batchId }, now);
  return results;
}
