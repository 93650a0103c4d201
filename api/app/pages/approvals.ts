/**
 * Approvals (issue 13): the proposals an assistant prepared, waiting for a person — each with a readable diff per
 * field — approved or rejected with a reason (the page shows what the workflow's Update answered: the state reached),
 * and the history of decided ones. And a minimal edit form for product and category texts (content event `source: ui`).
 * Both need the permission `proposals:approve` (rules in src/people/proposals.ts).
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import { decideAsPerson, decidedProposalsOf, mayApproveProposals, pendingProposalsOf, saveTextsAsPerson } from '../../../src/people/proposals.js';
import { wordDiff } from '../../../src/proposals/diff.js';
import { isFinal, CATEGORY_TEXT_FIELDS, PRODUCT_TEXT_FIELDS, type TextField } from '../../../src/proposals/model.js';
import { getDraft, type DraftView } from '../../../src/proposals/queries.js';
import { actorNames } from '../../../src/people/actors.js';
import { getCategoryContent, getProductContent } from '../../../src/queries/content.js';
import { findShopByCode, listShops } from '../../../src/queries/shops.js';
import { field } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { paged, pageWindow } from '../paging.js';
import { currentPerson, requirePermission, requirePerson } from '../session.js';

const KIND_NAMES: Record<string, string> = {
  availabilities: 'Availability dictionary', product_texts: 'Product texts', category_texts: 'Category texts', claims_settings: 'Claims settings',
};

/** Decided proposals per page of the history. */
const HISTORY_PAGE_SIZE = 20;

const shown = (value: unknown) => (value === null || value === undefined ? '' : String(value));

/** A draft as the page shows it: each field with its word diff. */
function forPage(draft: DraftView) {
  return {
    ...draft, kindName: KIND_NAMES[draft.kind],
    items: draft.items.map((item) => ({
      ...item,
      // An item of a finished proposal (rejected, expired) that was never written does not read "pending".
      shownStatus: item.status === 'pending' && isFinal(draft.status) ? 'not written' : item.status,
      preview: item.preview.map((p) => ({ ...p, diff: wordDiff(shown(p.before), shown(p.after)) })) })),
  };
}

export function approvalsRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const approver = [requirePerson, requirePermission(mayApproveProposals, 'approve proposals')];

  const page = async (req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    const window = pageWindow(req, HISTORY_PAGE_SIZE);
    const [pending, decided] = await Promise.all([pendingProposalsOf(db, person), decidedProposalsOf(db, person, { limit: window.fetch, offset: window.offset })]);
    const { items: history, pager } = paged(req, window, decided);
    const actors = await actorNames(db, person.accountId, [...pending, ...history].flatMap((d) => [d.createdBy, d.decision?.by]));
    renderPage(res, 'approvals', { title: 'Approvals', pending: pending.map(forPage), history: history.map(forPage), pager, actors, notice: null, error: null, ...extra }, status);
  };

  router.get('/approvals', ...approver, async (req, res) => {
    // After a decision (Post/Redirect/Get) the page names the proposal and the state its workflow reached.
    const decided = typeof req.query.decided === 'string' ? req.query.decided : '';
    let notice = null;
    if (decided) {
      const person = currentPerson(res);
      const draft = await getDraft(db, person.accountId, person.shopCodes, decided).catch(() => null);
      if (draft) notice = { draftId: draft.draftId, status: draft.status };
    }
    await page(req, res, { notice });
  });

  router.post('/approvals/:draftId/decide', ...approver, async (req: Request, res: Response) => {
    const draftId = String(req.params.draftId);
    const decision = field(req.body, 'decision');
    const reason = field(req.body, 'reason');
    try {
      if (decision !== 'approve' && decision !== 'reject') throw new AppError('INVALID_PARAMETER', 'Choose approve or reject.', { param: 'decision' });
      if (decision === 'reject' && !reason.trim()) throw new AppError('INVALID_PARAMETER', 'A rejection needs a reason.', { param: 'reason' });
      if (reason.length > 1000) throw new AppError('INVALID_PARAMETER', 'The reason is at most 1000 characters.', { param: 'reason' });
      await decideAsPerson(db, deps.temporal, currentPerson(res), draftId, decision === 'approve', reason);
      res.redirect(303, `/app/approvals?decided=${encodeURIComponent(draftId)}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await page(req, res, { error: `${draftId}: ${error.message}` }, error.status);
    }
  });

  const contentForm = async (res: Response, market: string, entity: 'product' | 'category', id: string, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    const shops = (await listShops(db, person.accountId, person.shopCodes)).map((s) => ({ code: s.code, name: s.name }));
    let content: Awaited<ReturnType<typeof getProductContent>> | Awaited<ReturnType<typeof getCategoryContent>> = null;
    if (market && id && shops.some((s) => s.code === market)) {
      const shop = await findShopByCode(db, person.accountId, market);
      content = shop ? (entity === 'product' ? await getProductContent(db, shop.id, id) : await getCategoryContent(db, shop.id, id)) : null;
    }
    const fields = (entity === 'product' ? PRODUCT_TEXT_FIELDS : CATEGORY_TEXT_FIELDS) as readonly TextField[];
    renderPage(res, 'content', {
      title: 'Edit texts', shops, market, entity, id, content, fields, notFound: Boolean(market && id && !content), notice: null, error: null, ...extra,
    }, status);
  };

  router.get('/content', ...approver, async (req, res) => {
    const q = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string).slice(0, 128) : '');
    const entity = q('entity') === 'category' ? 'category' : 'product';
    const known = (entity === 'product' ? PRODUCT_TEXT_FIELDS : CATEGORY_TEXT_FIELDS) as readonly string[];
    const listed = (name: string) => q(name).split(',').filter((f) => known.includes(f));
    // After a save (Post/Redirect/Get): which fields changed and which the shop altered on saving.
    const notice = q('saved') ? { changedFields: listed('changed'), warnings: listed('altered').map((f) => `The shop changed ${f} on saving (markup removed).`) } : null;
    await contentForm(res, q('market'), entity, q('id'), { notice });
  });

  router.post('/content', ...approver, async (req, res) => {
    const market = field(req.body, 'market');
    const entity = field(req.body, 'entity') === 'category' ? 'category' : 'product';
    const id = field(req.body, 'id');
    const fields = (entity === 'product' ? PRODUCT_TEXT_FIELDS : CATEGORY_TEXT_FIELDS) as readonly TextField[];
    const texts = Object.fromEntries(fields.filter((f) => typeof (req.body as Record<string, unknown>)[f] === 'string').map((f) => [f, field(req.body, f).replace(/\r\n/g, '\n')]));
    try {
      const saved = await saveTextsAsPerson(db, deps.platforms, currentPerson(res), market, entity, id, field(req.body, 'fingerprint'), texts, now());
      const altered = Object.keys(texts).filter((f) => saved.warnings.some((w) => w.includes(` ${f} `)));
      const query = new URLSearchParams({ market, entity, id, saved: '1', changed: saved.changedFields.join(','), altered: altered.join(',') });
      res.redirect(303, `/app/content?${query}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await contentForm(res, market, entity, id, { error: error.message }, error.status);
    }
  });

  return router;
}
