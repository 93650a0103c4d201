/**
 * The application's pages that take an identifier (issue 22 point 1): a person of `acme` opening `demo`'s webhook
 * endpoint, delivery, proposal, automation, access key or OAuth connection gets a refusal (404/403, never a 2xx or a
 * redirect of success), sees none of `demo`'s data, and changes no `demo` row. Every route with a parameter in
 * api/app/pages must be in ROUTES (or in NOT_RECORDS with its reason), so a new page joins by construction.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { projectRoot } from '../../src/config/projectRoot.js';
import { createTestDatabase, rowForInsert, type TestDatabase } from '../helpers/db.js';
import { FormClient, makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { issueKey, type TestServer } from '../helpers/server.js';
import { hashKey } from '../../src/auth/keys.js';
import { ensureSampleWebhook } from '../helpers/webhooks.js';
import { ensureSampleAutomation } from '../helpers/automations.js';
import { ensureSampleProposals } from '../helpers/proposals.js';
import { mintOAuthToken } from '../helpers/oauthToken.js';
import { queueEmail } from '../../src/email/outbox.js';

interface Context {
  database: TestDatabase;
  server: TestServer;
  ids: Record<string, string>;
}
const test = anyTest as TestFn<Context>;

/** Method and path of every page taking a record id, with the id each parameter takes from `demo`. */
const ROUTES: Array<[method: 'GET' | 'POST', route: string]> = [
  ['POST', '/approvals/:draftId/decide'],
  ['GET', '/automations/:workflowId'],
  ['POST', '/automations/:workflowId/publish'],
  ['POST', '/automations/:workflowId/enable'],
  ['POST', '/automations/:workflowId/disable'],
  ['POST', '/automations/:workflowId/run'],
  ['POST', '/connections/:id/revoke'],
  ['POST', '/keys/:id/revoke'],
  ['GET', '/webhooks/:id'],
  ['POST', '/webhooks/:id/rotate-secret'],
  ['POST', '/webhooks/:id/enable'],
  ['POST', '/webhooks/:id/disable'],
  ['POST', '/webhooks/:id/ping'],
  ['GET', '/webhooks/:id/edit'],
  ['POST', '/webhooks/:id/edit'],
  ['GET', '/webhooks/:id/delete'],
  ['POST', '/webhooks/:id/delete'],
  ['POST', '/webhooks/:id/deliveries/:deliveryId/retry'],
  ['POST', '/people/:id/update'],
  ['POST', '/people/:id/disable'],
  ['POST', '/people/:id/reset-second-factor'],
  ['POST', '/affiliate/partners/:id/state'],
  ['POST', '/affiliate/commissions/:id/decide'],
  ['GET', '/affiliate/payouts/:id/statement.pdf'],
  ['POST', '/affiliate/payouts/:id/confirm'],
  ['POST', '/affiliate/payouts/:id/paid'],
  ['POST', '/affiliate/payouts/:id/cancel'],
  ['POST', '/people/invitations/:id/revoke'],
  ['GET', '/products/import/:batchId'],
  ['POST', '/products/import/:batchId/confirm'],
  ['GET', '/customers/exports/:exportId'],
  ['GET', '/customers/exports/:exportId/download'],
  ['POST', '/shops/:code/disconnect'],
  ['POST', '/affiliate/documents/:documentId/upload'],
  ['POST', '/affiliate/documents/versions/:versionId/publish'],
  ['GET', '/affiliate/documents/versions/:versionId/pdf'],
];

/** Routes registered through a template literal, with the values its `${…}` part takes: each expansion is in ROUTES. */
const TEMPLATE_ROUTES: Record<string, string[]> = {
  'POST /affiliate/payouts/:id/${name}': ['POST /affiliate/payouts/:id/confirm', 'POST /affiliate/payouts/:id/paid', 'POST /affiliate/payouts/:id/cancel'],
  'POST /webhooks/:id/${action}': ['POST /webhooks/:id/enable', 'POST /webhooks/:id/disable', 'POST /webhooks/:id/ping'],
};

