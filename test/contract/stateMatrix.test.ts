/**
 * The state matrix (issue 22): every state-changing action tried in EVERY state of its record, not only the state it
 * is meant for. A rule checked in one state only (a ping accepted by a paused endpoint, a partner approved from a state
 * it must be refused in, a re-enable that keeps the failure count) is caught by the cell where it goes wrong.
 *
 * `MACHINES` is the table, written from SPEC.md "States and transitions", DECISIONS.md (D14, D15, D30) and
 * docs/decisions.md (P26-P35, AW2, AW4, CW8, AP2-3, AP2-4, AD1, PR3, PR4, U11, U12, GM5, GM6): per machine its states, its
 * actions (each an application route or an MCP tool) and, per (state, action), the outcome — the fields of the record
 * that change (anything not named must stay as it was) or the refusal (HTTP status and error code, `details.state`
 * where the decisions name it) with the record unchanged. Each record is put into its state directly in the test's
 * database, the action goes through the real surface (the application's forms, MCP tools/call), and the record is
 * read back from Postgres.
 *
 * The first test walks the served application's router and the registry's write tools: every POST route and every
 * MCP write tool is an action of the table, or is named in `NO_STATE` (it changes no record's state) or `ELSEWHERE`
 * (a state machine not yet in this table, with the file that drives its main transitions), each with its reason; a
 * newcomer joins by construction.
 */
