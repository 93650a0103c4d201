/**
 * Proposals and text edits in the application (issue 13): who may decide (permission `proposals:approve`, D27), on
 * which shops, and the two actions — a decision sent to the proposal's workflow as an Update (its answer is what the
 * page shows), and a person's own edit of product or category texts written through the shop's adapter (source `ui`).
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';
import { AppError } from '../errors.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import { platformUnsupported } from '../platforms/unsupported.js';
import { prepareTextItems } from '../proposals/create.js';
import { recordContentWrite } from '../proposals/contentWrites.js';
import type { TextField } from '../proposals/model.js';
import { getDraft, listDrafts } from '../proposals/queries.js';
import { findShopByCode } from '../queries/shops.js';
import { getSyncShop } from '../sync/shops.js';
import type { TemporalAccess } from '../temporal/access.js';
import { decideProposal, startProposalWorkflow } from '../temporal/proposals.js';
import { hasPermission, type Person } from './model.js';

export function mayApproveProposals(person: Person): boolean {
  return hasPermission(person, 'proposals:approve');
}

export function pendingProposalsOf(db: Db, person: Person, page: { limit: number; offset: number } = { limit: 50, offset: 0 }) {
  return listDrafts(db, person.accountId, person.shopCodes, true, page.limit, page.offset);
}

export function decidedProposalsOf(db: Db, person: Person, page: { limit: number; offset: number } = { limit: 30, offset: 0 }) {
  return listDrafts(db, person.accountId, person.shopCodes, false, page.limit, page.offset);
}

function requireApprover(person: Person): void {
  if (!mayApproveProposals(person)) throw new AppError('INSUFFICIENT_SCOPE', 'You do not have the permission to approve proposals.', { permission: 'proposals:approve' });
}

/** Sends the person's decision to the proposal's workflow (starting it first if the reconcile path has not yet); returns the state it reached. */
export async function decideAsPerson(db: Db, temporal: TemporalAccess | undefined, person: Person, draftId: string, approve: boolean, reason: string): Promise<{ draftId: string; status: string }> {
  requireApprover(person);
  const draft = await getDraft(db, person.accountId, person.shopCodes, draftId);
  if (!temporal) throw new AppError('WRITES_UNAVAILABLE', 'This service instance cannot reach its workflows.');
  if (draft.decision || draft.finishedAt) throw new AppError('PROPOSAL_ALREADY_DECIDED', `The proposal is already ${draft.status}.`, { status: draft.status });
  const client = await temporal.client();
  const row = await db('proposals').where({ draft_id: draftId }).first('workflow_started_at');
  if (!row.workflow_started_at) await startProposalWorkflow(db, client, draftId, temporal.taskQueue);
  const result = await decideProposal(client, draftId, { approve, by: `person:${person.id}`, reason: reason.trim() || null });
  return { draftId, status: result.status };
}

/**
 * A person's edit of product or category texts: checked like a proposal (writable fields, limits, the fingerprint the
 * form was read with), written through the shop's adapter, stored as the shop kept it, with one content event when a
 * text really changed (`source: ui`; a product write gets a write-batch id, a category none — SPEC).
 */
export async function saveTextsAsPerson(
  db: Db, platforms: PlatformRegistry | undefined, person: Person, shopCode: string, entity: 'product' | 'category', id: string,
  fingerprint: string, fields: Partial<Record<TextField, string>>, now: Date,
): Promise<{ changedFields: string[]; eventId: string | null; warnings: string[] }> {
  requireApprover(person);
  if (person.shopCodes && !person.shopCodes.has(shopCode)) throw new AppError('SHOP_FORBIDDEN', `You may not see shop ${shopCode}.`, { market: shopCode });
  const shop = await findShopByCode(db, person.accountId, shopCode);
  if (!shop) throw new AppError('SHOP_NOT_FOUND', `No shop ${shopCode}.`, { market: shopCode });
  if (!platforms) throw new AppError('WRITES_UNAVAILABLE', 'This service instance has no shop platform adapters.');
  const items = await prepareTextItems(db, shop, entity, [{ id, fingerprint, fields }], { checkFingerprint: true });
  if (items.length === 0) return { changedFields: [], eventId: null, warnings: [] };
  const [item] = items;
  const syncShop = await getSyncShop(db, shop.id);
  const adapter = platforms.get(syncShop.platform);
  if (!adapter) throw new AppError('WRITES_UNAVAILABLE', `No adapter for platform ${syncShop.platform}.`);
  const write = entity === 'product' ? 'product_texts' : 'category_texts';
  if (!adapter.capabilities.writes.includes(write)) throw platformUnsupported(syncShop.platform, write, shopCode);
  const texts = item.changes as Record<TextField, string>;
  const kept = entity === 'product' ? await adapter.writeProductTexts(syncShop, id, texts) : await adapter.writeCategoryTexts(syncShop, id, texts);
  const after = Object.fromEntries(Object.keys(texts).map((f) => [f, kept[f as TextField] ?? null])) as Record<TextField, string | null>;
  const warnings = Object.keys(texts).filter((f) => after[f as TextField] !== texts[f as TextField]).map((f) => `The shop changed ${f} on saving (markup removed).`);
  const result = await db.transaction((trx) => recordContentWrite(trx, {
    accountId: person.accountId, shop: { id: shop.id, code: shop.code }, entity, entityId: id, before: item.before as Record<TextField, string | null>, after,
    source: 'ui', sourceRunId: entity === 'product' ? `wb_${crypto.randomBytes(8).toString('hex')}` : null, writtenBy: `person:${person.id}`, at: now,
  }));
  return { ...result, warnings };
}
