/**
 * The application's permission matrix, for the person who may NOT (D27, SPEC "Authentication", docs/decisions.md O8,
 * O9, U9, U10, UT1, AP3, AW8, AP2-4, AP2-5, AD1, SH1). ROUTES says what each route of /app needs: public, any signed-in
 * person, the owner, or a permission (some only with every shop). Every route the Express router of the served app
 * registers must be in ROUTES and every entry must be registered, so a new page joins by construction. Then, per
 * route: a person with every permission but the one needed is refused and no row changes; a person with only that
 * permission passes the guard; a shop-limited person is refused where every shop is needed; without a session a GET
 * goes to sign-in and a POST is refused; a POST without the CSRF token is refused. List pages and forms show a person
 * limited to cz only cz's rows and shops, and a person of acme opening demo's shop data by code finds nothing.
 * Records by id across accounts are test/integration/applicationIsolation.test.ts's.
 */
import crypto from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import type { Express } from 'express';
import { createTestDatabase, rowForInsert, type TestDatabase } from '../helpers/db.js';
import { FormClient, makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { appRowsDigest, mountedRoutes, signedInPerson } from '../helpers/appRoutes.js';
import { issueKey, type TestServer } from '../helpers/server.js';
import { shopId } from '../helpers/shops.js';
import { ensureSampleWebhook } from '../helpers/webhooks.js';
import { ensureSampleAutomation } from '../helpers/automations.js';
import { ensureSampleProposals } from '../helpers/proposals.js';
import { hashKey } from '../../src/auth/keys.js';
import { queueEmail } from '../../src/email/outbox.js';

/** The permissions of D27 as the SPEC and decisions name them (written out, not imported from the code under test). */
const EVERY = ['purchase-prices', 'personal-data', 'reports', 'webhooks:read', 'webhooks:manage', 'automations:edit', 'keys:manage', 'proposals:approve', 'coupons:manage', 'affiliate:manage', 'texts:edit'];

type Need =
  | { kind: 'public'; why: string }
  | { kind: 'person' }
  | { kind: 'owner' }
  | { kind: 'permission'; anyOf: string[]; allShops: boolean };

const PUBLIC = (why: string): Need => ({ kind: 'public', why });
const PERSON: Need = { kind: 'person' };
const OWNER: Need = { kind: 'owner' };
const NEEDS = (anyOf: string | string[], allShops = false): Need => ({ kind: 'permission', anyOf: [anyOf].flat(), allShops });

/** The fixtures a route's URL and form take (demo's records). */
type Ids = Record<string, string>;
type Form = Record<string, string | string[]>;

interface Entry {
  need: Need;
  /** The URL with demo's ids (routes without parameters: /app + the route). */
  url?: (ids: Ids) => string;
  /** What a real form sends: were the guard missing, this would change rows. */
  form?: (ids: Ids) => Form;
}

const WEBHOOK_FORM: Form = { name: 'Matrix endpoint', url: 'http://127.0.0.1:9/matrix', eventChoice: 'all', shopChoice: 'all' };

const ROUTES: Record<string, Entry> = {
  // Public: sign-in, invitation links, the first-run set-up and the static CSS (O9, U11, SU1).
  'GET /static/pico.min.css': { need: PUBLIC('the CSS foundation (U1)') },
  'GET /sign-in': { need: PUBLIC('sign-in') },
  'POST /sign-in': { need: PUBLIC('sign-in') },
  'GET /sign-in/second-factor': { need: PUBLIC('the second sign-in step, of a session whose password step passed') },
  'POST /sign-in/second-factor': { need: PUBLIC('the second sign-in step, of a session whose password step passed') },
  'POST /sign-out': { need: PUBLIC('sign-out ends whatever session there is') },
  'GET /invitation/:token': { need: PUBLIC('an invitation link, opened before the person exists (U11)') },
  'POST /invitation/:token': { need: PUBLIC('an invitation link, accepted before the person exists (U11)') },
  'GET /setup': { need: PUBLIC('the first-run link, before any account exists (SU1)') },
  'POST /setup': { need: PUBLIC('the first-run link, before any account exists (SU1)') },
  'GET /consent/:uid': { need: PUBLIC('an authorization interaction: the page itself sends a visitor without a session to sign-in (test/integration/oauth.test.ts drives it)') },
  // Any signed-in person.
  'POST /consent/:uid': { need: PERSON, url: () => '/app/consent/matrix-uid', form: () => ({ decision: 'allow' }) },
  'GET /': { need: PERSON },
  'GET /account': { need: PERSON },
  'POST /account/password': { need: PERSON, form: () => ({ currentPassword: 'correct horse battery staple', newPassword: 'matrix matrix matrix', repeatPassword: 'matrix matrix matrix' }) },
  'POST /account/second-factor/start': { need: PERSON },
  'POST /account/second-factor/confirm': { need: PERSON, form: () => ({ code: '000000' }) },
  'POST /account/second-factor/disable': { need: PERSON, form: () => ({ code: '000000' }) },
  'GET /notifications': { need: PERSON },
  'POST /notifications/read': { need: PERSON },
  'GET /plan': { need: PERSON },
  'GET /connections': { need: PERSON },
  'POST /connections/:id/revoke': { need: PERSON, url: () => '/app/connections/1/revoke' },
  'GET /automations': { need: PERSON },
  'GET /automations/:workflowId': { need: PERSON, url: (i) => `/app/automations/${i.workflowId}` },
  'GET /customers': { need: PERSON },
  'POST /customers/export': { need: PERSON, form: () => ({ market: 'cz', format: 'csv' }) },
  'GET /customers/exports/:exportId': { need: PERSON, url: (i) => `/app/customers/exports/${i.exportId}` },
  'GET /customers/exports/:exportId/download': { need: PERSON, url: (i) => `/app/customers/exports/${i.exportId}/download` },
  'GET /customers/:market/:customerKey': { need: PERSON, url: (i) => `/app/customers/cz/${i.czCustomer}` },
  'GET /documents': { need: PERSON },
  'GET /documents/:market/:type/:code': { need: PERSON, url: (i) => `/app/documents/cz/invoice/${encodeURIComponent(i.czInvoice!)}` },
  'GET /products': { need: PERSON },
  'GET /categories': { need: PERSON },
  'GET /products/:market/:id': { need: PERSON, url: (i) => `/app/products/cz/${encodeURIComponent(i.czProduct!)}` },
  'GET /categories/:market/:id': { need: PERSON, url: (i) => `/app/categories/cz/${encodeURIComponent(i.czCategory!)}` },
  'GET /content': { need: PERSON },
  'GET /affiliate': { need: PERSON },
  'GET /affiliate/commissions': { need: PERSON },
  'GET /affiliate/payouts': { need: PERSON },
  'GET /affiliate/partners': { need: PERSON },
  'GET /affiliate/documents': { need: PERSON },
  'GET /affiliate/payouts/:id/statement.pdf': { need: PERSON, url: (i) => `/app/affiliate/payouts/${i.payoutId}/statement.pdf` },
  'GET /affiliate/documents/versions/:versionId/pdf': { need: PERSON, url: (i) => `/app/affiliate/documents/versions/${i.versionId}/pdf` },
  // Automations: everyone reads, `automations:edit` acts (AP3).
  'POST /automations/:workflowId/publish': { need: NEEDS('automations:edit'), url: (i) => `/app/automations/${i.workflowId}/publish` },
  'POST /automations/:workflowId/enable': { need: NEEDS('automations:edit'), url: (i) => `/app/automations/${i.workflowId}/enable` },
  'POST /automations/:workflowId/disable': { need: NEEDS('automations:edit'), url: (i) => `/app/automations/${i.workflowId}/disable` },
  'POST /automations/:workflowId/run': { need: NEEDS('automations:edit'), url: (i) => `/app/automations/${i.workflowId}/run`, form: () => ({ eventId: '' }) },
  // Approvals: `proposals:approve`.
  'GET /approvals': { need: NEEDS('proposals:approve') },
  'POST /approvals/:draftId/decide': { need: NEEDS('proposals:approve'), url: (i) => `/app/approvals/${i.draftId}/decide`, form: () => ({ decision: 'reject', reason: 'matrix' }) },
  // The document's PDF and the buyer block print the buyer: personal data (U9); the E-mails page too (AW8).
  'GET /documents/:market/:type/:code/pdf': { need: NEEDS('personal-data'), url: (i) => `/app/documents/cz/invoice/${encodeURIComponent(i.czInvoice!)}/pdf` },
  'GET /emails': { need: NEEDS('personal-data') },
  // Access keys: `keys:manage` (O8).
  'GET /keys': { need: NEEDS('keys:manage') },
  'POST /keys': { need: NEEDS('keys:manage'), form: () => ({ name: 'Matrix key', interfaces: 'rest', scopes: 'orders:read', shopChoice: 'all', expiresInDays: '30' }) },
  'POST /keys/:id/revoke': { need: NEEDS('keys:manage'), url: (i) => `/app/keys/${i.keyId}/revoke` },
  // Webhooks: reading needs `webhooks:read` or `webhooks:manage`, changes `webhooks:manage` (SPEC, O2).
  'GET /webhooks': { need: NEEDS(['webhooks:read', 'webhooks:manage']) },
  'GET /webhooks/:id': { need: NEEDS(['webhooks:read', 'webhooks:manage']), url: (i) => `/app/webhooks/${i.endpointId}` },
  'POST /webhooks': { need: NEEDS('webhooks:manage'), form: () => WEBHOOK_FORM },
  'GET /webhooks/:id/edit': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/edit` },
  'POST /webhooks/:id/edit': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/edit`, form: () => ({ ...WEBHOOK_FORM, name: 'Matrix edited' }) },
  'GET /webhooks/:id/delete': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/delete` },
  'POST /webhooks/:id/delete': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/delete` },
  'POST /webhooks/:id/enable': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/enable` },
  'POST /webhooks/:id/disable': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/disable` },
  'POST /webhooks/:id/ping': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/ping` },
  'POST /webhooks/:id/rotate-secret': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/rotate-secret` },
  'POST /webhooks/:id/deliveries/:deliveryId/retry': { need: NEEDS('webhooks:manage'), url: (i) => `/app/webhooks/${i.endpointId}/deliveries/${i.deliveryId}/retry` },
  // Texts: everyone reads, `texts:edit` writes (UT1).
  'POST /products/bulk': { need: NEEDS('texts:edit'), form: (i) => ({ market: 'cz', field: 'metaTitle', codes: i.czProduct!, text: 'Matrix title' }) },
  'GET /products/import': { need: NEEDS('texts:edit') },
  'POST /products/import': { need: NEEDS('texts:edit'), form: () => ({ market: 'cz' }) },
  'GET /products/import/:batchId': { need: NEEDS('texts:edit'), url: (i) => `/app/products/import/${i.batchId}` },
  'POST /products/import/:batchId/confirm': { need: NEEDS('texts:edit'), url: (i) => `/app/products/import/${i.batchId}/confirm` },
  'POST /products/:market/:id': { need: NEEDS('texts:edit'), url: (i) => `/app/products/cz/${encodeURIComponent(i.czProduct!)}`, form: () => ({ metaTitle: 'Matrix title', fingerprint: '' }) },
  'POST /categories/:market/:id': { need: NEEDS('texts:edit'), url: (i) => `/app/categories/cz/${encodeURIComponent(i.czCategory!)}`, form: () => ({ metaTitle: 'Matrix title', fingerprint: '' }) },
  // People and Shops: the account's owner (U10, U11, SH1).
  'GET /people': { need: OWNER },
  'POST /people/invite': { need: OWNER, form: () => ({ email: 'matrix-invite@example.com', name: 'Matrix', role: 'member', shopChoice: 'all' }) },
  'POST /people/invitations/:id/revoke': { need: OWNER, url: (i) => `/app/people/invitations/${i.invitationId}/revoke` },
  'POST /people/:id/update': { need: OWNER, url: (i) => `/app/people/${i.targetId}/update`, form: () => ({ role: 'admin', permissions: 'keys:manage', shopChoice: 'all' }) },
  'POST /people/:id/disable': { need: OWNER, url: (i) => `/app/people/${i.targetId}/disable` },
  'POST /people/:id/reset-second-factor': { need: OWNER, url: (i) => `/app/people/${i.targetId}/reset-second-factor` },
  'GET /shops': { need: OWNER },
  'POST /shops/connect': { need: OWNER, form: () => ({ platform: 'demo', code: 'zz', currency: 'EUR', timeZone: 'Europe/Bratislava', country: 'SK' }) },
  'POST /shops/:code/disconnect': { need: OWNER, url: () => '/app/shops/pl/disconnect' },
  // The partner programme: everyone reads, `affiliate:manage` decides (AP2-5); drawing up payouts and the documents'
  // wording cover every shop of the account (AP2-4, AD1).
  'POST /affiliate/commissions/:id/decide': { need: NEEDS('affiliate:manage'), url: (i) => `/app/affiliate/commissions/${i.conversionId}/decide`, form: () => ({ decision: 'approve' }) },
  'POST /affiliate/commissions/bulk': { need: NEEDS('affiliate:manage'), form: (i) => ({ decision: 'approve', ids: i.conversionId! }) },
  'POST /affiliate/payouts/:id/confirm': { need: NEEDS('affiliate:manage'), url: (i) => `/app/affiliate/payouts/${i.payoutId}/confirm` },
  'POST /affiliate/payouts/:id/paid': { need: NEEDS('affiliate:manage'), url: (i) => `/app/affiliate/payouts/${i.payoutId}/paid`, form: () => ({ reference: 'matrix' }) },
  'POST /affiliate/payouts/:id/cancel': { need: NEEDS('affiliate:manage'), url: (i) => `/app/affiliate/payouts/${i.payoutId}/cancel` },
  'POST /affiliate/partners/:id/state': { need: NEEDS('affiliate:manage'), url: (i) => `/app/affiliate/partners/${i.partnerId}/state`, form: () => ({ action: 'suspend', market: 'cz', reason: 'matrix' }) },
  'POST /affiliate/payouts/draw-up': { need: NEEDS('affiliate:manage', true), form: () => ({ period: '2026-10' }) },
  'POST /affiliate/documents/:documentId/upload': { need: NEEDS('affiliate:manage', true), url: (i) => `/app/affiliate/documents/${i.documentId}/upload`, form: () => ({ language: 'en' }) },
  'POST /affiliate/documents/versions/:versionId/publish': { need: NEEDS('affiliate:manage', true), url: (i) => `/app/affiliate/documents/versions/${i.versionId}/publish` },
};

