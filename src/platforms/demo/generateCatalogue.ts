/** Catalogue part of the demo generator: categories, ~300 products and the connected carriers of one shop. */
import { CARRIERS, CATEGORIES, categoryPageUrl, PRODUCT_BASES, PRODUCT_LINES, productPageUrl, shopCarrierCodes, type ShopDefinition } from './catalogue.js';
import { shelfPrice, withoutVat } from './money.js';
import { createRandom } from './random.js';
import { DAY_MS } from './time.js';
import type { GeneratedCatalogue, GeneratedCategory, GeneratedProduct, GenerateOptions } from './types.js';

const PRODUCTS_PER_SHOP = 300;
const YEAR_MS = 365 * DAY_MS;

/** What order generation needs to know about a product beyond its card: popularity and how its cost moved. */
export interface ProductModel {
  product: GeneratedProduct;
  createdAtMs: number;
  /** Purchase price without VAT at the window start, in minor units (float; rounded when used); null = unknown. */
  costBase: number | null;
  costAmplitude: number;
  costPhase: number;
  costTrendPerYear: number;
}

export interface CatalogueModel {
  catalogue: GeneratedCatalogue;
  products: ProductModel[];
  /** Cumulative popularity weights over `products`, for a binary-search weighted pick. */
  popularityCumulative: Float64Array;
  windowStartMs: number;
}

