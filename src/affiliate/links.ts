/**
 * Tracked affiliate links: the link points at the service's redirect on the shop's partner portal, which records the
 * click, sets the first-party cookie that carries the attribution for the campaign's window, and forwards to the
 * target. Computing a link stores nothing (the click is recorded when someone follows it).
 */
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';

export const LINK_TARGETS = ['home', 'product', 'category'] as const;
export type LinkTarget = (typeof LINK_TARGETS)[number];

export interface LinkRequest {
  partnerId: string;
  target: LinkTarget;
  productCode?: string;
  categoryGuid?: string;
  campaignId?: string;
}

/** Computes a partner's tracked link to the shop's home, a product or a category. */
export async function generateLink(db: Db, accountId: string, shopId: string, req: LinkRequest) {
  if (req.target === 'product' && req.productCode === undefined) throw new AppError('MISSING_PARAMETER', 'A link to a product needs `productCode`.', { param: 'productCode' });
  if (req.target === 'category' && req.categoryGuid === undefined) throw new AppError('MISSING_PARAMETER', 'A link to a category needs `categoryGuid`.', { param: 'categoryGuid' });
  const stray = req.target !== 'product' && req.productCode !== undefined ? 'productCode' : req.target !== 'category' && req.categoryGuid !== undefined ? 'categoryGuid' : null;
  if (stray) throw new AppError('INVALID_PARAMETER_COMBINATION', `\`${stray}\` does not go with \`target=${req.target}\`.`, { params: ['target', stray] });

  const partner = await db('affiliate_partners').where({ account_id: accountId, id: req.partnerId }).first('id', 'handle', 'state');
  if (!partner) throw new AppError('NOT_FOUND', `No partner \`${req.partnerId}\` in the programme.`, { param: 'partnerId' });
  if (partner.state !== 'approved') {
    throw new AppError('STATE_CONFLICT', `Partner \`${partner.handle}\` is ${partner.state}; only an approved partner's link records clicks.`, { state: partner.state });
  }
  const shop = await db('shops').where({ id: shopId }).first('base_url');
  const portal = await db('affiliate_portals').where({ shop_id: shopId }).first('address', 'custom_domain', 'custom_domain_status');
  if (!portal) throw new AppError('NOT_FOUND', 'This shop has no partner portal, so it has no tracked links.', { param: 'market' });

  const campaignQuery = db('affiliate_campaigns as c').where({ 'c.shop_id': shopId, 'c.enabled': true })
    .where((w) => w.where('c.availability', 'all').orWhereExists(db('affiliate_campaign_partners as cp').whereRaw('cp.campaign_id = c.id').where('cp.partner_id', partner.id)))
    .select('c.id', 'c.name', 'c.attribution_window_days');
  const campaign = req.campaignId !== undefined
    ? await campaignQuery.clone().where('c.id', req.campaignId).first()
    : await campaignQuery.clone().orderBy([{ column: 'c.is_default', order: 'desc' }, { column: 'c.id' }]).first();
  if (!campaign) {
    throw new AppError('NOT_FOUND', req.campaignId !== undefined
      ? `No enabled campaign \`${req.campaignId}\` available to partner \`${partner.handle}\` in this shop.`
      : `No enabled campaign is available to partner \`${partner.handle}\` in this shop.`, { param: 'campaignId' });
  }

  const base = String(shop.base_url).replace(/\/+$/, '');
  let targetUrl = `${base}/`;
  if (req.target === 'product') {
    const product = await db('products').where({ shop_id: shopId, code: req.productCode }).first('code', 'name');
    if (!product) throw new AppError('NOT_FOUND', `No product \`${req.productCode}\` in this shop.`, { param: 'productCode' });
    targetUrl = `${base}/product/${encodeURIComponent(product.code)}`;
  } else if (req.target === 'category') {
    const category = await db('categories').where({ shop_id: shopId, guid: req.categoryGuid }).first('guid');
    if (!category) throw new AppError('NOT_FOUND', `No category \`${req.categoryGuid}\` in this shop.`, { param: 'categoryGuid' });
    targetUrl = `${base}/category/${encodeURIComponent(category.guid)}`;
  }
  const host = portal.custom_domain && portal.custom_domain_status === 'active' ? `https://${portal.custom_domain}` : String(portal.address).replace(/\/+$/, '');
  const url = `${host}/r/${encodeURIComponent(partner.handle.toLowerCase())}?c=${campaign.id}&to=${encodeURIComponent(targetUrl)}`;
  return {
    url,
    partnerId: String(partner.id),
    partnerHandle: partner.handle,
    campaignId: String(campaign.id),
    campaignName: campaign.name,
    target: { type: req.target, url: targetUrl },
    attribution: {
      windowDays: campaign.attribution_window_days,
      how: 'The redirect records the click and sets a first-party cookie; an order placed within the window in this browser is attributed to the partner, wherever the shopper browses after the click.',
    },
  };
}
