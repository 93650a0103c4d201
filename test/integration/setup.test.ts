/**
 * People set the service up (issue 28) with the real CLI process, a real Postgres and the real application server: an
 * account with plan and zone, its first owner who signs in, a shop connected through the platform's test connection
 * (refused credentials save nothing), credentials stored encrypted and never in any REST, MCP, CLI or page answer,
 * a disconnect that keeps the shop's data, and a restore that keeps or asks again for the credentials.
 */
import anyTest, { type TestFn } from 'ava';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { FormClient, startApplicationServer, testApplicationOptions } from '../helpers/application.js';
import { api, issueKey, type TestServer } from '../helpers/server.js';
import { connectModern } from '../helpers/mcp.js';
import { decryptCredentials } from '../../src/setup/credentials.js';

interface Context { database: TestDatabase; server: TestServer; secretsKey: Buffer }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const database = await createTestDatabase();
  const options = testApplicationOptions();
  t.context = { database, server: await startApplicationServer(database.db, options), secretsKey: options.key };
});

test.after.always(async (t) => {
  await t.context.server?.close();
  await t.context.database?.drop();
});

/** The real CLI process over this file's database, with its SECRETS_KEY. */
const cli = (t: { context: Context }, ...args: string[]) => runCli(t.context.database.url, args, { SECRETS_KEY: t.context.secretsKey.toString('base64') });

const SECRET = 'key-7f3a9c1e5b2d8e40aa';
const REJECTED = 'rejected-4d2c1b0a9f8e';

test.serial('When an account is created with a bad plan or zone, then it is refused with a code and nothing is saved; with good ones it is created', async (t) => {
  const db = t.context.database.db;
  const badPlan = await cli(t, 'accounts', 'create', '--code', 'newco', '--name', 'New Co', '--plan', 'gold', '--time-zone', 'Europe/Vienna');
  t.is(badPlan.code, 2);
  t.regex(badPlan.stderr, /INVALID_PARAMETER: `plan`: no plan `gold`; plans are trial, beginner, start, growth, pro, custom/);
  const badZone = await cli(t, 'accounts', 'create', '--code', 'newco', '--plan', 'start', '--time-zone', 'Europe/Nowhere');
  t.is(badZone.code, 2);
  t.regex(badZone.stderr, /INVALID_PARAMETER: `timeZone`/);
  t.is(await db('accounts').where({ code: 'newco' }).first(), undefined);

  const created = await cli(t, 'accounts', 'create', '--code', 'newco', '--name', 'New Co', '--plan', 'start', '--time-zone', 'Europe/Vienna', '--json');
  t.is(created.code, 0, created.stderr);
  const row = await db('accounts').where({ code: 'newco' }).first();
  t.is(row.name, 'New Co');
  t.is(row.plan_code, 'start');
  t.is(row.time_zone, 'Europe/Vienna');
  const again = await cli(t, 'accounts', 'create', '--code', 'newco', '--plan', 'start', '--time-zone', 'Europe/Vienna');
  t.is(again.code, 2);
  t.regex(again.stderr, /ALREADY_EXISTS/);

  // Its first owner signs in.
  const owner = await cli(t, 'people', 'create', '--account', 'newco', '--email', 'owner@newco.example', '--role', 'owner', '--password', 'a-long-owner-password-1', '--json');
  t.is(owner.code, 0, owner.stderr);
  const client = new FormClient(t.context.server.baseUrl);
  t.is((await client.signIn('owner@newco.example', 'a-long-owner-password-1')).location, '/app');
});

