/** What the demo platform declares through the port: every area, every write, all three document types, its coupon rules. */
import { SYNC_AREAS, type CredentialField, type PlatformCapabilities } from '../types.js';

export const DEMO_CAPABILITIES: PlatformCapabilities = {
  areas: SYNC_AREAS,
  writes: ['coupons', 'product_texts', 'category_texts', 'availability'],
  coupons: {
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
  documents: ['invoice', 'proforma', 'credit_note'],
};

/**
 * A demo shop "connects" with an API key like a real one would, so the connect flow is the same for every platform.
 * The demo accepts any key except one starting with `rejected` (how tests and the guide show a refusal).
 */
export const DEMO_CREDENTIAL_FIELDS: readonly CredentialField[] = [{ name: 'apiKey', label: 'API key', secret: true }];
export const DEMO_REJECTED_KEY_PREFIX = 'rejected';
