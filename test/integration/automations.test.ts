/**
 * Automations over REST and MCP: the catalogue and its JSON Schema, validation over a table of good and bad rules,
 * drafts over MCP (idempotency, version conflicts, CATALOG_CHANGED, published rules never changed), the `write` kind
 * (MCP only, absent for read_only credentials), and the reads with shop scope.
 */
import { appTest } from '../helpers/app.js';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { CATALOG_VERSION } from '../../src/automations/catalog.js';
import { publishAutomation, setAutomationEnabled } from '../../src/automations/drafts.js';
import { validateRule } from '../../src/automations/validate.js';
import { connectModern, toolError } from '../helpers/mcp.js';
import { api, issueKey } from '../helpers/server.js';
import { personActor, sampleRule } from '../helpers/automations.js';
import { ensureSampleWebhook } from '../helpers/webhooks.js';

const test = appTest({}, async ({ database }) => ({ endpointId: await ensureSampleWebhook(database.db) }));

async function withClient<T>(t: { context: { server: Parameters<typeof connectModern>[0] } }, key: string, fn: (client: ModernClient) => Promise<T>): Promise<T> {
  const client = await connectModern(t.context.server, key);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const call = (client: ModernClient, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
const data = (result: unknown) => (result as { structuredContent: { data: any } }).structuredContent.data;

test('When the catalogue is read over REST and MCP, then both give the same triggers, operators, actions, templates, JSON Schema and catalogVersion', async (t) => {
  const rest = await api(t.context.server, '/automations/catalog', t.context.key);
  t.is(rest.status, 200);
  const catalog = rest.body.data;
  t.is(catalog.catalogVersion, CATALOG_VERSION);
  t.true(catalog.catalogVersion.startsWith('cat-'));
  t.deepEqual(catalog.triggers.map((tr: any) => tr.event), ['order.created', 'order.paid', 'order.status_changed', 'shipment.created', 'shipment.status_changed', 'shipment.delivered', 'claim.created', 'claim.status_changed', 'claim.closed']);
  const paid = catalog.triggers.find((tr: any) => tr.event === 'order.paid');
  const total = paid.fields.find((f: any) => f.field === 'order.totalWithVatEur');
  t.deepEqual(total.operators, ['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
  t.deepEqual(catalog.actions.map((a: any) => a.action), ['send_webhook', 'wait', 'wait_until', 'send_email', 'add_tag']);
  t.is(catalog.ruleSchema.type, 'object');
  t.deepEqual([...catalog.ruleSchema.required].sort(), ['catalogVersion', 'name', 'steps', 'trigger']);
  await withClient(t, t.context.key, async (client) => {
    t.deepEqual(data(await call(client, 'automations_catalog', {})), catalog);
  });
});

test('When options are read, then each dictionary gives values for the rule and names, from the shops the key may see', async (t) => {
  const all = await api(t.context.server, '/automations/options', t.context.key);
  t.is(all.status, 200);
  const dictionaries = new Set(all.body.data.map((o: any) => o.dictionary));
  for (const d of ['shops', 'order_statuses', 'payment_methods', 'shipping_methods', 'carriers', 'claim_types', 'email_templates', 'webhook_endpoints']) t.true(dictionaries.has(d), d);
  const statuses = await api(t.context.server, '/automations/options?dictionary=order_statuses', t.context.key);
  t.true(statuses.body.data.every((o: any) => o.dictionary === 'order_statuses' && typeof o.value === 'number' && o.name.length > 0));
  const skOnly = await issueKey(t.context.database.db, { shops: ['sk'] });
  const shops = await api(t.context.server, '/automations/options?dictionary=shops', skOnly);
  t.deepEqual(shops.body.data.map((o: any) => o.value), ['sk']);
  const bad = await api(t.context.server, '/automations/options?dictionary=colours', t.context.key);
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'INVALID_PARAMETER');
});

test('When the templates are read, then every template without blanks validates against the catalogue', async (t) => {
  const res = await api(t.context.server, '/automations/templates', t.context.key);
  t.is(res.status, 200);
  t.true(res.body.data.length >= 3);
  const actor = await personActor(t.context.database.db);
  const { validateForActor } = await import('../../src/automations/drafts.js');
  for (const template of res.body.data) {
    const result = await validateForActor(t.context.database.db, actor, template.rule);
    if (template.fill.length === 0) t.deepEqual(result.problems, [], template.templateId);
    t.is(template.rule.catalogVersion, CATALOG_VERSION);
  }
});

/** The table of rules: each bad rule lists every problem it must produce, as (code, nodeId, path). */
/** `levels` condition groups each holding the next (`g1` the root), the innermost holding one comparison. */
function nestedGroups(levels: number): Record<string, unknown> {
  let node: Record<string, unknown> = { id: 'paid', field: 'order.paid', op: 'eq', value: true };
  for (let level = levels; level >= 1; level--) node = { id: `g${level}`, all: [node] };
  return node;
}

const ruleTable: Array<{ name: string; rule: (endpointId: string) => unknown; problems: Array<[string, string | null, string]> }> = [
  { name: 'the sample rule', rule: () => sampleRule(), problems: [] },
  {
    name: 'a paid order over 200 EUR, wait two days, tag, webhook', problems: [],
    rule: (endpointId) => sampleRule({
      trigger: { id: 'paid', event: 'order.paid' },
      conditions: { id: 'when', all: [{ id: 'big', field: 'order.totalWithVatEur', op: 'gt', value: 200 }, { id: 'either', any: [{ id: 'card', field: 'order.paid', op: 'eq', value: true }, { id: 'sk', field: 'event.market', op: 'in', value: ['sk', 'cz'] }] }] },
      steps: [{ id: 'wait', action: 'wait', duration: '2d' }, { id: 'tag', action: 'add_tag', target: 'order', tag: 'vip' }, { id: 'erp', action: 'send_webhook', endpointId }, { id: 'morning', action: 'wait_until', timeOfDay: '08:00' }, { id: 'mail', action: 'send_email', template: 'high_value_order' }],
    }),
  },
  { name: 'a claim rule tagging the claim', problems: [], rule: () => sampleRule({ trigger: { id: 't', event: 'claim.created' }, conditions: { id: 'c', any: [{ id: 'type', field: 'claim.type', op: 'eq', value: 'complaint' }] }, steps: [{ id: 's', action: 'add_tag', target: 'claim', tag: 'x' }] }) },
  { name: 'no conditions, empty-coupon check', problems: [], rule: () => ({ ...sampleRule({ conditions: { id: 'c', all: [{ id: 'nocoupon', field: 'order.couponCode', op: 'is_empty' }] } }) }) },
  {
    name: 'unknown trigger, missing steps', rule: () => ({ catalogVersion: CATALOG_VERSION, name: 'x', trigger: { id: 't', event: 'order.teleported' } }),
    problems: [['SCHEMA', null, '/steps'], ['UNKNOWN_TRIGGER', 't', '/trigger/event']],
  },
  { name: 'stale catalogue', rule: () => sampleRule({ catalogVersion: 'cat-0000000000000000' }), problems: [['CATALOG_CHANGED', null, '/catalogVersion']] },
  {
    name: 'every kind of condition problem at once',
    rule: () => sampleRule({
      conditions: {
        id: 'when', all: [
          { id: 'f1', field: 'order.weight', op: 'gt', value: 1 },
          { id: 'f2', field: 'order.paid', op: 'gt', value: true },
          { id: 'f3', field: 'order.totalWithVat', op: 'gt', value: '200' },
          { id: 'f4', field: 'order.statusId', op: 'in', value: [1, 999] },
          { id: 'f5', field: 'order.country', op: 'is_empty', value: 'SK' },
          { id: 'f6', field: 'order.currency', op: 'in', value: 'EUR' },
          { id: 'g1', all: [{ id: 'f7', field: 'order.paid', op: 'eq', value: true }], any: [{ id: 'f8', field: 'order.paid', op: 'eq', value: false }] },
          { id: 'f1', field: 'order.paid', op: 'nope', value: true },
        ],
      } as never,
    }),
    problems: [
      ['UNKNOWN_FIELD', 'f1', '/conditions/all/0/field'], ['OPERATOR_NOT_ALLOWED', 'f2', '/conditions/all/1/op'], ['VALUE_TYPE', 'f3', '/conditions/all/2/value'],
      ['UNKNOWN_VALUE', 'f4', '/conditions/all/3/value/1'], ['VALUE_NOT_ALLOWED', 'f5', '/conditions/all/4/value'], ['VALUE_TYPE', 'f6', '/conditions/all/5/value'],
      ['GROUP_SHAPE', 'g1', '/conditions/all/6'], ['DUPLICATE_NODE_ID', 'f1', '/conditions/all/7/id'], ['UNKNOWN_OPERATOR', 'f1', '/conditions/all/7/op'],
    ],
  },
  {
    name: 'every kind of step problem at once',
    rule: () => sampleRule({
      steps: [
        { id: 'w', action: 'wait', duration: '2 days' },
        { id: 'u', action: 'wait_until', timeOfDay: '25:00' },
        { id: 'm', action: 'send_email', template: 'love_letter' },
        { id: 'h', action: 'send_webhook', endpointId: '999999' },
        { id: 'c', action: 'add_tag', target: 'claim', tag: 'x' },
        { id: 'x', action: 'launch_rocket' },
        { id: 'Bad Id', action: 'add_tag', target: 'order', tag: 'ok' },
      ] as never,
    }),
    problems: [
      ['SCHEMA', 'w', '/steps/0/duration'], ['SCHEMA', 'u', '/steps/1/timeOfDay'], ['UNKNOWN_VALUE', 'm', '/steps/2/template'], ['UNKNOWN_VALUE', 'h', '/steps/3/endpointId'],
      ['TARGET_NOT_ALLOWED', 'c', '/steps/4/target'], ['SCHEMA', 'x', '/steps/5/action'], ['SCHEMA', 'Bad Id', '/steps/6/id'],
    ],
  },
  // Condition groups nest at most 4 levels (the root group is level 1): 4 is valid, a 5th level is refused.
  { name: 'condition groups 4 levels deep', rule: () => sampleRule({ conditions: nestedGroups(4) as never }), problems: [] },
  { name: 'condition groups 5 levels deep', rule: () => sampleRule({ conditions: nestedGroups(5) as never }), problems: [['TOO_DEEP', 'g5', '/conditions/all/0/all/0/all/0/all/0']] },
  { name: 'a market the account does not have', rule: () => sampleRule({ trigger: { id: 't', event: 'order.created', markets: ['sk', 'de'] } }), problems: [['UNKNOWN_VALUE', 't', '/trigger/markets/1']] },
  { name: 'an unknown top-level property', rule: () => ({ ...sampleRule(), owner: 'me' }), problems: [['SCHEMA', null, '']] },
];

for (const row of ruleTable) {
  test(`When the rule "${row.name}" is validated over MCP, then ${row.problems.length === 0 ? 'it is valid' : `all ${row.problems.length} problems come back with node and path`}`, async (t) => {
    await withClient(t, t.context.key, async (client) => {
      const result = data(await call(client, 'automations_validate_draft', { rule: row.rule(t.context.endpointId) }));
      t.is(result.catalogVersion, CATALOG_VERSION);
      t.is(result.valid, row.problems.length === 0);
      const got = result.problems.map((p: any) => [p.code, p.nodeId, p.path]);
      t.deepEqual(got.sort(), [...row.problems].sort(), JSON.stringify(result.problems, null, 1));
      t.true(result.problems.every((p: any) => p.message.length > 5));
    });
  });
}

test('When the validator is given a rule over the JSON Schema, then a schema-valid rule with unknown catalogue values is still refused', async (t) => {
  const result = await validateRule(sampleRule({ trigger: { id: 't', event: 'order.created' }, steps: [{ id: 's', action: 'send_email', template: 'nope' }] }), async () => []);
  t.false(result.valid);
  t.deepEqual(result.problems.map((p) => p.code), ['UNKNOWN_VALUE']);
  const notObject = await validateRule([1, 2], async () => []);
  t.deepEqual(notObject.problems.map((p) => [p.code, p.nodeId, p.path]), [['NOT_AN_OBJECT', null, '']]);
});

test('When a draft is created over MCP, then it is DISABLED, idempotent through clientRequestId, and a reused id with another body is a conflict', async (t) => {
  await withClient(t, t.context.key, async (client) => {
    const first = data(await call(client, 'automations_create_draft', { clientRequestId: 'create-1', rule: sampleRule() }));
    t.is(first.state, 'draft');
    t.false(first.enabled);
    t.is(first.version, 1);
    t.is(first.catalogVersion, CATALOG_VERSION);
    t.regex(first.workflowId, /^aut_[a-z0-9]{16}$/);
    t.deepEqual(first.shops, { all: false, codes: ['sk'] });
    const again = data(await call(client, 'automations_create_draft', { clientRequestId: 'create-1', rule: sampleRule() }));
    t.is(again.workflowId, first.workflowId);
    const conflict = toolError(await call(client, 'automations_create_draft', { clientRequestId: 'create-1', rule: sampleRule({ name: 'Another' }) }));
    t.is(conflict.error.code, 'IDEMPOTENCY_CONFLICT');
    t.is(conflict.error.details?.workflowId, first.workflowId);
    t.is((await t.context.database.db('automations').where({ client_request_id: 'create-1' })).length, 1);
  });
});

test('When another account sends a clientRequestId demo already used, then it gets a draft of its own, never demo\'s draft or a conflict naming it', async (t) => {
  const db = t.context.database.db;
  const acmeKey = await issueKey(db, { account: 'acme' });
  const demoDraft = await withClient(t, t.context.key, async (client) => data(await call(client, 'automations_create_draft', { clientRequestId: 'shared-across-accounts', rule: sampleRule() })));
  await withClient(t, acmeKey, async (client) => {
    // Another body under the same id: in demo that would be IDEMPOTENCY_CONFLICT; acme has never used the id.
    const created = await call(client, 'automations_create_draft', { clientRequestId: 'shared-across-accounts', rule: sampleRule({ name: 'Acme rule' }) });
    t.falsy((created as { isError?: boolean }).isError, JSON.stringify(created).slice(0, 300));
    const acmeDraft = data(created);
    t.not(acmeDraft.workflowId, demoDraft.workflowId);
    t.is(acmeDraft.name, 'Acme rule');
    // The id is still idempotent within acme: the same body again answers acme's draft.
    t.is(data(await call(client, 'automations_create_draft', { clientRequestId: 'shared-across-accounts', rule: sampleRule({ name: 'Acme rule' }) })).workflowId, acmeDraft.workflowId);
  });
  const rows = await db('automations as a').join('accounts as c', 'c.id', 'a.account_id').where('a.client_request_id', 'shared-across-accounts')
    .orderBy('c.code').select('c.code', 'a.workflow_id', 'a.name');
  t.deepEqual(rows.map((r) => [r.code, r.name]), [['acme', 'Acme rule'], ['demo', 'Tag every order in sk']]);
  t.is(rows[1].workflow_id, demoDraft.workflowId);
});

test('When two identical creates race, then one draft exists and both answers name it', async (t) => {
  await withClient(t, t.context.key, async (client) => {
    const results = await Promise.all([1, 2, 3].map(() => call(client, 'automations_create_draft', { clientRequestId: 'race-1', rule: sampleRule() })));
    const ids = new Set(results.map((r) => data(r).workflowId));
    t.is(ids.size, 1);
    // Counted in the table, not only in the answers: one row for the request id, and it is the one named.
    const rows = await t.context.database.db('automations').where({ client_request_id: 'race-1' }).select('workflow_id');
    t.is(rows.length, 1);
    t.is(String(rows[0].workflow_id), [...ids][0]);
  });
});

test('When an invalid or stale rule is saved, then nothing is saved and the error lists every problem or says CATALOG_CHANGED', async (t) => {
  await withClient(t, t.context.key, async (client) => {
    const invalid = toolError(await call(client, 'automations_create_draft', { clientRequestId: 'bad-1', rule: sampleRule({ steps: [{ id: 'a', action: 'wait', duration: 'soon' }, { id: 'a', action: 'add_tag', target: 'order', tag: 'ok' }] as never }) }));
    t.is(invalid.error.code, 'INVALID_AUTOMATION');
    t.deepEqual((invalid.error.details!.problems as any[]).map((p) => p.code).sort(), ['DUPLICATE_NODE_ID', 'SCHEMA']);
    const stale = toolError(await call(client, 'automations_create_draft', { clientRequestId: 'bad-2', rule: sampleRule({ catalogVersion: 'cat-old' }) }));
    t.is(stale.error.code, 'CATALOG_CHANGED');
    t.is(stale.error.details?.currentCatalogVersion, CATALOG_VERSION);
    t.is((await t.context.database.db('automations').whereIn('client_request_id', ['bad-1', 'bad-2'])).length, 0);
  });
});

test('When a draft is updated, then expectedVersion must match, a retried update is answered with the draft, and the versions are kept', async (t) => {
  await withClient(t, t.context.key, async (client) => {
    const draft = data(await call(client, 'automations_create_draft', { clientRequestId: 'update-1', rule: sampleRule() }));
    const renamed = sampleRule({ name: 'Renamed' });
    const updated = data(await call(client, 'automations_update_draft', { workflowId: draft.workflowId, expectedVersion: 1, rule: renamed }));
    t.is(updated.version, 2);
    t.is(updated.name, 'Renamed');
    const retried = data(await call(client, 'automations_update_draft', { workflowId: draft.workflowId, expectedVersion: 1, rule: renamed }));
    t.is(retried.version, 2);
    const stale = toolError(await call(client, 'automations_update_draft', { workflowId: draft.workflowId, expectedVersion: 1, rule: sampleRule({ name: 'Third' }) }));
    t.is(stale.error.code, 'VERSION_CONFLICT');
    t.is(stale.error.details?.currentVersion, 2);
    const versions = await t.context.database.db('automation_versions as v').join('automations as a', 'a.id', 'v.automation_id').where('a.workflow_id', draft.workflowId).orderBy('version').select('v.version');
    t.deepEqual(versions.map((v) => v.version), [1, 2]);
    const missing = toolError(await call(client, 'automations_update_draft', { workflowId: 'aut_0000000000000000', expectedVersion: 1, rule: renamed }));
    t.is(missing.error.code, 'NOT_FOUND');
  });
});

test('When the catalogue moved since a draft was written, then updating it with a rule of that catalogue is CATALOG_CHANGED, and one written against the current catalogue is saved', async (t) => {
  const { db } = t.context.database;
  await withClient(t, t.context.key, async (client) => {
    const draft = data(await call(client, 'automations_create_draft', { clientRequestId: 'catalog-1', rule: sampleRule() }));
    // The draft was written against an older catalogue (as if the catalogue changed after it was saved).
    const old = 'cat-1111111111111111';
    await db('automations').where({ workflow_id: draft.workflowId }).update({ catalog_version: old, dsl: JSON.stringify(sampleRule({ catalogVersion: old })) });
    const listed = (await api(t.context.server, `/automations/${draft.workflowId}`, t.context.key)).body.data;
    t.false(listed.catalogCurrent);
    t.deepEqual(listed.validation.problems.map((p: any) => p.code), ['CATALOG_CHANGED']);
    const changed = toolError(await call(client, 'automations_update_draft', { workflowId: draft.workflowId, expectedVersion: 1, rule: sampleRule({ catalogVersion: old, name: 'Edited' }) }));
    t.is(changed.error.code, 'CATALOG_CHANGED');
    t.is(changed.error.details?.draftCatalogVersion, old);
    t.is(changed.error.details?.currentCatalogVersion, CATALOG_VERSION);
    const rewritten = data(await call(client, 'automations_update_draft', { workflowId: draft.workflowId, expectedVersion: 1, rule: sampleRule({ name: 'Edited' }) }));
    t.is(rewritten.catalogVersion, CATALOG_VERSION);
    t.true(rewritten.catalogCurrent);
  });
});

test('When a published automation is updated over MCP, then it stays unchanged and the update becomes one new draft naming it', async (t) => {
  const { db } = t.context.database;
  await withClient(t, t.context.key, async (client) => {
    const draft = data(await call(client, 'automations_create_draft', { clientRequestId: 'publish-1', rule: sampleRule() }));
    const actor = await personActor(db);
    await publishAutomation(db, actor, draft.workflowId);
    await setAutomationEnabled(db, actor, draft.workflowId, true);
    const args = { workflowId: draft.workflowId, expectedVersion: 1, rule: sampleRule({ name: 'Changed by an assistant' }) };
    const created = data(await call(client, 'automations_update_draft', args));
    t.not(created.workflowId, draft.workflowId);
    t.is(created.sourceWorkflowId, draft.workflowId);
    t.is(created.state, 'draft');
    t.false(created.enabled);
    t.is(data(await call(client, 'automations_update_draft', args)).workflowId, created.workflowId, 'the same update gives the same new draft');
    const original = (await api(t.context.server, `/automations/${draft.workflowId}`, t.context.key)).body.data;
    t.is(original.name, 'Tag every order in sk');
    t.is(original.state, 'published');
    t.true(original.enabled);
    t.is(original.version, 1);
  });
});

test('When a draft of a published automation is published, then it replaces that automation\'s rule as its next version and no second automation exists', async (t) => {
  const { db } = t.context.database;
  const actor = await personActor(db);
  await withClient(t, t.context.key, async (client) => {
    const source = data(await call(client, 'automations_create_draft', { clientRequestId: 'replace-1', rule: sampleRule() }));
    await publishAutomation(db, actor, source.workflowId);
    await setAutomationEnabled(db, actor, source.workflowId, true);
    const draft = data(await call(client, 'automations_update_draft', { workflowId: source.workflowId, expectedVersion: 1, rule: sampleRule({ name: 'Replaced by an assistant' }) }));
    t.is(draft.sourceWorkflowId, source.workflowId);

    const published = await publishAutomation(db, actor, draft.workflowId);
    t.is(published.workflow_id, source.workflowId, 'the answer is the automation it replaced');
    const replaced = (await api(t.context.server, `/automations/${source.workflowId}`, t.context.key)).body.data;
    t.like(replaced, { name: 'Replaced by an assistant', state: 'published', enabled: true, version: 2, publishedVersion: 2 });
    t.is((await api(t.context.server, `/automations/${draft.workflowId}`, t.context.key)).body.error.code, 'NOT_FOUND', 'the draft was consumed');
    // One automation of the two ids remains, so one runs on the next event; both versions are kept for runs started earlier.
    t.is(Number((await db('automations').whereIn('workflow_id', [source.workflowId, draft.workflowId]).count('* as n'))[0].n), 1);
    const versions = await db('automation_versions as v').join('automations as a', 'a.id', 'v.automation_id').where('a.workflow_id', source.workflowId)
      .orderBy('v.version').select('v.version', db.raw("v.dsl->>'name' as name"));
    t.deepEqual(versions.map((v: any) => [v.version, v.name]), [[1, 'Tag every order in sk'], [2, 'Replaced by an assistant']]);

    // The other side: a draft made from nothing publishes as its own automation, beside the others.
    const fresh = data(await call(client, 'automations_create_draft', { clientRequestId: 'replace-2', rule: sampleRule({ name: 'A rule of its own' }) }));
    t.is((await publishAutomation(db, actor, fresh.workflowId)).workflow_id, fresh.workflowId);
    t.like((await api(t.context.server, `/automations/${source.workflowId}`, t.context.key)).body.data, { name: 'Replaced by an assistant', version: 2 });
  });
});

test('When a credential is read_only or lacks automations:write, then the write tools do not exist for it; REST has no write route', async (t) => {
  const { db } = t.context.database;
  const names = async (key: string) => withClient(t, key, async (client) => (await client.listTools()).tools.map((tool) => tool.name));
  const writer = await names(t.context.key);
  t.true(writer.includes('automations_create_draft') && writer.includes('automations_update_draft') && writer.includes('automations_validate_draft'));
  const readOnly = await issueKey(db, { writeMode: 'read_only' });
  const readOnlyTools = await names(readOnly);
  t.false(readOnlyTools.includes('automations_create_draft'));
  t.false(readOnlyTools.includes('automations_update_draft'));
  t.true(readOnlyTools.includes('automations_validate_draft'), 'validation writes nothing');
  const noWriteScope = await issueKey(db, { scopes: ['automations:read'] });
  t.deepEqual((await names(noWriteScope)).sort(), ['automations_catalog', 'automations_get', 'automations_list', 'automations_runs', 'automations_templates', 'automations_validate_draft']);
  await withClient(t, readOnly, async (client) => {
    await t.throwsAsync(call(client, 'automations_create_draft', { clientRequestId: 'ro', rule: sampleRule() }));
  });
  const capabilities = await api(t.context.server, '/capabilities', t.context.key);
  t.false(capabilities.body.data.some((c: any) => c.kind === 'write' || c.mcpTool === 'automations_validate_draft'));
  const post = await api(t.context.server, '/automations', t.context.key, { method: 'POST', body: '{}' });
  t.is(post.status, 405);
  const openapi = await api(t.context.server, '/openapi.json');
  // No automation draft route (the proposal drafts paths of SPEC's table are reads, not writes).
  t.false(Object.keys(openapi.body.paths).some((p) => p.startsWith('/automations') && p.includes('draft')));
});

test('When automations are listed and read, then state, shop scope and the rule with its validation come back, and a key for other shops sees neither', async (t) => {
  const { db } = t.context.database;
  await withClient(t, t.context.key, async (client) => {
    const sk = data(await call(client, 'automations_create_draft', { clientRequestId: 'list-sk', rule: sampleRule() }));
    const all = data(await call(client, 'automations_create_draft', { clientRequestId: 'list-all', rule: sampleRule({ trigger: { id: 't', event: 'order.paid' } }) }));
    const list = await api(t.context.server, '/automations?limit=250', t.context.key);
    t.is(list.status, 200);
    const ids = list.body.data.map((a: any) => a.workflowId);
    t.true(ids.includes(sk.workflowId) && ids.includes(all.workflowId));
    t.deepEqual(list.body.data.find((a: any) => a.workflowId === all.workflowId).shops, { all: true, codes: [] });
    const drafts = await api(t.context.server, '/automations?state=published&limit=250', t.context.key);
    t.false(drafts.body.data.some((a: any) => a.workflowId === sk.workflowId));
    const one = await api(t.context.server, `/automations/${sk.workflowId}`, t.context.key);
    t.deepEqual(one.body.data.rule, sampleRule());
    t.deepEqual(one.body.data.validation, { valid: true, catalogVersion: CATALOG_VERSION, problems: [] });
    const czKey = await issueKey(db, { shops: ['cz'] });
    const czList = await api(t.context.server, '/automations?limit=250', czKey);
    t.false(czList.body.data.some((a: any) => a.workflowId === sk.workflowId || a.workflowId === all.workflowId));
    const hidden = await api(t.context.server, `/automations/${sk.workflowId}`, czKey);
    t.is(hidden.status, 404);
    const runs = await api(t.context.server, `/automations/${sk.workflowId}/runs`, t.context.key);
    t.deepEqual(runs.body.data, []);
    const otherAccount = await issueKey(db, { account: 'acme' });
    t.is((await api(t.context.server, `/automations/${sk.workflowId}`, otherAccount)).status, 404);
    const badId = await api(t.context.server, '/automations/not-an-id', t.context.key);
    t.is(badId.status, 400);
  });
});

test('When a shop-restricted key creates a rule for every shop, then it is refused with MARKETS_REQUIRED', async (t) => {
  const skOnly = await issueKey(t.context.database.db, { shops: ['sk'] });
  await withClient(t, skOnly, async (client) => {
    const refused = toolError(await call(client, 'automations_create_draft', { clientRequestId: 'sk-all', rule: sampleRule({ trigger: { id: 't', event: 'order.paid' } }) }));
    t.is(refused.error.code, 'INVALID_AUTOMATION');
    t.deepEqual((refused.error.details!.problems as any[]).map((p) => p.code), ['MARKETS_REQUIRED']);
    const cz = toolError(await call(client, 'automations_create_draft', { clientRequestId: 'sk-cz', rule: sampleRule({ trigger: { id: 't', event: 'order.paid', markets: ['cz'] } }) }));
    t.is(cz.error.code, 'INVALID_AUTOMATION');
  });
});
