/**
 * People set the service up (issue 28): an account with its plan and time zone, and shops connected to a platform
 * through the port — the platform's test connection must pass before anything is saved; credentials are stored
 * encrypted and never returned. Disconnecting keeps the shop's data and stops its sync (as `shops remove` does).
 * The CLI (src/cli/setup.ts) and the application both call these.
 */
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { PlatformCredentials } from '../platforms/types.js';
import { encryptCredentials } from './credentials.js';

const CODE = /^[a-z0-9][a-z0-9-]{0,31}$/;
const CURRENCY = /^[A-Z]{3}$/;
const COUNTRY = /^[A-Z]{2}$/;

function invalid(param: string, reason: string): AppError {
  return new AppError('INVALID_PARAMETER', `\`${param}\`: ${reason}.`, { param, reason });
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}

export interface AccountInput { code: string; name: string; planCode: string; timeZone: string }

/** Creates an account; its first owner is created next (`people create --role owner`, then that person invites others). */
export async function createAccount(db: Db, input: AccountInput): Promise<{ id: string; code: string }> {
  if (!CODE.test(input.code)) throw invalid('code', 'lower-case letters, digits and dashes, 1-32 characters');
  if (!input.name.trim()) throw invalid('name', 'must not be empty');
  if (!isTimeZone(input.timeZone)) throw invalid('timeZone', `\`${input.timeZone}\` is not an IANA time zone such as Europe/Bratislava`);
  const plan = await db('plans').where({ code: input.planCode }).first('code');
  if (!plan) {
    const plans = (await db('plans').orderBy('sort_order').select('code')).map((p) => p.code);
    throw invalid('plan', `no plan \`${input.planCode}\`; plans are ${plans.join(', ')}`);
  }
  const taken = await db('accounts').where({ code: input.code }).first('id');
  if (taken) throw new AppError('ALREADY_EXISTS', `An account \`${input.code}\` exists already.`, { param: 'code' });
  const [row] = await db('accounts').insert({ code: input.code, name: input.name.trim(), plan_code: input.planCode, time_zone: input.timeZone }).returning('id');
  return { id: String(row.id ?? row), code: input.code };
}

export interface ConnectInput {
  accountCode: string;
  platform: string;
  code: string;
  name?: string;
  currency: string;
  timeZone: string;
  country: string;
  language?: string;
  baseUrl?: string;
  credentials: PlatformCredentials;
}

/**
 * Connects a shop: validates, asks the platform for a test connection with the credentials, and only when it answers
 * ok saves the shop, its (non-secret) platform settings and its encrypted credentials in one transaction. The sync
 * Schedule of the shop follows within a minute, as for any live shop.
 */
export async function connectShop(db: Db, platforms: PlatformRegistry, secretsKey: Buffer, input: ConnectInput): Promise<{ id: string; code: string; platform: string }> {
  const account = await db('accounts').where({ code: input.accountCode }).first('id', 'code');
  if (!account) throw new AppError('NOT_FOUND', `No account \`${input.accountCode}\`.`, { param: 'account' });
  const adapter = platforms.get(input.platform);
  if (!adapter) throw invalid('platform', `no platform \`${input.platform}\`; platforms are ${platforms.names().join(', ')}`);
  if (!CODE.test(input.code)) throw invalid('code', 'lower-case letters, digits and dashes, 1-32 characters');
  if (!CURRENCY.test(input.currency)) throw invalid('currency', 'an ISO 4217 code such as EUR');
  if (!COUNTRY.test(input.country)) throw invalid('country', 'an ISO 3166-1 alpha-2 code such as SK');
  if (!isTimeZone(input.timeZone)) throw invalid('timeZone', `\`${input.timeZone}\` is not an IANA time zone such as Europe/Bratislava`);
  for (const field of adapter.credentialFields) {
    if (!field.optional && !input.credentials[field.name]) throw new AppError('MISSING_PARAMETER', `The ${input.platform} platform needs the credential \`${field.name}\` (${field.label}).`, { param: field.name });
  }
  const unknown = Object.keys(input.credentials).filter((k) => !adapter.credentialFields.some((f) => f.name === k));
  if (unknown.length) throw new AppError('UNKNOWN_PARAMETER', `The ${input.platform} platform takes no credential ${unknown.map((k) => `\`${k}\``).join(', ')}.`, { param: unknown[0] });
  const existing = await db('shops').where({ account_id: account.id, code: input.code }).first('id');
  if (existing) throw new AppError('ALREADY_EXISTS', `Account \`${account.code}\` has a shop \`${input.code}\` already (a disconnected one is restored with \`shops restore\`).`, { param: 'code' });

  const check = await adapter.verifyConnection({ accountCode: account.code, shopCode: input.code, currency: input.currency, timeZone: input.timeZone, credentials: input.credentials });
  if (!check.ok) {
    throw new AppError('PLATFORM_CONNECTION_REFUSED', `The ${input.platform} platform refused the test connection: ${check.message} Nothing was saved.`, { platform: input.platform, reason: check.reason });
  }
  return db.transaction(async (trx) => {
    const [row] = await trx('shops').insert({
      account_id: account.id, code: input.code, name: input.name?.trim() || input.code, platform: input.platform, currency: input.currency,
      country: input.country, language: input.language ?? 'en', time_zone: input.timeZone, base_url: input.baseUrl ?? '',
    }).returning('id');
    const id = String(row.id);
    await trx('shop_platform_settings').insert({ shop_id: id, platform: input.platform, settings: JSON.stringify(check.settings) });
    await trx('shop_credentials').insert({ shop_id: id, platform: input.platform, credentials_encrypted: encryptCredentials(secretsKey, id, input.credentials) });
    return { id, code: input.code, platform: input.platform };
  });
}

/** Disconnects a shop: its sync Schedule is deleted within a minute (as `shops remove`), its data and events stay, its credentials are deleted. */
export async function disconnectShop(db: Db, accountCode: string, code: string): Promise<void> {
  const account = await db('accounts').where({ code: accountCode }).first('id');
  if (!account) throw new AppError('NOT_FOUND', `No account \`${accountCode}\`.`, { param: 'account' });
  await db.transaction(async (trx) => {
    const shop = await trx('shops').where({ account_id: account.id, code }).forUpdate().first('id');
    if (!shop) throw new AppError('SHOP_NOT_FOUND', `Account \`${accountCode}\` has no shop \`${code}\`.`, { market: code });
    await trx('shops').where({ id: shop.id }).update({ removed_at: trx.fn.now() });
    await trx('shop_credentials').where({ shop_id: shop.id }).delete();
  });
}