test.serial('When a shop is connected with credentials the platform refuses, then PLATFORM_CONNECTION_REFUSED and nothing is saved', async (t) => {
  const db = t.context.database.db;
  const refused = await cli(t, 'shops', 'connect', 'sk', '--account', 'newco', '--platform', 'demo', '--currency', 'EUR', '--time-zone', 'Europe/Bratislava',
    '--country', 'SK', '--credential', `apiKey=${REJECTED}`);
  t.is(refused.code, 2);
  t.regex(refused.stderr, /PLATFORM_CONNECTION_REFUSED: The demo platform refused the test connection: The demo shop refused the API key\. Nothing was saved\./);
  t.false(refused.stderr.includes(REJECTED));
  const account = await db('accounts').where({ code: 'newco' }).first('id');
  t.is((await db('shops').where({ account_id: account.id })).length, 0);
  t.is((await db('shop_credentials')).length, 0);

  const unknownPlatform = await cli(t, 'shops', 'connect', 'sk', '--account', 'newco', '--platform', 'nosuch', '--currency', 'EUR', '--time-zone', 'Europe/Bratislava', '--country', 'SK');
  t.is(unknownPlatform.code, 2);
  t.regex(unknownPlatform.stderr, /no platform `nosuch`; platforms are demo/);
  const missing = await cli(t, 'shops', 'connect', 'sk', '--account', 'newco', '--platform', 'demo', '--currency', 'EUR', '--time-zone', 'Europe/Bratislava', '--country', 'SK');
  t.is(missing.code, 2);
  t.regex(missing.stderr, /MISSING_PARAMETER: The demo platform needs the credential `apiKey`/);
  t.is((await db('shops').where({ account_id: account.id })).length, 0);
});

test.serial('When a shop is connected, then it is saved with its platform settings and encrypted credentials that no answer ever shows, and a disconnect keeps its data', async (t) => {
  const db = t.context.database.db;
  const connected = await cli(t, 'shops', 'connect', 'sk', '--account', 'newco', '--platform', 'demo', '--currency', 'EUR', '--time-zone', 'Europe/Bratislava',
    '--country', 'SK', '--name', 'New Co SK', '--credential', `apiKey=${SECRET}`, '--json');
  t.is(connected.code, 0, connected.stderr);
  t.false(connected.stdout.includes(SECRET));
  const account = await db('accounts').where({ code: 'newco' }).first('id');
  const shop = await db('shops').where({ account_id: account.id, code: 'sk' }).first();
  t.is(shop.platform, 'demo');
  t.is(shop.currency, 'EUR');
  t.is(shop.time_zone, 'Europe/Bratislava');
  t.is(shop.name, 'New Co SK');
  const settings = await db('shop_platform_settings').where({ shop_id: shop.id }).first();
  t.is(settings.settings.orders, 300);
  t.is(settings.settings.days, 90);
  t.false(JSON.stringify(settings.settings).includes(SECRET));
  const stored = await db('shop_credentials').where({ shop_id: shop.id }).first();
  t.false(Buffer.from(stored.credentials_encrypted).includes(Buffer.from(SECRET)), 'stored encrypted');
  t.deepEqual(decryptCredentials({ current: t.context.secretsKey }, String(shop.id), stored.credentials_encrypted), { apiKey: SECRET });
  // Bound to its shop: the same bytes do not open as another shop's.
  t.throws(() => decryptCredentials({ current: t.context.secretsKey }, String(Number(shop.id) + 1), stored.credentials_encrypted));

  // The scan: REST, MCP, the CLI listing and the application's pages.
  const key = await issueKey(db, { account: 'newco' });
  const answers: string[] = [];
  for (const p of ['/stores', '/stores/integration-status?market=sk', '/orders?market=sk&limit=5']) {
    const res = await api(t.context.server, p, key);
    answers.push(JSON.stringify(res.body));
  }
  t.regex(answers[0], /"code":"sk"/);
  const mcp = await connectModern(t.context.server, key);
  try {
    const tools = (await mcp.listTools()).tools.map((tool) => tool.name);
    for (const name of ['stores_list', 'stores_integration_status']) {
      if (tools.includes(name)) answers.push(JSON.stringify(await mcp.callTool({ name, arguments: name === 'stores_list' ? {} : { market: 'sk' } })));
    }
  } finally {
    await mcp.close();
  }
  answers.push((await cli(t, 'shops', 'list', '--account', 'newco', '--json')).stdout);
  const client = new FormClient(t.context.server.baseUrl);
  await client.signIn('owner@newco.example', 'a-long-owner-password-1');
  for (const page of ['/app', '/app/webhooks']) answers.push((await client.get(page)).text);
  t.true(answers.length >= 7, `${answers.length} answers scanned`);
  for (const answer of answers) t.false(answer.includes(SECRET), 'the credential appears in no answer');

  // Disconnect: the shop row (and its data) stays, marked removed; the credentials are gone.
  const disconnected = await cli(t, 'shops', 'disconnect', 'sk', '--account', 'newco');
  t.is(disconnected.code, 0, disconnected.stderr);
  const after = await db('shops').where({ id: shop.id }).first();
  t.truthy(after.removed_at);
  t.truthy(await db('shop_platform_settings').where({ shop_id: shop.id }).first());
  t.is(await db('shop_credentials').where({ shop_id: shop.id }).first(), undefined);
});

