/** What the Medusa platform declares through the port (docs/medusa.md): its areas, writes and coupon rules; no documents. */
import type { PlatformCapabilities } from '../types.js';

export const MEDUSA_PLATFORM_CAPABILITIES: PlatformCapabilities = {
  // Medusa issues no accounting documents and keeps no claims, search console, costs or analytics: those areas are absent.
  areas: ['products', 'orders', 'shipments', 'stock', 'catalogue', 'coupons'],
  // Product texts go to the product's description and metadata; categories take none; there is no availability dictionary.
  writes: ['coupons', 'product_texts'],
  coupons: {
    discountTypes: ['percent', 'fixed', 'free_shipping'],
    percentRange: { min: 1, max: 100 },
    fixedAmountCurrencies: 'shop_currency',
    // A promotion has no minimum order or per-customer limit, and the adapter writes no rules restricting it (yet).
    restrictions: { categories: false, products: false, minimumOrder: false, maxCategories: 0, maxProducts: 0 },
    limits: { usageLimit: true, perCustomerLimit: false, validFrom: true, validUntil: true },
    codeRules: { minLength: 3, maxLength: 32, pattern: '^[A-Z0-9_-]+$', caseSensitive: false },
    couponFromLink: false,
    canDisable: true,
    canDelete: true,
  },
  documents: [],
};
