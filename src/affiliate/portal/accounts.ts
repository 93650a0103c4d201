/**
 * Partners' accounts on the portal (issue 24 point 2): registration as the programme's openness allows, e-mail
 * verification and password reset by one-time links sent through the e-mail outbox (only the links' SHA-256 is stored;
 * they expire), and sign-in with the application's Argon2id hashing and lockout (src/people), under the partner's own
 * rows. A new partner waits for approval unless the programme approves partners automatically.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { AppError } from '../../errors.js';
import { queueEmail } from '../../email/outbox.js';
import { checkPasswordRules, hashPassword } from '../../people/passwords.js';
import { checkPassword, partnerDirectory, type PasswordCheck } from '../../people/signIn.js';
import { setPartnerState } from '../writes/partners.js';
import type { Portal, PortalLanguage } from './portals.js';

/** A verification link is good for 24 hours, a password-reset link for 1 hour. */
export const VERIFY_LINK_MS = 24 * 3600_000;
export const RESET_LINK_MS = 3600_000;
/** A handle names the partner in tracked links (`/r/<handle>`), so it is URL-safe. */
export const HANDLE_PATTERN = /^[A-Za-z0-9_-]{3,32}$/;
export const PARTNER_KINDS = ['blogger', 'influencer', 'magazine', 'comparison_site', 'coupon_site'] as const;
const EMAIL_PATTERN = /^[^\s@<>"']{1,64}@[^\s@<>"']{1,189}\.[A-Za-z]{2,}$/;
const NAME_MAX = 200;
const WEB_MAX = 500;

export interface Registration {
  email: string;
  password: string;
  handle: string;
  name: string;
  web: string;
  kind: string;
  language: PortalLanguage;
}

const hashOf = (token: string) => crypto.createHash('sha256').update(token).digest();
const normalise = (email: string) => email.trim().toLowerCase();

/** Checks a registration's fields; each refusal names its field. */
function checkRegistration(input: Registration): void {
  const bad = (param: string, message: string) => new AppError('INVALID_PARAMETER', message, { param });
  if (!EMAIL_PATTERN.test(input.email.trim())) throw bad('email', 'That is not an e-mail address.');
  checkPasswordRules(input.password);
  if (!HANDLE_PATTERN.test(input.handle)) throw bad('handle', 'A handle has 3 to 32 letters, digits, `-` or `_`.');
  const name = input.name.trim();
  if (name.length < 2 || name.length > NAME_MAX) throw bad('name', `A name has 2 to ${NAME_MAX} characters.`);
  if (!(PARTNER_KINDS as readonly string[]).includes(input.kind)) throw bad('kind', `The kind is one of ${PARTNER_KINDS.join(', ')}.`);
  if (input.web !== '') {
    let url: URL | null = null;
    try {
      url = new URL(input.web);
    } catch { /* refused below */ }
    if (!url || !/^https?:$/.test(url.protocol) || input.web.length > WEB_MAX) throw bad('web', 'The web site is an http or https address.');
  }
}

/** The built-in wording of the portal's own e-mails (the programme's templates cover its decisions, not these). */
const EMAILS = {
  verify: {
    sk: { subject: 'Overte svoj e-mail pre {{shop}}', body: 'Registráciu dokončíte otvorením odkazu (platí 24 hodín):' },
    en: { subject: 'Verify your e-mail for {{shop}}', body: 'Open this link to complete your registration (valid for 24 hours):' },
  },
  reset: {
    sk: { subject: 'Nové heslo pre {{shop}}', body: 'Nové heslo si nastavíte na tomto odkaze (platí 1 hodinu):' },
    en: { subject: 'A new password for {{shop}}', body: 'Set a new password at this link (valid for 1 hour):' },
  },
} as const;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Stores a one-time link and queues its e-mail, in the caller's transaction. */
async function sendLink(trx: Knex, portal: Portal, partner: { id: string; email: string; language: string }, purpose: 'verify_email' | 'reset_password', linkBase: string, now: Date) {
  const token = crypto.randomBytes(32).toString('base64url');
  await trx('affiliate_portal_links').insert({
    token_hash: hashOf(token), partner_id: partner.id, shop_id: portal.shopId, purpose, created_at: now,
    expires_at: new Date(now.getTime() + (purpose === 'verify_email' ? VERIFY_LINK_MS : RESET_LINK_MS)),
  });
  const url = `${linkBase}/${purpose === 'verify_email' ? 'verify-email' : 'reset-password'}/${token}`;
  const wording = EMAILS[purpose === 'verify_email' ? 'verify' : 'reset'][partner.language === 'sk' ? 'sk' : 'en'];
  await queueEmail(trx, {
    accountId: portal.accountId, source: 'affiliate', event: purpose === 'verify_email' ? 'portal_email_verification' : 'portal_password_reset',
    shopId: portal.shopId, partnerId: partner.id, recipient: partner.email, language: partner.language,
    subject: wording.subject.replace('{{shop}}', portal.shopName), bodyHtml: `<p>${escapeHtml(wording.body)}</p>\n<p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>`, now,
  });
}

/** Registers a partner (waiting, e-mail unverified) and e-mails the verification link. */
export async function registerPartner(db: Db, portal: Portal, input: Registration, linkBase: string, now: Date): Promise<{ partnerId: string }> {
  if (!portal.registrationOpen) {
    throw new AppError('REGISTRATION_CLOSED', portal.registrationClosedReason ?? 'Registration is closed.', { reason: portal.registrationClosedReason });
  }
  checkRegistration(input);
  const email = normalise(input.email);
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction(async (trx) => {
      if (await trx('affiliate_partner_logins').where({ account_id: portal.accountId, email }).first('partner_id')) {
        throw new AppError('ALREADY_EXISTS', 'A partner account with this e-mail exists already: sign in, or reset the password.', { param: 'email' });
      }
      if (await trx('affiliate_partners').where({ account_id: portal.accountId }).whereRaw('lower(handle) = lower(?)', [input.handle]).first('id')) {
        throw new AppError('ALREADY_EXISTS', `The handle \`${input.handle}\` is taken; choose another.`, { param: 'handle' });
      }
      const [partner] = await trx('affiliate_partners').insert({
        account_id: portal.accountId, handle: input.handle, state: 'waiting', state_changed_at: now, kind: input.kind, web: input.web || null,
        language: input.language, contact_name: input.name.trim(), email, registered_at: now,
      }).returning('id');
      const partnerId = String(partner.id);
      await trx('affiliate_partner_logins').insert({ partner_id: partnerId, account_id: portal.accountId, email, password_hash: passwordHash, password_changed_at: now, created_at: now });
      await sendLink(trx, portal, { id: partnerId, email, language: input.language }, 'verify_email', linkBase, now);
      return { partnerId };
    });
  } catch (error) {
    // Two registrations racing for one e-mail or handle: the unique indexes let one in.
    if ((error as { code?: string }).code === '23505') throw new AppError('ALREADY_EXISTS', 'That e-mail or handle was just registered.', { param: 'email' });
    throw error;
  }
}

