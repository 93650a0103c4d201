/**
 * Customers (SPEC "Two different reads"): the directory of one shop — the `customers.list` capability run for the
 * signed-in person (src/people/asCaller.ts), so the screen, its CSV/XLSX export and the API show the same projection;
 * names and contacts only with the personal-data permission, money only with reports (D27) — and a customer's page
 * with the per-shop figures and their latest orders, claims and documents. Every person of the account may open it.
 * An export larger than EXPORT_DIRECT_MAX_ROWS runs as the workflow `customer-export-<id>` (src/customers/exportRuns.ts).
 */
import crypto from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { customersGet, customersList } from '../../../src/capabilities/areas/customers.js';
import { runCapability } from '../../../src/capabilities/run.js';
import { customerActivity } from '../../../src/customers/activity.js';
import { exportDirectory, type DirectoryQuery } from '../../../src/customers/export.js';
import { createExportRun, downloadExport, EXPORT_DIRECT_MAX_ROWS, EXPORT_LINK_HOURS, exportFile, exportFileName, getExportRun } from '../../../src/customers/exportRuns.js';
import { startCustomerExport } from '../../../src/temporal/customerExports.js';
import { field } from '../forms.js';
import { AppError } from '../../../src/errors.js';
import { personAsCaller } from '../../../src/people/asCaller.js';
import { findShopByCode, listShops } from '../../../src/queries/shops.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePerson } from '../session.js';

const PAGE_SIZE = 50;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export function customersRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  const runDeps = { db, cursorSecret: deps.cursorSecret, now: deps.now };
  const text = (req: Request, name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');

  /** The shop and filters of a directory request; the shop defaults to the person's first. */
  const directoryQuery = async (req: Request, res: Response, source: Record<string, unknown> = req.query) => {
    const person = currentPerson(res);
    const shops = (await listShops(db, person.accountId, person.shopCodes)).map((s) => ({ code: s.code, name: s.name }));
    const value = (name: string) => (typeof source[name] === 'string' ? (source[name] as string) : '');
    const market = value('market') || shops[0]?.code || '';
    const query: DirectoryQuery = { market };
    if (value('search').trim()) query.search = value('search').trim();
    if (value('purchaseFrom')) query.purchaseFrom = value('purchaseFrom');
    if (value('purchaseTo')) query.purchaseTo = value('purchaseTo');
    return { person, shops, query };
  };

  router.get('/customers', requirePerson, async (req, res) => {
    const { person, shops, query } = await directoryQuery(req, res);
    const caller = personAsCaller(person);
    const base = { title: 'Customers', shops, query, personal: caller.scopes.has('personal-data:read'), money: caller.scopes.has('reports:read') };
    if (!query.market) return renderPage(res, 'customers', { ...base, customers: [], next: null, error: null });
    try {
      const cursor = text(req, 'cursor');
      const output = await runCapability(customersList, { ...query, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }, caller, crypto.randomUUID(), runDeps);
      const next = output.list?.nextCursor ? `/app/customers?${new URLSearchParams({ ...query, cursor: output.list.nextCursor } as Record<string, string>)}` : null;
      const first = cursor ? `/app/customers?${new URLSearchParams({ ...query })}` : null;
      renderPage(res, 'customers', { ...base, customers: output.data, next, first, error: null });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      renderPage(res, 'customers', { ...base, customers: [], next: null, first: null, error: error.message }, error.status);
    }
  });

  // Export: exactly the directory projection; up to the direct limit at once, a larger one by its workflow (issue 25.1).
  router.post('/customers/export', requirePerson, async (req, res) => {
    const { person, query } = await directoryQuery(req, res, req.body as Record<string, unknown>);
    const format = field(req.body, 'format') === 'xlsx' ? 'xlsx' : 'csv';
    const limit = deps.application.customerExportDirectMaxRows ?? EXPORT_DIRECT_MAX_ROWS;
    const table = await exportDirectory(query, personAsCaller(person), crypto.randomUUID(), runDeps, undefined, limit);
    if (table.rows.length <= limit) {
      return res.status(200)
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : XLSX_TYPE)
        .setHeader('Content-Disposition', `attachment; filename="${exportFileName(query.market, deps.now(), format)}"`)
        .send(await exportFile(table, format));
    }
    if (!deps.temporal) throw new AppError('WRITES_UNAVAILABLE', 'This service instance cannot reach its workflows, and this export is too large to make at once.');
    const exportId = await createExportRun(db, person, query, format, deps.now());
    await startCustomerExport(await deps.temporal.client(), exportId, { account: person.accountCode, shop: query.market }, deps.temporal.taskQueue ?? deps.application.taskQueue);
    res.redirect(303, `/app/customers/exports/${exportId}`);
  });

  router.get('/customers/exports/:exportId', requirePerson, async (req, res) => {
    const run = await getExportRun(db, currentPerson(res), String(req.params.exportId));
    renderPage(res, 'customerExport', { title: 'Customer export', run, expired: run.expiresAt !== null && deps.now().getTime() >= Date.parse(run.expiresAt), linkHours: EXPORT_LINK_HOURS });
  });

  router.get('/customers/exports/:exportId/download', requirePerson, async (req, res) => {
    const file = await downloadExport(db, currentPerson(res), String(req.params.exportId), deps.now());
    res.status(200).type(file.format === 'csv' ? 'text/csv; charset=utf-8' : XLSX_TYPE)
      .setHeader('Content-Disposition', `attachment; filename="${file.name}"`).send(file.bytes);
  });

  router.get('/customers/:market/:customerKey', requirePerson, async (req, res) => {
    const person = currentPerson(res);
    const caller = personAsCaller(person);
    const market = String(req.params.market);
    const output = await runCapability(customersGet, { market, customerKey: String(req.params.customerKey) }, caller, crypto.randomUUID(), runDeps);
    const customer = output.data as Record<string, unknown> & { customerKey: string; firstName?: string | null; lastName?: string | null; company?: string | null };
    // The capability checked the shop against the person's shops and account; the activity reads within that shop.
    const shop = (await findShopByCode(db, person.accountId, market))!;
    const activity = await customerActivity(db, shop.id, customer.customerKey, caller.scopes.has('reports:read'));
    const name = [customer.firstName, customer.lastName].filter(Boolean).join(' ') || customer.company || null;
    renderPage(res, 'customer', {
      title: name ?? 'Customer', name, market, customer, activity, personal: caller.scopes.has('personal-data:read'), money: caller.scopes.has('reports:read'),
    });
  });

  return router;
}
