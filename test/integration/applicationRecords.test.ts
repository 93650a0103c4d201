/**
 * The application's records, answers and field permissions: three kinds of bug that escaped the sets seeded from
 * outside (issue 22), each met generically.
 *
 * 1. A POST on another shop's record. `RECORD_ROUTES` names every POST route the served /app router registers: either
 *    the record (or shop) its path or form names, with where to find one of `sk`, one of `cz` and the documented
 *    refusal, or why it names none. An owner limited to `cz` (every permission) posting on `sk`'s record, and an owner
 *    of `acme` posting on `demo`'s, are refused (another shop's record is not found, PR9/PR11, P7; a shop named by code
 *    outside the person's shops is SHOP_FORBIDDEN, P4; a shop chosen in a form beyond the person's own is
 *    INVALID_PARAMETER `beyond_rights`, U13) and no row changes; the same cz owner on cz's record and demo's owner on
 *    the sk record pass, so the refusal is about the shop and the sk record is real.
 * 2. A page's fields under two permissions (D27: personal data vs reports). Every view that branches on both is in
 *    `FIELD_PAGES`; each is opened with neither, only personal-data, only reports and both, and shows exactly the
 *    fields of what is held (planted marker values: a name, an e-mail, a phone, a revenue and an order total).
 * 3. A person's answer: invitations, people changes, keys, webhook endpoints, partner decisions, commission decisions,
 *    payout references and automation switches are sent with varied content, and the stored row is exactly what was
 *    answered (not a default, not the first option, an empty optional field stored as empty).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import type { Express } from 'express';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { FormClient, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { appRowsDigest, mountedRoutes, signedInPerson } from '../helpers/appRoutes.js';
import { orderEvent, personActor, sampleRule } from '../helpers/automations.js';
import type { TestServer } from '../helpers/server.js';
import { shopId } from '../helpers/shops.js';
import { createDraft, publishAutomation, setAutomationEnabled } from '../../src/automations/drafts.js';
import { createTextProposal } from '../../src/proposals/create.js';
import { getProductContent } from '../../src/queries/content.js';

/** The permissions of D27 as the SPEC and decisions name them (written out, not imported from the code under test). */
const EVERY = ['purchase-prices', 'personal-data', 'reports', 'webhooks:read', 'webhooks:manage', 'automations:edit', 'keys:manage', 'proposals:approve', 'coupons:manage', 'affiliate:manage', 'texts:edit'];

type Form = Record<string, string | string[]>;
interface Target { url: string; form?: Form; file?: { name: string; text: string } }
type Answer = { status: number; text: string };
type Db = TestDatabase['db'];

interface Context {
  database: TestDatabase;
  server: TestServer & { app: Express };
  f: Record<string, string>;
}
const test = anyTest as TestFn<Context>;

/**
 * The targets of one route: a record (or shop) of sk, one of cz, for acme's owner one of demo's (default: sk's), and
 * the sk record demo's owner passes on (default: sk's; a person's own record, such as an import, is another one).
 */
interface Targets { sk: Target; cz: Target; acme?: Target; control?: Target }
interface RecordRoute {
  record: string;
  /** The documented refusal for the cz owner on sk's record (and acme's on demo's, unless `acmeRefused`). */
  refused: number;
  acmeRefused?: number;
  /** A refusal that is not a status (a bulk action answers 200 and lists what it refused). */
  refusedText?: RegExp;
  targets: (c: Context) => Promise<Targets>;
}
interface NoRecord { none: string }

const WEBHOOK_FORM = (shop: string): Form => ({ name: `AW endpoint ${shop} ${crypto.randomBytes(3).toString('hex')}`, url: 'http://127.0.0.1:9/aw', eventChoice: 'all', shopChoice: 'some', shops: shop });
const at = (url: string, form?: Form): Target => ({ url, form });
const both = (fn: (shop: 'sk' | 'cz', c: Context) => Target | Promise<Target>, acme?: (c: Context) => Target) => async (c: Context): Promise<Targets> =>
  ({ sk: await fn('sk', c), cz: await fn('cz', c), ...(acme ? { acme: acme(c) } : {}) });

