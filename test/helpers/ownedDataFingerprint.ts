/**
 * A fingerprint per table of the service-owned demo data (affiliate programme, chatbot, suppliers) over natural keys
 * only (no generated ids), so two loads of the same seed and clock can be compared whatever order they ran in.
 */
import type { Db } from '../../src/db/knex.js';

const QUERIES: Record<string, string> = {
  partners: `select concat_ws(',', a.code, p.handle, p.state, p.registered_at, p.contact_name, p.email, p.bank_iban, r.handle) as x
    from affiliate_partners p join accounts a on a.id = p.account_id left join affiliate_partners r on r.id = p.referred_by_partner_id`,
  campaigns: `select concat_ws(',', s.code, a.code, c.name, c.reward_percent, c.reward_amount, c.attribution_window_days, c.enabled,
      (select string_agg(p.handle, ' ' order by p.handle) from affiliate_campaign_partners cp join affiliate_partners p on p.id = cp.partner_id where cp.campaign_id = c.id)) as x
    from affiliate_campaigns c join shops s on s.id = c.shop_id join accounts a on a.id = s.account_id`,
  clicks: `select concat_ws(',', s.code, a.code, p.handle, c.name, k.visitor_id, k.clicked_at, k.target_type) as x
    from affiliate_clicks k join shops s on s.id = k.shop_id join accounts a on a.id = s.account_id
    join affiliate_partners p on p.id = k.partner_id join affiliate_campaigns c on c.id = k.campaign_id`,
  conversions: `select concat_ws(',', s.code, a.code, v.order_code, p.handle, c.name, v.source, v.commission_base, v.commission, v.commission_state,
      v.state_reason, v.approved_at, y.created_at) as x
    from affiliate_conversions v join shops s on s.id = v.shop_id join accounts a on a.id = s.account_id
    join affiliate_partners p on p.id = v.partner_id join affiliate_campaigns c on c.id = v.campaign_id left join affiliate_payouts y on y.id = v.payout_id`,
  payouts: `select concat_ws(',', s.code, a.code, p.handle, y.amount, y.conversions, y.state, y.created_at, y.paid_at) as x
    from affiliate_payouts y join shops s on s.id = y.shop_id join accounts a on a.id = s.account_id join affiliate_partners p on p.id = y.partner_id`,
  signatures: `select concat_ws(',', a.code, p.handle, d.key, g.version, g.language, g.signed_at, g.method, g.verification, g.text_sha256, g.signed_text) as x
    from affiliate_signatures g join accounts a on a.id = g.account_id join affiliate_partners p on p.id = g.partner_id join affiliate_documents d on d.id = g.document_id`,
  chatbot: `select concat_ws(',', s.code, a.code, c.session_id, c.started_at, c.topic, c.outcome, c.rating, c.first_question,
      (select string_agg(m.text, ' ' order by m.position) from chatbot_messages m where m.conversation_id = c.id)) as x
    from chatbot_conversations c join shops s on s.id = c.shop_id join accounts a on a.id = s.account_id`,
  offers: `select concat_ws(',', s.code, a.code, u.code, o.product_code, o.supplier_code, o.price, o.min_quantity, o.lead_time_days) as x
    from supplier_offers o join suppliers u on u.id = o.supplier_id join shops s on s.id = o.shop_id join accounts a on a.id = s.account_id`,
};

/** Rows and an md5 of the sorted rows, per table. */
export async function ownedDataFingerprint(db: Db): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, sql] of Object.entries(QUERIES)) {
    const r = await db.raw(`select count(*)::int as n, md5(coalesce(string_agg(x, '|' order by x), '')) as h from (${sql}) t`);
    out[name] = `${r.rows[0].n}:${r.rows[0].h}`;
  }
  return out;
}