/** Takes a one-time link: unknown, used or expired links are refused (LINK_EXPIRED), so each works once. */
async function takeLink(trx: Knex, portal: Portal, token: string, purpose: 'verify_email' | 'reset_password', now: Date): Promise<string> {
  const row = /^[A-Za-z0-9_-]{43}$/.test(token)
    ? await trx('affiliate_portal_links').where({ token_hash: hashOf(token), purpose, shop_id: portal.shopId }).forUpdate().first('partner_id', 'expires_at', 'used_at')
    : undefined;
  if (!row || row.used_at || row.expires_at <= now) {
    throw new AppError('LINK_EXPIRED', purpose === 'verify_email'
      ? 'This verification link has expired or was used already. Sign in to have a new one sent.'
      : 'This password-reset link has expired or was used already. Ask for a new one.', { purpose });
  }
  await trx('affiliate_portal_links').where({ token_hash: hashOf(token) }).update({ used_at: now });
  return String(row.partner_id);
}

/** True when the link is one that `takeLink` would accept now (the page shows the form only then). */
export async function linkUsable(db: Db, portal: Portal, token: string, purpose: 'verify_email' | 'reset_password', now: Date): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  const row = await db('affiliate_portal_links').where({ token_hash: hashOf(token), purpose, shop_id: portal.shopId }).first('expires_at', 'used_at');
  return Boolean(row && !row.used_at && row.expires_at > now);
}

