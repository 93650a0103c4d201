/** `accounts create` and `shops connect|disconnect`: people set the service up without demo data (docs/deployment.md). */
import { parseArgs } from 'node:util';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { PlatformCredentials } from '../platforms/types.js';
import { connectShop, createAccount, disconnectShop, restoreShop } from '../setup/setup.js';
import { print, UsageError } from './output.js';

export const accountsUsage = `  accounts create --code C --name N --plan trial|beginner|start|growth|pro|custom --time-zone Europe/Bratislava
         (then: people create --account C --role owner --email E — the owner signs in and invites others)
`;

export const connectUsage = `  shops connect CODE --account C --platform P --currency EUR --time-zone Z --country SK [--name N] [--language L] [--url U]
         [--credential name=value ...]   (or SHOP_CREDENTIALS='{"name":"value"}'; checked by a test connection, stored encrypted, never shown)
  shops disconnect CODE --account C      (sync stops within a minute; data and events stay; credentials are deleted)
`;

async function asUsage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(`${error.code}: ${error.message}`);
    throw error;
  }
}

export async function accountsCommand(db: Db, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== 'create') throw new UsageError(accountsUsage);
  const { values } = parseArgs({ args: rest, options: {
    code: { type: 'string' }, name: { type: 'string' }, plan: { type: 'string' }, 'time-zone': { type: 'string' }, json: { type: 'boolean', default: false },
  } });
  for (const name of ['code', 'plan', 'time-zone'] as const) if (!values[name]) throw new UsageError(`--${name} is required.\n\n${accountsUsage}`);
  const account = await asUsage(() => createAccount(db, { code: values.code!, name: values.name ?? values.code!, planCode: values.plan!, timeZone: values['time-zone']! }));
  print(values.json!, { account }, `Account ${account.code} created. Next: people create --account ${account.code} --role owner --email <owner's e-mail>`);
}

function credentialsOf(pairs: string[] | undefined): PlatformCredentials {
  const credentials: PlatformCredentials = {};
  if (process.env.SHOP_CREDENTIALS) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(process.env.SHOP_CREDENTIALS);
    } catch {
      throw new UsageError('SHOP_CREDENTIALS must be a JSON object of strings.');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
      throw new UsageError('SHOP_CREDENTIALS must be a JSON object of strings.');
    }
    Object.assign(credentials, parsed);
  }
  for (const pair of pairs ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError('--credential takes name=value.');
    credentials[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return credentials;
}

/** `shops connect` / `shops disconnect` / `shops restore`; true when the action was one of them. */
export async function connectCommand(db: Db, platforms: PlatformRegistry, secretsKey: Buffer, action: string, rest: string[]): Promise<boolean> {
  if (action !== 'connect' && action !== 'disconnect' && action !== 'restore') return false;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: {
    account: { type: 'string' }, platform: { type: 'string' }, currency: { type: 'string' }, 'time-zone': { type: 'string' }, country: { type: 'string' },
    name: { type: 'string' }, language: { type: 'string' }, url: { type: 'string' }, credential: { type: 'string', multiple: true }, json: { type: 'boolean', default: false },
  } });
  const code = positionals[0];
  if (!code) throw new UsageError(`shops ${action} CODE\n\n${connectUsage}`);
  if (action === 'restore') {
    // As `shops remove`, the account defaults to the demo's.
    const restored = await asUsage(() => restoreShop(db, platforms, secretsKey, { accountCode: values.account ?? 'demo', code, credentials: credentialsOf(values.credential) }));
    const note = { kept: 'its credentials are kept', replaced: 'its new credentials passed the test connection and are stored encrypted', none: 'it has no stored credentials' }[restored.credentials];
    print(values.json!, { code, removed: false, credentials: restored.credentials }, `Shop ${code} restored (${note}); its sync Schedule follows within a minute.`);
    return true;
  }
  if (!values.account) throw new UsageError('--account is required.');
  if (action === 'disconnect') {
    await asUsage(() => disconnectShop(db, values.account!, code));
    print(values.json!, { code, disconnected: true }, `Shop ${code} disconnected; its sync Schedule stops within a minute, its data stays.`);
    return true;
  }
  for (const name of ['platform', 'currency', 'time-zone', 'country'] as const) if (!values[name]) throw new UsageError(`--${name} is required.\n\n${connectUsage}`);
  const shop = await asUsage(() => connectShop(db, platforms, secretsKey, {
    accountCode: values.account!, platform: values.platform!, code, name: values.name, currency: values.currency!, timeZone: values['time-zone']!,
    country: values.country!, language: values.language, baseUrl: values.url, credentials: credentialsOf(values.credential),
  }));
  print(values.json!, { shop }, `Shop ${shop.code} connected to the ${shop.platform} platform; its first sync starts within a minute.`);
  return true;
}