/** Routes with a parameter that is not a tenant's record. */
const NOT_RECORDS: Record<string, string> = {
  'GET /consent/:uid': 'an authorization interaction of the signed-in person\'s own browser session, not a stored record of an account',
  'POST /consent/:uid': 'an authorization interaction of the signed-in person\'s own browser session, not a stored record of an account',
  // Shop data by market and code: these pages run the capability (customers_get, documents_get, documents_pdf) for
  // the person (src/people/asCaller.ts), so account and shop are checked by the same code the registry-driven matrix
  // of test/contract/isolation.test.ts proves for every capability.
  'GET /invitation/:token': 'an invitation link, found by its secret token (only its hash is stored), opened without an account',
  'POST /invitation/:token': 'an invitation link, found by its secret token (only its hash is stored), opened without an account',
  'GET /customers/:market/:customerKey': 'shop data read through the customers_get capability (isolation matrix)',
  'GET /documents/:market/:type/:code': 'shop data read through the documents capabilities (isolation matrix)',
  'GET /documents/:market/:type/:code/pdf': 'shop data read through the documents capabilities (isolation matrix)',
  // The product and category text cards (`${base}` is /texts/products or /texts/categories): a shop's code and the
  // record's code in it, resolved by shopOfPerson (the person's account and shops), not an id of another account.
  'GET ${base}/:market/:id': 'shop data by market and code, resolved in the person\'s own account and shops (shopOfPerson)',
  'POST ${base}/:market/:id': 'shop data by market and code, resolved in the person\'s own account and shops (shopOfPerson)',
};

