/** Static data of the demo platform (D20, D21): shops, carriers, order statuses, payment and shipping methods. */
export { CATEGORIES, PRODUCT_BASES, PRODUCT_LINES, type CategoryDefinition, type ProductBase, type VatClass } from './catalogueProducts.js';
export { PEOPLE, type CountryPeople } from './cataloguePeople.js';

export type Currency = 'EUR' | 'CZK' | 'HUF' | 'PLN';
export type CountryCode = 'SK' | 'CZ' | 'HU' | 'PL';
export type Language = 'sk' | 'cs' | 'hu' | 'pl';
export type PaymentKind = 'card' | 'transfer' | 'cod' | 'wallet';

export interface ShippingMethodDefinition {
  name: string;
  carrier: string;
  /** Price with VAT in the shop currency's minor units. */
  priceMinor: number;
  weight: number;
}

export interface PaymentMethodDefinition {
  name: string;
  kind: PaymentKind;
  weight: number;
}

export interface ShopDefinition {
  code: string;
  name: string;
  baseUrl: string;
  currency: Currency;
  country: CountryCode;
  language: Language;
  timeZone: string;
  /** Standard rate first, then the reduced ones (D21). */
  vatRates: number[];
  /** EUR per one unit of the shop currency (D23), around which the daily rate moves. */
  eurRate: number;
  /** GS1 prefix of the country, so EANs look local. */
  eanPrefix: string;
  /** Customers from these countries order too (cross-border minority). */
  neighbours: CountryCode[];
  freeShippingFromMinor: number;
  shippingMethods: ShippingMethodDefinition[];
  paymentMethods: PaymentMethodDefinition[];
  webCode: { installed: boolean; version: string | null; modules: string[]; couponLinkReady: boolean };
  /** Whether the shop keeps a stock balance (physical, reserved, available) or only a quantity on the product card (SPEC "Stock"). */
  stockKeeping: 'balance' | 'product_card';
}

/** The public address of a product's page in a demo shop (its catalogue `url` and its search-console rows alike). */
export const productPageUrl = (shop: Pick<ShopDefinition, 'baseUrl'>, code: string): string => `${shop.baseUrl}/p/${code.toLowerCase()}`;
/** The public address of a category's page in a demo shop. */
export const categoryPageUrl = (shop: Pick<ShopDefinition, 'baseUrl'>, guid: string): string => `${shop.baseUrl}/c/${guid}`;

export interface CarrierProfile {
  id: string;
  name: string;
  service: 'pickup_point' | 'home_delivery' | 'post_office' | 'parcel_locker';
}

export interface CarrierDefinition {
  code: string;
  name: string;
  profiles: CarrierProfile[];
  /** Median hours from hand-over to first delivery scan; differs per carrier so per-carrier stats differ. */
  deliveryMedianHours: number;
  /** Log-normal spread of delivery time. */
  deliverySigma: number;
  /** Lockers and pick-up points also scan on Sundays; couriers and posts do not. */
  deliversOnSunday: boolean;
  /** Share of settled shipments that come back or fail; posts lose a little more. */
  returnRate: number;
  failRate: number;
  tracking: { prefix: string; digits: number; suffix: string };
}

/** Currencies whose amounts the demo shops round to whole units (as real CZK and HUF shops do). */
export const WHOLE_UNIT_CURRENCIES: ReadonlySet<Currency> = new Set(['CZK', 'HUF']);

/** The demo numbers its statuses as the domain does (src/records). */
export { CLAIM_STATUSES, ORDER_STATUSES, SHIPMENT_STATUSES, type ShipmentStatus } from '../../records/statuses.js';

