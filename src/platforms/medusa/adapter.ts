/**
 * The `medusa` shop platform: a Medusa v2 shop (one sales channel of a Medusa server) read and written through its
 * Admin API with the shop's secret key. Reads are incremental by `updated_at` where Medusa moves it (orders,
 * fulfilments, products, variants, categories) and full reconciliations where it does not: stock levels (the
 * inventory item refuses the filter and does not move), and captures (they do not move the order). docs/medusa.md.
 */
import { AppError } from '../../errors.js';
import type {
  AreaRecords, AvailabilityEntry, ChangeBatch, ChangeRequest, ConnectionCheck, ConnectionRequest, ContentTexts, CouponInput, PlatformCouponState, PlatformCredentials, PlatformShop,
  ShopPlatformAdapter, SyncArea,
} from '../types.js';
import { MedusaAdminClient } from './client.js';
import { MEDUSA_PLATFORM_CAPABILITIES } from './capabilities.js';
import { MEDUSA_CREDENTIAL_FIELDS, medusaSettings, verifyMedusaRequest, type MedusaShopSettings } from './connection.js';
import {
  MEDUSA_CAPABILITIES, METADATA_KEYS, ORDER_FIELDS, paidAt, productTexts, toCategory, toCoupon, toOrder, toProducts, toProductTexts,
  toShipments, toStockItem, type MedusaCategory, type MedusaInventoryItem, type MedusaOrder, type MedusaProduct, type MedusaPromotion,
  type MedusaVariant,
} from './records.js';

export interface MedusaPlatformOptions {
  /**
   * The shop's stored credentials when the caller did not fill `PlatformShop.credentials` (the sync fills them; this
   * serves the writes' callers). Decrypted on use, never cached across shops; null when the shop has none.
   */
  credentials?: (shop: PlatformShop) => Promise<PlatformCredentials | null>;
  /** The real clock; tests fix it. */
  wallClock?: () => Date;
}

const PRODUCT_FIELDS = '*variants,*variants.prices,*categories';
const PROMOTION_FIELDS = '*application_method,*campaign,*campaign.budget';

/** Records of one area in the order they are read; batching and resuming are the same for every area. */
type Read<A extends SyncArea> = AsyncIterable<AreaRecords[A]>;

export class MedusaPlatform implements ShopPlatformAdapter {
  readonly platform = 'medusa';
  readonly capabilities = MEDUSA_PLATFORM_CAPABILITIES;
  readonly credentialFields = MEDUSA_CREDENTIAL_FIELDS;
  private readonly wallClock: () => Date;

  constructor(private readonly options: MedusaPlatformOptions) {
    this.wallClock = options.wallClock ?? (() => new Date());
  }

  /** Medusa has no clock of its own to ask: its timestamps are UTC instants, as ours are. */
  now(_shop: PlatformShop): Date {
    return this.wallClock();
  }

  /** Checks the URL, key, sales channel and stock locations against the Medusa (verifyMedusaConnection); settings from them. */
  verifyConnection(request: ConnectionRequest): Promise<ConnectionCheck> {
    return verifyMedusaRequest(request);
  }

  private async client(shop: PlatformShop): Promise<{ client: MedusaAdminClient; settings: MedusaShopSettings }> {
    const settings = medusaSettings(shop);
    const credentials = shop.credentials ?? (await this.options.credentials?.(shop)) ?? null;
    if (!credentials?.apiKey) throw new Error(`Medusa shop ${shop.accountCode}/${shop.code} has no stored credentials`);
    return { client: new MedusaAdminClient({ url: settings.url, apiKey: credentials.apiKey }), settings };
  }

  async *readChanges<A extends SyncArea>(shop: PlatformShop, area: A, request: ChangeRequest): AsyncIterable<ChangeBatch<A>> {
    if (request.since && request.since.getTime() >= request.until.getTime()) return;
    const { client, settings } = await this.client(shop);
    const window = windowOf(request);
    let source: Read<SyncArea>;
    switch (area) {
      case 'products': source = this.products(client, settings, window); break;
      case 'orders': source = this.orders(client, settings, window); break;
      case 'shipments': source = this.shipments(client, settings, window); break;
      case 'stock': source = this.stock(client, settings); break;
      case 'catalogue': source = this.catalogue(client, settings, window); break;
      case 'coupons': source = this.coupons(client, settings); break;
      default: return;
    }
    // A position is the count of records applied; a resumed read skips them (the reads are ordered by updated_at, id).
    const skip = request.resume ? Number(request.resume.replace(/^n:/, '')) : 0;
    let seen = 0;
    let batch: Array<AreaRecords[A]> = [];
    for await (const record of source as Read<A>) {
      seen++;
      if (seen <= skip) continue;
      batch.push(record);
      if (batch.length >= request.limit) {
        yield { records: batch, position: `n:${seen}` };
        batch = [];
      }
    }
    if (batch.length) yield { records: batch, position: `n:${seen}` };
  }

