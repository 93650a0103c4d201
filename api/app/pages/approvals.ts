/**
 * Approvals (issue 13): the proposals an assistant prepared, waiting for a person — each with a readable diff per
 * field — approved or rejected with a reason (the page shows what the workflow's Update answered: the state reached),
 * and the history of decided ones. Needs the permission `proposals:approve` (rules in src/people/proposals.ts); a
 * person's own text edits are the Texts screens (pages/texts.ts).
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import { decideAsPerson, decidedProposalsOf, mayApproveProposals, pendingProposalsOf } from '../../../src/people/proposals.js';
import { wordDiff } from '../../../src/proposals/diff.js';
import { isFinal } from '../../../src/proposals/model.js';
import { getDraft, type DraftView } from '../../../src/proposals/queries.js';
import { actorNames } from '../../../src/people/actors.js';
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
  const { db } = deps;
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

  return router;
}
