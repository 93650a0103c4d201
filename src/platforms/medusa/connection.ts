/**
 * How a Medusa shop is connected: its credentials (the port's connect flow stores them in shop_credentials, encrypted
 * with SECRETS_KEY, never returned; the secret API key and the forwarder's signing secret among them), the settings
 * the test connection makes of them (which Medusa, which sales channel and stock locations), and the address its
 * forwarder posts to.
 */
import crypto from 'node:crypto';
import type { Db } from '../../db/knex.js';
import type { ConnectionCheck, ConnectionRequest, CredentialField, PlatformShop } from '../types.js';
import type { PlatformRegistry } from '../registry.js';
import { connectShop } from '../../setup/setup.js';
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

/**
 * The credentials a Medusa shop is connected with (`shops connect --platform medusa --credential name=value …`), stored
 * as every platform's are (shop_credentials, encrypted with SECRETS_KEY, never returned). Only `apiKey` and
 * `forwardSecret` are secret; the others are where to read, and the test connection turns them into the shop's settings.
 */
export const MEDUSA_CREDENTIAL_FIELDS: readonly CredentialField[] = [
  { name: 'url', label: 'Base URL of the Medusa server', secret: false },
  { name: 'apiKey', label: 'Secret API key (sk_…)', secret: true },
  { name: 'salesChannelId', label: 'Sales channel id (the shop)', secret: false },
  { name: 'stockLocationIds', label: 'Stock location ids, comma-separated', secret: false },
  { name: 'eurRates', label: 'EUR per unit of other order currencies, e.g. CZK=0.04,HUF=0.0025', secret: false, optional: true },
  { name: 'forwardSecret', label: 'Secret the Medusa forwarder signs events with (STORE_OPS_FORWARD_SECRET)', secret: true, optional: true },
];

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

type Refusal = { reason: 'credentials_rejected' | 'unreachable' | 'invalid'; message: string };

/** Why a test connection failed, in words a person can act on; null when it succeeded. */
async function checkMedusa(settings: Pick<MedusaShopSettings, 'url' | 'salesChannelId' | 'stockLocationIds'>, apiKey: string): Promise<Refusal | null> {
  const client = new MedusaAdminClient({ url: settings.url, apiKey });
  try {
    await client.get(`/admin/sales-channels/${encodeURIComponent(settings.salesChannelId)}`);
    for (const id of settings.stockLocationIds) await client.get(`/admin/stock-locations/${encodeURIComponent(id)}`);
    return null;
  } catch (error) {
    if (!(error instanceof MedusaError)) throw error;
    if (error.status === 0) return { reason: 'unreachable', message: `Medusa at ${settings.url} cannot be reached.` };
    if (error.status === 401 || error.status === 403) return { reason: 'credentials_rejected', message: 'Medusa refused the API key (a secret API key, sk_…, is needed).' };
    if (error.status === 404) return { reason: 'invalid', message: `Medusa has no ${error.path.includes('stock-locations') ? 'stock location' : 'sales channel'} ${error.path.split('/').pop()}.` };
    return { reason: 'invalid', message: error.message };
  }
}

/** Why a test connection failed, in words a person can act on; null when it succeeded. */
export async function verifyMedusaConnection(settings: Pick<MedusaShopSettings, 'url' | 'salesChannelId' | 'stockLocationIds'>, apiKey: string): Promise<string | null> {
  return (await checkMedusa(settings, apiKey))?.message ?? null;
}

/** `CZK=0.04,HUF=0.0025` as rates; null when a pair is not CUR=positive number. */
export function parseEurRates(text: string | undefined): Record<string, number> | null {
  const rates: Record<string, number> = {};
  for (const pair of (text ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z]{3})=(\d+(?:\.\d+)?)$/.exec(pair);
    if (!m || !(Number(m[2]) > 0)) return null;
    rates[m[1].toUpperCase()] = Number(m[2]);
  }
  return rates;
}

/** The port's test connection (ConnectionRequest → the shop's settings): the credentials' non-secret fields, checked against Medusa. */
export async function verifyMedusaRequest(request: ConnectionRequest): Promise<ConnectionCheck> {
  const c = request.credentials;
  let url: URL;
  try {
    url = new URL(c.url ?? '');
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
  } catch {
    return { ok: false, reason: 'invalid', message: `\`url\` must be the Medusa server's http(s) address, not \`${c.url ?? ''}\`.` };
  }
  const stockLocationIds = (c.stockLocationIds ?? '').split(',').map((id) => id.trim()).filter(Boolean);
  if (!stockLocationIds.length) return { ok: false, reason: 'invalid', message: '`stockLocationIds` must name at least one stock location.' };
  const eurRates = parseEurRates(c.eurRates);
  if (!eurRates) return { ok: false, reason: 'invalid', message: `\`eurRates\` must be CUR=RATE pairs such as CZK=0.04, not \`${c.eurRates}\`.` };
  const settings = { url: c.url.replace(/\/+$/, ''), salesChannelId: c.salesChannelId, stockLocationIds };
  const refusal = await checkMedusa(settings, c.apiKey);
  if (refusal) return { ok: false, ...refusal };
  return { ok: true, settings: { ...settings, eurRates, currency: request.currency.toUpperCase() } };
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

/**
 * `medusa connect`: a thin wrapper over the platforms' connect (src/setup/setup.ts connectShop, as `shops connect
 * --platform medusa`) that makes the forwarder's secret when none is given and returns where the forwarder posts.
 * A refused test connection throws PLATFORM_CONNECTION_REFUSED and saves nothing.
 */
export async function connectMedusaShop(db: Db, platforms: PlatformRegistry, key: Buffer, input: ConnectMedusaShop): Promise<{ shopId: string; forwardPath: string; forwardSecret: string }> {
  const forwardSecret = input.forwardSecret ?? generateForwardSecret();
  const rates = Object.entries(input.settings.eurRates ?? {}).map(([currency, rate]) => `${currency}=${rate}`).join(',');
  const shop = await connectShop(db, platforms, key, {
    accountCode: input.accountCode, platform: 'medusa', code: input.shopCode, name: input.name, currency: input.currency.toUpperCase(),
    timeZone: input.timeZone, country: input.country.toUpperCase(), language: input.language, baseUrl: input.settings.url,
    credentials: {
      url: input.settings.url, apiKey: input.apiKey, salesChannelId: input.settings.salesChannelId,
      stockLocationIds: input.settings.stockLocationIds.join(','), ...(rates ? { eurRates: rates } : {}), forwardSecret,
    },
  });
  return { shopId: shop.id, forwardPath: forwardPath(input.accountCode, input.shopCode), forwardSecret };
}
