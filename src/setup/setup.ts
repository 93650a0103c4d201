/**
 * People set the service up (issue 28): an account with its plan and time zone, and shops connected to a platform
 * through the port — the platform's test connection must pass before anything is saved; credentials are stored
 * encrypted and never returned. Disconnecting keeps the shop's data and stops its sync (as `shops remove` does).
 * The CLI (src/cli/setup.ts) and the application both call these.
 */
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { ConnectionRequest, PlatformCredentials, ShopPlatformAdapter } from '../platforms/types.js';
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

/**
 * Every problem of an account's fields, in the order the CLI reports them (code, name, zone, plan, code taken): the
 * CLI stops at the first, the set-up page (src/setup/firstRun.ts) shows each beside its field. The rules live only here.
 */
export async function accountProblems(db: Db, input: AccountInput): Promise<AppError[]> {
  const problems: AppError[] = [];
  if (!CODE.test(input.code)) problems.push(invalid('code', 'lower-case letters, digits and dashes, 1-32 characters'));
  if (!input.name.trim()) problems.push(invalid('name', 'must not be empty'));
  if (!isTimeZone(input.timeZone)) problems.push(invalid('timeZone', `\`${input.timeZone}\` is not an IANA time zone such as Europe/Bratislava`));
  const plan = await db('plans').where({ code: input.planCode }).first('code');
  if (!plan) {
    const plans = (await db('plans').orderBy('sort_order').select('code')).map((p) => p.code);
    problems.push(invalid('plan', `no plan \`${input.planCode}\`; plans are ${plans.join(', ')}`));
  }
  const taken = await db('accounts').where({ code: input.code }).first('id');
  if (taken) problems.push(new AppError('ALREADY_EXISTS', `An account \`${input.code}\` exists already.`, { param: 'code' }));
  return problems;
}

/** Creates an account; its first owner is created next (`people create --role owner`, or the set-up page does both). */
export async function createAccount(db: Db, input: AccountInput): Promise<{ id: string; code: string }> {
  const [first] = await accountProblems(db, input);
  if (first) throw first;
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

/** Every required credential field of the platform is given, and no field it does not take. */
function checkCredentialFields(adapter: ShopPlatformAdapter, platform: string, credentials: PlatformCredentials): void {
  for (const field of adapter.credentialFields) {
    if (!field.optional && !credentials[field.name]) throw new AppError('MISSING_PARAMETER', `The ${platform} platform needs the credential \`${field.name}\` (${field.label}).`, { param: field.name });
  }
  const unknown = Object.keys(credentials).filter((k) => !adapter.credentialFields.some((f) => f.name === k));
  if (unknown.length) throw new AppError('UNKNOWN_PARAMETER', `The ${platform} platform takes no credential ${unknown.map((k) => `\`${k}\``).join(', ')}.`, { param: unknown[0] });
}

/** The platform's test connection; a refusal is PLATFORM_CONNECTION_REFUSED (the caller has saved nothing yet). */
async function testConnection(adapter: ShopPlatformAdapter, platform: string, request: ConnectionRequest): Promise<Record<string, unknown>> {
  const check = await adapter.verifyConnection(request);
  if (!check.ok) {
    throw new AppError('PLATFORM_CONNECTION_REFUSED', `The ${platform} platform refused the test connection: ${check.message} Nothing was saved.`, { platform, reason: check.reason });
  }
  return check.settings;
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
  checkCredentialFields(adapter, input.platform, input.credentials);
  const existing = await db('shops').where({ account_id: account.id, code: input.code }).first('id');
  if (existing) throw new AppError('ALREADY_EXISTS', `Account \`${account.code}\` has a shop \`${input.code}\` already (a disconnected one is restored with \`shops restore\`).`, { param: 'code' });

  const settings = await testConnection(adapter, input.platform, { accountCode: account.code, shopCode: input.code, currency: input.currency, timeZone: input.timeZone, credentials: input.credentials });
  return db.transaction(async (trx) => {
    const [row] = await trx('shops').insert({
      account_id: account.id, code: input.code, name: input.name?.trim() || input.code, platform: input.platform, currency: input.currency,
      country: input.country, language: input.language ?? 'en', time_zone: input.timeZone, base_url: input.baseUrl ?? '',
    }).returning('id');
    const id = String(row.id);
    await trx('shop_platform_settings').insert({ shop_id: id, platform: input.platform, settings: JSON.stringify(settings) });
    await trx('shop_credentials').insert({ shop_id: id, platform: input.platform, credentials_encrypted: encryptCredentials(secretsKey, id, input.credentials) });
    return { id, code: input.code, platform: input.platform };
  });
}

