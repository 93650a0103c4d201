/**
 * Partner decisions over MCP: a partner account's state (approve, reject, suspend, return to waiting) and partners'
 * requests for a custom discount code. Each decision and its e-mail are one transaction (the e-mail goes through the
 * outbox, D30); the row is locked so two concurrent decisions cannot both pass the state check.
 */
import type { Db } from '../../db/knex.js';
import type { ShopRef } from '../../capabilities/context.js';
import { AppError } from '../../errors.js';
import { queuePartnerEmail, type EmailSummary, type PartnerForEmail } from './emails.js';

export const PARTNER_ACTIONS = ['approve', 'reject', 'suspend', 'return_to_waiting'] as const;
export type PartnerAction = (typeof PARTNER_ACTIONS)[number];

/** Which states each action leaves from, and where it goes (decided in docs/decisions.md AW2). */
export type PartnerState = 'waiting' | 'approved' | 'rejected' | 'suspended';
export const PARTNER_TRANSITIONS: Record<PartnerAction, { from: readonly PartnerState[]; to: PartnerState; reasonRequired: boolean }> = {
  approve: { from: ['waiting', 'suspended'], to: 'approved', reasonRequired: false },
  reject: { from: ['waiting'], to: 'rejected', reasonRequired: true },
  suspend: { from: ['approved'], to: 'suspended', reasonRequired: true },
  return_to_waiting: { from: ['rejected', 'suspended'], to: 'waiting', reasonRequired: false },
};

const partnerColumns = ['id', 'handle', 'state', 'state_reason', 'kind', 'language', 'contact_name', 'email', 'web'];

export interface WriteScope {
  accountId: string;
  shop: ShopRef;
  now: Date;
}

export interface PartnerStateResult {
  partnerId: string;
  handle: string;
  previousState: string;
  state: PartnerState;
  stateReason: string | null;
  stateChangedAt: string;
  email: EmailSummary | null;
}

/** Moves a partner along one allowed transition; approval and rejection e-mail the partner. */
export async function setPartnerState(db: Db, scope: WriteScope, input: { partnerId: string; action: PartnerAction; reason?: string }): Promise<PartnerStateResult> {
  const rule = PARTNER_TRANSITIONS[input.action];
  const reason = input.reason?.trim() || null;
  if (rule.reasonRequired && !reason) {
    throw new AppError('MISSING_PARAMETER', `\`${input.action}\` needs a \`reason\` (it is kept with the partner's state).`, { param: 'reason' });
  }
  return db.transaction(async (trx) => {
    const partner = await trx('affiliate_partners').where({ account_id: scope.accountId, id: input.partnerId }).forUpdate().first(partnerColumns);
    if (!partner) throw new AppError('NOT_FOUND', `No partner \`${input.partnerId}\` in the programme.`, { param: 'partnerId' });
    if (!rule.from.includes(partner.state)) {
      throw new AppError('STATE_CONFLICT', `Partner \`${partner.handle}\` is ${partner.state}; \`${input.action}\` is possible only from ${rule.from.join(' or ')}.`,
        { state: partner.state, action: input.action, allowedFrom: rule.from });
    }
    await trx('affiliate_partners').where({ id: partner.id }).update({ state: rule.to, state_reason: rule.reasonRequired ? reason : null, state_changed_at: scope.now });
    const p: PartnerForEmail = { id: String(partner.id), handle: partner.handle, kind: partner.kind, language: partner.language, contact_name: partner.contact_name, email: partner.email, web: partner.web };
    const event = input.action === 'approve' ? 'account_approved' : input.action === 'reject' ? 'account_rejected' : null;
    const email = event ? await queuePartnerEmail(trx, {
      accountId: scope.accountId, shop: scope.shop, partner: p, event, now: scope.now,
      appendix: event === 'account_rejected' && reason ? `${p.language === 'sk' ? 'Dôvod' : 'Reason'}: ${reason}` : undefined,
    }) : null;
    return {
      partnerId: String(partner.id), handle: partner.handle, previousState: partner.state, state: rule.to,
      stateReason: rule.reasonRequired ? reason : null, stateChangedAt: scope.now.toISOString(), email,
    };
  });
}

export interface CodeRequestDecision {
  requestId: string;
  partnerId: string;
  partnerHandle: string;
  requestedCode: string;
  state: 'approved' | 'rejected';
  reason: string | null;
  decidedAt: string;
  reservation: { code: string; reservedAt: string } | null;
  email: EmailSummary;
}

