/** The operator command line (D11) run as a real process against the test database. */
import { appTest, type AppContext } from '../helpers/app.js';
import { api } from '../helpers/server.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import crypto from 'node:crypto';
import { decryptSecret } from '../../src/webhooks/secrets.js';
import { fakeDns, makeEndpoint, testSettings } from '../helpers/webhooks.js';

const test = appTest();
type Context = AppContext;

async function cli(t: { context: Context }, ...args: string[]): Promise<CliResult> {
  return cliWithEnv(t, {}, ...args);
}

async function cliWithEnv(t: { context: Context }, env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return runCli(t.context.database.url, args, env);
}

test('When a key is created with --json, then one JSON object carries id and key, the key works once listed without its secret, and revoking it ends it', async (t) => {
  const created = await cli(t, 'keys', 'create', '--name', 'ci', '--scopes', 'orders:read,stores:read', '--interfaces', 'rest', '--shops', 'sk,cz', '--expires-in', '30d', '--json');
  t.is(created.code, 0, created.stderr);
  const { id, key } = JSON.parse(created.stdout);
  t.regex(key, /^sk_[0-9A-Za-z]{43}$/);
  t.regex(id, /^key_/);
  t.is((await api(t.context.server, '/orders?market=sk&limit=1', key)).status, 200);
  t.is((await api(t.context.server, '/orders?market=hu&limit=1', key)).status, 403);

  const listed = await cli(t, 'keys', 'list', '--json');
  t.is(listed.code, 0);
  const entry = JSON.parse(listed.stdout).keys.find((k: any) => k.id === id);
  t.deepEqual(entry.shops, ['sk', 'cz']);
  t.is(entry.writeMode, 'proposals', 'D13 default');
  t.false(listed.stdout.includes(key), 'the key is never shown again');
  const stored = await t.context.database.db('access_keys').where({ id }).first();
  t.false(JSON.stringify(stored).includes(key.slice(3)), 'only a hash is stored');

  const revoked = await cli(t, 'keys', 'revoke', id, '--json');
  t.deepEqual(JSON.parse(revoked.stdout), { id, revoked: true });
  const res = await api(t.context.server, '/orders?market=sk&limit=1', key);
  t.is(res.body.error.code, 'CREDENTIALS_REVOKED');
});

test('When the arguments are wrong, then the command exits 2 with a clear message and creates nothing', async (t) => {
  const cases: [string[], RegExp][] = [
    [['keys', 'create', '--name', 'x', '--scopes', 'orders:write', '--interfaces', 'rest', '--shops', 'all'], /Unknown scope/],
    [['keys', 'create', '--name', 'x', '--scopes', 'all', '--interfaces', 'soap', '--shops', 'all'], /--interfaces/],
    [['keys', 'create', '--name', 'x', '--scopes', 'all', '--interfaces', 'rest', '--shops', 'sk,xx'], /Unknown shop/],
    [['keys', 'create', '--name', 'x', '--scopes', 'all', '--interfaces', 'rest', '--shops', 'all', '--expires-in', 'soon'], /--expires-in/],
    [['keys', 'create', '--scopes', 'all', '--interfaces', 'rest', '--shops', 'all'], /--name/],
    [['keys', 'create', '--name', 'x', '--scopes', 'all', '--interfaces', 'mcp', '--shops', 'all', '--write-mode', 'yolo'], /--write-mode/],
    [['keys', 'revoke', 'key_nope'], /No key/],
    [['keys', 'list', '--account', 'nobody'], /No account/],
    [['frobnicate'], /Unknown command/],
  ];
  for (const [args, message] of cases) {
    const result = await cli(t, ...args);
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, message, args.join(' '));
  }
  t.deepEqual(await t.context.database.db('access_keys').where({ name: 'x' }).pluck('id'), [], 'no key was created');
});

test('When a key is created for another account with --account, then it sees only that account', async (t) => {
  const created = await cli(t, 'keys', 'create', '--name', 'acme', '--scopes', 'all', '--interfaces', 'rest,mcp', '--shops', 'all', '--account', 'acme', '--json');
  const { key } = JSON.parse(created.stdout);
  const stores = await api(t.context.server, '/stores', key);
  t.deepEqual(stores.body.data.map((s: any) => s.code).sort(), ['cz', 'sk']);
});

test('When SECRETS_KEY is rotated, then secrets re-encrypt moves every endpoint secret to the new key unchanged, and without the old key it refuses and writes nothing', async (t) => {
  const db = t.context.database.db;
  const oldKey = crypto.randomBytes(32);
  const newKey = crypto.randomBytes(32);
  const settings = testSettings({ secretsKey: oldKey, allowLoopback: false, resolve: fakeDns({ 'hooks.example.com': ['93.184.215.14'] }).resolve });
  const endpoints = [
    await makeEndpoint(db, settings, { url: 'https://hooks.example.com/a', name: 'rotation a' }),
    await makeEndpoint(db, settings, { url: 'https://hooks.example.com/b', name: 'rotation b' }),
  ];
  const stored = async () => new Map<string, Buffer>((await db('webhook_endpoints').select('id', 'secret_encrypted')).map((r: { id: string; secret_encrypted: Buffer }) => [String(r.id), r.secret_encrypted]));
  const before = await stored();
  const env = { CURSOR_SECRET: crypto.randomBytes(32).toString('hex'), SECRETS_KEY: newKey.toString('hex') };

  const refused = await cliWithEnv(t, env, 'secrets', 're-encrypt', '--json');
  t.is(refused.code, 2, refused.stderr);
  t.regex(refused.stderr, /SECRETS_KEY_PREVIOUS/);
  t.deepEqual(await stored(), before, 'nothing was written');

  const done = await cliWithEnv(t, { ...env, SECRETS_KEY_PREVIOUS: oldKey.toString('base64') }, 'secrets', 're-encrypt', '--json');
  t.is(done.code, 0, done.stderr);
  t.deepEqual(JSON.parse(done.stdout), { reencrypted: 2, endpoints: 2, shopCredentials: { reencrypted: 0, shops: 0 }, partnerPayoutDetails: { reencrypted: 0, partners: 0 } });
  const after = await stored();
  for (const endpoint of endpoints) {
    t.is(decryptSecret(newKey, endpoint.id, after.get(endpoint.id)!), endpoint.secret, 'the same secret, under the new key');
    t.throws(() => decryptSecret(oldKey, endpoint.id, after.get(endpoint.id)!), undefined, 'the old key no longer reads it');
  }
  const again = await cliWithEnv(t, { ...env, SECRETS_KEY_PREVIOUS: oldKey.toString('base64') }, 'secrets', 're-encrypt', '--json');
  t.deepEqual(JSON.parse(again.stdout), { reencrypted: 0, endpoints: 2, shopCredentials: { reencrypted: 0, shops: 0 }, partnerPayoutDetails: { reencrypted: 0, partners: 0 } });
});