/**
 * Disconnects a shop: its sync Schedule is deleted within a minute (as `shops remove`), its data and events stay, its
 * credentials are deleted. `actorShops` are the shops of the person acting (null = all, and the CLI's operator): a person
 * limited to some shops disconnects only those (GM9), SHOP_FORBIDDEN otherwise.
 */
export async function disconnectShop(db: Db, accountCode: string, code: string, actorShops: ReadonlySet<string> | null = null): Promise<void> {
  if (actorShops && !actorShops.has(code)) throw new AppError('SHOP_FORBIDDEN', `You may not act for shop \`${code}\`.`, { market: code });
  const account = await db('accounts').where({ code: accountCode }).first('id');
  if (!account) throw new AppError('NOT_FOUND', `No account \`${accountCode}\`.`, { param: 'account' });
  await db.transaction(async (trx) => {
    const shop = await trx('shops').where({ account_id: account.id, code }).forUpdate().first('id');
    if (!shop) throw new AppError('SHOP_NOT_FOUND', `Account \`${accountCode}\` has no shop \`${code}\`.`, { market: code });
    const deleted = await trx('shop_credentials').where({ shop_id: shop.id }).delete();
    // Remembered, so a restore asks for the credentials again rather than bringing the shop back unable to sync.
    await trx('shops').where({ id: shop.id }).update({ removed_at: trx.fn.now(), ...(deleted > 0 ? { credentials_deleted_at: trx.fn.now() } : {}) });
  });
}

/**
 * Restores a removed or disconnected shop (its sync Schedule follows within a minute). Credentials it still has stay
 * as they are. Credentials given are checked by the platform's test connection and stored encrypted (replacing any),
 * in the same transaction as the restore. A shop whose credentials a disconnect deleted is refused without new ones
 * (MISSING_PARAMETER, nothing changed): restored without them it could not sync.
 */
export async function restoreShop(db: Db, platforms: PlatformRegistry, secretsKey: Buffer, input: { accountCode: string; code: string; credentials: PlatformCredentials }): Promise<{ code: string; credentials: 'kept' | 'replaced' | 'none' }> {
  const account = await db('accounts').where({ code: input.accountCode }).first('id', 'code');
  if (!account) throw new AppError('NOT_FOUND', `No account \`${input.accountCode}\`.`, { param: 'account' });
  const shop = await db('shops').where({ account_id: account.id, code: input.code }).first('id', 'platform', 'currency', 'time_zone', 'credentials_deleted_at');
  if (!shop) throw new AppError('SHOP_NOT_FOUND', `Account \`${account.code}\` has no shop \`${input.code}\`.`, { market: input.code });
  const id = String(shop.id);
  if (Object.keys(input.credentials).length === 0) {
    const stored = await db('shop_credentials').where({ shop_id: id }).first('shop_id');
    if (!stored && shop.credentials_deleted_at) {
      throw new AppError('MISSING_PARAMETER', `Shop \`${input.code}\` was disconnected and its ${shop.platform} credentials deleted: restore it with them again (checked by a test connection). Nothing was changed.`, { param: 'credentials' });
    }
    await db('shops').where({ id }).update({ removed_at: null });
    return { code: input.code, credentials: stored ? 'kept' : 'none' };
  }
  const adapter = platforms.get(shop.platform);
  if (!adapter) throw new AppError('PLATFORM_UNAVAILABLE', `No adapter for the ${shop.platform} platform here.`, { platform: shop.platform, reason: 'no adapter' });
  checkCredentialFields(adapter, shop.platform, input.credentials);
  const settings = await testConnection(adapter, shop.platform, { accountCode: account.code, shopCode: input.code, currency: shop.currency.trim(), timeZone: shop.time_zone, credentials: input.credentials });
  await db.transaction(async (trx) => {
    const encrypted = encryptCredentials(secretsKey, id, input.credentials);
    await trx('shop_credentials').insert({ shop_id: id, platform: shop.platform, credentials_encrypted: encrypted })
      .onConflict('shop_id').merge({ platform: shop.platform, credentials_encrypted: encrypted, updated_at: trx.fn.now() });
    // The shop's stored settings stay (the demo's are its history window); only a shop without any gets these.
    await trx('shop_platform_settings').insert({ shop_id: id, platform: shop.platform, settings: JSON.stringify(settings) }).onConflict('shop_id').ignore();
    await trx('shops').where({ id }).update({ removed_at: null, credentials_deleted_at: null });
  });
  return { code: input.code, credentials: 'replaced' };
}