  /** Orders of the shop's channel whose `updated_at` is in the window, plus those captured in it (a capture does not move the order). */
  private async *changedOrders(client: MedusaAdminClient, settings: MedusaShopSettings, window: Window): AsyncGenerator<MedusaOrder> {
    const base = { sales_channel_id: [settings.salesChannelId], order: 'updated_at', fields: ORDER_FIELDS };
    const seen = new Set<string>();
    for await (const page of client.list<MedusaOrder>('/admin/orders', 'orders', { ...base, ...window.filter('updated_at') })) {
      for (const o of page) {
        seen.add(o.id);
        yield o;
      }
    }
    // Reconciliation of payment state: every order's captures are read (ids and payments only), the ones captured in
    // the window are read again in full.
    const captured: string[] = [];
    for await (const page of client.list<MedusaOrder>('/admin/orders', 'orders', {
      sales_channel_id: [settings.salesChannelId], order: 'created_at', fields: 'id,payment_status,updated_at,*payment_collections,*payment_collections.payments',
    })) {
      for (const o of page) {
        const at = paidAt(o);
        if (!seen.has(o.id) && at && window.contains(at)) captured.push(o.id);
      }
    }
    for (let i = 0; i < captured.length; i += 50) {
      for await (const page of client.list<MedusaOrder>('/admin/orders', 'orders', { ...base, id: captured.slice(i, i + 50) })) yield* page;
    }
  }

  private async *orders(client: MedusaAdminClient, settings: MedusaShopSettings, window: Window): Read<'orders'> {
    for await (const o of this.changedOrders(client, settings, window)) yield toOrder(o, settings.eurRates);
  }

  /** Fulfilments move their order's `updated_at`, so the changed orders carry every changed shipment. */
  private async *shipments(client: MedusaAdminClient, settings: MedusaShopSettings, window: Window): Read<'shipments'> {
    for await (const o of client.list<MedusaOrder>('/admin/orders', 'orders', {
      sales_channel_id: [settings.salesChannelId], order: 'updated_at', fields: ORDER_FIELDS, ...window.filter('updated_at'),
    })) {
      for (const order of o) yield* toShipments(order);
    }
  }

  /** The products changed in the window: by their own `updated_at`, and by their variants' (a price change moves only the variant). */
  private async *changedProducts(client: MedusaAdminClient, settings: MedusaShopSettings, window: Window): AsyncGenerator<MedusaProduct> {
    const channel = { sales_channel_id: [settings.salesChannelId] };
    const seen = new Set<string>();
    for await (const page of client.list<MedusaProduct>('/admin/products', 'products', { ...channel, order: 'updated_at', fields: PRODUCT_FIELDS, ...window.filter('updated_at') })) {
      for (const p of page) {
        seen.add(p.id);
        yield p;
      }
    }
    const byVariant = new Set<string>();
    for await (const page of client.list<MedusaVariant>('/admin/product-variants', 'variants', { order: 'updated_at', fields: 'id,product_id,updated_at', ...window.filter('updated_at') })) {
      for (const v of page) if (!seen.has(v.product_id)) byVariant.add(v.product_id);
    }
    const ids = [...byVariant];
    for (let i = 0; i < ids.length; i += 50) {
      // The channel filter keeps variants of other shops' products (one Medusa, several channels) out.
      for await (const page of client.list<MedusaProduct>('/admin/products', 'products', { ...channel, id: ids.slice(i, i + 50), fields: PRODUCT_FIELDS })) yield* page;
    }
  }

  private async *products(client: MedusaAdminClient, settings: MedusaShopSettings, window: Window): Read<'products'> {
    for await (const page of client.list<MedusaCategory>('/admin/product-categories', 'product_categories', { order: 'updated_at', ...window.filter('updated_at') })) {
      for (const c of page) yield { kind: 'category', category: toCategory(c) };
    }
    for await (const p of this.changedProducts(client, settings, window)) {
      for (const product of toProducts(p, settings.currency)) yield { kind: 'product', product };
    }
  }

