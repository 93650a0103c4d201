/**
 * Automations (issue 14): the drafts assistants wrote and the published rules, each with its rule, its validation
 * against the current catalogue and its runs. Every signed-in person reads the rules of their shops; a person allowed
 * to edit automations publishes, enables, disables and runs one manually (the rules live in src/people/automations.ts).
 */
import express, { type Request, type Response, type Router } from 'express';
import {
  automationOf, automationsOf, disableAsPerson, enableAsPerson, mayEditAutomations, publishAsPerson, runAsPerson, type RunWorkflowsAccess,
} from '../../../src/people/automations.js';
import { automationRunWorkflowsClient } from '../../../src/temporal/automations.js';
import { TASK_QUEUE } from '../../../src/temporal/constants.js';
import { field } from '../forms.js';
import type { ApplicationDeps } from '../index.js';
import { renderPage } from '../render.js';
import { actorNames } from '../../../src/people/actors.js';
import { currentPerson, requirePerson } from '../session.js';

const DONE_MESSAGES: Record<string, string> = {
  publish: 'Published: this version is the one that runs. Enable it to run it on new events.',
  replace: 'Published as this automation\'s new version: it replaced the previous rule and kept its enabled or disabled state; runs already started finish the previous version.',
  enable: 'Enabled: new events of its trigger start runs.',
  disable: 'Disabled: no new runs start, and its waiting runs were cancelled.',
  'disable-later': 'Disabled: no new runs start; its waiting runs are cancelled as soon as the worker is reachable.',
  run: 'The run has started; refresh to follow its steps below.',
  'run-later': 'The run is recorded; it starts as soon as the worker is reachable.',
};

const WORKFLOW_ID = /^aut_[a-z0-9]{16}$/;

export function automationsRoutes(deps: ApplicationDeps): Router {
  const { db } = deps;
  const router = express.Router();
  const taskQueue = deps.application.taskQueue ?? TASK_QUEUE;
  // Temporal is asked lazily, per action; without it (or unreachable) the worker's consumer does the same a little later.
  const workflows: RunWorkflowsAccess = async () => (deps.temporal ? automationRunWorkflowsClient(await deps.temporal.client(), taskQueue) : null);
  const idOf = (req: Request) => {
    const id = String(req.params.workflowId);
    return WORKFLOW_ID.test(id) ? id : 'aut_none';
  };

  router.get('/automations', requirePerson, async (_req, res) => {
    const person = currentPerson(res);
    const automations = await automationsOf(db, person);
    renderPage(res, 'automations', {
      title: 'Automations', drafts: automations.filter((a) => a.state === 'draft'), published: automations.filter((a) => a.state === 'published'),
      canEdit: mayEditAutomations(person), someShops: person.shopCodes !== null,
      actors: await actorNames(db, person.accountId, automations.map((a) => a.createdBy)),
    });
  });

  router.get('/automations/:workflowId', requirePerson, async (req: Request, res: Response) => {
    const person = currentPerson(res);
    const detail = await automationOf(db, person, idOf(req));
    const actors = await actorNames(db, person.accountId, [detail.automation.createdBy]);
    const done = typeof req.query.done === 'string' ? DONE_MESSAGES[req.query.done] ?? null : null;
    renderPage(res, 'automation', { title: detail.automation.name, ...detail, ruleJson: JSON.stringify(detail.rule, null, 2), notice: done, actors });
  });

  router.post('/automations/:workflowId/publish', requirePerson, async (req, res) => {
    const row = await publishAsPerson(db, currentPerson(res), idOf(req));
    // A draft of a published automation was consumed: the page to show is the automation it replaced.
    res.redirect(303, `/app/automations/${row.workflow_id}?done=${row.workflow_id === idOf(req) ? 'publish' : 'replace'}`);
  });

  router.post('/automations/:workflowId/enable', requirePerson, async (req, res) => {
    const row = await enableAsPerson(db, currentPerson(res), idOf(req));
    res.redirect(303, `/app/automations/${row.workflow_id}?done=enable`);
  });

  router.post('/automations/:workflowId/disable', requirePerson, async (req, res) => {
    const { automation, cancelledNow } = await disableAsPerson(db, currentPerson(res), idOf(req), workflows);
    res.redirect(303, `/app/automations/${automation.workflow_id}?done=${cancelledNow ? 'disable' : 'disable-later'}`);
  });

  router.post('/automations/:workflowId/run', requirePerson, async (req, res) => {
    const id = idOf(req);
    const { started } = await runAsPerson(db, currentPerson(res), id, field(req.body, 'eventId').trim(), workflows);
    res.redirect(303, `/app/automations/${id}?done=${started ? 'run' : 'run-later'}`);
  });
  return router;
}