const urlOf = (route: string, ids: Ids) => ROUTES[route]!.url?.(ids) ?? `/app${route.slice(route.indexOf(' ') + 1).replace(/\/$/, '')}`;
const methodOf = (route: string) => route.slice(0, route.indexOf(' ')) as 'GET' | 'POST';

interface Context {
  database: TestDatabase;
  server: TestServer & { app: Express };
  ids: Ids;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const db = database.db;
  const server = await startApplicationServer(db, testApplicationOptions());
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  const [cz, sk] = await Promise.all([shopId(db, 'demo', 'cz'), shopId(db, 'demo', 'sk')]);
  const endpointId = await ensureSampleWebhook(db);
  const delivery = await db('webhook_deliveries').where({ endpoint_id: endpointId }).first('id');
  const workflowId = await ensureSampleAutomation(db);
  const draftId = (await ensureSampleProposals(db))['products.content_draft:draftId']!;
  const key = await issueKey(db);
  const keyId = String((await db('access_keys').where({ key_hash: hashKey(key) }).first('id')).id);
  const target = await makePerson(db, { role: 'member', permissions: ['reports'] });
  const invitationId = 'inv_matrix_demo';
  await db('person_invitations').insert({
    id: invitationId, account_id: demo.id, email: 'invited-matrix@example.com', role: 'member', permissions: [], all_shops: false, shop_codes: [],
    token_hash: crypto.randomBytes(32), invited_by: target.id, created_at: new Date(), expires_at: new Date(Date.now() + 7 * 86_400_000),
  });
  const batchId = `wb_${crypto.randomBytes(8).toString('hex')}`;
  await db('text_edit_batches').insert({
    id: batchId, account_id: demo.id, shop_id: cz, person_id: target.id, entity: 'product', kind: 'import', status: 'previewed', file_name: 'matrix.csv', created_at: new Date(),
    items: JSON.stringify({ changes: [], problems: [], unchanged: 0 }),
  });
  const exportId = `cex_${crypto.randomBytes(10).toString('hex')}`;
  await db('customer_exports').insert({
    id: exportId, account_id: demo.id, shop_id: cz, person_id: target.id, format: 'csv', query: JSON.stringify({ market: 'cz' }), status: 'ready', rows_total: 1, rows_done: 1,
    file: Buffer.from('customerKey\r\n'), file_name: 'matrix.csv', created_at: new Date(), finished_at: new Date(), expires_at: new Date(Date.now() + 3_600_000),
  });
  const documentId = (await db('affiliate_documents').where({ account_id: demo.id, key: 'partner-agreement' }).first('id')).id;
  const versionId = (await db('affiliate_document_versions').where({ document_id: documentId, status: 'draft' }).first('id')).id;
  // A payout and a commission still waiting for a decision where there is one, so a missing guard would decide them.
  const payout = await db('affiliate_payouts').where({ account_id: demo.id, shop_id: cz }).orderByRaw(`state = 'requested' desc, id`).first('id');
  const conversion = await db('affiliate_conversions').where({ shop_id: cz }).orderByRaw(`commission_state = 'pending' desc, id`).first('id');
  const partner = await db('affiliate_partners').where({ account_id: demo.id }).orderBy('id').first('id');
  const czCustomer = await db('customer_rollups').where({ shop_id: cz }).orderBy('customer_key').first('customer_key');
  const czInvoice = await db('documents').where({ shop_id: cz, type: 'invoice', pdf_available: true }).orderBy('id').first('code');
  const czProduct = await db('products').where({ shop_id: cz }).orderBy('id').first('code');
  const czCategory = await db('categories').where({ shop_id: cz }).orderBy('id').first('guid');
  t.context = {
    database, server,
    ids: {
      cz, sk, endpointId, deliveryId: String(delivery.id), workflowId, draftId, keyId, targetId: target.id, invitationId, batchId, exportId,
      documentId: String(documentId), versionId: String(versionId), payoutId: String(payout.id), conversionId: String(conversion.id), partnerId: String(partner.id),
      czCustomer: czCustomer.customer_key.trim(), czInvoice: czInvoice.code, czProduct: czProduct.code, czCategory: czCategory.guid,
    },
  };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

const rowsDigest = appRowsDigest;

/** A signed-in client of a new demo person, with a CSRF token of their session. */
const signedIn = (t: { context: Context }, options: Parameters<typeof makePerson>[1]) => signedInPerson(t.context.database.db, t.context.server.baseUrl, options);

const send = (client: FormClient, route: string, ids: Ids, csrf: string | null) => {
  const url = urlOf(route, ids);
  if (methodOf(route) === 'GET') return client.get(url);
  const form = ROUTES[route]!.form?.(ids) ?? {};
  return client.post(url, csrf === null ? form : { _csrf: csrf, ...form });
};

/** The refusal of a guard or a domain rule (403), not the CSRF check's (a test's own mistake would hide there). */
const refusedByRule = (res: { status: number; text: string }) => res.status === 403 && !res.text.includes('Form refused') && !res.text.includes('Signed out');

const permissionRoutes = () => Object.entries(ROUTES).filter(([, e]) => e.need.kind === 'permission' || e.need.kind === 'owner');

test.serial('Every route the application registers is in the permission table, and every entry of the table is registered', (t) => {
  const routes = mountedRoutes(t.context.server.app);
  t.truthy(routes, 'the application router is mounted at /app');
  const found = new Set(routes);
  t.true(found.has('POST /affiliate/payouts/:id/confirm') && found.has('POST /webhooks/:id/ping'), 'routes of nested routers and template paths are found');
  t.deepEqual([...found].filter((r) => !(r in ROUTES)).sort(), [], 'registered routes missing from ROUTES');
  t.deepEqual(Object.keys(ROUTES).filter((r) => !found.has(r)).sort(), [], 'ROUTES entries no router registers');
});

test.serial('When a person of acme opens demo\'s customers, documents, products and categories by shop and code, then each is not found', async (t) => {
  const db = t.context.database.db;
  // hu is demo's only; sk is both accounts': its records are taken where acme's sk has no such code (a raw-SQL oracle).
  const hu = await shopId(db, 'demo', 'hu');
  const acmeSk = await shopId(db, 'acme', 'sk');
  const demoSk = t.context.ids.sk!;
  const onlyDemo = async (table: string, column: string, extra: Record<string, string | boolean> = {}) => (await db.raw(
    `select d.${column} as code from ${table} d where d.shop_id = ? ${Object.keys(extra).map((k) => `and d.${k} = ?`).join(' ')}
      and not exists (select 1 from ${table} a where a.shop_id = ? and a.${column} = d.${column}) order by d.${column} limit 1`,
    [demoSk, ...Object.values(extra), acmeSk])).rows[0]?.code as string | undefined;
  const first = async (table: string, column: string, shop: string, extra: Record<string, unknown> = {}) => (await db(table).where({ shop_id: shop, ...extra }).orderBy(column).first(column))[column] as string;
  const skCustomer = await onlyDemo('customer_rollups', 'customer_key');
  const skInvoice = await onlyDemo('documents', 'code', { type: 'invoice', pdf_available: true });
  t.truthy(skCustomer, 'demo sk has a customer acme sk has not');
  t.truthy(skInvoice, 'demo sk has an invoice code acme sk has not');
  // A product and a category of demo's sk under codes acme's sk does not use.
  const product = await db('products').where({ shop_id: demoSk }).orderBy('id').first();
  const productCode = `matrix-demo-only-${crypto.randomBytes(3).toString('hex')}`;
  await db('products').insert({ ...rowForInsert(product), code: productCode });
  const category = await db('categories').where({ shop_id: demoSk }).orderBy('id').first();
  const categoryGuid = crypto.randomUUID();
  await db('categories').insert({ ...rowForInsert(category), guid: categoryGuid });
  const paths = [
    `/app/customers/sk/${skCustomer!.trim()}`,
    `/app/customers/hu/${(await first('customer_rollups', 'customer_key', hu)).trim()}`,
    `/app/documents/sk/invoice/${encodeURIComponent(skInvoice!)}`,
    `/app/documents/sk/invoice/${encodeURIComponent(skInvoice!)}/pdf`,
    `/app/documents/hu/invoice/${encodeURIComponent(await first('documents', 'code', hu, { type: 'invoice', pdf_available: true }))}`,
    `/app/products/sk/${productCode}`,
    `/app/products/hu/${encodeURIComponent(await first('products', 'code', hu))}`,
    `/app/categories/sk/${categoryGuid}`,
    `/app/categories/hu/${await first('categories', 'guid', hu)}`,
  ];
  const { client } = await signedIn(t, { account: 'acme', role: 'owner' });
  const demoOwner = await signedIn(t, { account: 'demo', role: 'owner' });
  for (const path of paths) {
    const [acme, own] = await Promise.all([client.get(path), demoOwner.client.get(path)]);
    t.is(acme.status, 404, `acme opening ${path}: ${acme.text.slice(0, 200)}`);
    // The same path is demo's record: demo's owner opens it, so the 404 above is about the account, not the code.
    t.is(own.status, 200, `demo opening ${path}: ${own.text.slice(0, 200)}`);
  }
});

test.serial('When a person limited to shop cz opens the list pages, then every row shown is cz\'s (or account-wide) and none is sk\'s; forms offer only cz and no "all shops"', async (t) => {
  const db = t.context.database.db;
  const { cz, sk } = t.context.ids as { cz: string; sk: string };
  const demo = await db('accounts').where({ code: 'demo' }).first('id');
  // Rows of each shop the lists below show: an e-mail, a webhook endpoint and an automation of cz and of sk.
  const subjects = { cz: `Matrix e-mail cz ${crypto.randomBytes(3).toString('hex')}`, sk: `Matrix e-mail sk ${crypto.randomBytes(3).toString('hex')}` };
  for (const [code, shop] of [['cz', cz], ['sk', sk]] as const) {
    await queueEmail(db, { accountId: String(demo.id), shopId: shop, source: 'people', event: 'matrix_check', recipient: `${code}@example.com`, subject: subjects[code], bodyHtml: '<p>matrix</p>', now: new Date() });
  }
  const owner = await signedIn(t, { role: 'owner' });
  for (const code of ['cz', 'sk']) {
    const made = await owner.client.post('/app/webhooks', { _csrf: owner.csrf, ...WEBHOOK_FORM, name: `Matrix ${code} endpoint`, shopChoice: 'some', shops: code });
    t.is(made.status, 200, made.text.slice(0, 300));
  }
  const sample = await db('automations').where({ workflow_id: t.context.ids.workflowId }).first();
  for (const code of ['cz', 'sk']) {
    await db('automations').insert({ ...rowForInsert(sample), workflow_id: `aut_${crypto.randomBytes(8).toString('hex')}`, client_request_id: `matrix-${code}`, markets: [code], name: `Matrix ${code} automation` });
  }
  const { client } = await signedIn(t, { role: 'member', permissions: EVERY, shops: ['cz'] });
  // The commissions list shows one state at a time: the state cz has most of.
  const commissionState = (await db.raw('select commission_state as s from affiliate_conversions where shop_id = ? group by 1 order by count(*) desc limit 1', [cz])).rows[0].s as string;
  const ids = async (sql: string, shop: string) => new Set((await db.raw(sql, [shop])).rows.map((r: { id: string }) => String(r.id).trim()));
  // List, attribute of a row, raw-SQL oracle of the ids visible to cz and of sk's ids no cz person may see.
  const lists: Array<[string, RegExp, string, string]> = [
    ['/app/customers', /data-customer-key="([0-9a-f]{64})"/g, 'select customer_key as id from customer_rollups where shop_id = ?', `select customer_key as id from customer_rollups where shop_id = ? except select customer_key from customer_rollups where shop_id = '${cz}'`],
    ['/app/documents', /<tr data-code="([^"]+)"/g, `select code as id from documents where type = 'invoice' and shop_id = ?`, `select code as id from documents where type = 'invoice' and shop_id = ? except select code from documents where type = 'invoice' and shop_id = '${cz}'`],
    ['/app/products', /<tr data-code="([^"]+)"/g, 'select code as id from products where shop_id = ?', `select code as id from products where shop_id = ? except select code from products where shop_id = '${cz}'`],
    ['/app/categories', /data-guid="([^"]+)"/g, 'select guid as id from categories where shop_id = ?', `select guid as id from categories where shop_id = ? except select guid from categories where shop_id = '${cz}'`],
    ['/app/emails', /data-email-id="(\d+)"/g, 'select id from email_outbox where shop_id = ? or shop_id is null', 'select id from email_outbox where shop_id = ?'],
    ['/app/webhooks', /data-endpoint-id="(\d+)"/g, 'select id from webhook_endpoints where all_shops or (select code from shops where id = ?) = any(shop_codes)', 'select id from webhook_endpoints where not all_shops and not (\'cz\' = any(shop_codes)) and (select code from shops where id = ?) = any(shop_codes)'],
    ['/app/automations', /data-workflow-id="(aut_[a-z0-9]+)"/g, 'select workflow_id as id from automations where (select code from shops where id = ?) = any(markets)', 'select workflow_id as id from automations where not (\'cz\' = any(coalesce(markets, \'{}\'))) and (select code from shops where id = ?) = any(markets)'],
    [`/app/affiliate/commissions?state=${commissionState}`, /<tr data-id="(\d+)"/g, 'select id from affiliate_conversions where shop_id = ?', 'select id from affiliate_conversions where shop_id = ?'],
    ['/app/affiliate/payouts', /<tr data-id="(\d+)"/g, 'select id from affiliate_payouts where shop_id = ?', 'select id from affiliate_payouts where shop_id = ?'],
  ];
  for (const [list, pattern, visibleSql, skSql] of lists) {
    const res = await client.get(list);
    t.is(res.status, 200, `${list}: ${res.text.slice(0, 200)}`);
    const shown = [...res.text.matchAll(pattern)].map((m) => m[1]!);
    const [visible, skOnly] = await Promise.all([ids(visibleSql, cz), ids(skSql, sk)]);
    t.true(shown.length > 0, `${list} shows cz's rows`);
    t.true(skOnly.size > 0, `${list}: sk has rows cz must not see`);
    t.deepEqual(shown.filter((id) => !visible.has(id)), [], `${list} shows rows outside cz`);
    t.deepEqual(shown.filter((id) => skOnly.has(id)), [], `${list} shows sk's rows`);
  }
  const emails = await client.get('/app/emails');
  t.true(emails.text.includes(subjects.cz) && !emails.text.includes(subjects.sk), 'the cz e-mail is listed, the sk one is not');
  // Asking for sk by name is refused, and nothing of sk is shown.
  for (const list of ['/app/customers?market=sk', '/app/documents?market=sk', '/app/products?market=sk', '/app/categories?market=sk']) {
    const res = await client.get(list);
    t.is(res.status, 403, `${list}: ${res.text.slice(0, 200)}`);
  }
  // Forms that offer shops: only cz, never "all shops".
  const czEndpoint = (await db('webhook_endpoints').where({ name: 'Matrix cz endpoint' }).first('id')).id;
  const forms: Array<[string, RegExp]> = [
    ['/app/keys', /name="shops"/], ['/app/webhooks', /name="shops"/], [`/app/webhooks/${czEndpoint}/edit`, /name="shops"/], ['/app/customers', /<select name="market">/],
    ['/app/documents', /<select name="market">/], ['/app/products', /<select name="market">/], ['/app/categories', /<select name="market">/],
    ['/app/products/import', /<select name="market">/], ['/app/affiliate/partners', /<select name="market"/],
  ];
  for (const [path, pattern] of forms) {
    const res = await client.get(path);
    t.is(res.status, 200, path);
    const shops = [...res.text.matchAll(/name="(?:shops|market)"[^>]*value="([a-z]{2})"|<option value="([a-z]{2})"/g)].map((m) => m[1] ?? m[2]);
    t.true(pattern.test(res.text), `${path} has a shop choice`);
    t.deepEqual([...new Set(shops)], ['cz'], `${path} offers shops ${shops.join(', ')}`);
    t.false(/name="shopChoice" value="all"/.test(res.text), `${path} offers "all shops"`);
  }
  const commissions = await client.get('/app/affiliate/commissions');
  const offered = [...commissions.text.matchAll(/<option value="([a-z]{2})"/g)].map((m) => m[1]);
  t.deepEqual(offered, ['cz'], 'the commissions filter offers only cz');
});