  /**
   * Stock in full every run: Medusa's inventory items refuse an `updated_at` filter and a stock change does not move
   * them. An item whose figures changed is announced (Medusa reports levels, not movements).
   */
  private async *stock(client: MedusaAdminClient, settings: MedusaShopSettings): Read<'stock'> {
    const locations = new Set(settings.stockLocationIds);
    for await (const page of client.list<MedusaInventoryItem>('/admin/inventory-items', 'inventory_items', {
      'location_levels[location_id]': settings.stockLocationIds, order: 'id', fields: 'id,sku,*location_levels',
    })) {
      for (const item of page) {
        const stock = toStockItem(item, locations);
        if (stock) yield { kind: 'item', item: stock, announce: 'adjustment' };
      }
    }
  }

  private async *catalogue(client: MedusaAdminClient, settings: MedusaShopSettings, window: Window): Read<'catalogue'> {
    yield { kind: 'capabilities', capabilities: MEDUSA_CAPABILITIES };
    for await (const page of client.list<MedusaProduct>('/admin/products', 'products', {
      sales_channel_id: [settings.salesChannelId], order: 'updated_at', fields: PRODUCT_FIELDS, ...window.filter('updated_at'),
    })) {
      for (const p of page) for (const product of toProductTexts(p, settings.currency)) yield { kind: 'product', product };
    }
  }

  /** Promotions with a code are the shop's coupons: the whole set every run, then the list of codes (a missing one was removed). */
  private async *coupons(client: MedusaAdminClient, settings: MedusaShopSettings): Read<'coupons'> {
    const codes: string[] = [];
    for (const p of await client.all<MedusaPromotion>('/admin/promotions', 'promotions', { order: 'created_at', fields: PROMOTION_FIELDS })) {
      if (p.is_automatic || !p.code) continue;
      codes.push(p.code);
      yield { kind: 'coupon', coupon: toCoupon(p, settings.currency) };
    }
    yield { kind: 'present', codes };
  }

  writeAvailabilities(_shop: PlatformShop, _entries: AvailabilityEntry[]): Promise<AvailabilityEntry[]> {
    return Promise.reject(new AppError('DICTIONARY_NOT_MANAGEABLE', 'Medusa has no availability dictionary the service could manage.', { reason: 'PLATFORMA' }));
  }

  /** Writes `description` to the product and the other texts to its metadata (Medusa merges metadata keys). */
  async writeProductTexts(shop: PlatformShop, productCode: string, texts: ContentTexts): Promise<ContentTexts> {
    const { client, settings } = await this.client(shop);
    const product = await this.productOfCode(client, settings, productCode);
    const body: { description?: string; metadata?: Record<string, string> } = {};
    if (texts.description !== undefined) body.description = texts.description;
    const metadata: Record<string, string> = {};
    for (const [field, key] of Object.entries(METADATA_KEYS) as Array<[keyof typeof METADATA_KEYS, string]>) {
      if (texts[field] !== undefined) metadata[key] = texts[field]!;
    }
    if (Object.keys(metadata).length) body.metadata = metadata;
    const { product: stored } = await client.post<{ product: MedusaProduct }>(`/admin/products/${product.id}?fields=id,description,metadata`, body);
    return productTexts(stored);
  }

  writeCategoryTexts(_shop: PlatformShop, _categoryGuid: string, _texts: ContentTexts): Promise<ContentTexts> {
    return Promise.reject(new AppError('FIELD_NOT_WRITABLE', 'Medusa categories take no texts from the service.', { field: 'description' }));
  }

  /** The product a variant code (SKU) belongs to, in the shop's channel. */
  private async productOfCode(client: MedusaAdminClient, settings: MedusaShopSettings, code: string): Promise<MedusaProduct> {
    const { variants } = await client.get<{ variants: MedusaVariant[] }>(`/admin/product-variants?q=${encodeURIComponent(code)}&fields=id,sku,product_id&limit=50`);
    const variant = variants.find((v) => v.sku === code || v.id === code);
    if (variant) {
      const { products } = await client.get<{ products: MedusaProduct[] }>(
        `/admin/products?id[]=${encodeURIComponent(variant.product_id)}&sales_channel_id[]=${encodeURIComponent(settings.salesChannelId)}&fields=id`,
      );
      if (products[0]) return products[0];
    }
    throw new AppError('PROPOSAL_TARGET_NOT_FOUND', `The shop has no product ${code}.`, { entity: 'product', id: code });
  }

