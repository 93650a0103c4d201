/**
 * Accepting the programme's documents on the portal (issue 24 point 2), as each document's policy says: enabled
 * documents that apply to the partner (all partners, or influencers), in the current published version of the
 * partner's language; `registration` ones before anything else on the portal, `first_payout` ones before the first
 * payout, `never` ones only to read. Each acceptance is an electronic-signature record exactly as
 * `/affiliate/signatures` reads it (A14): the text as signed, the snapshot of the values (no contact data), the
 * version's fingerprints, the method and how the signer was verified. A signature is written once (immutable).
 */
import type { Db } from '../../db/knex.js';
import { AppError } from '../../errors.js';
import { renderText } from '../content.js';
import { VARIABLES } from '../variables.js';
import { variableValues } from '../writes/emails.js';
import type { PortalPartner } from './accounts.js';
import type { Portal } from './portals.js';

/** How a portal signature is made and verified: a click on "I accept" by a partner whose address a link verified. */
export const PORTAL_SIGNATURE = { method: 'click_wrap', verification: 'email_link' } as const;

/** Values a signature keeps: the documents surface's variables without contact data (the handle stands for the partner). */
const SNAPSHOT_VARIABLES = VARIABLES.filter((v) => v.surfaces.includes('documents') && !['partner.name', 'partner.web'].includes(v.name)).map((v) => v.name);

export interface PartnerDocument {
  key: string;
  title: string;
  confirmWhen: string;
  versionId: string;
  version: number;
  language: string;
  /** The wording with this partner's values filled in (plain text, escaped by the view). */
  text: string;
  signedAt: string | null;
  /** A `registration` document not yet accepted: the portal shows nothing else until it is. */
  requiredNow: boolean;
}

async function signatureValues(db: Db, portal: Portal, partner: PortalPartner, now: Date): Promise<Record<string, string>> {
  const all = await variableValues(db, portal.accountId, { id: portal.shopId, name: portal.shopName }, {
    id: partner.id, handle: partner.handle, kind: partner.kind, language: partner.language, contact_name: null, email: null, web: null,
  }, now, {});
  return Object.fromEntries(SNAPSHOT_VARIABLES.map((name) => [name, all[name] ?? '']));
}

/** The documents this partner is shown, with whether each current version is signed and whether it is required now. */
export async function partnerDocuments(db: Db, portal: Portal, partner: PortalPartner, now: Date): Promise<PartnerDocument[]> {
  const rows = await db('affiliate_documents as d')
    .join('affiliate_document_versions as v', (j) => j.on('v.document_id', '=', 'd.id').andOnVal('v.status', '=', 'published').andOnVal('v.language', '=', partner.language))
    .where({ 'd.account_id': portal.accountId, 'd.enabled': true })
    .whereIn('d.applies_to', partner.kind === 'influencer' ? ['all_partners', 'influencers'] : ['all_partners'])
    .orderBy('d.key').select('d.key', 'd.title', 'd.confirm_when', 'v.id as version_id', 'v.version', 'v.language', 'v.public_text');
  const signed = await db('affiliate_signatures').where({ partner_id: partner.id }).whereIn('version_id', rows.map((r) => r.version_id)).select('version_id', 'signed_at');
  const values = await signatureValues(db, portal, partner, now);
  return rows.map((r) => {
    const signature = signed.find((s) => String(s.version_id) === String(r.version_id));
    return {
      key: r.key, title: r.title, confirmWhen: r.confirm_when, versionId: String(r.version_id), version: r.version, language: r.language,
      text: renderText(r.public_text, values), signedAt: signature ? signature.signed_at.toISOString() : null,
      requiredNow: r.confirm_when === 'registration' && !signature,
    };
  });
}

/** Records the partner's acceptance of the current version of a document; a second acceptance is refused. */
export async function acceptDocument(db: Db, portal: Portal, partner: PortalPartner, input: { key: string; versionId: string }, now: Date): Promise<{ signatureId: string }> {
  const documents = await partnerDocuments(db, portal, partner, now);
  const document = documents.find((d) => d.key === input.key);
  if (!document) throw new AppError('NOT_FOUND', `No document \`${input.key}\` for you to accept.`, { param: 'key' });
  if (document.confirmWhen === 'never') throw new AppError('STATE_CONFLICT', `\`${document.title}\` is for reading; it needs no acceptance.`, { confirmWhen: 'never' });
  if (document.versionId !== input.versionId) {
    throw new AppError('STATE_CONFLICT', `A newer version of \`${document.title}\` was published; read it and accept that one.`, { currentVersion: document.version });
  }
  if (document.signedAt) throw new AppError('STATE_CONFLICT', `You accepted version ${document.version} of \`${document.title}\` already.`, { signedAt: document.signedAt });
  const version = await db('affiliate_document_versions as v').join('affiliate_documents as d', 'd.id', 'v.document_id')
    .where({ 'v.id': input.versionId, 'd.account_id': portal.accountId }).first('v.id', 'v.document_id', 'v.version', 'v.language', 'v.stored_text', 'v.text_sha256', 'v.pdf_sha256');
  const values = await signatureValues(db, portal, partner, now);
  try {
    const [row] = await db('affiliate_signatures').insert({
      account_id: portal.accountId, partner_id: partner.id, document_id: version.document_id, version_id: version.id, version: version.version,
      language: version.language, shop_id: portal.shopId, signed_at: now, method: PORTAL_SIGNATURE.method, verification: PORTAL_SIGNATURE.verification,
      text_sha256: version.text_sha256, pdf_sha256: version.pdf_sha256, state: 'valid', signed_text: renderText(version.stored_text, values),
      values_snapshot: JSON.stringify(values),
    }).returning('id');
    return { signatureId: String(row.id) };
  } catch (error) {
    // Two acceptances racing (two tabs): the unique (partner, version) lets one in.
    if ((error as { code?: string }).code === '23505') throw new AppError('STATE_CONFLICT', `You accepted version ${document.version} of \`${document.title}\` already.`, {});
    throw error;
  }
}