test.serial('When a visitor has no session, then every GET for people goes to sign-in and every POST is refused without a change; a POST without the CSRF token is refused too', async (t) => {
  const db = t.context.database.db;
  const ids = t.context.ids;
  // A visitor with a session but no person (as before sign-in), whose CSRF token is right: requirePerson must refuse.
  const visitor = new FormClient(t.context.server.baseUrl);
  const visitorCsrf = await visitor.csrf('/app/sign-in');
  const owner = await signedIn(t, { role: 'owner' });
  const before = await rowsDigest(db);
  for (const [route, entry] of Object.entries(ROUTES)) {
    if (entry.need.kind === 'public') {
      if (methodOf(route) === 'POST') {
        const res = await send(owner.client, route, ids, null);
        t.is(res.status, 403, `${route} without the CSRF token`);
        t.true(res.text.includes('Form refused'), `${route} refused by the CSRF check`);
      }
      continue;
    }
    if (methodOf(route) === 'GET') {
      const res = await send(new FormClient(t.context.server.baseUrl), route, ids, null);
      t.is(res.status, 303, `${route} without a session: ${res.status}`);
      t.is(res.headers.get('location'), `/app/sign-in?next=${encodeURIComponent(urlOf(route, ids))}`, route);
      continue;
    }
    const signedOut = await send(visitor, route, ids, visitorCsrf);
    t.is(signedOut.status, 403, `${route} without a person: ${signedOut.text.slice(0, 200)}`);
    t.true(signedOut.text.includes('Signed out'), `${route} is refused as signed out`);
    const noToken = await send(owner.client, route, ids, null);
    t.is(noToken.status, 403, `${route} without the CSRF token: ${noToken.text.slice(0, 200)}`);
    t.true(noToken.text.includes('Form refused'), `${route} refused by the CSRF check`);
    t.is(await rowsDigest(db), before, `${route}: a row changed`);
  }
});

