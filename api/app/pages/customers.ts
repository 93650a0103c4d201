/**
 * Customers (SPEC "Two different reads"): the directory of one shop — the `customers.list` capability run for the
 * signed-in person (src/people/asCaller.ts), so the screen, its CSV/XLSX export and the API show the same projection;
 * names and contacts only with the personal-data permission, money only with reports (D27) — and a customer's page
 * with the per-shop figures and their latest orders, claims and documents. Every person of the account may open it.
 */
import crypto from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { customersGet, customersList } from '../../../src/capabilities/areas/customers.js';
import { runCapability } from '../../../src/capabilities/run.js';
import { customerActivity } from '../../../src/customers/activity.js';
import { exportDirectory, toCsv, toXlsx, type DirectoryQuery } from '../../../src/customers/export.js';
import { AppError } from '../../../src/errors.js';
import { personAsCaller } from '../../../src/people/asCaller.js';
import { findShopByCode, listShops } from '../../../src/queries/shops.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePerson } from '../session.js';

const PAGE_SIZE = 50;

export function customersRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  const runDeps = { db, cursorSecret: deps.cursorSecret, now: deps.now };
  const text = (req: Request, name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');

  /** The shop and filters of a directory request; the shop defaults to the person's first. */
  const directoryQuery = async (req: Request, res: Response) => {
    const person = currentPerson(res);
    const shops = (await listShops(db, person.accountId, person.shopCodes)).map((s) => ({ code: s.code, name: s.name }));
    const market = text(req, 'market') || shops[0]?.code || '';
    const query: DirectoryQuery = { market };
    if (text(req, 'purchaseFrom')) query.purchaseFrom = text(req, 'purchaseFrom');
    if (text(req, 'purchaseTo')) query.purchaseTo = text(req, 'purchaseTo');
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

  for (const format of ['csv', 'xlsx'] as const) {
    router.get(`/customers/export.${format}`, requirePerson, async (req, res) => {
      const { person, query } = await directoryQuery(req, res);
      const table = await exportDirectory(query, personAsCaller(person), crypto.randomUUID(), runDeps);
      const body = format === 'csv' ? toCsv(table) : await toXlsx(table);
      const name = `customers-${query.market}-${deps.now().toISOString().slice(0, 10)}.${format}`;
      res.status(200)
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
        .setHeader('Content-Disposition', `attachment; filename="${name}"`)
        .send(body);
    });
  }

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
