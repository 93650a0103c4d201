/** The shop platforms the service can connect to, by name: `demo` (D20) and `medusa` (issue 28, docs/medusa.md). */
import type { Db } from '../db/knex.js';
import type { SecretKeys } from '../webhooks/secrets.js';
import { DemoPlatform } from './demo/adapter.js';
import { MedusaPlatform } from './medusa/adapter.js';
import { loadMedusaCredentials } from './medusa/connection.js';
import type { ShopPlatformAdapter } from './types.js';

export interface PlatformOptions {
  db: Db;
  /** Speed of the demo platform's clock (DEMO_CLOCK_SPEED). */
  demoClockSpeed?: number;
  /** The real clock; tests fix it. */
  wallClock?: () => Date;
  /** SECRETS_KEY (and the previous one during a rotation): platform credentials are stored encrypted with it. */
  secretKeys?: SecretKeys;
}

export interface PlatformRegistry {
  /** The adapter of a platform, or null when the service has none for it. */
  get(platform: string): ShopPlatformAdapter | null;
}

export function createPlatformRegistry(options: PlatformOptions): PlatformRegistry {
  const adapters = new Map<string, ShopPlatformAdapter>([
    ['demo', new DemoPlatform({ db: options.db, clockSpeed: options.demoClockSpeed, wallClock: options.wallClock })],
    ['medusa', new MedusaPlatform({
      credentials: async (shop) => {
        if (!options.secretKeys) throw new Error('No SECRETS_KEY given to the platform registry: Medusa credentials cannot be read');
        return loadMedusaCredentials(options.db, options.secretKeys, shop.id);
      },
    })],
  ]);
  return { get: (platform) => adapters.get(platform) ?? null };
}