const RECORD_ROUTES: Record<string, RecordRoute | NoRecord> = {
  // Public and the person's own: no shop's record.
  'POST /sign-in': { none: 'public' },
  'POST /sign-in/second-factor': { none: 'public' },
  'POST /sign-out': { none: 'public' },
  'POST /invitation/:token': { none: 'public: an invitation link, before the person exists' },
  'POST /setup': { none: 'public: the first-run link, before any account exists' },
  'POST /consent/:uid': { none: 'an authorization interaction of the signed-in person; the shops it grants are U13\'s (oauth.test.ts)' },
  'POST /account/password': { none: 'the person\'s own account' },
  'POST /account/second-factor/start': { none: 'the person\'s own account' },
  'POST /account/second-factor/confirm': { none: 'the person\'s own account' },
  'POST /account/second-factor/disable': { none: 'the person\'s own account' },
  'POST /notifications/read': { none: 'the person\'s own notifications' },
  'POST /connections/:id/revoke': { none: 'the person\'s own OAuth connection' },
  'POST /keys/:id/revoke': { none: 'a key belongs to the person who issued it (the owner sees all), not to a shop (application.test.ts)' },
  'POST /people/invite': { none: 'people belong to the account; the shops an invitation grants are U13\'s (applicationPermissions, personInvitations)' },
  'POST /people/invitations/:id/revoke': { none: 'people belong to the account' },
  'POST /people/:id/update': { none: 'people belong to the account; the shops a change grants are U13\'s (applicationPermissions)' },
  'POST /people/:id/disable': { none: 'people belong to the account' },
  'POST /people/:id/reset-second-factor': { none: 'people belong to the account' },
  'POST /shops/connect': { none: 'a new shop: no record yet' },
  'POST /affiliate/payouts/draw-up': { none: 'covers every shop of the account: a shop-limited person is refused outright (applicationPermissions, AP2-4)' },
  'POST /affiliate/documents/:documentId/upload': { none: 'the account\'s document wording: every shop needed (applicationPermissions, AD1)' },
  'POST /affiliate/documents/versions/:versionId/publish': { none: 'the account\'s document wording: every shop needed (applicationPermissions, AD1)' },

  // A shop named in the form or path: SHOP_FORBIDDEN outside the person's shops (P4); acme names demo's shop hu (SHOP_NOT_FOUND).
  'POST /customers/export': { record: 'customer directory of a shop', refused: 403, acmeRefused: 404, targets: both((s) => at('/app/customers/export', { market: s, format: 'csv' }), () => at('/app/customers/export', { market: 'hu', format: 'csv' })) },
  'POST /products/bulk': {
    record: 'products of a shop', refused: 403, acmeRefused: 404,
    targets: both((s, c) => at('/app/products/bulk', { market: s, field: 'description', codes: c.f[`${s}Product`]!, text: `AW bulk ${s}` }), (c) => at('/app/products/bulk', { market: 'hu', field: 'description', codes: c.f.huProduct!, text: 'AW bulk hu' })),
  },
  'POST /products/import': {
    record: 'products of a shop (an uploaded file)', refused: 403, acmeRefused: 404,
    targets: both((s, c) => ({ url: '/app/products/import', form: { market: s }, file: { name: 'aw.csv', text: `code,description\n${c.f[`${s}Product`]},AW import ${s}\n` } }),
      (c) => ({ url: '/app/products/import', form: { market: 'hu' }, file: { name: 'aw.csv', text: `code,description\n${c.f.huProduct},AW import hu\n` } })),
  },
  'POST /products/:market/:id': {
    record: 'a product of a shop', refused: 403, acmeRefused: 404,
    targets: both((s, c) => at(`/app/products/${s}/${encodeURIComponent(c.f[`${s}Product`]!)}`, { description: `AW card ${s}`, fingerprint: '' }), (c) => at(`/app/products/hu/${encodeURIComponent(c.f.huProduct!)}`, { description: 'AW card hu', fingerprint: '' })),
  },
  'POST /categories/:market/:id': {
    record: 'a category of a shop', refused: 403, acmeRefused: 404,
    targets: both((s, c) => at(`/app/categories/${s}/${c.f[`${s}Category`]}`, { metaTitle: `AW category ${s}`, fingerprint: '' }), (c) => at(`/app/categories/hu/${c.f.huCategory}`, { metaTitle: 'AW category hu', fingerprint: '' })),
  },
  'POST /affiliate/partners/:id/state': {
    // A partner is the account's; the decision is per shop, named in the form. acme: demo's partner is not found.
    record: 'a partner decision in a shop', refused: 403, acmeRefused: 404,
    targets: both((s, c) => at(`/app/affiliate/partners/${c.f.partner}/state`, { action: 'suspend', market: s, reason: `AW ${s}` })),
  },
  'POST /shops/:code/disconnect': { record: 'a shop', refused: 403, acmeRefused: 404, targets: both((s) => at(`/app/shops/${s}/disconnect`), () => at('/app/shops/hu/disconnect')) },
  // A shop chosen in a form: beyond the person's own is INVALID_PARAMETER beyond_rights (U13 for keys and endpoints); acme: hu is unknown.
  'POST /keys': {
    record: 'a key\'s shops', refused: 400,
    targets: both((s) => at('/app/keys', { name: `AW key ${s}`, interfaces: 'rest', scopes: 'orders:read', shopChoice: 'some', shops: s, expiresInDays: '30' }),
      () => at('/app/keys', { name: 'AW key hu', interfaces: 'rest', scopes: 'orders:read', shopChoice: 'some', shops: 'hu', expiresInDays: '30' })),
  },
  'POST /webhooks': { record: 'an endpoint\'s shops', refused: 400, targets: both((s) => at('/app/webhooks', WEBHOOK_FORM(s)), () => at('/app/webhooks', WEBHOOK_FORM('hu'))) },

  // A record by id: another shop's (or account's) is not found (PR9, PR11, P7).
  'POST /approvals/:draftId/decide': { record: 'a proposal', refused: 404, targets: both((s, c) => at(`/app/approvals/${c.f[`${s}Draft`]}/decide`, { decision: 'reject', reason: `AW ${s}` })) },
  'POST /automations/:workflowId/publish': { record: 'an automation (draft)', refused: 404, targets: both((s, c) => at(`/app/automations/${c.f[`${s}DraftAutomation`]}/publish`)) },
  'POST /automations/:workflowId/enable': { record: 'an automation', refused: 404, targets: both((s, c) => at(`/app/automations/${c.f[`${s}Automation`]}/enable`)) },
  'POST /automations/:workflowId/disable': { record: 'an automation', refused: 404, targets: both((s, c) => at(`/app/automations/${c.f[`${s}Automation`]}/disable`)) },
  'POST /automations/:workflowId/run': { record: 'an automation and an event', refused: 404, targets: both((s, c) => at(`/app/automations/${c.f[`${s}Automation`]}/run`, { eventId: c.f[`${s}Event`]! })) },
  'POST /webhooks/:id/edit': { record: 'an endpoint of a shop', refused: 404, targets: both((s, c) => at(`/app/webhooks/${c.f[`${s}Endpoint`]}/edit`, { ...WEBHOOK_FORM(s), name: `AW edited ${s}` })) },
  'POST /webhooks/:id/enable': { record: 'an endpoint of a shop', refused: 404, targets: both((s, c) => at(`/app/webhooks/${c.f[`${s}Endpoint`]}/enable`)) },
  'POST /webhooks/:id/disable': { record: 'an endpoint of a shop', refused: 404, targets: both((s, c) => at(`/app/webhooks/${c.f[`${s}Endpoint`]}/disable`)) },
  'POST /webhooks/:id/ping': { record: 'an endpoint of a shop', refused: 404, targets: both((s, c) => at(`/app/webhooks/${c.f[`${s}Endpoint`]}/ping`)) },
  'POST /webhooks/:id/rotate-secret': { record: 'an endpoint of a shop', refused: 404, targets: both((s, c) => at(`/app/webhooks/${c.f[`${s}Endpoint`]}/rotate-secret`)) },
  'POST /webhooks/:id/deliveries/:deliveryId/retry': { record: 'a delivery of an endpoint of a shop', refused: 404, targets: both((s, c) => at(`/app/webhooks/${c.f[`${s}Endpoint`]}/deliveries/${c.f[`${s}Delivery`]}/retry`)) },
  'POST /webhooks/:id/delete': { record: 'an endpoint of a shop', refused: 404, targets: both((s, c) => at(`/app/webhooks/${c.f[`${s}EndpointToDelete`]}/delete`)) },
  'POST /products/import/:batchId/confirm': {
    // A batch is its person's own: the cz owner's batches of sk (previewed before their shops were narrowed) and of cz.
    record: 'an import batch of a shop', refused: 404,
    targets: async (c) => ({ ...(await both((s) => at(`/app/products/import/${c.f[`${s}Batch`]}/confirm`))(c)), control: at(`/app/products/import/${c.f.skBatchOfDemoOwner}/confirm`) }),
  },
  'POST /affiliate/commissions/:id/decide': { record: 'a commission of a shop', refused: 404, targets: both((s, c) => at(`/app/affiliate/commissions/${c.f[`${s}Commission`]}/decide`, { decision: 'reject', reason: `AW ${s}` })) },
  'POST /affiliate/commissions/bulk': {
    record: 'commissions of a shop', refused: 200, refusedText: /0 decided \(reject\), 1 refused/,
    targets: both((s, c) => at('/app/affiliate/commissions/bulk', { decision: 'reject', reason: `AW bulk ${s}`, ids: c.f[`${s}CommissionBulk`]! })),
  },
  'POST /affiliate/payouts/:id/confirm': { record: 'a payout of a shop', refused: 404, targets: both((s, c) => at(`/app/affiliate/payouts/${c.f[`${s}PayoutRequested`]}/confirm`)) },
  'POST /affiliate/payouts/:id/paid': { record: 'a payout of a shop', refused: 404, targets: both((s, c) => at(`/app/affiliate/payouts/${c.f[`${s}PayoutApproved`]}/paid`, { reference: `AW ${s}` })) },
  'POST /affiliate/payouts/:id/cancel': { record: 'a payout of a shop', refused: 404, targets: both((s, c) => at(`/app/affiliate/payouts/${c.f[`${s}PayoutCancel`]}/cancel`)) },
};