import crypto from 'node:crypto';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { Express } from 'express';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { hashKey } from '../../src/auth/keys.js';
import { capabilities } from '../../src/capabilities/registry.js';
import type { Db } from '../../src/db/knex.js';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { lazyTemporalAccess } from '../../src/entry/compose.js';
import type { TemporalAccess } from '../../src/temporal/access.js';
import { createDraft, publishAutomation, setAutomationEnabled, updateDraft } from '../../src/automations/drafts.js';
import { createAvailabilityProposal, createClaimsProposal, createTextProposal, type ProposalAuthor } from '../../src/proposals/create.js';
import { getCategoryContent, getProductContent } from '../../src/queries/content.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import { systemResolver } from '../../src/webhooks/addresses.js';
import { createTestDatabase, rowForInsert, type TestDatabase } from '../helpers/db.js';
import { FormClient, csrfOf, makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { mountedRoutes } from '../helpers/appRoutes.js';
import { issueKey, type TestServer } from '../helpers/server.js';
import { connectModern, toolError } from '../helpers/mcp.js';
import { startInProcessWorker, type InProcessWorker } from '../helpers/inProcessWorker.js';
import { orderEvent, personActor, sampleRule } from '../helpers/automations.js';
import { shopOf } from '../helpers/shops.js';

// ---------- The table ----------

/** A field of a record's snapshot that must differ from before (a new secret), without saying its value. */
const CHANGED = Symbol('changed');
type Snapshot = Record<string, unknown>;
type Expected = Record<string, unknown>;

/** The outcome of an action in a state: the fields that change (the rest stays), or the refusal (nothing changes). */
type Outcome = { ok: Expected } | { refused: number; code: string; state?: string };
const ok = (changes: Expected = {}): Outcome => ({ ok: changes });
const refused = (status: number, code: string, state?: string): Outcome => ({ refused: status, code, ...(state === undefined ? {} : { state }) });
const NOT_FOUND = refused(404, 'NOT_FOUND');

interface Machine {
  /** Where the expectations come from. */
  source: string;
  /** Action → the surface that performs it: `POST /route` of the application (as its router names it) or `mcp <tool>`. */
  actions: Record<string, string>;
  /** State → action → outcome. */
  cells: Record<string, Record<string, Outcome>>;
}

/** The conflict of a state that SPEC/decisions give with `details.state`. */
const conflict = (state: string) => refused(409, 'STATE_CONFLICT', state);

const PARTNER_CELLS: Machine['cells'] = {
  // AW2: approve from waiting or suspended; reject from waiting; suspend from approved; return to waiting from rejected
  // or suspended. Reject and suspend keep the reason; approve and return clear it. Approval and rejection e-mail.
  waiting: {
    approve: ok({ state: 'approved', reason: null, approvedMails: 1 }),
    reject: ok({ state: 'rejected', reason: 'state matrix', rejectedMails: 1 }),
    suspend: conflict('waiting'),
    return_to_waiting: conflict('waiting'),
  },
  approved: {
    approve: conflict('approved'),
    reject: conflict('approved'),
    suspend: ok({ state: 'suspended', reason: 'state matrix' }),
    return_to_waiting: conflict('approved'),
  },
  rejected: {
    approve: conflict('rejected'),
    reject: conflict('rejected'),
    suspend: conflict('rejected'),
    return_to_waiting: ok({ state: 'waiting', reason: null }),
  },
  suspended: {
    approve: ok({ state: 'approved', reason: null, approvedMails: 1 }),
    reject: conflict('suspended'),
    suspend: conflict('suspended'),
    return_to_waiting: ok({ state: 'waiting', reason: null }),
  },
};

/** An automation row that is no more (a draft consumed by publishing it over its source). */
const AUTOMATION_GONE = { exists: false, state: null, enabled: null, version: null, publishedVersion: null, manualRuns: null, newDrafts: null };

const PROPOSAL_SOURCE = 'SPEC "Change proposals (drafts)" (states per kind), D30 (expired), PR3 (final states), PR4 (a decision is taken once: PROPOSAL_ALREADY_DECIDED)';
/** A proposal kind's states: the waiting one is decided (approve → its written state, reject → rejected); every other refuses both. */
function proposalCells(waiting: string, written: string, others: string[]): Machine['cells'] {
  const cells: Machine['cells'] = {
    [waiting]: { approve: ok({ status: written, decision: 'approve' }), reject: ok({ status: 'rejected', decision: 'reject' }) },
  };
  for (const state of others) cells[state] = { approve: refused(409, 'PROPOSAL_ALREADY_DECIDED', state), reject: refused(409, 'PROPOSAL_ALREADY_DECIDED', state) };
  return cells;
}
const PROPOSAL_ACTIONS = { approve: 'POST /approvals/:draftId/decide', reject: 'POST /approvals/:draftId/decide' };

const MACHINES: Record<string, Machine> = {
  'webhook endpoint': {
    source: 'SPEC "Webhook endpoint" and "Endpoint rules", D14, P27 (paused holds, disable/delete skip), P33 (a deleted endpoint stays readable), P35 (no test delivery unless enabled), GM6',
    actions: {
      enable: 'POST /webhooks/:id/enable', disable: 'POST /webhooks/:id/disable', delete: 'POST /webhooks/:id/delete', ping: 'POST /webhooks/:id/ping',
      rotate: 'POST /webhooks/:id/rotate-secret', edit: 'POST /webhooks/:id/edit',
    },
    // Each endpoint has one SENT delivery in its log; enabled and paused ones one PENDING, disabled and deleted one SKIPPED.
    cells: {
      enabled: {
        enable: ok(), disable: ok({ state: 'disabled', pending: 0, skipped: 1 }), delete: ok({ state: 'deleted', pending: 0, skipped: 1 }),
        ping: ok({ pending: 2 }), rotate: ok({ secret: CHANGED }), edit: ok({ name: 'State matrix edited' }),
      },
      paused: {
        // The person re-enables: enabled, the consecutive failures start again from 0, the pending delivery is still there to go out.
        enable: ok({ state: 'enabled', failures: 0, paused: false }), disable: ok({ state: 'disabled', paused: false, pending: 0, skipped: 1 }),
        delete: ok({ state: 'deleted', pending: 0, skipped: 1 }), ping: conflict('paused'), rotate: ok({ secret: CHANGED }), edit: ok({ name: 'State matrix edited' }),
      },
      disabled: {
        enable: ok({ state: 'enabled', failures: 0 }), disable: ok(), delete: ok({ state: 'deleted' }), ping: conflict('disabled'),
        rotate: ok({ secret: CHANGED }), edit: ok({ name: 'State matrix edited' }),
      },
      deleted: { enable: NOT_FOUND, disable: NOT_FOUND, delete: NOT_FOUND, ping: NOT_FOUND, rotate: NOT_FOUND, edit: NOT_FOUND },
    },
  },
  'webhook delivery': {
    source: 'SPEC "Webhook delivery" (FAILED waits for a manual retry), D15 (PENDING again, attempt numbers continue), P35 (refused when the endpoint is disabled or deleted)',
    actions: { retry: 'POST /webhooks/:id/deliveries/:deliveryId/retry' },
    cells: {
      PENDING: { retry: conflict('PENDING') },
      SENT: { retry: conflict('SENT') },
      FAILED: { retry: ok({ status: 'PENDING', manualRetry: true }) },
      SKIPPED: { retry: conflict('SKIPPED') },
      'FAILED, endpoint paused': { retry: ok({ status: 'PENDING', manualRetry: true }) },
      'FAILED, endpoint disabled': { retry: conflict('disabled') },
      'FAILED, endpoint deleted': { retry: conflict('deleted') },
    },
  },
  'affiliate partner (MCP)': {
    source: 'SPEC "Affiliate partner account", AW2',
    actions: {
      approve: 'mcp affiliate_partners_set_state', reject: 'mcp affiliate_partners_set_state', suspend: 'mcp affiliate_partners_set_state',
      return_to_waiting: 'mcp affiliate_partners_set_state',
    },
    cells: PARTNER_CELLS,
  },
  'affiliate partner (application)': {
    source: 'SPEC "Affiliate partner account", AW2, AP2-5',
    actions: {
      approve: 'POST /affiliate/partners/:id/state', reject: 'POST /affiliate/partners/:id/state', suspend: 'POST /affiliate/partners/:id/state',
      return_to_waiting: 'POST /affiliate/partners/:id/state',
    },
    cells: PARTNER_CELLS,
  },
  'what only an approved partner gets': {
    source: 'AW4 (a code only for an approved partner), CW8 (a discount code only for an approved partner), A8/AP2-1 (only an approved partner has working links, 409)',
    actions: { 'approve a code request': 'mcp affiliate_code_requests_decide', 'ensure a discount code': 'mcp affiliate_discount_codes_ensure', 'generate a link': 'mcp affiliate_links_generate' },
    cells: Object.fromEntries(['waiting', 'approved', 'rejected', 'suspended'].map((state) => [state, state === 'approved'
      ? { 'approve a code request': ok({ request: 'approved', reservations: 1 }), 'ensure a discount code': ok({ discountCodes: 1 }), 'generate a link': ok() }
      : { 'approve a code request': conflict(state), 'ensure a discount code': conflict(state), 'generate a link': conflict(state) }])),
  },
  'partner code request': {
    source: 'SPEC affiliate_code_requests_decide, AW4 (only a pending request is decided; approval reserves the code)',
    actions: { approve: 'mcp affiliate_code_requests_decide', reject: 'mcp affiliate_code_requests_decide' },
    cells: {
      pending: { approve: ok({ state: 'approved', reservations: 1 }), reject: ok({ state: 'rejected' }) },
      approved: { approve: conflict('approved'), reject: conflict('approved') },
      rejected: { approve: conflict('rejected'), reject: conflict('rejected') },
    },
  },
  commission: {
    source: 'AP2-3: approving needs pending/awaiting_manual_approval, rejecting needs pending; anything else, and anything in a payout, is STATE_CONFLICT',
    actions: { approve: 'POST /affiliate/commissions/:id/decide', reject: 'POST /affiliate/commissions/:id/decide' },
    cells: {
      'pending, awaiting_manual_approval': { approve: ok({ state: 'approved', reason: 'approved_manually' }), reject: ok({ state: 'rejected', reason: 'rejected_manually' }) },
      'pending, return_period': { approve: conflict('pending'), reject: ok({ state: 'rejected', reason: 'rejected_manually' }) },
      'approved, approved_automatically': { approve: conflict('approved'), reject: conflict('approved') },
      'rejected, order_cancelled': { approve: conflict('rejected'), reject: conflict('rejected') },
      'paid, paid_out (in a payout)': { approve: conflict('paid'), reject: conflict('paid') },
      'pending, awaiting_manual_approval (in a payout)': { approve: conflict('pending'), reject: conflict('pending') },
    },
  },
  payout: {
    source: 'AP2-4: drawn up `requested`; a person confirms (`approved`), marks paid (`paid`, commissions paid/paid_out) or cancels a draft (commissions freed)',
    actions: { confirm: 'POST /affiliate/payouts/:id/confirm', paid: 'POST /affiliate/payouts/:id/paid', cancel: 'POST /affiliate/payouts/:id/cancel' },
    cells: {
      requested: { confirm: ok({ state: 'approved' }), paid: conflict('requested'), cancel: ok({ state: 'cancelled', commissions: 0, paidCommissions: 0 }) },
      approved: { confirm: conflict('approved'), paid: ok({ state: 'paid', paidCommissions: 2 }), cancel: conflict('approved') },
      paid: { confirm: conflict('paid'), paid: conflict('paid'), cancel: conflict('paid') },
      cancelled: { confirm: conflict('cancelled'), paid: conflict('cancelled'), cancel: conflict('cancelled') },
    },
  },
  'affiliate document version': {
    source: 'AD1: publishing a draft supersedes the published version of its document and language; anything but a draft is STATE_CONFLICT with details.state',
    actions: { publish: 'POST /affiliate/documents/versions/:versionId/publish' },
    cells: {
      draft: { publish: ok({ status: 'published', otherPublished: 0 }) },
      published: { publish: conflict('published') },
      superseded: { publish: conflict('superseded') },
    },
  },
  automation: {
    source: 'SPEC "Automations" (a draft is created disabled; only a person enables, publishes or runs; a published automation is not changed over MCP, a new draft is made), D31, docs/decisions.md automations (publish a draft of a published automation replaces its rule)',
    actions: {
      publish: 'POST /automations/:workflowId/publish', enable: 'POST /automations/:workflowId/enable', disable: 'POST /automations/:workflowId/disable',
      run: 'POST /automations/:workflowId/run', update: 'mcp automations_update_draft',
    },
    cells: {
      draft: {
        publish: ok({ state: 'published', publishedVersion: 1 }), enable: conflict('draft'), disable: ok(), run: conflict('draft'), update: ok({ version: 2 }),
      },
      'published, disabled': { publish: ok(), enable: ok({ enabled: true }), disable: ok(), run: ok({ manualRuns: 1 }), update: ok({ newDrafts: 1 }) },
      'published, enabled': { publish: ok(), enable: ok(), disable: ok({ enabled: false }), run: ok({ manualRuns: 1 }), update: ok({ newDrafts: 1 }) },
      'draft of a published automation': {
        publish: ok({ ...AUTOMATION_GONE, sourceVersion: 2 }), enable: conflict('draft'), disable: ok(), run: conflict('draft'), update: ok({ version: 2 }),
      },
    },
  },
  'availability proposal': {
    source: PROPOSAL_SOURCE, actions: PROPOSAL_ACTIONS,
    cells: proposalCells('pending', 'executed', ['writing', 'executed', 'partial', 'failed', 'rejected', 'expired']),
  },
  'product-text proposal': {
    source: PROPOSAL_SOURCE, actions: PROPOSAL_ACTIONS,
    cells: proposalCells('awaiting_approval', 'written', ['written', 'written_with_warnings', 'rejected', 'expired']),
  },
  'category-text proposal': {
    source: PROPOSAL_SOURCE, actions: PROPOSAL_ACTIONS,
    cells: proposalCells('awaiting_approval', 'written', ['written', 'rejected', 'expired']),
  },
  'claims-settings proposal': {
    source: PROPOSAL_SOURCE, actions: PROPOSAL_ACTIONS,
    cells: proposalCells('waiting', 'written', ['written', 'rejected', 'expired']),
  },
  invitation: {
    source: 'U11 (expired, used, revoked → 410 page), U12 (7 days, once), GM5 (revoking twice or an expired one changes nothing but the mark; an accepted one is STATE_CONFLICT)',
    actions: { accept: 'POST /invitation/:token', revoke: 'POST /people/invitations/:id/revoke' },
    cells: {
      pending: { accept: ok({ accepted: true, person: true }), revoke: ok({ revoked: true }) },
      accepted: { accept: refused(410, 'invitation_accepted'), revoke: conflict('accepted') },
      revoked: { accept: refused(410, 'invitation_revoked'), revoke: ok() },
      expired: { accept: refused(410, 'invitation_expired'), revoke: ok({ revoked: true }) },
    },
  },
  'access key': {
    source: 'D10 (a key has revoked-at; a revoked or expired key is refused), GM5 (revoking twice keeps the first time, an expired key can be marked revoked)',
    actions: { revoke: 'POST /keys/:id/revoke' },
    cells: {
      active: { revoke: ok({ revoked: true, answers: 401 }) },
      revoked: { revoke: ok() },
      expired: { revoke: ok({ revoked: true }) },
    },
  },
  person: {
    source: 'D27, U10 (the owner disables a person; their sessions end), GM5 (disabling twice keeps the first time)',
    actions: { disable: 'POST /people/:id/disable' },
    cells: {
      active: { disable: ok({ disabled: true, sessions: 0 }) },
      disabled: { disable: ok() },
    },
  },
};

/** POST routes and MCP write tools that move no record between states, each with why. */
const NO_STATE: Record<string, string> = {
  'POST /sign-in': 'signs a person in (a session)',
  'POST /sign-in/second-factor': 'the second sign-in step (a session)',
  'POST /sign-out': 'ends a session',
  'POST /consent/:uid': 'answers an OAuth interaction (a connection is created, not moved)',
  'POST /account/password': 'changes a password',
  'POST /notifications/read': 'marks notifications read (idempotent, no refusal in any state)',
  'POST /customers/export': 'creates an export run',
  'POST /keys': 'creates a key',
  'POST /webhooks': 'creates an endpoint (plan limits: webhooks.test.ts)',
  'POST /products/bulk': 'writes texts (texts.test.ts)',
  'POST /products/import': 'uploads an import for preview (creates a batch)',
  'POST /products/:market/:id': 'writes a product\'s texts, checked by fingerprint (texts.test.ts)',
  'POST /categories/:market/:id': 'writes a category\'s texts, checked by fingerprint (texts.test.ts)',
  'POST /people/invite': 'creates an invitation',
  'POST /people/:id/update': 'changes a person\'s rights (U13)',
  'POST /people/:id/reset-second-factor': 'clears a person\'s second factor (an owner\'s repair, allowed in every state)',
  'POST /shops/connect': 'connects a new shop',
  'POST /affiliate/payouts/draw-up': 'creates payout drafts for a month',
  'POST /affiliate/documents/:documentId/upload': 'creates a draft version (AD1)',
  'mcp automations_create_draft': 'creates a disabled draft',
  'mcp coupons_ensure': 'creates a coupon or leaves it (no lifecycle state of the service)',
  'mcp coupons_update': 'updates a coupon after a confirmation token (D25)',
  'mcp coupons_remove': 'deletes a coupon after a confirmation token (D25)',
  'mcp affiliate_settings_update': 'programme settings',
  'mcp affiliate_portal_pages_update': 'portal texts',
  'mcp affiliate_articles_create': 'creates an article',
  'mcp affiliate_articles_update': 'article wording',
  'mcp affiliate_articles_set_state': 'enabled or disabled, either from either (idempotent toggle, AW1)',
  'mcp affiliate_email_templates_update': 'template wording and the event\'s on/off toggle',
  'mcp affiliate_campaigns_create': 'creates a campaign',
  'mcp affiliate_campaigns_update': 'campaign fields and its on/off toggle',
  'mcp affiliate_documents_update': 'document policy',
  'mcp availabilities_propose': 'creates a proposal (its states are the availability proposal above)',
  'mcp products_content_propose': 'creates a proposal (its states are the product-text proposal above)',
  'mcp categories_content_propose': 'creates a proposal (its states are the category-text proposal above)',
  'mcp claims_settings_propose': 'creates a proposal (its states are the claims-settings proposal above)',
};

/**
 * State-changing actions not yet rows of this table, with the file that drives their main transitions (not every
 * state: e.g. starting a second factor that is already on, revoking a revoked key). The next machines to add.
 */
const ELSEWHERE: Record<string, string> = {
  'POST /setup': 'first-run link open/used/expired: needs a database without any account (setupPage.test.ts)',
  'POST /account/second-factor/start': 'second factor off/started/on (application.test.ts)',
  'POST /account/second-factor/confirm': 'second factor off/started/on (application.test.ts)',
  'POST /account/second-factor/disable': 'second factor off/started/on (application.test.ts)',
  'POST /connections/:id/revoke': 'connection active/revoked, idempotent (oauth.test.ts)',
  'POST /shops/:code/disconnect': 'shop connected/removed (shopsPage.test.ts)',
  'POST /affiliate/commissions/bulk': 'the decision of /affiliate/commissions/:id/decide per commission, refusals listed on the page (affiliateStaff.test.ts)',
  'POST /products/import/:batchId/confirm': 'import previewed/written, confirmed once (texts.test.ts)',
};

// ---------- The surfaces ----------

interface Context {
  database: TestDatabase;
  server: TestServer & { app: Express };
  worker: InProcessWorker;
  temporal: TemporalAccess;
  mcp: ModernClient;
  owner: { client: FormClient; csrf: string };
  appKey: Buffer;
  demo: string;
  sk: { id: string; code: string; name: string; currency: string; timeZone: string };
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const { db } = database;
  const worker = await startInProcessWorker(db, { prefix: 'test-state-matrix' });
  const temporal: TemporalAccess = { ...lazyTemporalAccess(process.env.TEMPORAL_ADDRESS!, 'default'), taskQueue: worker.taskQueue };
  const options = testApplicationOptions();
  const server = await startApplicationServer(db, options, undefined, { platforms: createPlatformRegistry({ db }), temporal });
  const demo = String((await db('accounts').where({ code: 'demo' }).first('id')).id);
  // Room for every endpoint of the table (SPEC: pro allows 50; non-deleted endpoints count).
  await db('accounts').where({ id: demo }).update({ plan_code: 'pro' });
  const person = await makePerson(db, { role: 'owner' });
  const client = new FormClient(server.baseUrl);
  if ((await client.signIn(person.email, person.password)).status !== 303) throw new Error('sign-in failed');
  const csrf = csrfOf((await client.get('/app/account')).text);
  const skShop = await db('shops').where({ account_id: demo, code: 'sk' }).first('id', 'code', 'name', 'currency', 'time_zone');
  t.context = {
    database, server, worker, temporal, mcp: await connectModern(server, await issueKey(db)), owner: { client, csrf }, appKey: options.key, demo,
    sk: { id: String(skShop.id), code: skShop.code, name: skShop.name, currency: skShop.currency, timeZone: skShop.time_zone },
  };
});

