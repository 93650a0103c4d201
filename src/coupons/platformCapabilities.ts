/**
 * What each shop platform can do with coupons (SPEC `/coupons/capabilities`): discount types, restrictions, limits and
 * whether a coupon can be applied from a link. A fact about the platform's API, declared by its adapter (the port's
 * `capabilities.coupons`); the shop-specific part (is the web code installed?) comes from the shop's row.
 */
import { platformCapabilities } from '../platforms/capabilities.js';
import type { CouponPlatformCapabilities } from '../platforms/types.js';

export type { CouponPlatformCapabilities };

/** Coupon capabilities of a platform; null when it takes no coupon writes (or the service has no adapter for it). */
export function couponCapabilitiesOf(platform: string): CouponPlatformCapabilities | null {
  const capabilities = platformCapabilities(platform);
  return capabilities?.writes.includes('coupons') ? capabilities.coupons : null;
}