test.serial('When a person limited to cz has the permission of an action that covers every shop, then it is refused and no row changes', async (t) => {
  const db = t.context.database.db;
  const routes = Object.entries(ROUTES).filter(([, e]) => e.need.kind === 'permission' && e.need.allShops);
  t.true(routes.length >= 3);
  const people = await Promise.all(routes.map(([, entry]) => signedIn(t, { role: 'member', permissions: (entry.need as { anyOf: string[] }).anyOf, shops: ['cz'] })));
  const before = await rowsDigest(db);
  for (const [i, [route]] of routes.entries()) {
    const { client, csrf } = people[i]!;
    const res = await send(client, route, t.context.ids, csrf);
    t.true(refusedByRule(res), `${route} for a cz person: ${res.status} ${res.text.slice(0, 300)}`);
    t.is(await rowsDigest(db), before, `${route}: a row changed`);
  }
});

test.serial('When a person has every permission but the one a route needs, then it is refused and no row changes; with only that permission the guard lets them through', async (t) => {
  const db = t.context.database.db;
  const ids = t.context.ids;
  const routes = permissionRoutes();
  // One person per need: every permission except it (the owner's routes: an admin with every permission).
  const key = (need: Need) => (need.kind === 'owner' ? 'owner' : (need as { anyOf: string[] }).anyOf.join('+'));
  const needs = new Map(routes.map(([, e]) => [key(e.need), e.need]));
  const lacking = new Map(await Promise.all([...needs].map(async ([k, need]) => [k, await signedIn(t, {
    role: 'admin', permissions: need.kind === 'owner' ? EVERY : EVERY.filter((p) => !(need as { anyOf: string[] }).anyOf.includes(p)),
  })] as const)));
  const before = await rowsDigest(db);
  for (const [route, entry] of routes) {
    const who = lacking.get(key(entry.need))!;
    const res = await send(who.client, route, ids, who.csrf);
    t.true(refusedByRule(res), `${route} without ${key(entry.need)}: ${res.status} ${res.headers.get('location') ?? ''} ${res.text.slice(0, 200)}`);
    if (methodOf(route) === 'POST') t.is(await rowsDigest(db), before, `${route}: a row changed`);
  }
  // With only the permission (each alternative of an "or"), or as the owner, all shops: not refused.
  const holding = new Map<string, { client: FormClient; csrf: string }>();
  for (const [route, entry] of routes) {
    const options = entry.need.kind === 'owner' ? [{ role: 'owner' as const, permissions: [] }]
      : (entry.need as { anyOf: string[] }).anyOf.map((p) => ({ role: 'member' as const, permissions: [p] }));
    for (const option of options) {
      const cacheKey = `${option.role}:${option.permissions.join(',')}`;
      if (!holding.has(cacheKey)) holding.set(cacheKey, await signedIn(t, option));
      const { client, csrf } = holding.get(cacheKey)!;
      const res = await send(client, route, ids, csrf);
      t.not(res.status, 403, `${route} with ${option.role} ${option.permissions.join(',')}: ${res.text.slice(0, 300)}`);
      t.false(res.text.includes('You need the permission'), route);
    }
  }
  t.not(await rowsDigest(db), before, 'the actions that passed the guard changed rows, and the digest sees them');
});

