/**
 * Texts (issue 25.4, SPEC "Content-change events"): the products of a shop with a bulk edit of one field across the
 * chosen ones, the product card (each text with its hash, the last writes, the edit form), the import of texts from a
 * CSV/XLSX file with a preview of what really changes before it is confirmed, and the category screen. Everyone reads
 * (texts are open to every person, D27); writing needs `texts:edit` (UT1) and goes through src/texts.
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import { actorNames } from '../../../src/people/actors.js';
import { CATEGORY_TEXT_FIELDS, PRODUCT_TEXT_FIELDS, type TextField } from '../../../src/proposals/model.js';
import { getCategoryContent, getProductContent } from '../../../src/queries/content.js';
import { listShops } from '../../../src/queries/shops.js';
import { confirmImport, getBatch, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, previewImport } from '../../../src/texts/imports.js';
import { lastWrites, listEntities, mayEditTexts, shopOfPerson, writeTextBatch, saveEntityTexts, type TextEntity } from '../../../src/texts/writes.js';
import { wordDiff } from '../../../src/proposals/diff.js';
import { field, fields } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import type { UploadedFile } from '../multipart.js';
import { paged, pageWindow } from '../paging.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePermission, requirePerson } from '../session.js';

/** Products or categories per page of a list (also the most a bulk edit changes at once). */
const LIST_PAGE_SIZE = 50;

const PATHS: Record<TextEntity, string> = { product: '/app/products', category: '/app/categories' };
const FIELDS: Record<TextEntity, readonly TextField[]> = { product: PRODUCT_TEXT_FIELDS, category: CATEGORY_TEXT_FIELDS };