test.after.always(async (t) => {
  await t.context.mcp?.close();
  await t.context.server?.close();
  await t.context.temporal?.close();
  await t.context.worker?.stop();
  await t.context.database?.drop();
});

/** What an action answered, whatever the surface. */
type Answer = { surface: 'app'; status: number; text: string } | { surface: 'mcp'; result: Record<string, unknown> };

const post = async (t: ExecutionContext<Context>, url: string, form: Record<string, string> = {}): Promise<Answer> => {
  const res = await t.context.owner.client.post(url, { _csrf: t.context.owner.csrf, ...form });
  return { surface: 'app', status: res.status, text: res.text };
};
const tool = async (t: ExecutionContext<Context>, name: string, args: Record<string, unknown>): Promise<Answer> =>
  ({ surface: 'mcp', result: await t.context.mcp.callTool({ name, arguments: args }) as Record<string, unknown> });

/**
 * For a page that shows a refusal's message but not its code: the answer counts as naming `code` when it shows exactly
 * the refusal's message (which names the record and its state).
 */
function messageNamesCode(answer: Answer, message: string, code: string): Answer {
  if (answer.surface !== 'app' || answer.status < 400) return answer;
  return { ...answer, text: answer.text.includes(message) ? `${answer.text} ${code}` : answer.text };
}

