/**
 * Large customer exports (issue 25.1): an export whose directory has more than EXPORT_DIRECT_MAX_ROWS rows is not
 * made while the person waits but by the Temporal workflow `customer-export-<id>`, which walks the same directory
 * projection (src/customers/export.ts) with the person's rights as they are when it runs, records its progress, and
 * keeps the file for the person to download until it expires. Smaller exports stay direct.
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';
import { AppError, toAppError } from '../errors.js';
import { personAsCaller } from '../people/asCaller.js';
import type { Person } from '../people/model.js';
import { loadPerson } from '../people/people.js';
import { findShopByCode } from '../queries/shops.js';
import { exportDirectory, toCsv, toXlsx, type DirectoryQuery, type ExportTable } from './export.js';

/** The most rows an export makes while the person waits; a larger one runs as a workflow. */
export const EXPORT_DIRECT_MAX_ROWS = 5000;
/** How long a finished export's download link works. */
export const EXPORT_LINK_HOURS = 24;

export type ExportFormat = 'csv' | 'xlsx';

export const customerExportWorkflowId = (exportId: string) => `customer-export-${exportId}`;

export function exportFile(table: ExportTable, format: ExportFormat): Promise<Buffer> | Buffer {
  return format === 'csv' ? toCsv(table) : toXlsx(table);
}

export function exportFileName(market: string, at: Date, format: ExportFormat): string {
  return `customers-${market}-${at.toISOString().slice(0, 10)}.${format}`;
}

/** Records a large export of this person, to be run by its workflow; returns its id. */
export async function createExportRun(db: Db, person: Person, query: DirectoryQuery, format: ExportFormat, now: Date): Promise<string> {
  const shop = await findShopByCode(db, person.accountId, query.market);
  if (!shop) throw new AppError('SHOP_NOT_FOUND', `No shop ${query.market}.`, { market: query.market });
  const id = `cex_${crypto.randomBytes(10).toString('hex')}`;
  await db('customer_exports').insert({
    id, account_id: person.accountId, shop_id: shop.id, person_id: person.id, format, query: JSON.stringify(query), status: 'running', created_at: now,
  });
  return id;
}

/**
 * The workflow's one activity: walks the directory for the person (as they are now), reporting rows as it goes, and
 * stores the file with its expiry. A refusal (the person disabled, a shop taken away) ends the export as failed.
 */
export async function runExport(db: Db, exportId: string, progress: (rows: number) => void): Promise<{ status: 'ready' | 'failed'; rows: number }> {
  const row = await db('customer_exports').where({ id: exportId }).first();
  if (!row) throw new AppError('NOT_FOUND', `No customer export ${exportId}.`);
  if (row.status !== 'running') return { status: row.status, rows: row.rows_total ?? 0 };
  try {
    const person = await loadPerson(db, row.person_id);
    if (!person) throw new AppError('CREDENTIALS_REVOKED', 'The person who asked for this export can no longer sign in.');
    const query = row.query as DirectoryQuery;
    // The cursors live only inside this walk: a secret of its own signs them.
    const deps = { db, cursorSecret: crypto.randomBytes(32).toString('hex'), now: () => new Date() };
    const table = await exportDirectory(query, personAsCaller(person), `export-${exportId}`, deps, async (rows) => {
      progress(rows);
      await db('customer_exports').where({ id: exportId }).update({ rows_done: rows });
    });
    const finished = new Date();
    await db('customer_exports').where({ id: exportId, status: 'running' }).update({
      status: 'ready', rows_done: table.rows.length, rows_total: table.rows.length, file: await exportFile(table, row.format), file_name: exportFileName(query.market, finished, row.format),
      finished_at: finished, expires_at: new Date(finished.getTime() + EXPORT_LINK_HOURS * 3_600_000),
    });
    return { status: 'ready', rows: table.rows.length };
  } catch (error) {
    const appError = toAppError(error);
    if (appError.code === 'INTERNAL_ERROR') throw error;
    await db('customer_exports').where({ id: exportId, status: 'running' }).update({ status: 'failed', error: `${appError.message} (${appError.code})`, finished_at: new Date() });
    return { status: 'failed', rows: 0 };
  }
}

/** An export of this person (another person's or account's is not found), without its file. */
export async function getExportRun(db: Db, person: Person, exportId: string) {
  const row = await db('customer_exports').join('shops', 'shops.id', 'customer_exports.shop_id')
    .where({ 'customer_exports.id': exportId, 'customer_exports.account_id': person.accountId, 'customer_exports.person_id': person.id })
    .first('customer_exports.id', 'customer_exports.format', 'customer_exports.status', 'customer_exports.rows_done', 'customer_exports.rows_total', 'customer_exports.file_name',
      'customer_exports.error', 'customer_exports.created_at', 'customer_exports.finished_at', 'customer_exports.expires_at', 'shops.code as market');
  if (!row) throw new AppError('NOT_FOUND', 'No such export.');
  return {
    id: row.id as string, market: row.market as string, format: row.format as ExportFormat, status: row.status as 'running' | 'ready' | 'failed',
    rowsDone: row.rows_done as number, rowsTotal: row.rows_total as number | null, fileName: row.file_name as string | null, error: row.error as string | null,
    createdAt: (row.created_at as Date).toISOString(), finishedAt: row.finished_at ? (row.finished_at as Date).toISOString() : null,
    expiresAt: row.expires_at ? (row.expires_at as Date).toISOString() : null,
  };
}

/** The file of a ready export of this person while its link works; after `expires_at` it is refused and dropped. */
export async function downloadExport(db: Db, person: Person, exportId: string, now: Date): Promise<{ name: string; format: ExportFormat; bytes: Buffer }> {
  const run = await getExportRun(db, person, exportId);
  if (run.status !== 'ready') throw new AppError('NOT_FOUND', 'This export has no file (yet).');
  if (run.expiresAt && now.getTime() >= Date.parse(run.expiresAt)) {
    await db('customer_exports').where({ id: exportId }).update({ file: null });
    throw new AppError('NOT_FOUND', `The download link expired ${EXPORT_LINK_HOURS} hours after the export was made; export again.`, { reason: 'expired' });
  }
  const row = await db('customer_exports').where({ id: exportId }).first('file');
  return { name: run.fileName!, format: run.format, bytes: row.file as Buffer };
}
