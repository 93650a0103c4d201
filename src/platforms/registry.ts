/** The shop platforms the service can connect to, by name; `demo` is the one that ships (D20). */
import type { Db } from '../db/knex.js';
import { DemoPlatform } from './demo/adapter.js';
import type { ShopPlatformAdapter } from './types.js';

export interface PlatformOptions {
  db: Db;
  /** Speed of the demo platform's clock (DEMO_CLOCK_SPEED). */
  demoClockSpeed?: number;
  /** The real clock; tests fix it. */
  wallClock?: () => Date;
}

export interface PlatformRegistry {
  /** The adapter of a platform, or null when the service has none for it. */
  get(platform: string): ShopPlatformAdapter | null;
}

export function createPlatformRegistry(options: PlatformOptions): PlatformRegistry {
  const adapters = new Map<string, ShopPlatformAdapter>([
    ['demo', new DemoPlatform({ db: options.db, clockSpeed: options.demoClockSpeed, wallClock: options.wallClock })],
  ]);
  return { get: (platform) => adapters.get(platform) ?? null };
}