/**
 * Checks one cell: the answer is a success or the refusal of the table, and the record's snapshot afterwards is the
 * one before with exactly the table's changes (a refusal: unchanged).
 */
function checkCell(t: ExecutionContext<Context>, where: string, outcome: Outcome, answer: Answer, before: Snapshot, after: Snapshot): void {
  if ('ok' in outcome) {
    if (answer.surface === 'app') t.true([200, 303].includes(answer.status), `${where}: answered ${answer.status} ${answer.text.replace(/\s+/g, ' ').slice(0, 400)}`);
    else t.falsy(answer.result.isError, `${where}: ${JSON.stringify(answer.result.content).slice(0, 400)}`);
    const expected: Snapshot = { ...before };
    for (const [field, value] of Object.entries(outcome.ok)) {
      if (value === CHANGED) {
        t.notDeepEqual(after[field], before[field], `${where}: ${field} changed`);
        expected[field] = after[field];
      } else expected[field] = value;
    }
    t.deepEqual(after, expected, `${where}: the record afterwards`);
    return;
  }
  if (answer.surface === 'app') {
    t.is(answer.status, outcome.refused, `${where}: ${answer.text.replace(/\s+/g, ' ').slice(0, 400)}`);
    t.true(answer.text.includes(outcome.code), `${where}: the page names ${outcome.code}`);
    // The page's refusal message names the state it refused in (another refusal with the same code would not).
    const alert = [...answer.text.matchAll(/role="alert"[^>]*>([^<]*)</g)].map((m) => m[1]).join(' ');
    t.true(alert.length > 0, `${where}: the page shows the refusal`);
    if (outcome.state !== undefined) t.regex(alert, new RegExp(`\\b${outcome.state}\\b`), `${where}: the refusal names the state ${outcome.state}`);
  } else {
    t.truthy(answer.result.isError, `${where}: expected ${outcome.code}, answered ${JSON.stringify(answer.result.structuredContent ?? answer.result.content).slice(0, 300)}`);
    if (answer.result.isError) {
      const { error } = toolError(answer.result);
      t.is(error.code, outcome.code, `${where}: ${error.message}`);
      if (outcome.state !== undefined) t.is(error.details?.state, outcome.state, `${where}: details.state`);
    }
  }
  t.deepEqual(after, before, `${where}: the record is unchanged`);
}

/** A machine's fixtures: a record in a state, its snapshot, and the action done through the surface. */
interface Runner<R> {
  make(t: ExecutionContext<Context>, state: string): Promise<R>;
  snapshot(t: ExecutionContext<Context>, record: R): Promise<Snapshot>;
  act(t: ExecutionContext<Context>, action: string, record: R, state: string): Promise<Answer>;
}

/** Every (state, action) of a machine, each on a record of its own. */
async function runMachine<R>(t: ExecutionContext<Context>, name: string, runner: Runner<R>): Promise<void> {
  const machine = MACHINES[name]!;
  let cells = 0;
  for (const [state, row] of Object.entries(machine.cells)) {
    t.deepEqual(Object.keys(row).sort(), Object.keys(machine.actions).sort(), `${name}/${state}: every action has an outcome`);
    for (const [action, outcome] of Object.entries(row)) {
      const record = await runner.make(t, state);
      const before = await runner.snapshot(t, record);
      const answer = await runner.act(t, action, record, state);
      checkCell(t, `${name}: ${action} in ${state}`, outcome, answer, before, await runner.snapshot(t, record));
      cells++;
    }
  }
  t.log(`${name}: ${cells} cells`);
}