/** Pages whose fields follow two permissions (D27): the markers planted on one customer of cz, by permission. */
const FIELD_PAGES: Record<string, { view: string | null; url: (f: Record<string, string>) => string; post?: Form; personal: Array<'name' | 'email' | 'phone'>; money: Array<'revenue' | 'orderTotal'> }> = {
  'customer page': { view: 'customer.eta', url: (f) => `/app/customers/cz/${f.customer}`, personal: ['email', 'phone'], money: ['revenue', 'orderTotal'] },
  'customer list': { view: 'customers.eta', url: (f) => `/app/customers?market=cz&search=${f.customer!.slice(0, 12)}`, personal: ['name', 'email'], money: ['revenue'] },
  'customer export (CSV)': { view: null, url: () => '/app/customers/export', post: { market: 'cz', format: 'csv' }, personal: ['name', 'email', 'phone'], money: ['revenue'] },
};
const MARKERS = { name: 'Matrixia', email: 'aw.fields.matrix@example.com', phone: '+420 777 123 987', revenue: '98765.43', orderTotal: '12345.67' };

test.before(async (t) => {
  const database = await createTestDatabase();
  const db = database.db;
  const server = await startApplicationServer(db, testApplicationOptions());
  t.context = { database, server, f: {} };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

const signedIn = (t: { context: Context }, options: Parameters<typeof signedInPerson>[2]) => signedInPerson(t.context.database.db, t.context.server.baseUrl, options);

async function send(client: FormClient, csrf: string, target: Target): Promise<Answer> {
  if (!target.file) return client.post(target.url, { _csrf: csrf, ...(target.form ?? {}) });
  const body = new FormData();
  body.append('_csrf', csrf);
  for (const [k, v] of Object.entries(target.form ?? {})) for (const item of [v].flat()) body.append(k, item);
  body.append('file', new Blob([target.file.text], { type: 'text/csv' }), target.file.name);
  return client.request(target.url, { method: 'POST', body, headers: { Origin: client.baseUrl } });
}

/** Demo's records of sk and cz each route of RECORD_ROUTES acts on, made fresh for this file. */
async function prepareRecords(t: { context: Context }): Promise<void> {
  const db = t.context.database.db;
  const f = t.context.f;
  const demo = (await db('accounts').where({ code: 'demo' }).first('id')).id as string;
  const shops = { sk: await shopId(db, 'demo', 'sk'), cz: await shopId(db, 'demo', 'cz'), hu: await shopId(db, 'demo', 'hu') };
  const owner = await signedIn(t, { role: 'owner' });
  const actor = await personActor(db);
  for (const s of ['sk', 'cz', 'hu'] as const) {
    f[`${s}Product`] = (await db('products').where({ shop_id: shops[s] }).orderBy('id').first('code')).code;
    f[`${s}Category`] = (await db('categories').where({ shop_id: shops[s] }).orderBy('id').first('guid')).guid;
  }
  for (const s of ['sk', 'cz'] as const) {
    const shop = await db('shops').where({ id: shops[s] }).first('id', 'code', 'name', 'currency', 'time_zone');
    const content = (await getProductContent(db, shops[s], f[`${s}Product`]!))!;
    f[`${s}Draft`] = await createTextProposal(db, {
      accountId: demo, shop: { id: String(shop.id), code: shop.code, name: shop.name, currency: shop.currency, timeZone: shop.time_zone }, writeMode: 'proposals', createdBy: 'aw-records',
    }, 'product', [{ id: f[`${s}Product`]!, fingerprint: content.fingerprint, fields: { description: `AW proposed ${s}` } }], null, new Date());
    const rule = () => sampleRule({ trigger: { id: 'created', event: 'order.created', markets: [s] } });
    f[`${s}DraftAutomation`] = (await createDraft(db, actor, { clientRequestId: `aw-draft-${s}`, rule: rule() })).workflow_id;
    const published = (await createDraft(db, actor, { clientRequestId: `aw-published-${s}`, rule: rule() })).workflow_id;
    await publishAutomation(db, actor, published);
    await setAutomationEnabled(db, actor, published, true);
    f[`${s}Automation`] = published;
    f[`${s}Event`] = (await orderEvent(db, 'order.created', { shop: s })).eventId;
    for (const key of [`${s}Endpoint`, `${s}EndpointToDelete`]) {
      const form = WEBHOOK_FORM(s);
      const made = await owner.client.post('/app/webhooks', { _csrf: owner.csrf, ...form });
      if (made.status !== 200) throw new Error(`endpoint: ${made.status} ${made.text.slice(0, 300)}`);
      f[key] = String((await db('webhook_endpoints').where({ name: form.name }).first('id')).id);
    }
    const pinged = await owner.client.post(`/app/webhooks/${f[`${s}Endpoint`]}/ping`, { _csrf: owner.csrf });
    if (pinged.status !== 303) throw new Error(`ping: ${pinged.status}`);
    f[`${s}Delivery`] = String((await db('webhook_deliveries').where({ endpoint_id: f[`${s}Endpoint`] }).first('id')).id);
    for (const [key, person] of [[`${s}Batch`, f.czOwner!], [`${s}BatchOfDemoOwner`, f.demoOwner!]] as const) {
      f[key] = `wb_${crypto.randomBytes(8).toString('hex')}`;
      await db('text_edit_batches').insert({
        id: f[key], account_id: demo, shop_id: shops[s], person_id: person, entity: 'product', kind: 'import', status: 'previewed', file_name: 'aw.csv', created_at: new Date(),
        items: JSON.stringify({ changes: [], problems: [], unchanged: 0 }),
      });
    }
    // Commissions waiting for a decision and payouts in the state each action takes (made so where the demo has none).
    const free = await db('affiliate_conversions').where({ shop_id: shops[s] }).whereNull('payout_id').orderBy('id').limit(2).pluck('id');
    await db('affiliate_conversions').whereIn('id', free).update({ commission_state: 'pending', state_reason: 'awaiting_manual_approval', approved_at: null });
    [f[`${s}Commission`], f[`${s}CommissionBulk`]] = free.map(String);
    const payouts = await db('affiliate_payouts').where({ shop_id: shops[s] }).orderBy('id').limit(3).pluck('id');
    if (payouts.length < 3) throw new Error(`shop ${s} has ${payouts.length} payouts`);
    for (const [key, id, state] of [['PayoutRequested', payouts[0], 'requested'], ['PayoutApproved', payouts[1], 'approved'], ['PayoutCancel', payouts[2], 'requested']] as const) {
      await db('affiliate_payouts').where({ id }).update({ state });
      f[`${s}${key}`] = String(id);
    }
  }
  f.partner = String((await db('affiliate_partners').where({ account_id: demo, state: 'approved' }).orderBy('id').first('id')).id);
}

/** What a page answered, for a failure message: its text without the head and the tags. */
const brief = (res: Answer) => `${res.status} ${res.text.slice(Math.max(0, res.text.indexOf('</head>'))).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(0, 300)}`;

const isRecord = (e: RecordRoute | NoRecord): e is RecordRoute => 'record' in e;
/** Passed the shop check: neither the guard's nor a rule's refusal, nor the CSRF check's. */
const passed = (res: Answer) => ![403, 404].includes(res.status) && !res.text.includes('Form refused') && !/0 decided \(\w+\), \d+ refused/.test(res.text);

test.serial('Every POST route the application registers is in RECORD_ROUTES (the record it names, or why none), and every entry is registered', (t) => {
  const found = mountedRoutes(t.context.server.app);
  t.truthy(found, 'the application router is mounted at /app');
  const posts = new Set(found!.filter((r) => r.startsWith('POST ')));
  t.true(posts.has('POST /affiliate/payouts/:id/confirm') && posts.has('POST /webhooks/:id/ping'), 'routes of nested routers and template paths are found');
  t.deepEqual([...posts].filter((r) => !(r in RECORD_ROUTES)).sort(), [], 'POST routes missing from RECORD_ROUTES');
  t.deepEqual(Object.keys(RECORD_ROUTES).filter((r) => !posts.has(r)).sort(), [], 'RECORD_ROUTES entries no router registers');
  for (const [route, entry] of Object.entries(RECORD_ROUTES)) if (!isRecord(entry)) t.true(entry.none.length > 5, `${route} says why it names no record`);
});

test.serial('Every view whose fields follow both the personal-data and the reports permission is in FIELD_PAGES, and each entry\'s view exists', (t) => {
  const dir = path.resolve('api/app/views');
  const views = fs.readdirSync(dir, { recursive: true }).map(String).filter((name) => name.endsWith('.eta'));
  t.true(views.length > 20, `views read from ${dir}`);
  const both = views.filter((name) => {
    const text = fs.readFileSync(path.join(dir, name), 'utf8');
    return /it\.personal\b/.test(text) && /it\.money\b/.test(text);
  }).sort();
  t.deepEqual(both, Object.values(FIELD_PAGES).flatMap((p) => (p.view ? [p.view] : [])).sort());
});

test.serial('When a person holds neither, only personal-data, only reports or both, then the customer page, the list and the export show exactly the fields of what is held (D27)', async (t) => {
  const db = t.context.database.db;
  const cz = await shopId(db, 'demo', 'cz');
  // A customer of cz only, whose orders carry planted personal data and whose figures carry planted money.
  const customer = (await db.raw(`select customer_key from customer_rollups where shop_id = ? and customer_key in (select customer_key from customer_rollups group by 1 having count(*) = 1)
    order by last_order_at desc limit 1`, [cz])).rows[0].customer_key.trim() as string;
  await db('orders').where({ shop_id: cz, customer_email_hash: customer }).update({ customer_first_name: MARKERS.name, customer_last_name: 'Fieldova', customer_company: null, customer_email: MARKERS.email, customer_phone: MARKERS.phone });
  await db('customer_rollups').where({ shop_id: cz, customer_key: customer }).update({ revenue_with_vat: MARKERS.revenue });
  const newest = await db('orders').where({ shop_id: cz, customer_email_hash: customer }).orderBy('created_at', 'desc').first('id');
  await db('orders').where({ id: newest.id }).update({ total_with_vat: MARKERS.orderTotal });
  const f = { customer };
  const combos: Array<[string, string[]]> = [['neither', []], ['only personal-data', ['personal-data']], ['only reports', ['reports']], ['both', ['personal-data', 'reports']]];
  for (const [label, permissions] of combos) {
    const { client, csrf } = await signedIn(t, { role: 'member', permissions });
    for (const [name, page] of Object.entries(FIELD_PAGES)) {
      const res = page.post ? await client.post(page.url(f), { _csrf: csrf, ...page.post }) : await client.get(page.url(f));
      t.is(res.status, 200, `${name} for ${label}: ${res.text.slice(0, 200)}`);
      t.true(res.text.includes(customer), `${name} shows the customer`);
      for (const field of page.personal) t.is(res.text.includes(MARKERS[field]), permissions.includes('personal-data'), `${name}, ${label}: ${field}`);
      for (const field of page.money) t.is(res.text.includes(MARKERS[field]), permissions.includes('reports'), `${name}, ${label}: ${field}`);
    }
  }
});

test.serial('When an owner invites people and changes a person with varied roles, permissions and shops, then each stored row is exactly what was chosen', async (t) => {
  const db = t.context.database.db;
  const owner = await signedIn(t, { role: 'owner' });
  const cases: Array<{ form: Form; row: { role: string; permissions: string[]; all_shops: boolean; shop_codes: string[]; name: string } }> = [
    { form: { role: 'member', permissions: 'reports', shopChoice: 'some', shops: 'cz', name: '' }, row: { role: 'member', permissions: ['reports'], all_shops: false, shop_codes: ['cz'], name: '' } },
    { form: { role: 'admin', permissions: ['webhooks:read', 'keys:manage', 'personal-data'], shopChoice: 'all', name: 'Ada Answer' }, row: { role: 'admin', permissions: ['keys:manage', 'personal-data', 'webhooks:read'], all_shops: true, shop_codes: [], name: 'Ada Answer' } },
    { form: { role: 'member', shopChoice: 'some', shops: ['sk', 'hu'], name: 'Bo' }, row: { role: 'member', permissions: [], all_shops: false, shop_codes: ['hu', 'sk'], name: 'Bo' } },
  ];
  for (const [i, c] of cases.entries()) {
    const email = `aw-invite-${i}-${crypto.randomBytes(3).toString('hex')}@example.com`;
    const res = await owner.client.post('/app/people/invite', { _csrf: owner.csrf, email, ...c.form });
    t.is(res.status, 303, res.text.slice(0, 300));
    const row = await db('person_invitations').where({ email }).first('role', 'permissions', 'all_shops', 'shop_codes', 'name');
    t.deepEqual({ ...row, permissions: [...row.permissions].sort(), shop_codes: [...row.shop_codes].sort(), name: row.name ?? '' }, c.row, `invitation ${i}`);
  }
  const target = await signedIn(t, { role: 'member', permissions: ['reports'], shops: ['cz'] });
  for (const [i, c] of cases.entries()) {
    const res = await owner.client.post(`/app/people/${target.id}/update`, { _csrf: owner.csrf, ...c.form });
    t.is(res.status, 303, res.text.slice(0, 300));
    const row = await db('people').where({ id: target.id }).first('role', 'permissions', 'all_shops', 'shop_codes');
    t.deepEqual({ ...row, permissions: [...row.permissions].sort(), shop_codes: [...(row.shop_codes ?? [])].sort() }, { role: c.row.role, permissions: c.row.permissions, all_shops: c.row.all_shops, shop_codes: c.row.shop_codes }, `change ${i}`);
  }
});

test.serial('When a person issues keys and creates and edits endpoints with varied scopes, interfaces, shops, expiry, write mode and events, then each stored row is exactly what was chosen', async (t) => {
  const db = t.context.database.db;
  const owner = await signedIn(t, { role: 'owner' });
  const keys: Array<{ form: Form; row: Record<string, unknown>; days: number | null }> = [
    { form: { interfaces: 'rest', scopes: ['orders:read', 'customers:read'], shopChoice: 'some', shops: 'sk', expiresInDays: '30', writeMode: 'read_only' }, row: { interfaces: ['rest'], scopes: ['customers:read', 'orders:read'], all_shops: false, shop_codes: ['sk'], write_mode: 'read_only' }, days: 30 },
    { form: { interfaces: ['rest', 'mcp'], scopes: 'products:read', shopChoice: 'all', expiresInDays: 'never', writeMode: 'autonomous' }, row: { interfaces: ['mcp', 'rest'], scopes: ['products:read'], all_shops: true, shop_codes: [], write_mode: 'autonomous' }, days: null },
    { form: { interfaces: 'mcp', scopes: ['claims:read'], shopChoice: 'some', shops: ['cz', 'hu'], expiresInDays: '90' }, row: { interfaces: ['mcp'], scopes: ['claims:read'], all_shops: false, shop_codes: ['cz', 'hu'], write_mode: 'proposals' }, days: 90 },
  ];
  for (const [i, k] of keys.entries()) {
    const name = `AW key answer ${i} ${crypto.randomBytes(3).toString('hex')}`;
    const before = Date.now();
    const res = await owner.client.post('/app/keys', { _csrf: owner.csrf, name, ...k.form });
    t.is(res.status, 200, res.text.slice(0, 300));
    const row = await db('access_keys').where({ name }).first('interfaces', 'scopes', 'all_shops', 'shop_codes', 'write_mode', 'expires_at');
    const sorted = (v: string[] | null) => (v === null ? null : [...v].sort());
    t.deepEqual({ interfaces: sorted(row.interfaces), scopes: sorted(row.scopes), all_shops: row.all_shops, shop_codes: sorted(row.shop_codes), write_mode: row.write_mode }, k.row, `key ${i}`);
    if (k.days === null) t.is(row.expires_at, null, `key ${i} never expires`);
    else {
      const ms = new Date(row.expires_at).getTime() - k.days * 86_400_000;
      t.true(ms >= before - 1000 && ms <= Date.now() + 1000, `key ${i} expires in ${k.days} days`);
    }
  }
  const endpoints: Array<{ form: Form; row: { all_events: boolean; event_types: string[]; all_shops: boolean; shop_codes: string[] } }> = [
    { form: { eventChoice: 'some', events: ['order.created', 'claim.closed'], shopChoice: 'some', shops: 'cz' }, row: { all_events: false, event_types: ['claim.closed', 'order.created'], all_shops: false, shop_codes: ['cz'] } },
    { form: { eventChoice: 'all', shopChoice: 'all' }, row: { all_events: true, event_types: [], all_shops: true, shop_codes: [] } },
    { form: { eventChoice: 'some', events: 'shipment.delivered', shopChoice: 'some', shops: ['sk', 'hu'] }, row: { all_events: false, event_types: ['shipment.delivered'], all_shops: false, shop_codes: ['hu', 'sk'] } },
  ];
  const stored = async (name: string) => {
    const row = await db('webhook_endpoints').where({ name }).first('id', 'all_events', 'event_types', 'all_shops', 'shop_codes');
    return { id: String(row.id), shape: { all_events: row.all_events, event_types: [...(row.event_types ?? [])].sort(), all_shops: row.all_shops, shop_codes: [...(row.shop_codes ?? [])].sort() } };
  };
  const name = `AW endpoint answer ${crypto.randomBytes(3).toString('hex')}`;
  const made = await owner.client.post('/app/webhooks', { _csrf: owner.csrf, name, url: 'http://127.0.0.1:9/aw-answer', ...endpoints[0]!.form });
  t.is(made.status, 200, made.text.slice(0, 300));
  const { id, shape } = await stored(name);
  t.deepEqual(shape, endpoints[0]!.row, 'created');
  // Each edit of the same endpoint stores the new choice, including going back from "all" to some.
  for (const [i, e] of [...endpoints.slice(1), endpoints[0]!].entries()) {
    const res = await owner.client.post(`/app/webhooks/${id}/edit`, { _csrf: owner.csrf, name, url: 'http://127.0.0.1:9/aw-answer', ...e.form });
    t.is(res.status, 303, res.text.slice(0, 300));
    t.deepEqual((await stored(name)).shape, e.row, `edit ${i}`);
  }
});

test.serial('When a person decides partners, commissions and payouts with varied reasons and references, then each stored decision is exactly what was answered', async (t) => {
  const db = t.context.database.db;
  const demo = (await db('accounts').where({ code: 'demo' }).first('id')).id;
  const cz = await shopId(db, 'demo', 'cz');
  const manager = await signedIn(t, { role: 'member', permissions: ['affiliate:manage'] });
  const post = (url: string, form: Form) => manager.client.post(url, { _csrf: manager.csrf, ...form });
  // A partner: rejected with one reason, returned, rejected with another, approved (no reason kept), suspended.
  const partner = (await db('affiliate_partners').where({ account_id: demo, state: 'waiting' }).orderBy('id').first('id'))
    ?? (await db('affiliate_partners').where({ account_id: demo }).orderBy('id').first('id'));
  await db('affiliate_partners').where({ id: partner.id }).update({ state: 'waiting', state_reason: null });
  const steps: Array<[string, string, string, string | null]> = [
    ['reject', 'Unclear traffic source', 'rejected', 'Unclear traffic source'],
    ['return_to_waiting', '', 'waiting', null],
    ['reject', 'Second look: coupon site', 'rejected', 'Second look: coupon site'],
    ['return_to_waiting', 'ignored note', 'waiting', null],
    ['approve', '', 'approved', null],
    ['suspend', 'Brand bidding', 'suspended', 'Brand bidding'],
  ];
  for (const [action, reason, state, stored] of steps) {
    const res = await post(`/app/affiliate/partners/${partner.id}/state`, { action, market: 'cz', reason });
    t.is(res.status, 200, `${action}: ${res.text.slice(0, 300)}`);
    t.true(res.text.includes(`→ ${state}`), `${action} reached ${state}`);
    t.deepEqual(await db('affiliate_partners').where({ id: partner.id }).first('state', 'state_reason'), { state, state_reason: stored }, `${action} "${reason}"`);
  }
  // Each rejection e-mailed the partner with the reason answered that time (SPEC: approval and rejection send an e-mail).
  const mails = await db('email_outbox').where({ partner_id: partner.id, event: 'account_rejected' }).orderBy('id').pluck('body_html');
  t.is(mails.length, 2, 'one e-mail per rejection');
  t.true(mails[0].includes('Unclear traffic source') && !mails[0].includes('Second look'), 'the first rejection e-mail carries the first reason');
  t.true(mails[1].includes('Second look: coupon site'), 'the second rejection e-mail carries the second reason');

  // Commissions: approve with a note, approve without, reject with a reason; each keeps exactly its own.
  const ids = (await db('affiliate_conversions').where({ shop_id: cz }).whereNull('payout_id').orderBy('id', 'desc').limit(3).pluck('id')).map(String);
  await db('affiliate_conversions').whereIn('id', ids).update({ commission_state: 'pending', state_reason: 'awaiting_manual_approval', approved_at: null, manual_reason: null, manual_decision: null });
  const decisions: Array<[string, string, string, string | null]> = [['approve', 'Verified by phone', 'approved', 'Verified by phone'], ['approve', '', 'approved', null], ['reject', 'Order returned in full', 'rejected', 'Order returned in full']];
  for (const [i, [decision, reason, state, stored]] of decisions.entries()) {
    const res = await post(`/app/affiliate/commissions/${ids[i]}/decide`, { decision, reason });
    t.is(res.status, 200, res.text.slice(0, 300));
    t.deepEqual(await db('affiliate_conversions').where({ id: ids[i] }).first('commission_state', 'manual_decision', 'manual_reason'), { commission_state: state, manual_decision: state, manual_reason: stored }, `${decision} "${reason}"`);
  }
  // Bulk: the reason given is the one stored on each.
  const bulk = (await db('affiliate_conversions').where({ shop_id: cz }).whereNull('payout_id').whereNotIn('id', ids).orderBy('id', 'desc').limit(2).pluck('id')).map(String);
  await db('affiliate_conversions').whereIn('id', bulk).update({ commission_state: 'pending', state_reason: 'awaiting_manual_approval', approved_at: null, manual_reason: null, manual_decision: null });
  const bulkRes = await post('/app/affiliate/commissions/bulk', { decision: 'reject', reason: 'Bulk: fraud ring', ids: bulk });
  t.true(bulkRes.text.includes('2 decided (reject), 0 refused'), bulkRes.text.slice(0, 300));
  t.deepEqual((await db('affiliate_conversions').whereIn('id', bulk).select('commission_state', 'manual_reason')).map((r) => `${r.commission_state}:${r.manual_reason}`), ['rejected:Bulk: fraud ring', 'rejected:Bulk: fraud ring']);

  // Payouts marked paid with a reference, and without one.
  const payouts = (await db('affiliate_payouts').where({ shop_id: cz }).orderBy('id', 'desc').limit(2).pluck('id')).map(String);
  await db('affiliate_payouts').whereIn('id', payouts).update({ state: 'approved', payment_reference: null, paid_at: null });
  for (const [i, [reference, stored]] of ([['SEPA 2026-11 / 0042', 'SEPA 2026-11 / 0042'], ['', null]] as const).entries()) {
    const res = await post(`/app/affiliate/payouts/${payouts[i]}/paid`, { reference });
    t.is(res.status, 200, res.text.slice(0, 300));
    t.deepEqual(await db('affiliate_payouts').where({ id: payouts[i] }).first('state', 'payment_reference'), { state: 'paid', payment_reference: stored }, `reference "${reference}"`);
  }
});

test.serial('When a person switches an automation off and on, then its stored state follows each answer', async (t) => {
  const db = t.context.database.db;
  const actor = await personActor(db);
  const id = (await createDraft(db, actor, { clientRequestId: 'aw-switch', rule: sampleRule({ trigger: { id: 'created', event: 'order.created', markets: ['cz'] } }) })).workflow_id;
  const editor = await signedIn(t, { role: 'member', permissions: ['automations:edit'] });
  const post = (action: string) => editor.client.post(`/app/automations/${id}/${action}`, { _csrf: editor.csrf });
  t.is((await post('publish')).status, 303);
  t.deepEqual(await db('automations').where({ workflow_id: id }).first('state', 'enabled'), { state: 'published', enabled: false }, 'published, still disabled');
  for (const [action, enabled] of [['enable', true], ['disable', false], ['enable', true], ['disable', false]] as const) {
    const res = await post(action);
    t.is(res.status, 303, res.text.slice(0, 200));
    t.is((await db('automations').where({ workflow_id: id }).first('enabled')).enabled, enabled, action);
  }
});

test.serial('When an owner limited to cz (every permission) posts on sk\'s record, or acme\'s owner on demo\'s, then it is refused and no row changes; on cz\'s record, and demo\'s owner on sk\'s, it passes', async (t) => {
  const db = t.context.database.db;
  const czOwner = await signedIn(t, { role: 'owner', permissions: EVERY, shops: ['cz'] });
  const acmeOwner = await signedIn(t, { account: 'acme', role: 'owner' });
  const demoOwner = await signedIn(t, { role: 'owner' });
  Object.assign(t.context.f, { czOwner: czOwner.id, demoOwner: demoOwner.id });
  // The Shops page lists every shop (U13's open point) but offers the cz owner to disconnect cz only (GM9).
  const shopsPage = await czOwner.client.get('/app/shops');
  t.is(shopsPage.status, 200);
  t.deepEqual([...shopsPage.text.matchAll(/action="\/app\/shops\/([a-z]+)\/disconnect"/g)].map((m) => m[1]), ['cz'], 'disconnect offered for cz only');
  await prepareRecords(t);
  // Disconnecting a shop comes last: it ends the shops the other routes act in.
  const routes = Object.entries(RECORD_ROUTES).filter((e): e is [string, RecordRoute] => isRecord(e[1]))
    .sort(([a], [b]) => Number(a.includes('disconnect')) - Number(b.includes('disconnect')));
  t.is(routes.length, 27, `${routes.length} routes name a record or a shop`);
  for (const [route, entry] of routes) {
    const targets = await entry.targets(t.context);
    const before = await appRowsDigest(db);
    const refusedAs = (res: Answer, status: number) => res.status === status && !res.text.includes('Form refused') && (entry.refusedText ? entry.refusedText.test(res.text) : true);
    const cz = await send(czOwner.client, czOwner.csrf, targets.sk);
    t.true(refusedAs(cz, entry.refused), `${route}: cz owner on sk's ${entry.record}: ${brief(cz)}`);
    t.is(await appRowsDigest(db), before, `${route}: a row changed for the cz owner`);
    const acme = await send(acmeOwner.client, acmeOwner.csrf, targets.acme ?? targets.sk);
    t.true(refusedAs(acme, entry.acmeRefused ?? entry.refused), `${route}: acme owner on demo's ${entry.record}: ${brief(acme)}`);
    t.is(await appRowsDigest(db), before, `${route}: a row changed for acme's owner`);
    const own = await send(czOwner.client, czOwner.csrf, targets.cz);
    t.true(passed(own), `${route}: cz owner on cz's ${entry.record}: ${brief(own)}`);
    const demo = await send(demoOwner.client, demoOwner.csrf, targets.control ?? targets.sk);
    t.true(passed(demo), `${route}: demo's owner on sk's ${entry.record}: ${brief(demo)}`);
  }
});
