/**
 * The partner programme for staff (issue 24 point 3): the partner queue (the same rules and e-mails as
 * affiliate_partners_set_state), commission approval one by one and in bulk, and payouts drawn up as drafts, confirmed
 * and marked paid by a person, each with its PDF statement, and the documents' wording (documents.ts). Everyone
 * signed in reads these pages for their shops; deciding needs the permission `affiliate:manage` (rules in src/affiliate/staff). None of this exists over MCP.
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../../../../src/errors.js';
import { commissionsForReview, decideCommission, decideCommissions, mayManageAffiliate, requireAffiliateManager } from '../../../../src/affiliate/staff/commissions.js';
import { cancelPayout, confirmPayout, drawUpShopPayouts, markPayoutPaid, payoutsForReview, payoutStatement, periodBounds, previousPeriod, programmeShops } from '../../../../src/affiliate/staff/payouts.js';
import { renderPayoutStatement } from '../../../../src/affiliate/staff/statementPdf.js';
import { PARTNER_ACTIONS, setPartnerState, type PartnerAction } from '../../../../src/affiliate/writes/partners.js';
import { findShopByCode, listShops } from '../../../../src/queries/shops.js';
import { runBulkDecision, runPayoutRun } from '../../../../src/temporal/affiliate.js';
import { TASK_QUEUE } from '../../../../src/temporal/constants.js';
import type { Person } from '../../../../src/people/model.js';
import { field, fields } from '../../forms.js';
import type { ApplicationDeps } from '../../index.js';
import { renderPage } from '../../render.js';
import { affiliateDocumentsRoutes } from './documents.js';
import { currentPerson, requirePermission, requirePerson } from '../../session.js';

const MAX_BULK = 500;
const query = (req: Request, name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string).slice(0, 64) : '');

export function affiliateStaffRoutes(deps: ApplicationDeps): Router {
  const { db, now } = deps;
  const router = express.Router();
  const manager = [requirePerson, requirePermission(mayManageAffiliate, 'manage the partner programme')];
  const taskQueue = deps.application.taskQueue ?? deps.temporal?.taskQueue ?? TASK_QUEUE;

  const shopsOf = async (person: Person) => (await listShops(db, person.accountId, person.shopCodes)).map((s) => ({ code: s.code, name: s.name }));

  // ---- Commissions ----
  const commissionsPage = async (req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    const market = query(req, 'market') || field(req.body, 'market');
    const state = ['pending', 'approved', 'rejected', 'paid'].includes(query(req, 'state')) ? query(req, 'state') : 'pending';
    const rows = await commissionsForReview(db, person, { market: market || undefined, state });
    renderPage(res, 'affiliate/commissions', {
      title: 'Partner commissions', shops: await shopsOf(person), market, state, rows, canManage: mayManageAffiliate(person), notice: null, error: null, ...extra,
    }, status);
  };

  router.get('/affiliate', requirePerson, (_req, res) => res.redirect(303, '/app/affiliate/commissions'));
  router.get('/affiliate/commissions', requirePerson, async (req, res) => commissionsPage(req, res));

  router.post('/affiliate/commissions/:id/decide', ...manager, async (req, res) => {
    const id = String(req.params.id);
    const decision = field(req.body, 'decision');
    try {
      if (decision !== 'approve' && decision !== 'reject') throw new AppError('INVALID_PARAMETER', 'Choose approve or reject.', { param: 'decision' });
      const result = await decideCommission(db, currentPerson(res), id, decision, field(req.body, 'reason'), now());
      await commissionsPage(req, res, { notice: `Commission ${result.conversionId}: ${result.outcome}.` });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await commissionsPage(req, res, { error: `${error.code}: ${error.message}` }, error.status);
    }
  });

  router.post('/affiliate/commissions/bulk', ...manager, async (req, res) => {
    const person = currentPerson(res);
    const decision = field(req.body, 'decision');
    const ids = [...new Set(fields(req.body, 'ids'))];
    try {
      if (decision !== 'approve' && decision !== 'reject') throw new AppError('INVALID_PARAMETER', 'Choose approve or reject.', { param: 'decision' });
      if (ids.length === 0) throw new AppError('MISSING_PARAMETER', 'Choose at least one commission.', { param: 'ids' });
      if (ids.length > MAX_BULK) throw new AppError('INVALID_PARAMETER', `At most ${MAX_BULK} commissions at once.`, { param: 'ids', reason: 'too_many' });
      const reason = field(req.body, 'reason');
      if (decision === 'reject' && !reason.trim()) throw new AppError('MISSING_PARAMETER', 'A rejection needs a reason.', { param: 'reason' });
      // Durable when Temporal is there (a workflow the worker carries through a restart); else decided here, one by one.
      const outcome = deps.temporal
        ? (await runBulkDecision(await deps.temporal.client(), taskQueue, { accountCode: person.accountCode, personId: person.id, conversionIds: ids, decision, reason })).outcome
        : await decideCommissions(db, person, ids, decision, reason, now());
      await commissionsPage(req, res, {
        notice: `${outcome.decided.length} decided (${decision}), ${outcome.refused.length} refused.`,
        refused: outcome.refused,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await commissionsPage(req, res, { error: `${error.code}: ${error.message}` }, error.status);
    }
  });

  // ---- Payouts ----
  const payoutsPage = async (req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    const state = ['requested', 'approved', 'paid', 'cancelled'].includes(query(req, 'state')) ? query(req, 'state') : '';
    const rows = await payoutsForReview(db, person, { state: state || undefined });
    renderPage(res, 'affiliate/payouts', {
      title: 'Partner payouts', state, rows, canManage: mayManageAffiliate(person), defaultPeriod: previousPeriod(now()), notice: null, error: null, ...extra,
    }, status);
  };

  router.get('/affiliate/payouts', requirePerson, async (req, res) => payoutsPage(req, res));

  router.post('/affiliate/payouts/draw-up', ...manager, async (req, res) => {
    const person = currentPerson(res);
    const period = field(req.body, 'period');
    try {
      periodBounds(period);
      // A person limited to some shops draws up nothing for the others (a run covers the whole account).
      if (person.shopCodes) throw new AppError('INSUFFICIENT_SCOPE', 'Drawing up payouts covers every shop of the account; a person limited to some shops cannot.', { permission: 'affiliate:manage' });
      const drawnUpBy = `person:${person.id}`;
      const results = deps.temporal
        ? (await runPayoutRun(await deps.temporal.client(), taskQueue, { accountId: person.accountId, accountCode: person.accountCode, period, drawnUpBy })).results
        : await Promise.all((await programmeShops(db, person.accountId)).map((shopId) => drawUpShopPayouts(db, shopId, period, now(), drawnUpBy)));
      const created = results.reduce((n, r) => n + r.created.length, 0);
      const below = results.reduce((n, r) => n + r.belowMinimum, 0);
      await payoutsPage(req, res, { notice: `Payouts for ${period}: ${created} drawn up as drafts; ${below} below the minimum wait for a later month.` });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await payoutsPage(req, res, { error: `${error.code}: ${error.message}` }, error.status);
    }
  });

  const payoutAction = (name: string, act: (person: Person, id: string, req: Request) => Promise<void>, done: string) => {
    router.post(`/affiliate/payouts/:id/${name}`, ...manager, async (req, res) => {
      const id = String(req.params.id);
      try {
        await act(currentPerson(res), id, req);
        await payoutsPage(req, res, { notice: `Payout ${id}: ${done}.` });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        await payoutsPage(req, res, { error: `${error.code}: ${error.message}` }, error.status);
      }
    });
  };
  payoutAction('confirm', (person, id) => confirmPayout(db, person, id, now()), 'confirmed');
  payoutAction('paid', (person, id, req) => markPayoutPaid(db, person, id, field(req.body, 'reference'), now()), 'marked paid');
  payoutAction('cancel', (person, id) => cancelPayout(db, person, id, now()), 'cancelled');

  router.get('/affiliate/payouts/:id/statement.pdf', requirePerson, async (req, res) => {
    const statement = await payoutStatement(db, currentPerson(res), String(req.params.id));
    const pdf = await renderPayoutStatement(statement);
    res.status(200).type('application/pdf').setHeader('Content-Disposition', `attachment; filename="payout-${statement.payout.id}.pdf"`);
    res.send(pdf);
  });

  // ---- Partner queue ----
  const partnersPage = async (_req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    const partners = await db('affiliate_partners').where({ account_id: person.accountId })
      .orderByRaw(`(state = 'waiting') desc, registered_at desc, id desc`).limit(300)
      .select('id', 'handle', 'state', 'state_reason', 'kind', 'web', 'language', 'registered_at');
    renderPage(res, 'affiliate/partners', {
      title: 'Partner queue', partners, shops: await shopsOf(person), actions: PARTNER_ACTIONS, canManage: mayManageAffiliate(person), notice: null, error: null, ...extra,
    }, status);
  };

  router.get('/affiliate/partners', requirePerson, async (req, res) => partnersPage(req, res));

  router.post('/affiliate/partners/:id/state', ...manager, async (req, res) => {
    const person = currentPerson(res);
    const action = field(req.body, 'action');
    const market = field(req.body, 'market');
    try {
      requireAffiliateManager(person);
      if (!(PARTNER_ACTIONS as readonly string[]).includes(action)) throw new AppError('INVALID_PARAMETER', `Choose one of ${PARTNER_ACTIONS.join(', ')}.`, { param: 'action' });
      if (person.shopCodes && !person.shopCodes.has(market)) throw new AppError('SHOP_FORBIDDEN', `You may not act for shop \`${market}\`.`, { market });
      const shop = await findShopByCode(db, person.accountId, market);
      if (!shop) throw new AppError('SHOP_NOT_FOUND', `No shop \`${market}\`.`, { param: 'market' });
      const result = await setPartnerState(db, { accountId: person.accountId, shop, now: now() }, { partnerId: String(req.params.id), action: action as PartnerAction, reason: field(req.body, 'reason') });
      await partnersPage(req, res, { notice: `Partner ${result.handle}: ${result.previousState} → ${result.state}${result.email ? ' (e-mail queued)' : ''}.` });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await partnersPage(req, res, { error: `${error.code}: ${error.message}` }, error.status);
    }
  });

  // ---- Document wording ----
  router.use(affiliateDocumentsRoutes(deps));

  return router;
}