test.before(async (t) => {
  const database = await createTestDatabase();
  const db = database.db;
  const server = await startApplicationServer(db, testApplicationOptions());
  const endpointId = await ensureSampleWebhook(db);
  const delivery = await db('webhook_deliveries').where({ endpoint_id: endpointId }).first('id');
  const workflowId = await ensureSampleAutomation(db);
  const draftId = (await ensureSampleProposals(db))['products.content_draft:draftId'];
  const key = await issueKey(db);
  const keyId = (await db('access_keys').where({ key_hash: hashKey(key) }).first('id')).id;
  await mintOAuthToken(db, server);
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  const connectionId = (await db('oauth_connections').where({ account_id: demo.id }).first('id')).id;
  const demoPerson = await makePerson(db, { account: 'demo', role: 'member' });
  const partnerId = (await db('affiliate_partners').where({ account_id: demo.id }).first('id')).id;
  const conversionId = (await db('affiliate_conversions as c').join('affiliate_partners as p', 'p.id', 'c.partner_id').where('p.account_id', demo.id).first('c.id')).id;
  const invitationId = 'inv_isolation_demo';
  await db('person_invitations').insert({
    id: invitationId, account_id: demo.id, email: 'invited-isolation@example.com', role: 'member', permissions: [], all_shops: false, shop_codes: [],
    token_hash: crypto.randomBytes(32), invited_by: demoPerson.id, created_at: new Date(), expires_at: new Date(Date.now() + 7 * 86_400_000),
  });
  // demo's own import preview and finished customer export, as the screens' first steps make them.
  const sk = await db('shops').where({ account_id: demo.id, code: 'sk' }).first('id');
  const batchId = `wb_${crypto.randomBytes(8).toString('hex')}`;
  await db('text_edit_batches').insert({
    id: batchId, account_id: demo.id, shop_id: sk.id, person_id: demoPerson.id, entity: 'product', kind: 'import', status: 'previewed', file_name: 'demo-texts.csv', created_at: new Date(),
    items: JSON.stringify({ changes: [], problems: [], unchanged: 0 }),
  });
  const exportId = `cex_${crypto.randomBytes(10).toString('hex')}`;
  await db('customer_exports').insert({
    id: exportId, account_id: demo.id, shop_id: sk.id, person_id: demoPerson.id, format: 'csv', query: JSON.stringify({ market: 'sk' }), status: 'ready', rows_total: 1, rows_done: 1,
    file: Buffer.from('customerKey\r\n'), file_name: 'demo-customers.csv', created_at: new Date(), finished_at: new Date(), expires_at: new Date(Date.now() + 3_600_000),
  });
  // demo's agreement and a draft of it (publishing it is the change a foreign publish must not make).
  const documentId = (await db('affiliate_documents').where({ account_id: demo.id, key: 'partner-agreement' }).first('id')).id;
  const versionId = (await db('affiliate_document_versions').where({ document_id: documentId, status: 'draft' }).first('id')).id;
  const payoutId = (await db('affiliate_payouts as o').join('affiliate_partners as p', 'p.id', 'o.partner_id').where('p.account_id', demo.id).first('o.id')).id;
  t.context = {
    database, server,
    ids: {
      draftId, workflowId, id: '', endpointId, deliveryId: String(delivery.id), keyId: String(keyId), connectionId: String(connectionId),
      personId: demoPerson.id, invitationId, partnerId: String(partnerId), conversionId: String(conversionId), payoutId: String(payoutId), batchId, exportId,
      documentId: String(documentId), versionId: String(versionId),
    },
  };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

/** `route` with demo's ids: `:id` is the endpoint, key or connection by the page it is on. */
function pathOf(route: string, ids: Record<string, string>): string {
  const byPrefix: Array<[string, string]> = [
    ['/keys', ids.keyId!], ['/connections', ids.connectionId!], ['/people/invitations', ids.invitationId!], ['/people', ids.personId!], ['/affiliate/partners', ids.partnerId!],
    ['/affiliate/commissions', ids.conversionId!], ['/affiliate/payouts', ids.payoutId!],
  ];
  const idFor = byPrefix.find(([prefix]) => route.startsWith(prefix))?.[1] ?? ids.endpointId;
  return `/app${route.replace(':draftId', ids.draftId).replace(':workflowId', ids.workflowId).replace(':deliveryId', ids.deliveryId).replace(':batchId', ids.batchId!).replace(':exportId', ids.exportId!).replace(':code', 'pl').replace(':documentId', ids.documentId!).replace(':versionId', ids.versionId!).replace(':id', idFor)}`;
}

/** demo's rows the pages can change, as a digest. */
async function demoDigest(db: TestDatabase['db']): Promise<string> {
  const r = await db.raw(`
    select md5(string_agg(x, '|' order by x)) as h from (
      select e::text as x from webhook_endpoints e where account_id = (select id from accounts where code = 'demo')
      union all select d::text from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.account_id = (select id from accounts where code = 'demo')
      union all select a::text from automations a where account_id = (select id from accounts where code = 'demo')
      union all select p::text from proposals p where account_id = (select id from accounts where code = 'demo')
      union all select concat_ws(',', k.id, k.revoked_at) from access_keys k where account_id = (select id from accounts where code = 'demo')
      union all select concat_ws(',', c.id, c.revoked_at) from oauth_connections c where account_id = (select id from accounts where code = 'demo')
      union all select p::text from people p where account_id = (select id from accounts where code = 'demo')
      union all select i::text from person_invitations i where account_id = (select id from accounts where code = 'demo')
      union all select p::text from affiliate_partners p where account_id = (select id from accounts where code = 'demo')
      union all select concat_ws(',', v.id, v.status, v.version) from affiliate_document_versions v join affiliate_documents d on d.id = v.document_id where d.account_id = (select id from accounts where code = 'demo')
      union all select concat_ws(',', o.id, o.state, o.paid_at) from affiliate_payouts o where account_id = (select id from accounts where code = 'demo')
      union all select c::text from affiliate_conversions c join affiliate_partners p on p.id = c.partner_id where p.account_id = (select id from accounts where code = 'demo')
      union all select concat_ws(',', b.id, b.status) from text_edit_batches b where account_id = (select id from accounts where code = 'demo')
      union all select concat_ws(',', x.id, x.status) from customer_exports x where account_id = (select id from accounts where code = 'demo')
      union all select concat_ws(',', s.id, s.removed_at) from shops s where account_id = (select id from accounts where code = 'demo')
    ) t`);
  return r.rows[0].h;
}

test('Every application route with a parameter is in the isolation table', (t) => {
  const pages = path.join(projectRoot, 'api', 'app', 'pages');
  // Recursive: feature folders (e.g. pages/affiliate/) hold pages too.
  // Quoted paths and template-literal paths (their expansions are listed in TEMPLATE_ROUTES).
  const found = (fs.readdirSync(pages, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).flatMap((f) => [...fs.readFileSync(path.join(pages, f), 'utf8')
    .matchAll(/router\.(get|post)\((['`])([^'`]*:[^'`]*)\2/g)].flatMap((m) => TEMPLATE_ROUTES[`${m[1].toUpperCase()} ${m[3]}`] ?? [`${m[1].toUpperCase()} ${m[3]}`]));
  t.true(found.length >= ROUTES.length, `routes found in api/app/pages: ${found.length}`);
  t.true(found.includes('POST /affiliate/payouts/:id/confirm'), 'template routes are found');
  const listed = new Set([...ROUTES.map(([m, r]) => `${m} ${r}`), ...Object.keys(NOT_RECORDS)]);
  t.deepEqual(found.filter((r) => !listed.has(r)), [], 'routes with a parameter missing from ROUTES');
});

test('When a person of acme opens or acts on demo\'s records by id, then each page refuses, shows none of them, and no demo row changes', async (t) => {
  const db = t.context.database.db;
  const before = await demoDigest(db);
  const person = await makePerson(db, { account: 'acme', role: 'owner' });
  const client = new FormClient(t.context.server.baseUrl);
  const signedIn = await client.signIn(person.email, person.password);
  t.is(signedIn.status, 303);
  const _csrf = await client.csrf('/app');
  const demoEndpoint = await db('webhook_endpoints').where({ id: t.context.ids.endpointId }).first('url', 'name');
  const markers = [demoEndpoint.url, demoEndpoint.name, t.context.ids.workflowId, 'demo-texts.csv', 'demo-customers.csv'];
  for (const [method, route] of ROUTES) {
    const url = pathOf(route, t.context.ids);
    const res = method === 'GET' ? await client.get(url)
      : await client.post(url, { _csrf, decision: 'reject', reason: 'isolation', action: 'suspend', market: 'sk', name: 'Isolation', url: 'https://hooks.example.com/x', events: 'order.created' });
    t.true([403, 404].includes(res.status), `${method} ${route}: ${res.status} ${res.headers.get('location') ?? ''} ${res.text.slice(0, 200)}`);
    const shown = markers.filter((m) => m && res.text.includes(m) && !url.includes(m));
    t.deepEqual(shown, [], `${method} ${route} shows demo's data`);
  }
  t.is(await demoDigest(db), before, 'no row of demo changed');
});

test.serial('When a person of acme opens the affiliate lists, then every row is acme\'s, and a person of demo sees demo\'s', async (t) => {
  const db = t.context.database.db;
  // The tables each list shows, with the account each row belongs to.
  const lists: Array<[string, string]> = [
    ['/app/affiliate/commissions', 'select c.id::text from affiliate_conversions c join shops s on s.id = c.shop_id join accounts a on a.id = s.account_id where a.code = ?'],
    ['/app/affiliate/partners', 'select p.id::text from affiliate_partners p join accounts a on a.id = p.account_id where a.code = ?'],
    ['/app/affiliate/payouts', 'select o.id::text from affiliate_payouts o join accounts a on a.id = o.account_id where a.code = ?'],
  ];
  const rowsShown = async (account: string) => {
    const person = await makePerson(db, { account, role: 'owner' });
    const client = new FormClient(t.context.server.baseUrl);
    t.is((await client.signIn(person.email, person.password)).status, 303);
    const shown: Record<string, string[]> = {};
    for (const [list] of lists) {
      const res = await client.get(list);
      t.is(res.status, 200, list);
      shown[list] = [...res.text.matchAll(/<tr data-id="(\d+)"/g)].map((m) => m[1]!);
    }
    return shown;
  };
  const acme = await rowsShown('acme');
  const demo = await rowsShown('demo');
  for (const [list, sql] of lists) {
    const acmeIds = new Set((await db.raw(sql, ['acme'])).rows.map((r: { id: string }) => r.id));
    t.deepEqual(acme[list]!.filter((id) => !acmeIds.has(id)), [], `${list} shows another account's rows to acme`);
    const demoIds = new Set((await db.raw(sql, ['demo'])).rows.map((r: { id: string }) => r.id));
    t.true(demo[list]!.length > 0 && demo[list]!.every((id) => demoIds.has(id)), `${list} shows demo its own rows`);
  }
});

test.serial('When another person of the same account opens a person\'s customer export, then it is not found for them; its maker reads and downloads it', async (t) => {
  const db = t.context.database.db;
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  const sk = await db('shops').where({ account_id: demo.id, code: 'sk' }).first('id');
  const maker = await makePerson(db, { account: 'demo', role: 'owner' });
  const other = await makePerson(db, { account: 'demo', role: 'owner' });
  const exportId = `cex_${crypto.randomBytes(10).toString('hex')}`;
  await db('customer_exports').insert({
    id: exportId, account_id: demo.id, shop_id: sk.id, person_id: maker.id, format: 'csv', query: JSON.stringify({ market: 'sk' }), status: 'ready', rows_total: 1, rows_done: 1,
    file: Buffer.from('customerKey\r\nmaker-only-row\r\n'), file_name: 'maker-only.csv', created_at: new Date(), finished_at: new Date(), expires_at: new Date(Date.now() + 3_600_000),
  });
  const as = async (person: { email: string; password: string }) => {
    const client = new FormClient(t.context.server.baseUrl);
    t.is((await client.signIn(person.email, person.password)).status, 303);
    return client;
  };
  const otherClient = await as(other);
  for (const path of [`/app/customers/exports/${exportId}`, `/app/customers/exports/${exportId}/download`]) {
    const res = await otherClient.get(path);
    t.is(res.status, 404, path);
    t.false(res.text.includes('maker-only'), `${path} shows none of the export`);
  }
  const makerClient = await as(maker);
  const page = await makerClient.get(`/app/customers/exports/${exportId}`);
  t.is(page.status, 200);
  t.true(page.text.includes('maker-only.csv'));
  const file = await makerClient.get(`/app/customers/exports/${exportId}/download`);
  t.is(file.status, 200);
  t.true(file.text.includes('maker-only-row'));
});

test.serial('When a person of acme opens the E-mails page, then every e-mail listed is acme\'s, and a person of demo sees demo\'s', async (t) => {
  const db = t.context.database.db;
  // One fresh e-mail of each account (newest first, so both are on the first page of their account).
  const subjects: Record<string, string> = {};
  for (const account of ['demo', 'acme']) {
    const { id } = await db('accounts').where({ code: account }).first('id');
    subjects[account] = `Isolation e-mail of ${account} ${crypto.randomBytes(4).toString('hex')}`;
    await queueEmail(db, { accountId: String(id), source: 'people', event: 'isolation_check', recipient: `${account}@example.com`, subject: subjects[account]!, bodyHtml: '<p>isolation</p>', now: new Date() });
  }
  const listed = async (account: string) => {
    const person = await makePerson(db, { account, role: 'owner' });
    const client = new FormClient(t.context.server.baseUrl);
    t.is((await client.signIn(person.email, person.password)).status, 303);
    const res = await client.get('/app/emails');
    t.is(res.status, 200);
    return res;
  };
  for (const [account, other] of [['acme', 'demo'], ['demo', 'acme']] as const) {
    const res = await listed(account);
    t.true(res.text.includes(subjects[account]!), `${account} sees its own e-mail`);
    t.false(res.text.includes(subjects[other]!), `${account} sees ${other}'s e-mail`);
    const ids = [...res.text.matchAll(/data-email-id="(\d+)"/g)].map((m) => m[1]!);
    const own = new Set((await db.raw('select e.id::text as id from email_outbox e join accounts a on a.id = e.account_id where a.code = ?', [account])).rows.map((r: { id: string }) => r.id));
    t.deepEqual(ids.filter((id) => !own.has(id)), [], `the E-mails page shows ${account} another account's e-mails`);
  }
});

test.serial('When a document page names a code of another shop, then it is not found; under its own shop it shows', async (t) => {
  const db = t.context.database.db;
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  const [cz, sk] = await Promise.all(['cz', 'sk'].map((code) => db('shops').where({ account_id: demo.id, code }).first('id')));
  const invoice = await db('documents').where({ shop_id: cz.id, type: 'invoice', pdf_available: true }).orderBy('id').first('code', 'total_with_vat');
  t.is((await db('documents').where({ shop_id: sk.id, type: 'invoice', code: invoice.code }).count<{ count: string }[]>('* as count'))[0]!.count, '0', 'the code is cz\'s only');
  const person = await makePerson(db, { account: 'demo', role: 'owner' });
  const client = new FormClient(t.context.server.baseUrl);
  t.is((await client.signIn(person.email, person.password)).status, 303);
  const own = await client.get(`/app/documents/cz/invoice/${encodeURIComponent(invoice.code)}`);
  t.is(own.status, 200);
  t.true(own.text.includes(invoice.code));
  const other = await client.get(`/app/documents/sk/invoice/${encodeURIComponent(invoice.code)}`);
  t.is(other.status, 404, other.text.slice(0, 200));
});

test.serial('When a person limited to some shops opens Approvals, then only proposals of their shops are listed; a person of the other shop sees those', async (t) => {
  const db = t.context.database.db;
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  const cz = await db('shops').where({ account_id: demo.id, code: 'cz' }).first('id');
  // A waiting proposal of cz: a copy of the sk sample (its item too) under a new draft id.
  const sample = await db('proposals').where({ draft_id: t.context.ids.draftId }).first();
  const czDraftId = `prp_${crypto.randomBytes(8).toString('hex')}`;
  const [copy] = await db('proposals').insert({ ...rowForInsert(sample), draft_id: czDraftId, shop_id: cz.id }).returning('id');
  for (const item of await db('proposal_items').where({ proposal_id: sample.id })) {
    await db('proposal_items').insert({ ...rowForInsert(item), proposal_id: copy.id });
  }
  const skDraftIds = (await db('proposals as p').join('shops as s', 's.id', 'p.shop_id').where({ 'p.account_id': demo.id, 's.code': 'sk' }).select('p.draft_id')).map((r) => r.draft_id as string);
  t.true(skDraftIds.includes(t.context.ids.draftId));
  const listed = async (shops: string[]) => {
    const person = await makePerson(db, { account: 'demo', role: 'member', permissions: ['proposals:approve'], shops });
    const client = new FormClient(t.context.server.baseUrl);
    t.is((await client.signIn(person.email, person.password)).status, 303);
    const res = await client.get('/app/approvals');
    t.is(res.status, 200);
    return new Set([...res.text.matchAll(/data-draft-id="(prp_[0-9a-f]{16})"/g)].map((m) => m[1]!));
  };
  const czOnly = await listed(['cz']);
  t.true(czOnly.has(czDraftId), 'the cz person sees the cz proposal');
  t.deepEqual(skDraftIds.filter((id) => czOnly.has(id)), [], 'the cz person sees sk proposals');
  const skOnly = await listed(['sk']);
  t.true(skOnly.has(t.context.ids.draftId), 'the sk person sees the sk proposal');
  t.false(skOnly.has(czDraftId), 'the sk person sees the cz proposal');
});