/** Every carrier the demo shops may connect. */
export const CARRIERS: Record<string, CarrierDefinition> = {
  packeta: {
    code: 'packeta', name: 'Packeta',
    profiles: [
      { id: 'packeta-zpoint', name: 'Z-Point / Z-BOX', service: 'pickup_point' },
      { id: 'packeta-home', name: 'Home Delivery', service: 'home_delivery' },
    ],
    deliveryMedianHours: 38, deliverySigma: 0.35, deliversOnSunday: true, returnRate: 0.035, failRate: 0.015,
    tracking: { prefix: 'Z', digits: 10, suffix: '' },
  },
  dpd: {
    code: 'dpd', name: 'DPD',
    profiles: [
      { id: 'dpd-classic', name: 'DPD Classic', service: 'home_delivery' },
      { id: 'dpd-pickup', name: 'DPD Pickup', service: 'pickup_point' },
    ],
    deliveryMedianHours: 26, deliverySigma: 0.3, deliversOnSunday: false, returnRate: 0.025, failRate: 0.02,
    tracking: { prefix: '', digits: 14, suffix: '' },
  },
  gls: {
    code: 'gls', name: 'GLS',
    profiles: [
      { id: 'gls-business-parcel', name: 'BusinessParcel', service: 'home_delivery' },
      { id: 'gls-parcelshop', name: 'ShopDeliveryService', service: 'pickup_point' },
    ],
    deliveryMedianHours: 30, deliverySigma: 0.32, deliversOnSunday: false, returnRate: 0.028, failRate: 0.02,
    tracking: { prefix: '', digits: 11, suffix: '' },
  },
  ppl: {
    code: 'ppl', name: 'PPL',
    profiles: [
      { id: 'ppl-parcel-private', name: 'PPL Parcel CZ Private', service: 'home_delivery' },
      { id: 'ppl-parcelshop', name: 'PPL Parcelshop', service: 'pickup_point' },
    ],
    deliveryMedianHours: 27, deliverySigma: 0.3, deliversOnSunday: false, returnRate: 0.027, failRate: 0.018,
    tracking: { prefix: '4', digits: 10, suffix: '' },
  },
  slovak_post: {
    code: 'slovak_post', name: 'Slovenská pošta',
    profiles: [
      { id: 'sp-balik-na-postu', name: 'Balík na poštu', service: 'post_office' },
      { id: 'sp-balik-na-adresu', name: 'Balík na adresu', service: 'home_delivery' },
    ],
    deliveryMedianHours: 52, deliverySigma: 0.45, deliversOnSunday: false, returnRate: 0.04, failRate: 0.025,
    tracking: { prefix: 'EB', digits: 9, suffix: 'SK' },
  },
  czech_post: {
    code: 'czech_post', name: 'Česká pošta',
    profiles: [
      { id: 'cp-balik-na-postu', name: 'Balík Na poštu', service: 'post_office' },
      { id: 'cp-balik-do-ruky', name: 'Balík Do ruky', service: 'home_delivery' },
    ],
    deliveryMedianHours: 44, deliverySigma: 0.4, deliversOnSunday: false, returnRate: 0.038, failRate: 0.022,
    tracking: { prefix: 'DR', digits: 9, suffix: 'CZ' },
  },
  inpost: {
    code: 'inpost', name: 'InPost',
    profiles: [
      { id: 'inpost-paczkomat', name: 'Paczkomat 24/7', service: 'parcel_locker' },
      { id: 'inpost-kurier', name: 'Kurier InPost', service: 'home_delivery' },
    ],
    deliveryMedianHours: 22, deliverySigma: 0.3, deliversOnSunday: true, returnRate: 0.022, failRate: 0.012,
    tracking: { prefix: '', digits: 24, suffix: '' },
  },
  magyar_posta: {
    code: 'magyar_posta', name: 'Magyar Posta',
    profiles: [
      { id: 'mp-postan-marado', name: 'Postán maradó csomag', service: 'post_office' },
      { id: 'mp-hazhoz', name: 'Házhoz szállítás', service: 'home_delivery' },
    ],
    deliveryMedianHours: 58, deliverySigma: 0.45, deliversOnSunday: false, returnRate: 0.042, failRate: 0.028,
    tracking: { prefix: 'RB', digits: 9, suffix: 'HU' },
  },
};