test.serial('When a removed shop is restored, then its credentials are kept; a disconnected one is restored only with credentials that pass the test connection', async (t) => {
  const db = t.context.database.db;
  const connect = ['shops', 'connect', 'cz', '--account', 'newco', '--platform', 'demo', '--currency', 'CZK', '--time-zone', 'Europe/Prague', '--country', 'CZ'];
  t.is((await cli(t, ...connect, '--credential', `apiKey=${SECRET}`)).code, 0);
  const account = await db('accounts').where({ code: 'newco' }).first('id');
  const shop = await db('shops').where({ account_id: account.id, code: 'cz' }).first('id');
  const credentialsOf = async () => {
    const row = await db('shop_credentials').where({ shop_id: shop.id }).first('credentials_encrypted');
    return row ? decryptCredentials({ current: t.context.secretsKey }, String(shop.id), row.credentials_encrypted) : null;
  };
  const removedAt = async () => (await db('shops').where({ id: shop.id }).first('removed_at')).removed_at;

  // Removed and restored: the same credentials, live again.
  t.is((await cli(t, 'shops', 'remove', 'cz', '--account', 'newco')).code, 0);
  t.truthy(await removedAt());
  const restored = await cli(t, 'shops', 'restore', 'cz', '--account', 'newco', '--json');
  t.is(restored.code, 0, restored.stderr);
  t.is(JSON.parse(restored.stdout).credentials, 'kept');
  t.is(await removedAt(), null);
  t.deepEqual(await credentialsOf(), { apiKey: SECRET });

  // Disconnected (credentials deleted): without credentials, or with ones the platform refuses, nothing changes.
  t.is((await cli(t, 'shops', 'disconnect', 'cz', '--account', 'newco')).code, 0);
  t.is(await credentialsOf(), null);
  const bare = await cli(t, 'shops', 'restore', 'cz', '--account', 'newco');
  t.is(bare.code, 2);
  t.regex(bare.stderr, /MISSING_PARAMETER: Shop `cz` was disconnected and its demo credentials deleted/);
  t.truthy(await removedAt(), 'still removed');
  const refused = await cli(t, 'shops', 'restore', 'cz', '--account', 'newco', '--credential', `apiKey=${REJECTED}`);
  t.is(refused.code, 2);
  t.regex(refused.stderr, /PLATFORM_CONNECTION_REFUSED/);
  t.false(refused.stderr.includes(REJECTED));
  t.truthy(await removedAt(), 'still removed');
  t.is(await credentialsOf(), null);

  // With credentials the platform accepts: live again, those stored encrypted, never printed.
  const renewed = 'key-renewed-2b7e151628aed2a6';
  const again = await cli(t, 'shops', 'restore', 'cz', '--account', 'newco', '--credential', `apiKey=${renewed}`, '--json');
  t.is(again.code, 0, again.stderr);
  t.false(again.stdout.includes(renewed));
  t.is(JSON.parse(again.stdout).credentials, 'replaced');
  t.is(await removedAt(), null);
  t.deepEqual(await credentialsOf(), { apiKey: renewed });
  const stored = await db('shop_credentials').where({ shop_id: shop.id }).first('credentials_encrypted');
  t.false(Buffer.from(stored.credentials_encrypted).includes(Buffer.from(renewed)), 'stored encrypted');

  // A shop that never had stored credentials (the demo's loaded ones) is restored as before.
  t.is((await cli(t, 'shops', 'remove', 'pl')).code, 0);
  const demo = await cli(t, 'shops', 'restore', 'pl', '--json');
  t.is(demo.code, 0, demo.stderr);
  t.is(JSON.parse(demo.stdout).credentials, 'none');
  const pl = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'pl' }).first('s.removed_at');
  t.is(pl.removed_at, null);
});
