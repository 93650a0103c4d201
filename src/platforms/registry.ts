/**
 * The shop platforms the service can connect to, by name: `demo` (D20) and `medusa` (issue 28, docs/medusa.md), and
 * the one place outside src/platforms/<name>/ that knows the adapters: the composition root, the CLI and the worker
 * reach a platform's extras (the demo's data loading) through the re-exports below, so no other module imports an
 * adapter (eslint.config.js keeps it so).
 */
import type { Db } from '../db/knex.js';
import type { SecretKeys } from '../webhooks/secrets.js';
import { DemoPlatform } from './demo/adapter.js';
import { MedusaPlatform } from './medusa/adapter.js';
import { loadShopCredentials } from '../setup/credentials.js';
import type { ShopPlatformAdapter } from './types.js';

export {
  analyzeLoadedTables, DEMO_ACCOUNTS, demoAccountSpec, ensureDemoAccount, loadBenchAccount, loadDemoAccounts, loadShopData, type ShopDataCounts,
} from './demo/load.js';
export { databaseIsEmpty, runDemoDataWorkflow } from './demo/dataWorkflow.js';

export interface PlatformOptions {
  db: Db;
  /** Speed of the demo platform's clock (DEMO_CLOCK_SPEED). */
  demoClockSpeed?: number;
  /** The real clock; tests fix it. */
  wallClock?: () => Date;
  /** SECRETS_KEY (and the previous one during a rotation): platform credentials (shop_credentials) are encrypted with it. */
  secretKeys?: SecretKeys;
  /** Further adapters (tests register one that declares fewer writes); they replace a built-in one of the same name. */
  extra?: ShopPlatformAdapter[];
}

export interface PlatformRegistry {
  /** The adapter of a platform, or null when the service has none for it. */
  get(platform: string): ShopPlatformAdapter | null;
  /** Names of the platforms a shop can be connected to. */
  names(): string[];
}

export function createPlatformRegistry(options: PlatformOptions): PlatformRegistry {
  const adapters = new Map<string, ShopPlatformAdapter>([
    ['demo', new DemoPlatform({ db: options.db, clockSpeed: options.demoClockSpeed, wallClock: options.wallClock })],
    ['medusa', new MedusaPlatform({
      credentials: async (shop) => {
        if (!options.secretKeys) throw new Error('No SECRETS_KEY given to the platform registry: Medusa credentials cannot be read');
        return loadShopCredentials(options.db, options.secretKeys, shop.id);
      },
    })],
  ]);
  for (const adapter of options.extra ?? []) adapters.set(adapter.platform, adapter);
  return { get: (platform) => adapters.get(platform) ?? null, names: () => [...adapters.keys()] };
}
