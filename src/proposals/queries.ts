/** Reading proposals: one draft with its preview and per-item results (drafts paths, tools), and lists for the Approvals page. */
import type { Db } from '../db/knex.js';
import { fieldHash } from '../content/hash.js';
import { AppError } from '../errors.js';
import type { Value } from './create.js';
import type { ItemResult } from './write.js';
import { DRAFT_ID_PATTERN, orderedFields, type ProposalKind } from './model.js';

export interface PreviewField {
  field: string;
  before: Value;
  after: Value;
  beforeHash: string | null;
  afterHash: string | null;
}

export interface DraftView {
  draftId: string;
  kind: ProposalKind;
  market: string;
  status: string;
  writeMode: 'proposals' | 'autonomous';
  note: string | null;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  decision: { decision: 'approve' | 'reject'; by: string; reason: string | null; at: string } | null;
  finishedAt: string | null;
  items: Array<{
    entity: 'product' | 'category' | 'availability' | 'claims_settings';
    id: string;
    name: string | null;
    preview: PreviewField[];
    status: 'pending' | 'written' | 'unchanged' | 'failed';
    result: ItemResult | null;
  }>;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const isText = (entity: string) => entity === 'product' || entity === 'category';

async function view(db: Db, row: Record<string, any>): Promise<DraftView> {
  const items = await db('proposal_items').where({ proposal_id: row.id }).orderBy('position');
  return {
    draftId: row.draft_id, kind: row.kind, market: row.shop_code, status: row.status, writeMode: row.write_mode, note: row.note, createdBy: row.created_by,
    createdAt: iso(row.created_at)!, expiresAt: iso(row.expires_at)!, finishedAt: iso(row.finished_at),
    decision: row.decision ? { decision: row.decision, by: row.decided_by, reason: row.decision_reason, at: iso(row.decided_at)! } : null,
    items: items.map((i) => ({
      entity: i.entity, id: i.entity_id, name: i.entity_name, status: i.status, result: i.result ?? null,
      preview: orderedFields(Object.keys(i.changes)).map((field) => ({
        field, before: i.before[field] ?? null, after: i.changes[field],
        beforeHash: isText(i.entity) ? fieldHash(i.before[field] as string | null) : null, afterHash: isText(i.entity) ? fieldHash(i.changes[field] as string | null) : null,
      })),
    })),
  };
}

const base = (db: Db) => db('proposals as p').join('shops as s', 's.id', 'p.shop_id').select('p.*', 's.code as shop_code');

/** One draft of this kind that the caller may see; another account's, another kind's or a hidden shop's is not found. */
export async function getDraft(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null, draftId: string, kind?: ProposalKind): Promise<DraftView> {
  const notFound = () => new AppError('NOT_FOUND', `No proposal ${draftId}.`, { param: 'draftId' });
  if (!DRAFT_ID_PATTERN.test(draftId)) throw notFound();
  const q = base(db).where({ 'p.draft_id': draftId, 'p.account_id': accountId });
  if (kind) q.where('p.kind', kind);
  const row = await q.first();
  if (!row || (shopCodes && !shopCodes.has(row.shop_code))) throw notFound();
  return view(db, row);
}

/** Proposals of the account on the given shops: open ones (oldest first) or decided ones (newest first). */
export async function listDrafts(db: Db, accountId: string, shopCodes: ReadonlySet<string> | null, open: boolean, limit = 50, offset = 0): Promise<DraftView[]> {
  const q = base(db).where('p.account_id', accountId).limit(limit).offset(offset);
  if (shopCodes) q.whereIn('s.code', [...shopCodes]);
  if (open) q.whereNull('p.finished_at').whereNull('p.decision').orderBy('p.id', 'asc');
  else q.where((w) => w.whereNotNull('p.finished_at').orWhereNotNull('p.decision')).orderBy('p.id', 'desc');
  const rows = await q;
  return Promise.all(rows.map((r) => view(db, r)));
}
