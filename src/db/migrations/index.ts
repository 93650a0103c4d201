/** The ordered list of schema migrations: the schema's only source. Append, never edit a released one. */
import * as m001 from './001_accounts_shops_keys.js';
import * as m002 from './002_catalogue_orders_shipping.js';
import * as m003 from './003_outbox.js';
import * as m004 from './004_live_sync.js';
import * as m005 from './005_webhooks.js';
import * as m006 from './006_order_coupons_write_mode.js';
import * as m007 from './007_documents_stock_content.js';
import * as m008 from './008_rollups_analytics.js';
import * as m009 from './009_claims_coupons.js';
import * as m010 from './010_affiliate_chatbot_suppliers.js';
import * as m011 from './011_people_oauth.js';
import * as m012 from './012_automations.js';
import * as m013 from './013_webhook_direct_delivery.js';
import * as m014 from './014_proposals.js';
import * as m015 from './015_coupon_confirmations.js';
import * as m016 from './016_email_outbox_affiliate_writes.js';
import * as m018 from './018_shipping_rollups.js';
import * as m019 from './019_webhook_due_retries.js';
import * as m020 from './020_shop_credentials.js';
import * as m030 from './030_sign_in_limits.js';
import * as m045 from './045_person_invitations.js';
import * as m050 from './050_affiliate_tracking_approvals.js';
import * as m070 from './070_medusa.js';
import * as m075 from './075_webhook_dispatcher_workers.js';
import * as m080 from './080_partner_portal.js';
import * as m083 from './083_shop_credentials_deleted.js';
import * as m084 from './084_catalogue_urls.js';
import * as m085 from './085_mcp_tasks.js';
import * as m095 from './095_text_edits_exports.js';
import * as m096 from './096_affiliate_document_uploads.js';
import * as m098 from './098_mcp_sessions.js';
import * as m099 from './099_webhook_retry_claims.js';
import * as m100 from './100_setup_tokens.js';

export const migrations = [
  { name: '001_accounts_shops_keys', ...m001 },
  { name: '002_catalogue_orders_shipping', ...m002 },
  { name: '003_outbox', ...m003 },
  { name: '004_live_sync', ...m004 },
  { name: '005_webhooks', ...m005 },
  { name: '006_order_coupons_write_mode', ...m006 },
  { name: '007_documents_stock_content', ...m007 },
  { name: '008_rollups_analytics', ...m008 },
  { name: '009_claims_coupons', ...m009 },
  { name: '010_affiliate_chatbot_suppliers', ...m010 },
  { name: '011_people_oauth', ...m011 },
  { name: '012_automations', ...m012 },
  { name: '013_webhook_direct_delivery', ...m013 },
  { name: '014_proposals', ...m014 },
  { name: '015_coupon_confirmations', ...m015 },
  { name: '016_email_outbox_affiliate_writes', ...m016 },
  { name: '018_shipping_rollups', ...m018 },
  { name: '019_webhook_due_retries', ...m019 },
  { name: '020_shop_credentials', ...m020 },
  { name: '030_sign_in_limits', ...m030 },
  { name: '045_person_invitations', ...m045 },
  { name: '050_affiliate_tracking_approvals', ...m050 },
  { name: '070_medusa', ...m070 },
  { name: '075_webhook_dispatcher_workers', ...m075 },
  { name: '080_partner_portal', ...m080 },
  { name: '083_shop_credentials_deleted', ...m083 },
  { name: '084_catalogue_urls', ...m084 },
  { name: '085_mcp_tasks', ...m085 },
  { name: '095_text_edits_exports', ...m095 },
  { name: '096_affiliate_document_uploads', ...m096 },
  { name: '098_mcp_sessions', ...m098 },
  { name: '099_webhook_retry_claims', ...m099 },
  { name: '100_setup_tokens', ...m100 },
];