test.serial('When an owner limited to cz opens People, then only cz is offered and no "all shops"; granting all shops or sk is refused and the person keeps their shops (U13)', async (t) => {
  const db = t.context.database.db;
  const owner = await signedIn(t, { role: 'owner', shops: ['cz'] });
  const member = await makePerson(db, { role: 'member', permissions: [], shops: ['cz'] });
  const page = await owner.client.get('/app/people');
  t.is(page.status, 200);
  t.deepEqual([...new Set([...page.text.matchAll(/name="shops" value="([^"]+)"/g)].map((m) => m[1]))], ['cz'], 'the invite and change forms offer only cz');
  t.false(/name="shopChoice" value="all"/.test(page.text), 'no "all shops"');
  const shopsOf = async () => db('people').where({ id: member.id }).first('all_shops', 'shop_codes');
  for (const form of [{ shopChoice: 'all' }, { shopChoice: 'some', shops: ['cz', 'sk'] }] as Form[]) {
    const res = await owner.client.post(`/app/people/${member.id}/update`, { _csrf: owner.csrf, role: 'member', ...form });
    t.true(refusedByRule(res), `${JSON.stringify(form)}: ${res.status} ${res.headers.get('location') ?? ''}`);
    t.deepEqual(await shopsOf(), { all_shops: false, shop_codes: ['cz'] });
  }
  const granted = await owner.client.post(`/app/people/${member.id}/update`, { _csrf: owner.csrf, role: 'member', permissions: 'reports', shopChoice: 'some', shops: 'cz' });
  t.is(granted.status, 303, granted.text.slice(0, 300));
  t.deepEqual(await db('people').where({ id: member.id }).first('permissions', 'all_shops', 'shop_codes'), { permissions: ['reports'], all_shops: false, shop_codes: ['cz'] });
});

test.serial('When a customer\'s page is opened, then its order and document totals follow the reports permission, not the personal-data one (D27)', async (t) => {
  const { db } = t.context.database;
  const customer = t.context.ids.czCustomer!;
  // The expected totals straight from the rows: the customer's newest orders in cz, "<amount> <currency>".
  const orders = await db('orders').where({ shop_id: t.context.ids.cz, customer_email_hash: customer }).orderBy('created_at', 'desc').limit(3).select('code', 'total_with_vat', 'currency');
  t.true(orders.length > 0, 'the customer has orders in cz');
  const url = `/app/customers/cz/${customer}`;
  const rowOf = (html: string, code: string) => new RegExp(`<tr><td>${code}</td>.*?</tr>`).exec(html)?.[0] ?? '';

  const reportsOnly = await signedIn(t, { role: 'member', permissions: ['reports'] });
  const withMoney = await reportsOnly.client.get(url);
  t.is(withMoney.status, 200);
  t.true(withMoney.text.includes('<th>Total</th>'), 'reports: the Total column is shown');
  for (const o of orders) t.true(rowOf(withMoney.text, o.code).includes(`<td>${o.total_with_vat} ${o.currency.trim()}</td>`), `reports: ${o.code} shows ${o.total_with_vat} ${o.currency}`);

  const personalOnly = await signedIn(t, { role: 'member', permissions: ['personal-data'] });
  const withoutMoney = await personalOnly.client.get(url);
  t.is(withoutMoney.status, 200);
  t.false(withoutMoney.text.includes('<th>Total</th>'), 'personal data without reports: no Total column');
  for (const o of orders) t.false(rowOf(withoutMoney.text, o.code).includes(o.total_with_vat), `personal data: ${o.code} shows no total`);
});

test.serial('When a person limited to cz decides a proposal of shop sk, then it is not found and stays undecided (PR11: another shop\'s proposal is not found)', async (t) => {
  const { db } = t.context.database;
  const { draftId, sk } = t.context.ids;
  const draft = await db('proposals').where({ draft_id: draftId }).first('shop_id', 'decision');
  t.is(draft.shop_id, sk, 'the sample proposal is sk\'s');
  const czApprover = await signedIn(t, { role: 'member', permissions: ['proposals:approve'], shops: ['cz'] });
  const res = await czApprover.client.post(`/app/approvals/${draftId}/decide`, { _csrf: czApprover.csrf, decision: 'reject', reason: 'not my shop' });
  t.is(res.status, 404, res.text.slice(0, 300));
  t.is((await db('proposals').where({ draft_id: draftId }).first('decision')).decision, draft.decision);
});
