/**
 * What each platform the service knows can do, by name: the adapters' own declarations, readable without an adapter
 * instance (reads such as `/coupons/capabilities` run where no adapter is wired). One source: each adapter's constant.
 */
import { DEMO_CAPABILITIES } from './demo/capabilities.js';
import { MEDUSA_PLATFORM_CAPABILITIES } from './medusa/capabilities.js';
import type { PlatformCapabilities, PlatformWrite } from './types.js';

const DECLARED: ReadonlyMap<string, PlatformCapabilities> = new Map([['demo', DEMO_CAPABILITIES], ['medusa', MEDUSA_PLATFORM_CAPABILITIES]]);

/** The platform's declared capabilities, or null for a platform the service has no adapter for. */
export function platformCapabilities(platform: string): PlatformCapabilities | null {
  return DECLARED.get(platform) ?? null;
}

/** Whether the platform takes this write. */
export function platformTakes(platform: string, write: PlatformWrite): boolean {
  return platformCapabilities(platform)?.writes.includes(write) ?? false;
}
