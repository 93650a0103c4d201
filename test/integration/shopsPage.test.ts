/**
 * The Shops page (issue 28.2) over real HTTP: an owner connects a shop through the platform's test connection (the
 * credentials stored encrypted, never shown) and disconnects it (its data stays, its credentials go); a refused test
 * connection or a bad field saves nothing and the page says why without echoing a secret; a member gets no page; an
 * owner of another account cannot disconnect demo's shop.
 */
import anyTest, { type TestFn } from 'ava';
import { createPlatformRegistry } from '../../src/platforms/registry.js';
import { FormClient, makePerson, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import type { TestServer } from '../helpers/server.js';

interface Context { database: TestDatabase; server: TestServer }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const server = await startApplicationServer(database.db, testApplicationOptions(), undefined, { platforms: createPlatformRegistry({ db: database.db }) });
  t.context = { database, server };
});
test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

async function signedIn(t: { context: Context }, account: string, role: 'owner' | 'member'): Promise<FormClient> {
  const person = await makePerson(t.context.database.db, { account, role });
  const client = new FormClient(t.context.server.baseUrl);
  const signIn = await client.signIn(person.email, person.password);
  if (signIn.status !== 303) throw new Error(`sign-in failed: ${signIn.status}`);
  return client;
}

const HU = { platform: 'demo', code: 'hu', name: 'Acme Maďarsko', currency: 'HUF', timeZone: 'Europe/Budapest', country: 'HU', url: '' };

test.serial('When an owner connects a shop whose test connection passes, then it is listed and its credentials are stored encrypted; disconnected, its data stays', async (t) => {
  const { db } = t.context.database;
  const owner = await signedIn(t, 'acme', 'owner');
  const _csrf = await owner.csrf('/app/shops');
  const secret = 'demo-api-key-of-acme-hu';
  const connected = await owner.post('/app/shops/connect', { _csrf, ...HU, 'credential.demo.apiKey': secret });
  t.is(connected.status, 303, connected.text.slice(0, 500));
  t.is(connected.headers.get('location'), '/app/shops?done=connect');
  const page = await owner.get('/app/shops?done=connect');
  t.regex(page.text, /data-shop="hu"/);
  t.regex(page.text, /Connected: the test connection passed/);
  t.false(page.text.includes(secret), 'the secret is never shown');
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'acme', 's.code': 'hu' }).first('s.id', 's.platform', 's.currency', 's.time_zone');
  t.like(shop, { platform: 'demo', currency: 'HUF', time_zone: 'Europe/Budapest' });
  const stored = await db('shop_credentials').where({ shop_id: shop.id }).first('credentials_encrypted');
  t.false(Buffer.from(stored.credentials_encrypted).toString('latin1').includes(secret), 'stored encrypted, not in clear');

  const disconnected = await owner.post('/app/shops/hu/disconnect', { _csrf });
  t.is(disconnected.headers.get('location'), '/app/shops?done=disconnect');
  t.notRegex((await owner.get('/app/shops')).text, /data-shop="hu"/);
  const after = await db('shops').where({ id: shop.id }).first('removed_at');
  t.truthy(after.removed_at, 'the shop row stays, marked removed');
  t.is((await db('shop_credentials').where({ shop_id: shop.id })).length, 0, 'its credentials are deleted');
});

test.serial('When the test connection refuses or a field is bad, then nothing is saved and the page says why without the secret', async (t) => {
  const { db } = t.context.database;
  const owner = await signedIn(t, 'acme', 'owner');
  const _csrf = await owner.csrf('/app/shops');
  const before = (await db('shops')).length;
  const rejectedKey = 'rejected-key-of-acme';
  const refused = await owner.post('/app/shops/connect', { _csrf, ...HU, code: 'pl', currency: 'PLN', timeZone: 'Europe/Warsaw', country: 'PL', 'credential.demo.apiKey': rejectedKey });
  t.is(refused.status, 422, refused.text.slice(0, 300));
  t.regex(refused.text, /PLATFORM_CONNECTION_REFUSED/);
  t.false(refused.text.includes(rejectedKey), 'the refused key is not written back into the form');
  t.regex(refused.text, /name="code"[^>]*value="pl"/, 'the other fields are kept');
  const bad = await owner.post('/app/shops/connect', { _csrf, ...HU, code: 'hu2', currency: 'forint', 'credential.demo.apiKey': 'k' });
  t.is(bad.status, 400);
  t.regex(bad.text, /INVALID_PARAMETER/);
  const missing = await owner.post('/app/shops/connect', { _csrf, ...HU, code: 'hu3' });
  t.is(missing.status, 400);
  t.regex(missing.text, /MISSING_PARAMETER/);
  t.is((await db('shops')).length, before, 'no shop row was made');
});

test.serial('When a member opens Shops, or an owner of acme disconnects demo\'s shop, then it is refused and nothing changes', async (t) => {
  const { db } = t.context.database;
  const member = await signedIn(t, 'demo', 'member');
  t.is((await member.get('/app/shops')).status, 403);
  const memberCsrf = await member.csrf('/app');
  t.is((await member.post('/app/shops/pl/disconnect', { _csrf: memberCsrf })).status, 403);
  const acme = await signedIn(t, 'acme', 'owner');
  const _csrf = await acme.csrf('/app/shops');
  const demoPl = () => db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'pl' }).first('s.removed_at');
  const res = await acme.post('/app/shops/pl/disconnect', { _csrf });
  t.is(res.status, 404);
  t.is((await demoPl()).removed_at, null, 'demo\'s pl is untouched');
});
