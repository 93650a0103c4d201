/**
 * How a Medusa shop is connected: its settings (which Medusa, which sales channel and stock locations), its
 * credentials (the secret API key and the forwarder's signing secret, encrypted with SECRETS_KEY as webhook secrets
 * are, never returned), the test connection made before anything is saved, and the address its forwarder posts to.
 */
import crypto from 'node:crypto';
import type { Db } from '../../db/knex.js';
import { decryptSecret, encryptSecret, type SecretKeys } from '../../webhooks/secrets.js';
import type { PlatformShop } from '../types.js';
import { MedusaAdminClient, MedusaError } from './client.js';

/** Non-secret connection settings (shop_platform_settings.settings of a `medusa` shop). */
export interface MedusaShopSettings {
  /** Base URL of the Medusa server. */
  url: string;
  /** The shop is one sales channel of the Medusa: its orders and products. */
  salesChannelId: string;
  /** The stock locations whose levels are the shop's stock (summed per item). */
  stockLocationIds: string[];
  /** EUR per one unit of each non-EUR order currency (D23); Medusa has no exchange rates, the shop states them. */
  eurRates: Record<string, number>;
  /** The shop's currency (upper case): products are priced in it. */
  currency: string;
}

export interface MedusaCredentials {
  apiKey: string;
  /** The secret the shop's forwarder signs with (STORE_OPS_FORWARD_SECRET). */
  forwardSecret: string;
}

/** The shop's settings, checked: a shop saved without them cannot be synced and says so. */
export function medusaSettings(shop: PlatformShop): MedusaShopSettings {
  const s = shop.settings as Partial<MedusaShopSettings>;
  if (typeof s.url !== 'string' || typeof s.salesChannelId !== 'string' || !Array.isArray(s.stockLocationIds)) {
    throw new Error(`Medusa shop ${shop.accountCode}/${shop.code} has incomplete platform settings (url, salesChannelId, stockLocationIds)`);
  }
  return {
    url: s.url, salesChannelId: s.salesChannelId, stockLocationIds: s.stockLocationIds, eurRates: s.eurRates ?? {},
    currency: (s.currency ?? 'EUR').toUpperCase(),
  };
}

// Additional data binds each ciphertext to its shop and purpose (a copied value does not decrypt elsewhere).
const apiKeyContext = (shopId: string) => `medusa_shop:${shopId}:api_key`;
const forwardSecretContext = (shopId: string) => `medusa_shop:${shopId}:forward_secret`;

export async function saveMedusaCredentials(db: Db, key: Buffer, shopId: string, credentials: MedusaCredentials): Promise<void> {
  await db('medusa_shop_credentials').insert({
    shop_id: shopId,
    api_key_encrypted: encryptSecret(key, apiKeyContext(shopId), credentials.apiKey),
    forward_secret_encrypted: encryptSecret(key, forwardSecretContext(shopId), credentials.forwardSecret),
  }).onConflict('shop_id').merge(['api_key_encrypted', 'forward_secret_encrypted']);
}

/** The shop's credentials, or null when none are stored. */
export async function loadMedusaCredentials(db: Db, keys: SecretKeys, shopId: string): Promise<MedusaCredentials | null> {
  const row = await db('medusa_shop_credentials').where({ shop_id: shopId }).first('api_key_encrypted', 'forward_secret_encrypted');
  if (!row) return null;
  return {
    apiKey: decryptSecret(keys, apiKeyContext(shopId), row.api_key_encrypted),
    forwardSecret: decryptSecret(keys, forwardSecretContext(shopId), row.forward_secret_encrypted),
  };
}

/** Why a test connection failed, in words a person can act on; null when it succeeded. */
export async function verifyMedusaConnection(settings: Pick<MedusaShopSettings, 'url' | 'salesChannelId' | 'stockLocationIds'>, apiKey: string): Promise<string | null> {
  const client = new MedusaAdminClient({ url: settings.url, apiKey });
  try {
    await client.get(`/admin/sales-channels/${encodeURIComponent(settings.salesChannelId)}`);
    for (const id of settings.stockLocationIds) await client.get(`/admin/stock-locations/${encodeURIComponent(id)}`);
    return null;
  } catch (error) {
    if (!(error instanceof MedusaError)) throw error;
    if (error.status === 0) return `Medusa at ${settings.url} cannot be reached`;
    if (error.status === 401 || error.status === 403) return 'Medusa refused the API key (a secret API key, sk_…, is needed)';
    if (error.status === 404) return `Medusa has no ${error.path.includes('stock-locations') ? 'stock location' : 'sales channel'} ${error.path.split('/').pop()}`;
    return error.message;
  }
}

/** A fresh forwarding secret for a shop's Medusa forwarder. */
export function generateForwardSecret(): string {
  return `fwsec_${crypto.randomBytes(32).toString('base64url')}`;
}

/** The path the shop's forwarder posts to (STORE_OPS_FORWARD_URL is the service's base URL plus this). */
export function forwardPath(accountCode: string, shopCode: string): string {
  return `/api/v1/platforms/medusa/events/${encodeURIComponent(accountCode)}/${encodeURIComponent(shopCode)}`;
}

export interface ConnectMedusaShop {
  accountCode: string;
  shopCode: string;
  name: string;
  /** The shop's currency: products are priced in it (a variant without a price in it is not this shop's). */
  currency: string;
  country: string;
  language: string;
  timeZone: string;
  settings: Omit<MedusaShopSettings, 'eurRates' | 'currency'> & { eurRates?: Record<string, number> };
  apiKey: string;
  /** The forwarder's secret when the Medusa already has one; else a new one is made (shown once). */
  forwardSecret?: string;
}

/** Why a shop was not connected (nothing was saved). */
export class MedusaConnectionRefused extends Error {}

/**
 * Connects a Medusa shop: a test connection with the key first (a refusal saves nothing), then the shop, its settings
 * and its encrypted credentials in one transaction. Returns the forwarder's path and secret (shown once).
 */
export async function connectMedusaShop(db: Db, key: Buffer, input: ConnectMedusaShop): Promise<{ shopId: string; forwardPath: string; forwardSecret: string }> {
  const problem = await verifyMedusaConnection(input.settings, input.apiKey);
  if (problem) throw new MedusaConnectionRefused(problem);
  const forwardSecret = input.forwardSecret ?? generateForwardSecret();
  const shopId = await db.transaction(async (trx) => {
    const account = await trx('accounts').where({ code: input.accountCode }).first('id');
    if (!account) throw new MedusaConnectionRefused(`No account ${input.accountCode}`);
    const [shop] = await trx('shops').insert({
      account_id: account.id, code: input.shopCode, name: input.name, platform: 'medusa', currency: input.currency.toUpperCase(),
      country: input.country.toUpperCase(), language: input.language, time_zone: input.timeZone, base_url: input.settings.url,
    }).returning('id');
    const id = String(shop.id);
    const settings = { ...input.settings, eurRates: input.settings.eurRates ?? {}, currency: input.currency.toUpperCase() };
    await trx('shop_platform_settings').insert({ shop_id: id, platform: 'medusa', settings: JSON.stringify(settings) });
    await saveMedusaCredentials(trx as unknown as Db, key, id, { apiKey: input.apiKey, forwardSecret });
    return id;
  });
  return { shopId, forwardPath: forwardPath(input.accountCode, input.shopCode), forwardSecret };
}