/** The four country shops of the demo account (D21); other accounts reuse them under other names. */
export const SHOPS: Record<string, ShopDefinition> = {
  sk: {
    code: 'sk', name: 'Domov a kuchyňa', baseUrl: 'https://www.domov-kuchyna.sk',
    currency: 'EUR', country: 'SK', language: 'sk', timeZone: 'Europe/Bratislava',
    vatRates: [23, 19, 5], eurRate: 1, eanPrefix: '858', neighbours: ['CZ', 'HU'],
    freeShippingFromMinor: 5900,
    shippingMethods: [
      { name: 'Packeta – výdajné miesto', carrier: 'packeta', priceMinor: 249, weight: 35 },
      { name: 'Packeta – doručenie domov', carrier: 'packeta', priceMinor: 399, weight: 10 },
      { name: 'DPD kuriér', carrier: 'dpd', priceMinor: 449, weight: 20 },
      { name: 'GLS kuriér', carrier: 'gls', priceMinor: 429, weight: 15 },
      { name: 'Slovenská pošta – balík na poštu', carrier: 'slovak_post', priceMinor: 349, weight: 20 },
    ],
    paymentMethods: [
      { name: 'Platba kartou', kind: 'card', weight: 35 },
      { name: 'Bankový prevod', kind: 'transfer', weight: 15 },
      { name: 'Dobierka', kind: 'cod', weight: 35 },
      { name: 'Google Pay / Apple Pay', kind: 'wallet', weight: 15 },
    ],
    webCode: { installed: true, version: '3.2.1', modules: ['analytics', 'chatbot', 'coupons'], couponLinkReady: true },
    stockKeeping: 'balance',
  },
  cz: {
    code: 'cz', name: 'Domov a kuchyně', baseUrl: 'https://www.domov-kuchyne.cz',
    currency: 'CZK', country: 'CZ', language: 'cs', timeZone: 'Europe/Prague',
    vatRates: [21, 12], eurRate: 0.0405, eanPrefix: '859', neighbours: ['SK', 'PL'],
    freeShippingFromMinor: 150000,
    shippingMethods: [
      { name: 'Zásilkovna – výdejní místo', carrier: 'packeta', priceMinor: 7900, weight: 40 },
      { name: 'Zásilkovna – doručení domů', carrier: 'packeta', priceMinor: 9900, weight: 10 },
      { name: 'PPL kurýr', carrier: 'ppl', priceMinor: 11900, weight: 20 },
      { name: 'DPD kurýr', carrier: 'dpd', priceMinor: 10900, weight: 15 },
      { name: 'Česká pošta – Balík Na poštu', carrier: 'czech_post', priceMinor: 9900, weight: 15 },
    ],
    paymentMethods: [
      { name: 'Platba kartou', kind: 'card', weight: 35 },
      { name: 'Bankovní převod', kind: 'transfer', weight: 20 },
      { name: 'Dobírka', kind: 'cod', weight: 35 },
      { name: 'Apple Pay / Google Pay', kind: 'wallet', weight: 10 },
    ],
    webCode: { installed: true, version: '3.2.1', modules: ['analytics', 'coupons'], couponLinkReady: true },
    stockKeeping: 'balance',
  },
  hu: {
    code: 'hu', name: 'Otthon és konyha', baseUrl: 'https://www.otthon-konyha.hu',
    currency: 'HUF', country: 'HU', language: 'hu', timeZone: 'Europe/Budapest',
    vatRates: [27, 18, 5], eurRate: 0.00252, eanPrefix: '599', neighbours: ['SK'],
    freeShippingFromMinor: 2000000,
    shippingMethods: [
      { name: 'Packeta csomagpont', carrier: 'packeta', priceMinor: 99000, weight: 30 },
      { name: 'GLS házhozszállítás', carrier: 'gls', priceMinor: 169000, weight: 30 },
      { name: 'DPD futárszolgálat', carrier: 'dpd', priceMinor: 159000, weight: 15 },
      { name: 'Magyar Posta – postán maradó', carrier: 'magyar_posta', priceMinor: 129000, weight: 25 },
    ],
    paymentMethods: [
      { name: 'Bankkártyás fizetés', kind: 'card', weight: 30 },
      { name: 'Banki átutalás', kind: 'transfer', weight: 10 },
      { name: 'Utánvét', kind: 'cod', weight: 50 },
      { name: 'SimplePay', kind: 'wallet', weight: 10 },
    ],
    webCode: { installed: true, version: '3.1.0', modules: ['analytics'], couponLinkReady: false },
    stockKeeping: 'product_card',
  },
  pl: {
    code: 'pl', name: 'Dom i kuchnia', baseUrl: 'https://www.dom-kuchnia.pl',
    currency: 'PLN', country: 'PL', language: 'pl', timeZone: 'Europe/Warsaw',
    vatRates: [23, 8, 5], eurRate: 0.232, eanPrefix: '590', neighbours: ['CZ', 'SK'],
    freeShippingFromMinor: 24900,
    shippingMethods: [
      { name: 'Paczkomat InPost', carrier: 'inpost', priceMinor: 1299, weight: 55 },
      { name: 'Kurier InPost', carrier: 'inpost', priceMinor: 1599, weight: 10 },
      { name: 'Kurier DPD', carrier: 'dpd', priceMinor: 1699, weight: 15 },
      { name: 'Kurier GLS', carrier: 'gls', priceMinor: 1549, weight: 10 },
      { name: 'Packeta – punkt odbioru', carrier: 'packeta', priceMinor: 1099, weight: 10 },
    ],
    paymentMethods: [
      { name: 'BLIK', kind: 'wallet', weight: 40 },
      { name: 'Przelew online', kind: 'transfer', weight: 20 },
      { name: 'Karta płatnicza', kind: 'card', weight: 25 },
      { name: 'Za pobraniem', kind: 'cod', weight: 15 },
    ],
    webCode: { installed: false, version: null, modules: [], couponLinkReady: false },
    stockKeeping: 'product_card',
  },
};

/** Returns the definition of a demo shop code; the code decides country, currency and carriers. */
export function shopDefinition(code: string): ShopDefinition {
  const shop = SHOPS[code];
  if (!shop) throw new Error(`Unknown demo shop code: ${code}`);
  return shop;
}

/** The distinct carrier codes a shop ships with, in the order of its shipping methods. */
export function shopCarrierCodes(shop: ShopDefinition): string[] {
  return [...new Set(shop.shippingMethods.map((m) => m.carrier))];
}