  private async promotionOfCode(client: MedusaAdminClient, code: string): Promise<MedusaPromotion | null> {
    const { promotions } = await client.get<{ promotions: MedusaPromotion[] }>(`/admin/promotions?code=${encodeURIComponent(code)}&fields=${PROMOTION_FIELDS},+limit`);
    return promotions.find((p) => p.code === code) ?? null;
  }

  /**
   * A coupon is a promotion with a code the shopper enters: percentage or fixed off the order (free shipping: 100 %
   * off the shipping methods), its use limit, and a campaign for its validity. Medusa has no per-customer limit,
   * minimum order or note on a promotion: those are refused rather than dropped.
   */
  async saveCoupon(shop: PlatformShop, coupon: CouponInput): Promise<CouponInput> {
    const { client, settings } = await this.client(shop);
    for (const [param, value] of [['perCustomerLimit', coupon.perCustomerLimit], ['minOrderMinor', coupon.minOrderMinor]] as const) {
      if (value !== undefined && value !== null) throw new AppError('PLATFORM_UNAVAILABLE', `Medusa promotions have no ${param}.`, { reason: 'unsupported_by_platform', param });
    }
    if ((coupon.categoryGuids?.length ?? 0) > 0 || (coupon.productCodes?.length ?? 0) > 0) {
      throw new AppError('PLATFORM_UNAVAILABLE', 'Restricting a Medusa coupon to categories or products is not supported yet.', { reason: 'unsupported_by_platform', param: 'restrictions' });
    }
    const discount = coupon.discount ?? { type: 'percent', percent: coupon.discountPercent };
    const application_method = discount.type === 'free_shipping'
      ? { type: 'percentage', target_type: 'shipping_methods', value: 100, allocation: 'across' }
      : discount.type === 'fixed'
        ? { type: 'fixed', target_type: 'order', value: discount.amountMinor / 100, currency_code: settings.currency.toLowerCase(), allocation: 'across' }
        : { type: 'percentage', target_type: 'order', value: discount.percent, allocation: 'across' };
    const existing = await this.promotionOfCode(client, coupon.code);
    const status = coupon.enabled === false ? 'inactive' : 'active';
    const limit = coupon.usageLimit === undefined ? undefined : coupon.usageLimit;
    const campaign = {
      name: coupon.name ?? coupon.code,
      starts_at: coupon.validFrom === undefined ? undefined : coupon.validFrom?.toISOString() ?? null,
      ends_at: coupon.validUntil?.toISOString() ?? null,
    };
    if (existing) {
      await client.post(`/admin/promotions/${existing.id}`, { status, limit, application_method });
      if (existing.campaign) await client.post(`/admin/campaigns/${(existing.campaign as { id?: string }).id}`, campaign);
      else await client.post(`/admin/promotions/${existing.id}`, { campaign: { ...campaign, campaign_identifier: `store-ops-${coupon.code}` } });
    } else {
      await client.post('/admin/promotions', {
        code: coupon.code, type: 'standard', status, is_automatic: false, limit, application_method,
        campaign: { ...campaign, campaign_identifier: `store-ops-${coupon.code}` },
      });
    }
    return coupon;
  }

  async removeCoupon(shop: PlatformShop, code: string): Promise<boolean> {
    const { client } = await this.client(shop);
    const existing = await this.promotionOfCode(client, code);
    if (!existing) return false;
    await client.delete(`/admin/promotions/${existing.id}`);
    return true;
  }

  async readCoupon(shop: PlatformShop, code: string): Promise<PlatformCouponState | null> {
    const { client, settings } = await this.client(shop);
    const existing = await this.promotionOfCode(client, code);
    return existing && !existing.is_automatic ? { ...toCoupon(existing, settings.currency), note: null } : null;
  }
}

interface Window {
  /** The list filter of the window (since, until] on a timestamp field; a first read has no lower bound. */
  filter(field: string): Record<string, string>;
  contains(at: Date): boolean;
}

function windowOf(request: ChangeRequest): Window {
  const since = request.since?.getTime() ?? null;
  const until = request.until.getTime();
  return {
    filter: (field) => ({
      ...(request.since ? { [`${field}[$gt]`]: request.since.toISOString() } : {}),
      [`${field}[$lte]`]: request.until.toISOString(),
    }),
    contains: (at) => (since === null || at.getTime() > since) && at.getTime() <= until,
  };
}