/** Verifies the partner's e-mail; with the programme's automatic approval, approves a waiting partner (its e-mail). */
export async function verifyEmail(db: Db, portal: Portal, token: string, now: Date): Promise<{ partnerId: string; approved: boolean }> {
  const partnerId = await db.transaction(async (trx) => {
    const id = await takeLink(trx, portal, token, 'verify_email', now);
    await trx('affiliate_partner_logins').where({ partner_id: id }).whereNull('email_verified_at').update({ email_verified_at: now });
    return id;
  });
  const programme = await db('affiliate_programmes').where({ account_id: portal.accountId }).first('auto_approve_partners');
  const partner = await db('affiliate_partners').where({ id: partnerId }).first('state');
  if (!programme?.auto_approve_partners || partner?.state !== 'waiting') return { partnerId, approved: false };
  const shop = await db('shops').where({ id: portal.shopId }).first('id', 'code', 'name', 'currency', 'time_zone');
  await setPartnerState(db, { accountId: portal.accountId, shop: { id: String(shop.id), code: shop.code, name: shop.name, currency: shop.currency, timeZone: shop.time_zone }, now }, { partnerId, action: 'approve' });
  return { partnerId, approved: true };
}

export type PartnerSignIn = PasswordCheck | { ok: false; reason: 'unverified' };

/** Checks a partner's e-mail and password (lockout as for people); an unverified address gets a fresh link instead. */
export async function signInPartner(db: Db, portal: Portal, email: string, password: string, linkBase: string, now: Date): Promise<PartnerSignIn> {
  const result = await checkPassword(db, email, password, now, partnerDirectory(portal.accountId));
  if (!result.ok) return result;
  const login = await db('affiliate_partner_logins as l').join('affiliate_partners as p', 'p.id', 'l.partner_id')
    .where('l.partner_id', result.personId).first('l.email', 'l.email_verified_at', 'p.language');
  if (!login.email_verified_at) {
    await db.transaction((trx) => sendLink(trx, portal, { id: result.personId, email: login.email, language: login.language }, 'verify_email', linkBase, now));
    return { ok: false, reason: 'unverified' };
  }
  return result;
}

/** E-mails a password-reset link when the address belongs to a partner of the account; the answer never says whether. */
export async function requestPasswordReset(db: Db, portal: Portal, email: string, linkBase: string, now: Date): Promise<void> {
  const login = await db('affiliate_partner_logins as l').join('affiliate_partners as p', 'p.id', 'l.partner_id')
    .where({ 'l.account_id': portal.accountId, 'l.email': normalise(email) }).first('l.partner_id', 'l.email', 'p.language');
  if (!login) return;
  await db.transaction((trx) => sendLink(trx, portal, { id: String(login.partner_id), email: login.email, language: login.language }, 'reset_password', linkBase, now));
}

/** Sets a new password from a reset link; ends the partner's sessions and lifts a lockout. */
export async function resetPassword(db: Db, portal: Portal, token: string, password: string, now: Date): Promise<void> {
  checkPasswordRules(password);
  const passwordHash = await hashPassword(password);
  await db.transaction(async (trx) => {
    const partnerId = await takeLink(trx, portal, token, 'reset_password', now);
    // The link reached the partner's mailbox: that verifies the address too.
    await trx('affiliate_partner_logins').where({ partner_id: partnerId }).update({
      password_hash: passwordHash, password_changed_at: now, failed_sign_ins: 0, locked_until: null, email_verified_at: trx.raw('coalesce(email_verified_at, ?)', [now]),
    });
    await trx('affiliate_portal_sessions').where({ partner_id: partnerId }).delete();
  });
}

/** The signed-in partner as the portal's pages show them (no bank or tax data). */
export interface PortalPartner {
  id: string;
  handle: string;
  state: string;
  stateReason: string | null;
  kind: string;
  language: PortalLanguage;
  contactName: string | null;
  email: string | null;
  web: string | null;
}

/** The partner of a portal session: only of the portal's account. */
export async function loadPortalPartner(db: Db, portal: Portal, partnerId: string): Promise<PortalPartner | null> {
  const row = await db('affiliate_partners').where({ id: partnerId, account_id: portal.accountId })
    .first('id', 'handle', 'state', 'state_reason', 'kind', 'language', 'contact_name', 'email', 'web');
  if (!row) return null;
  return {
    id: String(row.id), handle: row.handle, state: row.state, stateReason: row.state_reason, kind: row.kind, language: row.language === 'sk' ? 'sk' : 'en',
    contactName: row.contact_name, email: row.email, web: row.web,
  };
}