export function textsRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const editor = [requirePerson, requirePermission(mayEditTexts, 'edit texts')];
  const query = (req: Request, name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string).slice(0, 128) : '');

  const shopsOf = async (res: Response) => {
    const person = currentPerson(res);
    return (await listShops(db, person.accountId, person.shopCodes)).map((s) => ({ code: s.code, name: s.name }));
  };

  // Lists: products (with the bulk edit) and categories.
  for (const entity of ['product', 'category'] as const) {
    router.get(PATHS[entity].slice('/app'.length), requirePerson, async (req, res) => {
      const person = currentPerson(res);
      const shops = await shopsOf(res);
      const market = query(req, 'market') || shops[0]?.code || '';
      const search = query(req, 'search').trim();
      const window = pageWindow(req, LIST_PAGE_SIZE);
      const shop = market ? await shopOfPerson(db, person, market) : null;
      const rows = shop ? await listEntities(db, shop, entity, search, { limit: window.fetch, offset: window.offset }) : [];
      const { items, pager } = paged(req, window, rows);
      // After a bulk edit (Post/Redirect/Get): its results, read again from the batch.
      const batchId = query(req, 'batch');
      const batch = batchId ? await getBatch(db, person, batchId).catch(() => null) : null;
      renderPage(res, entity === 'product' ? 'products' : 'categories', {
        title: entity === 'product' ? 'Products' : 'Categories', shops, market, search, items, pager, fields: FIELDS[entity], canEdit: mayEditTexts(person), batch,
      });
    });
  }

  router.post('/products/bulk', ...editor, async (req, res) => {
    const person = currentPerson(res);
    const market = field(req.body, 'market');
    const textField = field(req.body, 'field') as TextField;
    const codes = [...new Set(fields(req.body, 'codes'))];
    const text = field(req.body, 'text').replace(/\r\n/g, '\n');
    if (!(PRODUCT_TEXT_FIELDS as readonly string[]).includes(textField)) throw new AppError('INVALID_PARAMETER', 'Choose the field to set.', { param: 'field' });
    if (codes.length === 0) throw new AppError('INVALID_PARAMETER', 'Choose at least one product.', { param: 'codes' });
    if (codes.length > LIST_PAGE_SIZE) throw new AppError('INVALID_PARAMETER', `A bulk edit changes at most ${LIST_PAGE_SIZE} products.`, { param: 'codes', reason: 'too_many' });
    const shop = await shopOfPerson(db, person, market);
    const entries = codes.map((id) => ({ id, fingerprint: '', fields: { [textField]: text } }));
    const { batchId } = await writeTextBatch(db, deps.platforms, person, shop, 'product', entries, { kind: 'bulk', checkFingerprint: false }, now());
    res.redirect(303, `/app/products?${new URLSearchParams({ market, batch: batchId })}`);
  });

  // Import: upload → preview (only real changes) → confirm once → results. Registered before the card's paths.
  const importPage = async (res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    renderPage(res, 'textImport', { title: 'Import product texts', shops: await shopsOf(res), maxRows: IMPORT_MAX_ROWS, maxBytes: IMPORT_MAX_BYTES, fields: PRODUCT_TEXT_FIELDS, market: '', error: null, code: null, ...extra }, status);
  };
  router.get('/products/import', ...editor, async (req, res) => importPage(res, { market: query(req, 'market') }));
  router.post('/products/import', ...editor, async (req, res) => {
    const market = field(req.body, 'market');
    const file = (req.body as Record<string, unknown>).file as UploadedFile | undefined;
    try {
      if (!file || typeof file !== 'object' || !Buffer.isBuffer(file.bytes)) throw new AppError('IMPORT_FILE_INVALID', 'Choose a .csv or .xlsx file to upload.', { reason: 'empty' });
      const { batchId } = await previewImport(db, currentPerson(res), market, file.name, file.bytes, now());
      res.redirect(303, `/app/products/import/${batchId}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await importPage(res, { market, error: error.message, code: error.code }, error.status);
    }
  });
  router.get('/products/import/:batchId', ...editor, async (req, res) => {
    const batch = await getBatch(db, currentPerson(res), String(req.params.batchId));
    if (batch.kind !== 'import') throw new AppError('NOT_FOUND', 'No such import.');
    const changes = batch.preview.changes.map((c) => ({
      ...c, fields: Object.keys(c.changes).map((f) => ({ field: f, diff: wordDiff(c.before[f as TextField] ?? '', c.changes[f as TextField] ?? '') })),
    }));
    renderPage(res, 'textImportPreview', { title: `Import ${batch.fileName}`, batch, changes });
  });
  router.post('/products/import/:batchId/confirm', ...editor, async (req, res) => {
    const batchId = String(req.params.batchId);
    await confirmImport(db, deps.platforms, currentPerson(res), batchId, now());
    res.redirect(303, `/app/products/import/${batchId}`);
  });

  // The product card and the category screen: each text with its hash, the last writes, the edit form.
  for (const entity of ['product', 'category'] as const) {
    const base = PATHS[entity].slice('/app'.length);
    const show = async (req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
      const person = currentPerson(res);
      const market = String(req.params.market);
      const id = String(req.params.id);
      const shop = await shopOfPerson(db, person, market);
      const content = entity === 'product' ? await getProductContent(db, shop.id, id) : await getCategoryContent(db, shop.id, id);
      if (!content) throw new AppError('NOT_FOUND', `Shop ${market} has no ${entity} ${id}.`);
      const writes = await lastWrites(db, person.accountId, shop, entity, id);
      const actors = await actorNames(db, person.accountId, writes.map((w) => w.writtenBy));
      const saved = query(req, 'saved');
      const notice = saved ? { changed: query(req, 'changed').split(',').filter(Boolean), altered: query(req, 'altered').split(',').filter(Boolean) } : null;
      renderPage(res, 'textCard', {
        title: `${content.name}`, entity, market, id, content, fields: FIELDS[entity], writes, actors, canEdit: mayEditTexts(person), listPath: PATHS[entity], notice, error: null, ...extra,
      }, status);
    };
    router.get(`${base}/:market/:id`, requirePerson, (req, res) => show(req, res));
    router.post(`${base}/:market/:id`, ...editor, async (req, res) => {
      const market = String(req.params.market);
      const id = String(req.params.id);
      const texts = Object.fromEntries(FIELDS[entity].filter((f) => typeof (req.body as Record<string, unknown>)[f] === 'string').map((f) => [f, field(req.body, f).replace(/\r\n/g, '\n')]));
      try {
        const saved = await saveEntityTexts(db, deps.platforms, currentPerson(res), market, entity, id, field(req.body, 'fingerprint'), texts, now());
        const altered = Object.keys(texts).filter((f) => saved.warnings.some((w) => w.includes(` ${f} `)));
        res.redirect(303, `${PATHS[entity]}/${encodeURIComponent(market)}/${encodeURIComponent(id)}?${new URLSearchParams({ saved: '1', changed: saved.changedFields.join(','), altered: altered.join(',') })}`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        await show(req, res, { error: `${error.message} (${error.code})` }, error.status);
      }
    });
  }

  // The earlier single form (issue 13) lives on as the card and the category screen.
  router.get('/content', requirePerson, (req, res) => {
    const market = query(req, 'market');
    const id = query(req, 'id');
    const entity: TextEntity = query(req, 'entity') === 'category' ? 'category' : 'product';
    res.redirect(303, market && id ? `${PATHS[entity]}/${encodeURIComponent(market)}/${encodeURIComponent(id)}` : PATHS[entity]);
  });

  return router;
}
