/**
 * The customer export (SPEC "Two different reads"): exactly the directory projection of `customers.list` — the same
 * capability, the same caller scopes, every page — flattened to one column per field of its result schema. A field
 * the caller's scopes remove is not a column at all (absent, as in the API). CSV (RFC 4180, UTF-8 with BOM so
 * spreadsheet programs read the accents) and XLSX (exceljs).
 */
import { z } from 'zod';
import type { Caller } from '../capabilities/context.js';
import { customersList } from '../capabilities/areas/customers.js';
import { LIST_LIMIT } from '../capabilities/params.js';
import { runCapability, type RunDeps } from '../capabilities/run.js';

export interface DirectoryQuery {
  market: string;
  search?: string;
  purchaseFrom?: string;
  purchaseTo?: string;
}

export interface ExportTable {
  columns: string[];
  rows: Array<Array<string | number | null>>;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return s;
}

/** The column paths of a result schema: nested objects become `parent.child`. */
function columnsOf(schema: z.ZodObject, prefix = ''): string[] {
  return Object.entries(schema.shape).flatMap(([key, child]) => {
    const inner = unwrap(child as z.ZodType);
    return inner instanceof z.ZodObject ? columnsOf(inner, `${prefix}${key}.`) : [`${prefix}${key}`];
  });
}

const PERIOD_COLUMNS = ['periodFrom', 'periodTo', 'periodOrdersCount', 'periodRevenueByCurrency'];

/** One cell: money lists read "12.30 EUR; 4.00 CZK", code lists "cz sk", absent or null is empty. */
function cell(value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) {
    return value.map((v) => (v && typeof v === 'object' && 'amount' in v && 'currency' in v ? `${(v as { amount: string }).amount} ${(v as { currency: string }).currency}` : String(v)))
      .join(value.some((v) => typeof v === 'object') ? '; ' : ' ');
  }
  if (typeof value === 'number' || typeof value === 'string') return value;
  return JSON.stringify(value);
}

const at = (record: Record<string, unknown>, path: string) => path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), record);

/**
 * Walks every page of the directory for this caller and lays it out as columns and rows. With `stopAfterRows` the walk
 * ends as soon as it has more rows than that (the caller then knows the export is a large one).
 */
export async function exportDirectory(
  query: DirectoryQuery, caller: Caller, requestId: string, deps: RunDeps, onPage?: (rowsSoFar: number) => Promise<void> | void, stopAfterRows?: number,
): Promise<ExportTable> {
  const withPeriod = query.purchaseFrom !== undefined;
  const hidden = new Set(Object.entries(customersList.fieldScopes ?? {}).filter(([, scope]) => !caller.scopes.has(scope)).map(([path]) => path));
  const columns = columnsOf(customersList.result as unknown as z.ZodObject)
    .filter((c) => !hidden.has(c.split('.')[0]) && (withPeriod || !PERIOD_COLUMNS.includes(c)));
  const rows: ExportTable['rows'] = [];
  let cursor: string | undefined;
  do {
    const params: Record<string, unknown> = { ...query, limit: LIST_LIMIT.max, ...(cursor ? { cursor } : {}) };
    const output = await runCapability(customersList, params, caller, requestId, deps);
    for (const entry of output.data as Array<Record<string, unknown>>) rows.push(columns.map((c) => cell(at(entry, c))));
    cursor = output.list?.nextCursor ?? undefined;
    await onPage?.(rows.length);
  } while (cursor && !(stopAfterRows !== undefined && rows.length > stopAfterRows));
  return { columns, rows };
}

/**
 * A CSV cell that a spreadsheet would run as a formula (starting with =, @, tab, CR, or + / - not followed by a digit)
 * is prefixed with an apostrophe; phone numbers (+421 …) and negative amounts stay as they are. XLSX cells are typed
 * strings, never formulas, so the XLSX keeps every value exactly.
 */
function neutralised(value: string): string {
  return /^([=@\t\r]|[+-][^0-9 ])/.test(value) ? `'${value}` : value;
}

function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? String(value) : neutralised(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(table: ExportTable): Buffer {
  const lines = [table.columns, ...table.rows].map((row) => row.map(csvField).join(','));
  return Buffer.from(`\uFEFF${lines.join('\r\n')}\r\n`, 'utf8');
}

export async function toXlsx(table: ExportTable): Promise<Buffer> {
  // exceljs is loaded on first use: it costs every process start about 0.4 s of CPU otherwise (decision Q16).
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Customers');
  sheet.addRow(table.columns);
  sheet.getRow(1).font = { bold: true };
  for (const row of table.rows) sheet.addRow(row);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