/** Who, other than `partnerId`, already holds `code` in the shop (reserved, a partner code, an approved request, a coupon). */
export async function codeHolder(trx: Db, shopId: string, code: string, partnerId: string): Promise<string | null> {
  const upper = code.toUpperCase();
  const reserved = await trx('affiliate_code_reservations as r').join('affiliate_partners as p', 'p.id', 'r.partner_id')
    .where('r.shop_id', shopId).whereRaw('upper(r.code) = ?', [upper]).whereNot('r.partner_id', partnerId).first('p.handle');
  if (reserved) return `reserved for partner \`${reserved.handle}\``;
  const partnerCode = await trx('affiliate_discount_codes as d').join('affiliate_partners as p', 'p.id', 'd.partner_id')
    .where('d.shop_id', shopId).whereRaw('upper(d.code) = ?', [upper]).whereNot('d.partner_id', partnerId).first('p.handle');
  if (partnerCode) return `the discount code of partner \`${partnerCode.handle}\``;
  const approved = await trx('affiliate_code_requests as q').join('affiliate_partners as p', 'p.id', 'q.partner_id')
    .where({ 'q.shop_id': shopId, 'q.state': 'approved' }).whereRaw('upper(q.requested_code) = ?', [upper]).whereNot('q.partner_id', partnerId).first('p.handle');
  if (approved) return `approved earlier for partner \`${approved.handle}\``;
  const ownCode = await trx('affiliate_discount_codes').where({ shop_id: shopId, partner_id: partnerId }).whereRaw('upper(code) = ?', [upper]).first('id');
  const coupon = ownCode ? null : await trx('coupons').where({ shop_id: shopId }).whereRaw('upper(code) = ?', [upper]).first('code');
  if (coupon) return 'an existing coupon of the shop';
  return null;
}

/** Approves (reserving the code for the partner) or rejects (with a reason) a pending code request, and e-mails the partner. */
export async function decideCodeRequest(db: Db, scope: WriteScope, input: { requestId: string; decision: 'approve' | 'reject'; reason?: string }): Promise<CodeRequestDecision> {
  const reason = input.reason?.trim() || null;
  if (input.decision === 'reject' && !reason) {
    throw new AppError('MISSING_PARAMETER', 'A rejection needs a `reason`; the partner is told it.', { param: 'reason' });
  }
  try {
    return await db.transaction(async (trx) => {
      const request = await trx('affiliate_code_requests').where({ shop_id: scope.shop.id, id: input.requestId }).forUpdate()
        .first('id', 'partner_id', 'requested_code', 'state');
      if (!request) throw new AppError('NOT_FOUND', `No code request \`${input.requestId}\` in this shop.`, { param: 'requestId' });
      if (request.state !== 'pending') {
        throw new AppError('STATE_CONFLICT', `Code request \`${input.requestId}\` was already ${request.state}; only a pending request is decided.`, { state: request.state });
      }
      const partner = await trx('affiliate_partners').where({ id: request.partner_id }).first(partnerColumns);
      let reservation: CodeRequestDecision['reservation'] = null;
      if (input.decision === 'approve') {
        if (partner.state !== 'approved') {
          throw new AppError('STATE_CONFLICT', `Partner \`${partner.handle}\` is ${partner.state}; a code is approved only for an approved partner.`, { state: partner.state });
        }
        const holder = await codeHolder(trx, scope.shop.id, request.requested_code, String(partner.id));
        if (holder) {
          throw new AppError('CODE_ALREADY_RESERVED', `The code \`${request.requested_code}\` is already taken in this shop (${holder}); reject the request with a reason instead.`,
            { code: request.requested_code, heldBy: holder });
        }
        // No ON CONFLICT: of two approvals racing for one code the unique index lets exactly one in (23505 below).
        const own = await trx('affiliate_code_reservations').where({ shop_id: scope.shop.id, partner_id: partner.id })
          .whereRaw('upper(code) = ?', [request.requested_code.toUpperCase()]).first('id');
        if (!own) await trx('affiliate_code_reservations').insert({ shop_id: scope.shop.id, partner_id: partner.id, request_id: request.id, code: request.requested_code, reserved_at: scope.now });
        reservation = { code: request.requested_code, reservedAt: scope.now.toISOString() };
      }
      const state = input.decision === 'approve' ? 'approved' as const : 'rejected' as const;
      await trx('affiliate_code_requests').where({ id: request.id }).update({ state, reason, decided_at: scope.now });
      const sk = partner.language === 'sk';
      const appendix = state === 'approved'
        ? (sk ? `Kód ${request.requested_code} je schválený a rezervovaný pre vás.` : `The code ${request.requested_code} is approved and reserved for you.`)
        : (sk ? `Kód ${request.requested_code} sme neschválili. Dôvod: ${reason}` : `The code ${request.requested_code} was not approved. Reason: ${reason}`);
      const email = await queuePartnerEmail(trx, {
        accountId: scope.accountId, shop: scope.shop, now: scope.now, event: 'code_request_decided', appendix,
        partner: { id: String(partner.id), handle: partner.handle, kind: partner.kind, language: partner.language, contact_name: partner.contact_name, email: partner.email, web: partner.web },
        values: state === 'approved' ? { 'partner.discount_code': request.requested_code } : {},
      });
      return {
        requestId: String(request.id), partnerId: String(partner.id), partnerHandle: partner.handle, requestedCode: request.requested_code, state,
        reason, decidedAt: scope.now.toISOString(), reservation, email,
      };
    });
  } catch (error) {
    // Two approvals of one code racing: the unique index lets one reservation in; the other gets the clear error.
    if ((error as { code?: string }).code === '23505') {
      throw new AppError('CODE_ALREADY_RESERVED', 'The code was just reserved for another partner in this shop.', {});
    }
    throw error;
  }
}
