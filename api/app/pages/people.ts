/**
 * People (D27), for the account's owner: everyone of the account with role, permissions, shops, second factor and
 * state; change a person's role, permissions and shops, disable a person, reset a lost second factor. Every change
 * goes through src/people (as the CLI's `people update`/`disable`), so it narrows that person's keys and connections
 * at once (checked at every request) and ends their sessions. An owner cannot disable or demote themselves here.
 * Inviting by e-mail (src/people/invitations.ts) queues the invitation in the e-mail outbox; pending ones can be revoked.
 */
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../../../src/errors.js';
import { permissions, roles } from '../../../src/people/model.js';
import { disablePerson, listPeople, resetSecondFactor, updatePerson } from '../../../src/people/people.js';
import { invitePerson, listInvitations, revokeInvitation } from '../../../src/people/invitations.js';
import { listShops } from '../../../src/queries/shops.js';
import { field, fields } from '../forms.js';
import { ownOrigin, type ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { currentPerson, requirePermission, requirePerson } from '../session.js';

const DONE: Record<string, string> = { update: 'Saved. The person\'s keys and connections follow the new rights at once; their sessions ended.', disable: 'Disabled: sessions ended, connections revoked, keys stopped.', invite: 'Invitation queued in the e-mail outbox: the link works once, for 7 days.', revoke: 'Invitation revoked: its link no longer works.', reset: 'Second factor reset: they sign in with their password and set up a new one.' };

export function peopleRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  const owner = [requirePerson, requirePermission((p) => p.role === 'owner', 'manage people (owners only)')];

  const page = async (req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) => {
    const person = currentPerson(res);
    // A person limited to some shops is offered only those, and never "all shops" (U13: no one grants beyond their own rights).
    const [people, shops, invitations] = await Promise.all([listPeople(db, person.accountId, deps.now()), listShops(db, person.accountId, person.shopCodes), listInvitations(db, person.accountId, deps.now())]);
    const done = typeof req.query.done === 'string' ? DONE[req.query.done] ?? null : null;
    renderPage(res, 'people', { title: 'People', people, shops: shops.map((s) => ({ code: s.code, name: s.name })), roles, permissions, invitations, selfId: person.id, allShopsAllowed: person.shopCodes === null, notice: done, error: null, invite: null, ...extra }, status);
  };

  router.get('/people', ...owner, async (req, res) => page(req, res));

  /** A change to someone else; the owner's own rights are not changed from this page (no lock-out by a click). */
  const other = (req: Request, res: Response) => {
    const id = String(req.params.id);
    if (id === currentPerson(res).id) throw new AppError('INVALID_PARAMETER', 'You cannot change your own role, rights or state here.', { param: 'id' });
    return id;
  };

  const act = (action: 'update' | 'disable' | 'reset', run: (req: Request, res: Response, id: string) => Promise<unknown>) => async (req: Request, res: Response) => {
    try {
      const id = other(req, res);
      await run(req, res, id);
      res.redirect(303, `/app/people?done=${action}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await page(req, res, { error: error.message }, error.status);
    }
  };

  router.post('/people/invite', ...owner, async (req, res) => {
    const invite = { email: field(req.body, 'email'), name: field(req.body, 'name'), role: field(req.body, 'role'), permissions: fields(req.body, 'permissions'), shops: field(req.body, 'shopChoice') === 'all' ? null : fields(req.body, 'shops') };
    try {
      await invitePerson(db, currentPerson(res), invite, ownOrigin(deps.application, req), deps.now());
      res.redirect(303, '/app/people?done=invite');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await page(req, res, { error: error.message, invite }, error.status);
    }
  });
  router.post('/people/invitations/:id/revoke', ...owner, async (req, res) => {
    await revokeInvitation(db, currentPerson(res).accountId, String(req.params.id), deps.now());
    res.redirect(303, '/app/people?done=revoke');
  });
  router.post('/people/:id/update', ...owner, act('update', (req, res, id) => {
    const shops = field(req.body, 'shopChoice') === 'all' ? null : fields(req.body, 'shops');
    // grantedBy: the domain refuses shops beyond the owner's own (U13), as for invitations.
    return updatePerson(db, currentPerson(res).accountId, id, { role: field(req.body, 'role') as never, permissions: fields(req.body, 'permissions'), shops, grantedBy: currentPerson(res) });
  }));
  router.post('/people/:id/disable', ...owner, act('disable', (_req, res, id) => disablePerson(db, currentPerson(res).accountId, id)));
  router.post('/people/:id/reset-second-factor', ...owner, act('reset', (_req, res, id) => resetSecondFactor(db, currentPerson(res).accountId, id)));
  return router;
}
