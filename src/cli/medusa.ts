/**
 * `medusa connect`: a thin wrapper over `shops connect --platform medusa` (docs/medusa.md "Connect a Medusa shop") that
 * takes the settings as flags, reads the key from the environment, and makes and shows the forwarder's secret.
 */
import { parseArgs } from 'node:util';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import { connectMedusaShop, parseEurRates } from '../platforms/medusa/connection.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import { print, UsageError } from './output.js';

export const medusaUsage = `  medusa connect CODE --url URL --sales-channel ID --stock-location ID[,ID] --currency CZK --country CZ --language cs
        --time-zone Europe/Prague [--name NAME] [--eur-rate CZK=0.04] [--account CODE]
        (the secret API key is read from MEDUSA_ADMIN_API_KEY, never from the command line)
`;

export async function medusaCommand(db: Db, platforms: PlatformRegistry, secretsKey: Buffer, publicBaseUrl: string | undefined, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== 'connect') throw new UsageError(medusaUsage);
  const { values, positionals } = parseArgs({
    args: rest, allowPositionals: true,
    options: {
      account: { type: 'string', default: 'demo' }, name: { type: 'string' }, url: { type: 'string' }, 'sales-channel': { type: 'string' },
      'stock-location': { type: 'string' }, currency: { type: 'string' }, country: { type: 'string' }, language: { type: 'string' },
      'time-zone': { type: 'string' }, 'eur-rate': { type: 'string', multiple: true }, json: { type: 'boolean', default: false },
    },
  });
  const code = positionals[0];
  const missing = ['url', 'sales-channel', 'stock-location', 'currency', 'country', 'language', 'time-zone'].filter((k) => !values[k as keyof typeof values]);
  if (!code || missing.length) throw new UsageError(`medusa connect CODE: missing ${[...(code ? [] : ['CODE']), ...missing.map((m) => `--${m}`)].join(', ')}\n${medusaUsage}`);
  const apiKey = process.env.MEDUSA_ADMIN_API_KEY;
  if (!apiKey) throw new UsageError('Set MEDUSA_ADMIN_API_KEY to the shop\'s secret API key (sk_…).');
  const eurRates: Record<string, number> = {};
  for (const pair of values['eur-rate'] ?? []) {
    const rate = parseEurRates(pair);
    if (!rate || !Object.keys(rate).length) throw new UsageError(`--eur-rate ${pair}: expected CUR=RATE, e.g. CZK=0.04`);
    Object.assign(eurRates, rate);
  }
  try {
    const result = await connectMedusaShop(db, platforms, secretsKey, {
      accountCode: values.account!, shopCode: code, name: values.name ?? code, currency: values.currency!, country: values.country!,
      language: values.language!, timeZone: values['time-zone']!, apiKey,
      settings: { url: values.url!, salesChannelId: values['sales-channel']!, stockLocationIds: values['stock-location']!.split(','), eurRates },
    });
    const forwardUrl = `${publicBaseUrl ?? 'https://<the service>'}${result.forwardPath}`;
    print(values.json!, { code, forwardUrl, forwardSecret: result.forwardSecret },
      `Shop ${code} connected; its sync Schedule starts within a minute.\nSet in the Medusa server's environment (shown once):\n  STORE_OPS_FORWARD_URL=${forwardUrl}\n  STORE_OPS_FORWARD_SECRET=${result.forwardSecret}`);
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(`${error.code}: ${error.message}`);
    throw error;
  }
}
