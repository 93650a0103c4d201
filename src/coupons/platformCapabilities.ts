/**
 * What each shop platform can do with coupons (SPEC `/coupons/capabilities`): discount types, restrictions, limits and
 * whether a coupon can be applied from a link. A fact about the platform's API, so it lives here once per platform;
 * the shop-specific part (is the web code that applies a coupon from a link installed?) comes from the shop's row.
 */
export interface CouponPlatformCapabilities {
  discountTypes: Array<'percent' | 'fixed' | 'free_shipping'>;
  percentRange: { min: number; max: number };
  fixedAmountCurrencies: 'shop_currency' | 'any';
  restrictions: { categories: boolean; products: boolean; minimumOrder: boolean; maxCategories: number; maxProducts: number };
  limits: { usageLimit: boolean; perCustomerLimit: boolean; validFrom: boolean; validUntil: boolean };
  codeRules: { minLength: number; maxLength: number; pattern: string; caseSensitive: boolean };
  couponFromLink: boolean;
  canDisable: boolean;
  canDelete: boolean;
}

const PLATFORMS: Record<string, CouponPlatformCapabilities> = {
  demo: {
    discountTypes: ['percent', 'fixed', 'free_shipping'],
    percentRange: { min: 1, max: 100 },
    fixedAmountCurrencies: 'shop_currency',
    restrictions: { categories: true, products: true, minimumOrder: true, maxCategories: 50, maxProducts: 500 },
    limits: { usageLimit: true, perCustomerLimit: true, validFrom: true, validUntil: true },
    codeRules: { minLength: 3, maxLength: 32, pattern: '^[A-Z0-9_-]+$', caseSensitive: false },
    couponFromLink: true,
    canDisable: true,
    canDelete: true,
  },
};

/** Capabilities of a platform; an unknown one can do nothing the service could rely on. */
export function couponCapabilitiesOf(platform: string): CouponPlatformCapabilities | null {
  return PLATFORMS[platform] ?? null;
}