let seq = 0;
const unique = () => `${++seq}${crypto.randomBytes(3).toString('hex')}`;

// ---------- The table meets the code ----------

test.serial('Every POST route of the application and every MCP write tool is an action of the table, or named as changing no state or as driven elsewhere; every action of the table is registered', (t) => {
  const routes = mountedRoutes(t.context.server.app);
  t.truthy(routes, 'the application router is mounted at /app');
  const posts = new Set(routes!.filter((r) => r.startsWith('POST ')));
  const writes = new Set(capabilities.filter((c) => c.kind === 'write' && c.mcpTool).map((c) => `mcp ${c.mcpTool}`));
  t.true(posts.has('POST /webhooks/:id/ping') && posts.has('POST /affiliate/payouts/:id/confirm'), 'template routes and nested routers are found');
  t.true(writes.size >= 20, `write tools: ${writes.size}`);
  const inTable = new Set(Object.values(MACHINES).flatMap((m) => Object.values(m.actions)));
  const named = new Set([...inTable, ...Object.keys(NO_STATE), ...Object.keys(ELSEWHERE)]);
  t.deepEqual([...posts, ...writes].filter((a) => !named.has(a)).sort(), [], 'POST routes and write tools the table does not name');
  // The one read in the table (links) is a tool of the registry too.
  const tools = new Set(capabilities.filter((c) => c.mcpTool).map((c) => `mcp ${c.mcpTool}`));
  t.deepEqual([...named].filter((a) => !posts.has(a) && !tools.has(a)).sort(), [], 'table entries no route or tool registers');
  t.deepEqual([...inTable].filter((a) => a in NO_STATE || a in ELSEWHERE), [], 'an action is in the table and excused at once');
  for (const [name, machine] of Object.entries(MACHINES)) {
    t.true(Object.keys(machine.cells).length >= 2, `${name} has states`);
    for (const [state, row] of Object.entries(machine.cells)) t.deepEqual(Object.keys(row).sort(), Object.keys(machine.actions).sort(), `${name}/${state}`);
  }
});

// ---------- Webhooks ----------

interface Endpoint { id: string; deliveryIds: Record<string, string> }

async function endpointIn(t: ExecutionContext<Context>, state: string, deliveries: string[]): Promise<Endpoint> {
  const { db } = t.context.database;
  const { id } = await createEndpoint(db, { secretsKey: t.context.appKey, allowLoopback: true, resolve: systemResolver }, {
    accountId: t.context.demo, name: `State matrix ${unique()}`, url: 'http://127.0.0.1:9/state-matrix', events: 'all', shops: 'all', createdBy: 'state-matrix',
  });
  const columns: Record<string, Record<string, unknown>> = {
    enabled: { state: 'enabled', consecutive_failures: 0 },
    // Paused by the service after 30 consecutive failed attempts (SPEC, D14).
    paused: { state: 'paused', consecutive_failures: 30, paused_at: new Date(), pause_reason: 'consecutive_failures' },
    // Disabled by a person after some failures: the count is what a re-enable must reset.
    disabled: { state: 'disabled', consecutive_failures: 5 },
    deleted: { state: 'disabled', consecutive_failures: 5, deleted_at: new Date() },
  };
  await db('webhook_endpoints').where({ id }).update(columns[state]!);
  const deliveryIds: Record<string, string> = {};
  for (const status of deliveries) {
    const at = new Date(Date.now() - 60_000);
    const done = status !== 'PENDING';
    const [row] = await db('webhook_deliveries').insert({
      endpoint_id: id, account_id: t.context.demo, event_id: crypto.randomUUID(), event_type: 'order.created', store: 'sk', body: '{}', status,
      attempts: status === 'SENT' ? 1 : status === 'FAILED' ? 6 : 0, last_attempt_at: done ? at : null, last_http_status: status === 'SENT' ? 200 : status === 'FAILED' ? 500 : null,
      workflow_started_at: at, created_at: at, completed_at: done ? at : null,
    }).returning('id');
    deliveryIds[status] = String(row.id);
  }
  return { id, deliveryIds };
}

test.serial('Webhook endpoint: enable, disable, delete, ping, rotate and edit in each of enabled, paused, disabled and deleted', async (t) => {
  const { db } = t.context.database;
  await runMachine<Endpoint>(t, 'webhook endpoint', {
    make: (t, state) => endpointIn(t, state, ['SENT', ['enabled', 'paused'].includes(state) ? 'PENDING' : 'SKIPPED']),
    async snapshot(_t, { id }) {
      const e = await db('webhook_endpoints').where({ id }).first();
      const counts = Object.fromEntries((await db('webhook_deliveries').where({ endpoint_id: id }).groupBy('status').select('status').count('* as n'))
        .map((r) => [String(r.status), Number(r.n)]));
      return {
        state: e.deleted_at ? 'deleted' : e.state, failures: e.consecutive_failures, paused: e.paused_at !== null, name: e.name,
        secret: Buffer.from(e.secret_encrypted).toString('hex'),
        pending: counts.PENDING ?? 0, skipped: counts.SKIPPED ?? 0, sent: counts.SENT ?? 0, failed: counts.FAILED ?? 0,
      };
    },
    async act(t, action, { id }) {
      const answer = await post(t, `/app/webhooks/${id}/${action === 'rotate' ? 'rotate-secret' : action}`,
        action === 'edit' ? { name: 'State matrix edited', url: 'http://127.0.0.1:9/state-matrix', eventChoice: 'all', shopChoice: 'all' } : {});
      // The edit form shows a refusal's message above the form, not its code.
      return action === 'edit' ? messageNamesCode(answer, `No webhook endpoint ${id} in this account.`, 'NOT_FOUND') : answer;
    },
  });
});

test.serial('Webhook delivery: a manual retry in each of PENDING, SENT, FAILED and SKIPPED, and of a FAILED delivery of a paused, disabled and deleted endpoint', async (t) => {
  const { db } = t.context.database;
  await runMachine<Endpoint & { deliveryId: string }>(t, 'webhook delivery', {
    async make(t, state) {
      const [status, endpointState] = state.startsWith('FAILED, endpoint ') ? ['FAILED', state.slice('FAILED, endpoint '.length)] : [state, 'enabled'];
      const endpoint = await endpointIn(t, endpointState, [status]);
      return { ...endpoint, deliveryId: endpoint.deliveryIds[status]! };
    },
    async snapshot(_t, { deliveryId }) {
      const d = await db('webhook_deliveries').where({ id: deliveryId }).first('status', 'attempts', 'manual_retry_at');
      return { status: d.status, attempts: d.attempts, manualRetry: d.manual_retry_at !== null };
    },
    act: (t, _action, { id, deliveryId }) => post(t, `/app/webhooks/${id}/deliveries/${deliveryId}/retry`),
  });
});

