/** Sample proposals (issue 13) for the contract tests: one of each kind on shop `sk`, stored without a workflow. */
import type { Db } from '../../src/db/knex.js';
import { createAvailabilityProposal, createClaimsProposal, createTextProposal, type ProposalAuthor } from '../../src/proposals/create.js';
import { getCategoryContent, getProductContent } from '../../src/queries/content.js';

/** The draft ids, keyed `<capability>:draftId` for sampleArgs; created once per database. */
export async function ensureSampleProposals(db: Db): Promise<Record<string, string>> {
  const shop = await db('shops as s').join('accounts as a', 'a.id', 's.account_id').where({ 'a.code': 'demo', 's.code': 'sk' })
    .first('s.id', 's.code', 's.name', 's.currency', 's.time_zone', 'a.id as account_id');
  const existing = await db('proposals').where({ shop_id: shop.id, created_by: 'sample' }).select('kind', 'draft_id');
  const byKind = new Map(existing.map((r) => [r.kind as string, r.draft_id as string]));
  if (byKind.size < 4) {
    const author: ProposalAuthor = {
      accountId: String(shop.account_id), shop: { id: String(shop.id), code: shop.code, name: shop.name, currency: shop.currency, timeZone: shop.time_zone },
      writeMode: 'proposals', createdBy: 'sample',
    };
    const product = await db('products').where({ shop_id: shop.id }).orderBy('id').first('code');
    const category = await db('categories').where({ shop_id: shop.id }).orderBy('id').first('guid');
    const entry = await db('availabilities').where({ shop_id: shop.id }).orderBy('position').first('availability_id', 'name');
    const now = new Date();
    const p = (await getProductContent(db, author.shop.id, product.code))!;
    const c = (await getCategoryContent(db, author.shop.id, category.guid))!;
    byKind.set('product_texts', await createTextProposal(db, author, 'product', [{ id: product.code, fingerprint: p.fingerprint, fields: { metaTitle: 'Sample proposed title' } }], 'sample', now));
    byKind.set('category_texts', await createTextProposal(db, author, 'category', [{ id: category.guid, fingerprint: c.fingerprint, fields: { metaTitle: 'Sample proposed category title' } }], 'sample', now));
    byKind.set('availabilities', await createAvailabilityProposal(db, author, [{ id: entry.availability_id, name: `${entry.name} (sample)` }], 'sample', now));
    byKind.set('claims_settings', await createClaimsProposal(db, author, { 'configuration.form.allowsPhotos': false }, 'sample', now));
    // Samples never get a workflow: the reconcile path must not pick them up in other tests.
    await db('proposals').where({ created_by: 'sample' }).update({ workflow_started_at: db.fn.now() });
  }
  return {
    'availabilities.draft:draftId': byKind.get('availabilities')!,
    'products.content_draft:draftId': byKind.get('product_texts')!,
    'categories.content_draft:draftId': byKind.get('category_texts')!,
    'claims.config_draft:draftId': byKind.get('claims_settings')!,
  };
}