/** EAN-13 check digit of the first 12 digits (GS1: weights 1,3,1,3... from the left). */
export function ean13CheckDigit(first12: string): number {
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(first12[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10;
}

/** Purchase price without VAT of a product at an instant: a seasonal wiggle plus a yearly trend, as suppliers reprice. */
export function costAt(model: ProductModel, windowStartMs: number, atMs: number): number | null {
  if (model.costBase === null) return null;
  const years = (atMs - windowStartMs) / YEAR_MS;
  const factor = 1 + model.costAmplitude * Math.sin(model.costPhase + 2 * Math.PI * years) + model.costTrendPerYear * years;
  return Math.round(model.costBase * factor);
}

/** Builds the catalogue of one shop and the product models that order generation draws from. */
export function buildCatalogueModel(seed: number, shop: ShopDefinition, options: Pick<GenerateOptions, 'days' | 'endDate'>): CatalogueModel {
  const endMs = options.endDate.getTime();
  const windowStartMs = endMs - options.days * DAY_MS;
  const rng = createRandom(seed, 'catalogue', shop.code);
  // The shop existed about two years before the window; its first categories date from then.
  const openedMs = windowStartMs - 2 * YEAR_MS + rng.int(0, 60) * DAY_MS;

  const categories: GeneratedCategory[] = [];
  const guidByKey = new Map<string, string>();
  const positions = new Map<string | null, number>();
  for (const def of CATEGORIES) {
    const guid = rng.uuid();
    guidByKey.set(def.key, guid);
    const position = positions.get(def.parent) ?? 0;
    positions.set(def.parent, position + 1);
    const createdAt = openedMs + rng.int(0, 30) * DAY_MS + rng.int(0, DAY_MS - 1);
    const updatedAt = rng.chance(0.4) ? createdAt + rng.int(0, endMs - createdAt) : createdAt;
    categories.push({
      guid, name: def.names[shop.language], parentGuid: def.parent ? guidByKey.get(def.parent)! : null, position, url: categoryPageUrl(shop, guid),
      createdAt: new Date(createdAt), updatedAt: new Date(Math.min(updatedAt, endMs)),
    });
  }

  // Every (base, line, size) combination is a candidate; a seeded shuffle picks the shop's assortment.
  const candidates: Array<{ baseIndex: number; line: (typeof PRODUCT_LINES)[number] | null; sizeIndex: number }> = [];
  PRODUCT_BASES.forEach((base, baseIndex) => {
    const lines = base.plain ? [null] : PRODUCT_LINES;
    for (const line of lines) base.sizes.forEach((_, sizeIndex) => candidates.push({ baseIndex, line, sizeIndex }));
  });
  for (let i = candidates.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [candidates[i], candidates[j]] = [candidates[j], candidates[i]];
  }
  const chosen = candidates.slice(0, PRODUCTS_PER_SHOP);
  const company = rng.digits(4);
  const vatOf = (vatClass: number) => shop.vatRates[Math.min(vatClass, shop.vatRates.length - 1)];
  const basePriceEur = PRODUCT_BASES.map((b) => rng.float(b.priceEur[0], b.priceEur[1]));

  const products: ProductModel[] = chosen.map((c, i) => {
    const base = PRODUCT_BASES[c.baseIndex];
    const category = CATEGORIES.find((cat) => cat.key === base.category)!;
    const size = base.sizes[c.sizeIndex];
    const name = [base.names[shop.language], c.line?.name, size].filter(Boolean).join(' ');
    const eurPrice = basePriceEur[c.baseIndex] * (c.line?.priceFactor ?? 1) * (1 + 0.3 * c.sizeIndex) * rng.float(0.95, 1.05);
    const priceWithVatMinor = shelfPrice(shop.currency, eurPrice / shop.eurRate);
    const vatRate = vatOf(category.vatClass);
    const netMinor = withoutVat(priceWithVatMinor, vatRate);
    const costKnown = !rng.chance(0.05);
    const first12 = `${shop.eanPrefix}${company}${String(10000 + i).padStart(5, '0')}`;
    // Most of the assortment predates the window; some products are launched during it.
    const createdAtMs = rng.chance(0.82)
      ? windowStartMs - rng.int(1, 700) * DAY_MS + rng.int(0, DAY_MS - 1)
      : windowStartMs + Math.floor(rng.next() * 0.85 * (endMs - windowStartMs));
    const code = `${shop.code.toUpperCase()}-${10001 + i}`;
    const model: ProductModel = {
      product: {
        code,
        name,
        ean: `${first12}${ean13CheckDigit(first12)}`,
        plu: rng.chance(0.3) ? String(1000 + i) : null,
        categoryGuid: guidByKey.get(category.key)!,
        currency: shop.currency,
        priceWithVatMinor,
        vatRate,
        purchasePriceMinor: null,
        active: !rng.chance(0.05),
        url: productPageUrl(shop, code),
        createdAt: new Date(createdAtMs),
        updatedAt: new Date(createdAtMs),
      },
      createdAtMs,
      costBase: costKnown ? netMinor * rng.float(0.45, 0.7) : null,
      costAmplitude: rng.float(0.01, 0.04),
      costPhase: rng.float(0, 2 * Math.PI),
      costTrendPerYear: rng.float(-0.03, 0.08),
    };
    model.product.purchasePriceMinor = costAt(model, windowStartMs, endMs);
    const touchedMs = Math.max(createdAtMs, endMs - rng.int(0, 200) * DAY_MS - rng.int(0, DAY_MS));
    model.product.updatedAt = new Date(Math.min(touchedMs, endMs));
    return model;
  });

  // Zipf-like popularity over a random rank order: a few best-sellers, a long tail.
  const ranks = products.map((_, i) => i);
  for (let i = ranks.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [ranks[i], ranks[j]] = [ranks[j], ranks[i]];
  }
  const popularityCumulative = new Float64Array(products.length);
  let acc = 0;
  products.forEach((_, i) => {
    acc += 1 / Math.pow(ranks[i] + 4, 0.9);
    popularityCumulative[i] = acc;
  });

  const carriers = shopCarrierCodes(shop).map((code) => {
    const def = CARRIERS[code];
    return {
      code, name: def.name, profiles: def.profiles,
      credentialsEncrypted: rng.bytes(60),
      connectedAt: new Date(openedMs + rng.int(0, 400) * DAY_MS + rng.int(0, DAY_MS - 1)),
    };
  });

  return { catalogue: { categories, products: products.map((p) => p.product), carriers }, products, popularityCumulative, windowStartMs };
}

/** Generates the catalogue (categories, products, carriers) of one demo shop; pure and deterministic. */
export function generateCatalogue(seed: number, shop: ShopDefinition, options: Pick<GenerateOptions, 'days' | 'endDate'>): GeneratedCatalogue {
  return buildCatalogueModel(seed, shop, options).catalogue;
}