// ---------- The partner programme ----------

async function partnerIn(t: ExecutionContext<Context>, state: string): Promise<{ id: string; handle: string }> {
  const handle = `SM${unique()}`.toUpperCase();
  const [row] = await t.context.database.db('affiliate_partners').insert({
    account_id: t.context.demo, handle, state, state_reason: ['rejected', 'suspended'].includes(state) ? 'an earlier reason' : null, state_changed_at: new Date('2026-11-01T00:00:00.000Z'),
    kind: 'blogger', language: 'en', contact_name: `State Matrix ${handle}`, email: `${handle.toLowerCase()}@partners.example`, registered_at: new Date('2026-10-01T00:00:00.000Z'),
  }).returning(['id', 'handle']);
  return { id: String(row.id), handle: row.handle };
}

async function partnerSnapshot(db: Db, id: string): Promise<Snapshot> {
  const p = await db('affiliate_partners').where({ id }).first('state', 'state_reason');
  const mails = async (event: string) => Number((await db('email_outbox').where({ partner_id: id, event }).count('* as n').first())!.n);
  return { state: p.state, reason: p.state_reason, approvedMails: await mails('account_approved'), rejectedMails: await mails('account_rejected') };
}

const partnerForm = (action: string) => ({ action, market: 'sk', ...(['reject', 'suspend'].includes(action) ? { reason: 'state matrix' } : {}) });

test.serial('Affiliate partner over MCP: approve, reject, suspend and return to waiting in each of waiting, approved, rejected and suspended', async (t) => {
  await runMachine(t, 'affiliate partner (MCP)', {
    make: (t, state) => partnerIn(t, state),
    snapshot: (t, p) => partnerSnapshot(t.context.database.db, p.id),
    act: (t, action, p) => tool(t, 'affiliate_partners_set_state', { partnerId: p.id, ...partnerForm(action) }),
  });
});

test.serial('Affiliate partner in the application: approve, reject, suspend and return to waiting in each of waiting, approved, rejected and suspended', async (t) => {
  await runMachine(t, 'affiliate partner (application)', {
    make: (t, state) => partnerIn(t, state),
    snapshot: (t, p) => partnerSnapshot(t.context.database.db, p.id),
    act: (t, action, p) => post(t, `/app/affiliate/partners/${p.id}/state`, partnerForm(action)),
  });
});

async function codeRequest(t: ExecutionContext<Context>, partnerId: string, state: string): Promise<string> {
  const [row] = await t.context.database.db('affiliate_code_requests').insert({
    shop_id: t.context.sk.id, partner_id: partnerId, requested_code: `SMCODE${unique()}`.toUpperCase(), state, requested_at: new Date('2026-11-10T00:00:00.000Z'),
  }).returning('id');
  return String(row.id);
}

test.serial('What only an approved partner gets: a code request approved, a discount code, a tracked link — for a partner in each state', async (t) => {
  const { db } = t.context.database;
  await runMachine<{ id: string; handle: string; requestId: string }>(t, 'what only an approved partner gets', {
    async make(t, state) {
      const partner = await partnerIn(t, state);
      return { ...partner, requestId: await codeRequest(t, partner.id, 'pending') };
    },
    async snapshot(_t, p) {
      const count = async (table: string) => Number((await db(table).where({ partner_id: p.id }).count('* as n').first())!.n);
      return {
        ...(await partnerSnapshot(db, p.id)), request: (await db('affiliate_code_requests').where({ id: p.requestId }).first('state')).state,
        reservations: await count('affiliate_code_reservations'), discountCodes: await count('affiliate_discount_codes'),
      };
    },
    act(t, action, p) {
      if (action === 'approve a code request') return tool(t, 'affiliate_code_requests_decide', { market: 'sk', requestId: p.requestId, decision: 'approve' });
      if (action === 'ensure a discount code') {
        return tool(t, 'affiliate_discount_codes_ensure', { market: 'sk', partnerId: p.id, code: `SMD${unique()}`.toUpperCase(), discount: { type: 'percent', percent: 10 } });
      }
      return tool(t, 'affiliate_links_generate', { market: 'sk', partnerId: p.id, target: 'home' });
    },
  });
});

test.serial('Partner code request: approve and reject in each of pending, approved and rejected', async (t) => {
  const { db } = t.context.database;
  await runMachine<{ id: string; requestId: string }>(t, 'partner code request', {
    async make(t, state) {
      const partner = await partnerIn(t, 'approved');
      return { id: partner.id, requestId: await codeRequest(t, partner.id, state) };
    },
    async snapshot(_t, r) {
      return {
        state: (await db('affiliate_code_requests').where({ id: r.requestId }).first('state')).state,
        reservations: Number((await db('affiliate_code_reservations').where({ partner_id: r.id }).count('* as n').first())!.n),
      };
    },
    act: (t, action, r) => tool(t, 'affiliate_code_requests_decide', { market: 'sk', requestId: r.requestId, decision: action, ...(action === 'reject' ? { reason: 'state matrix' } : {}) }),
  });
});

test.serial('Commission: approve and reject in each commission state, and in a payout', async (t) => {
  const { db } = t.context.database;
  // Conversions of sk not in a payout, each used once; a payout of sk to put the "in a payout" ones in.
  const free: string[] = (await db('affiliate_conversions').where({ shop_id: t.context.sk.id }).whereNull('payout_id').orderBy('id').limit(20).pluck('id')).map(String);
  const payout = await db('affiliate_payouts').where({ shop_id: t.context.sk.id }).orderBy('id').first('id');
  t.true(free.length >= 12 && payout !== undefined, `sk has ${free.length} conversions outside payouts and a payout`);
  await runMachine<string>(t, 'commission', {
    async make(_t, state) {
      const id = free.shift()!;
      const [commissionState, reason] = state.split(/, | \(/) as [string, string];
      await db('affiliate_conversions').where({ id }).update({
        commission_state: commissionState, state_reason: reason, manual_decision: null, payout_id: state.endsWith('(in a payout)') ? payout.id : null,
      });
      return id;
    },
    async snapshot(_t, id) {
      const c = await db('affiliate_conversions').where({ id }).first('commission_state', 'state_reason');
      return { state: c.commission_state, reason: c.state_reason };
    },
    act: (t, action, id) => post(t, `/app/affiliate/commissions/${id}/decide`, { decision: action, ...(action === 'reject' ? { reason: 'state matrix' } : {}) }),
  });
});

test.serial('Payout: confirm, mark paid and cancel in each of requested, approved, paid and cancelled', async (t) => {
  const { db } = t.context.database;
  // Payouts of the demo history, each used once with two commissions of its own.
  const payouts: string[] = (await db('affiliate_payouts').where({ account_id: t.context.demo }).orderBy('id').limit(12).pluck('id')).map(String);
  const conversions: string[] = (await db('affiliate_conversions as cv').join('shops as s', 's.id', 'cv.shop_id').where('s.account_id', t.context.demo)
    .orderBy('cv.id', 'desc').limit(24).pluck('cv.id')).map(String);
  t.true(payouts.length === 12 && conversions.length === 24, `${payouts.length} payouts, ${conversions.length} conversions`);
  await runMachine<string>(t, 'payout', {
    async make(_t, state) {
      const id = payouts.shift()!;
      await db('affiliate_conversions').where({ payout_id: id }).update({ payout_id: null });
      await db('affiliate_payouts').where({ id }).update({ state });
      const mine = [conversions.shift()!, conversions.shift()!];
      // A cancelled draft freed its commissions (AP2-4); the others hold two, paid once the payout is.
      if (state !== 'cancelled') {
        await db('affiliate_conversions').whereIn('id', mine).update(state === 'paid'
          ? { payout_id: id, commission_state: 'paid', state_reason: 'paid_out' } : { payout_id: id, commission_state: 'approved', state_reason: 'approved_automatically' });
      }
      return id;
    },
    async snapshot(_t, id) {
      const count = async (where: Record<string, string>) => Number((await db('affiliate_conversions').where({ payout_id: id, ...where }).count('* as n').first())!.n);
      return { state: (await db('affiliate_payouts').where({ id }).first('state')).state, commissions: await count({}), paidCommissions: await count({ commission_state: 'paid' }) };
    },
    act: (t, action, id) => post(t, `/app/affiliate/payouts/${id}/${action}`, action === 'paid' ? { reference: 'state matrix' } : {}),
  });
});

test.serial('Affiliate document version: publish in each of draft, published and superseded', async (t) => {
  const { db } = t.context.database;
  const document = await db('affiliate_documents').where({ account_id: t.context.demo, key: 'partner-agreement' }).first('id');
  const template = await db('affiliate_document_versions').where({ document_id: document.id, language: 'sk' }).orderBy('version', 'desc').first();
  await runMachine<string>(t, 'affiliate document version', {
    async make(_t, state) {
      if (state !== 'draft') return String((await db('affiliate_document_versions').where({ document_id: document.id, language: 'sk', status: state }).orderBy('id').first('id')).id);
      const { max } = (await db('affiliate_document_versions').where({ document_id: document.id, language: 'sk' }).max('version as max').first())!;
      const [row] = await db('affiliate_document_versions').insert({ ...rowForInsert(template), version: Number(max) + 1, status: 'draft', published_at: null }).returning('id');
      return String(row.id);
    },
    async snapshot(_t, id) {
      const v = await db('affiliate_document_versions').where({ id }).first('status', 'document_id', 'language');
      const others = await db('affiliate_document_versions').where({ document_id: v.document_id, language: v.language, status: 'published' }).whereNot({ id }).count('* as n').first();
      return { status: v.status, otherPublished: Number(others!.n) };
    },
    act: (t, _action, id) => post(t, `/app/affiliate/documents/versions/${id}/publish`),
  });
});

// ---------- Automations ----------

test.serial('Automation: publish, enable, disable and run in the application and update over MCP, in each of draft, published (disabled and enabled) and a draft of a published one', async (t) => {
  const { db } = t.context.database;
  const actor = await personActor(db);
  const { eventId } = await orderEvent(db, 'order.created');
  type Automation = { workflowId: string; sourceId: string | null };
  await runMachine<Automation>(t, 'automation', {
    async make(_t, state) {
      const draft = await createDraft(db, actor, { clientRequestId: `state-matrix-${unique()}`, rule: sampleRule({ name: `State matrix ${unique()}` }) });
      if (state === 'draft') return { workflowId: draft.workflow_id, sourceId: null };
      const published = await publishAutomation(db, actor, draft.workflow_id);
      if (state === 'published, enabled') await setAutomationEnabled(db, actor, draft.workflow_id, true);
      if (state !== 'draft of a published automation') return { workflowId: draft.workflow_id, sourceId: null };
      const next = await updateDraft(db, actor, { workflowId: draft.workflow_id, expectedVersion: published.version, rule: sampleRule({ name: `State matrix next ${unique()}` }) });
      return { workflowId: next.workflow_id, sourceId: draft.workflow_id };
    },
    async snapshot(_t, { workflowId, sourceId }) {
      const a = await db('automations').where({ workflow_id: workflowId }).first();
      const source = sourceId ? await db('automations').where({ workflow_id: sourceId }).first('version') : null;
      const base = source ? { sourceVersion: source.version } : {};
      if (!a) return { ...AUTOMATION_GONE, ...base };
      const runs = await db('automation_runs').where({ automation_id: a.id, manual: true }).count('* as n').first();
      const drafts = await db('automations').where({ source_workflow_id: workflowId }).count('* as n').first();
      return {
        exists: true, state: a.state, enabled: a.enabled, version: a.version, publishedVersion: a.published_version,
        manualRuns: Number(runs!.n), newDrafts: Number(drafts!.n), ...base,
      };
    },
    async act(t, action, { workflowId }) {
      if (action === 'update') {
        const { version } = await db('automations').where({ workflow_id: workflowId }).first('version');
        return tool(t, 'automations_update_draft', { workflowId, expectedVersion: version, rule: sampleRule({ name: `State matrix updated ${unique()}` }) });
      }
      return post(t, `/app/automations/${workflowId}/${action}`, action === 'run' ? { eventId } : {});
    },
  });
});

// ---------- Proposals ----------

test.serial('Proposals of each kind: approve and reject in every state SPEC names for the kind', async (t) => {
  const { db } = t.context.database;
  const { sk } = t.context;
  const author: ProposalAuthor = { accountId: t.context.demo, shop: sk, writeMode: 'proposals', createdBy: 'state-matrix' };
  const products: string[] = await db('products').where({ shop_id: sk.id }).whereNotNull('meta_title').orderBy('code').limit(20).pluck('code');
  const categories: string[] = await db('categories').where({ shop_id: sk.id }).orderBy('guid').limit(20).pluck('guid');
  const entries = await db('availabilities').where({ shop_id: sk.id }).orderBy('position').limit(20).select('availability_id', 'name');
  t.true(entries.length > 0, 'sk has availability entries');
  const shopOfSk = await shopOf(db, 'demo', 'sk');
  t.is(shopOfSk.id, sk.id);
  const create: Record<string, () => Promise<string>> = {
    async 'availability proposal'() {
      // Fewer entries than cells: an entry takes several proposals, each with a name of its own.
      const e = entries[seq % entries.length]!;
      return createAvailabilityProposal(db, author, [{ id: e.availability_id, name: `${e.name} (state matrix ${unique()})` }], 'state matrix', new Date());
    },
    async 'product-text proposal'() {
      const code = products.shift()!;
      const content = (await getProductContent(db, sk.id, code))!;
      return createTextProposal(db, author, 'product', [{ id: code, fingerprint: content.fingerprint, fields: { metaTitle: `State matrix title ${unique()}` } }], 'state matrix', new Date());
    },
    async 'category-text proposal'() {
      const guid = categories.shift()!;
      const content = (await getCategoryContent(db, sk.id, guid))!;
      return createTextProposal(db, author, 'category', [{ id: guid, fingerprint: content.fingerprint, fields: { metaTitle: `State matrix category ${unique()}` } }], 'state matrix', new Date());
    },
    async 'claims-settings proposal'() {
      const current = await db('proposals').where({ kind: 'claims_settings', created_by: 'state-matrix' }).count('* as n').first();
      return createClaimsProposal(db, author, { 'refundOptions.refundCouponValidityDays': 100 + Number(current!.n) }, 'state matrix', new Date());
    },
  };
  for (const name of Object.keys(create)) {
    const waiting = Object.entries(MACHINES[name]!.cells).find(([, row]) => 'ok' in row.approve!)![0];
    await runMachine<string>(t, name, {
      async make(_t, state) {
        const draftId = await create[name]!();
        if (state !== waiting) {
          // A state reached earlier: decided (and finished, but `writing`), or expired without a decision (D30).
          const decision = state === 'expired' ? null : state === 'rejected' ? 'reject' : 'approve';
          await db('proposals').where({ draft_id: draftId }).update({
            status: state, decision, decided_by: decision ? 'person:earlier' : null, decided_at: decision ? new Date() : null,
            decision_reason: decision === 'reject' ? 'earlier' : null, finished_at: state === 'writing' ? null : new Date(), workflow_started_at: new Date(),
          });
        }
        return draftId;
      },
      async snapshot(_t, draftId) {
        const p = await db('proposals').where({ draft_id: draftId }).first('status', 'decision');
        return { status: p.status, decision: p.decision };
      },
      async act(t, action, draftId, state) {
        const answer = await post(t, `/app/approvals/${draftId}/decide`, { decision: action, ...(action === 'reject' ? { reason: 'state matrix' } : {}) });
        // The Approvals page shows the refusal's message (naming the state), not its code.
        return messageNamesCode(answer, `The proposal is already ${state}.`, 'PROPOSAL_ALREADY_DECIDED');
      },
    });
  }
});

// ---------- Invitations ----------

test.serial('Invitation: accept and revoke in each of pending, accepted, revoked and expired', async (t) => {
  const { db } = t.context.database;
  const inviter = await db('people').where({ account_id: t.context.demo }).orderBy('id').first('id');
  type Invitation = { id: string; token: string; email: string };
  await runMachine<Invitation>(t, 'invitation', {
    async make(_t, state) {
      const token = crypto.randomBytes(32).toString('base64url');
      const id = `inv_state_matrix_${unique()}`;
      const email = `invited-${unique()}@example.com`;
      const created = new Date(Date.now() - (state === 'expired' ? 8 : 1) * 86_400_000);
      await db('person_invitations').insert({
        id, account_id: t.context.demo, email, role: 'member', permissions: [], all_shops: true, shop_codes: [],
        token_hash: crypto.createHash('sha256').update(token).digest(), invited_by: inviter.id, created_at: created,
        // U12: a link works for 7 days.
        expires_at: new Date(created.getTime() + 7 * 86_400_000),
      });
      if (state === 'accepted') {
        const person = await makePerson(db, { role: 'member', email });
        await db('person_invitations').where({ id }).update({ accepted_at: new Date(), accepted_person_id: person.id });
      }
      if (state === 'revoked') await db('person_invitations').where({ id }).update({ revoked_at: new Date(Date.now() - 3_600_000) });
      return { id, token, email };
    },
    async snapshot(_t, { id, email }) {
      const i = await db('person_invitations').where({ id }).first('accepted_at', 'revoked_at');
      // `revokedAt` pins an earlier revocation's time; `revoked` whether there is one.
      return { accepted: i.accepted_at !== null, revoked: i.revoked_at !== null, revokedAt: i.revoked_at && i.revoked_at.getTime() < Date.now() - 60_000 ? i.revoked_at.toISOString() : null,
        person: (await db('people').where({ email }).first('id')) !== undefined };
    },
    async act(t, action, { id, token }) {
      if (action === 'revoke') return post(t, `/app/people/invitations/${id}/revoke`);
      const visitor = new FormClient(t.context.server.baseUrl);
      const csrf = await visitor.csrf('/app/sign-in');
      const res = await visitor.post(`/app/invitation/${token}`, { _csrf: csrf, password: 'state matrix password 1', name: 'Invited' });
      return { surface: 'app', status: res.status, text: res.text };
    },
  });
});

// ---------- Keys and people ----------

/** A revocation's or disabling's time when it is older than the test (an earlier one, which a repeat must keep). */
const earlier = (at: Date | null) => (at && at.getTime() < Date.now() - 60_000 ? at.toISOString() : null);

test.serial('Access key: revoke in each of active, revoked and expired; a revoked key stops answering', async (t) => {
  const { db } = t.context.database;
  type Key = { id: string; key: string };
  await runMachine<Key>(t, 'access key', {
    async make(_t, state) {
      const key = await issueKey(db, { scopes: ['stores:read'], interfaces: ['rest'] });
      const { id } = await db('access_keys').where({ key_hash: hashKey(key) }).first('id');
      if (state === 'revoked') await db('access_keys').where({ id }).update({ revoked_at: new Date(Date.now() - 3_600_000) });
      if (state === 'expired') await db('access_keys').where({ id }).update({ expires_at: new Date(Date.now() - 3_600_000) });
      return { id: String(id), key };
    },
    async snapshot(t, { id, key }) {
      const row = await db('access_keys').where({ id }).first('revoked_at');
      const res = await fetch(`${t.context.server.baseUrl}/api/v1/stores`, { headers: { Authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      return { revoked: row.revoked_at !== null, revokedAt: earlier(row.revoked_at), answers: res.status };
    },
    act: (t, _action, { id }) => post(t, `/app/keys/${id}/revoke`),
  });
});

test.serial('Person: disable in each of active and disabled; a disabled person\'s sessions end', async (t) => {
  const { db } = t.context.database;
  await runMachine<string>(t, 'person', {
    async make(t, state) {
      const person = await makePerson(db, { role: 'member', permissions: [] });
      const client = new FormClient(t.context.server.baseUrl);
      if ((await client.signIn(person.email, person.password)).status !== 303) throw new Error('sign-in failed');
      if (state === 'disabled') {
        await db('people').where({ id: person.id }).update({ disabled_at: new Date(Date.now() - 3_600_000) });
        await db('app_sessions').where({ person_id: person.id }).delete();
      }
      return person.id;
    },
    async snapshot(_t, id) {
      const row = await db('people').where({ id }).first('disabled_at');
      const sessions = await db('app_sessions').where({ person_id: id }).count('* as n').first();
      return { disabled: row.disabled_at !== null, disabledAt: earlier(row.disabled_at), sessions: Number(sessions!.n) };
    },
    act: (t, _action, id) => post(t, `/app/people/${id}/disable`),
  });
});
