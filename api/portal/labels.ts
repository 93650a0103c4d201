/** The portal's own interface wording in the programme's languages; the programme's texts come from its content. */
import type { PortalLanguage } from '../../src/affiliate/portal/portals.js';

const en = {
  home: 'Partner programme', register: 'Register', signIn: 'Sign in', signOut: 'Sign out', dashboard: 'Dashboard', documents: 'Documents',
  payoutDetails: 'Payout details', articles: 'Help', email: 'E-mail', password: 'Password', newPassword: 'New password (12 characters or more)',
  handle: 'Handle (letters, digits, - or _; it names you in your links)', name: 'Your name', web: 'Your web site (optional)', kind: 'What you run',
  language: 'Language', registrationClosed: 'Registration is closed', checkEmail: 'Check your e-mail',
  checkEmailText: 'We sent you a link to verify your e-mail address. It is valid for 24 hours.', verifyTitle: 'Verify your e-mail', verifyButton: 'Verify my e-mail',
  verified: 'Your e-mail is verified', verifiedText: 'You can sign in now.', verifiedApproved: 'Your account is approved: sign in to get your link.',
  forgot: 'Forgot your password?', forgotTitle: 'Reset your password', sendLink: 'Send me a link', resetSent: 'If the address belongs to a partner account, a link to set a new password is on its way (valid for 1 hour).',
  resetTitle: 'Set a new password', resetButton: 'Set the password', resetDone: 'Your password is changed', resetDoneText: 'Sign in with the new password.',
  wrongPassword: 'The e-mail or the password is not right.', locked: 'Too many wrong passwords: this account is locked for 15 minutes. Try again later or reset the password.',
  unverified: 'Your e-mail is not verified yet. We sent you a new link.', tooMany: 'Too many sign-in attempts from your address. Wait a few minutes.',
  accept: 'I have read and accept this document', accepted: 'Accepted', mustAccept: 'Please read and accept these documents to continue.', version: 'version',
  forReading: 'For your information', beforePayout: 'Accept before your first payout',
  state: 'Account', waiting: 'Your account is waiting for approval.', rejected: 'Your application was not approved.', suspended: 'Your account is suspended.',
  clicks: 'Clicks', conversions: 'Conversions', commissions: 'Commissions', payouts: 'Payouts', noPayouts: 'No payouts yet.', statement: 'Statement (PDF)',
  links: 'Your link', target: 'Link to', home_target: 'Shop home', product: 'A product (code)', category: 'A category (id)', campaign: 'Campaign', generate: 'Make the link',
  linkHere: 'Served here in development', codes: 'Discount codes', requestCode: 'Request a code', code: 'Code', codeRequested: 'Your code request was sent.',
  iban: 'IBAN', accountHolder: 'Account holder', taxId: 'Tax id', save: 'Save', saved: 'Saved.', detailsNote: 'Stored encrypted; shown to you masked only.',
  notFound: 'Not found', notFoundText: 'There is no such page.', notPossible: 'Not possible', signedOut: 'Signed out', signedOutText: 'Your session has ended. Sign in again.',
  formRefused: 'Form refused', amount: 'Amount', period: 'Period', period_state: 'State', noAccount: 'No account yet?', haveAccount: 'Already registered?',
};

const sk: typeof en = {
  home: 'Partnerský program', register: 'Registrácia', signIn: 'Prihlásiť sa', signOut: 'Odhlásiť sa', dashboard: 'Prehľad', documents: 'Dokumenty',
  payoutDetails: 'Údaje pre výplatu', articles: 'Pomoc', email: 'E-mail', password: 'Heslo', newPassword: 'Nové heslo (aspoň 12 znakov)',
  handle: 'Prezývka (písmená, číslice, - alebo _; je vo vašich odkazoch)', name: 'Vaše meno', web: 'Váš web (nepovinné)', kind: 'Čo prevádzkujete',
  language: 'Jazyk', registrationClosed: 'Registrácia je uzavretá', checkEmail: 'Skontrolujte e-mail',
  checkEmailText: 'Poslali sme vám odkaz na overenie e-mailovej adresy. Platí 24 hodín.', verifyTitle: 'Overte svoj e-mail', verifyButton: 'Overiť môj e-mail',
  verified: 'Váš e-mail je overený', verifiedText: 'Teraz sa môžete prihlásiť.', verifiedApproved: 'Váš účet je schválený: prihláste sa a získajte svoj odkaz.',
  forgot: 'Zabudli ste heslo?', forgotTitle: 'Obnova hesla', sendLink: 'Poslať odkaz', resetSent: 'Ak adresa patrí partnerskému účtu, posielame na ňu odkaz na nové heslo (platí 1 hodinu).',
  resetTitle: 'Nastavte nové heslo', resetButton: 'Nastaviť heslo', resetDone: 'Heslo je zmenené', resetDoneText: 'Prihláste sa novým heslom.',
  wrongPassword: 'E-mail alebo heslo nie je správne.', locked: 'Príliš veľa nesprávnych hesiel: účet je na 15 minút zamknutý. Skúste neskôr alebo si obnovte heslo.',
  unverified: 'Váš e-mail ešte nie je overený. Poslali sme vám nový odkaz.', tooMany: 'Príliš veľa pokusov o prihlásenie z vašej adresy. Počkajte niekoľko minút.',
  accept: 'Prečítal(a) som si tento dokument a súhlasím s ním', accepted: 'Prijaté', mustAccept: 'Pred pokračovaním si prečítajte a prijmite tieto dokumenty.', version: 'verzia',
  forReading: 'Na informáciu', beforePayout: 'Prijmite pred prvou výplatou',
  state: 'Účet', waiting: 'Váš účet čaká na schválenie.', rejected: 'Vaša registrácia nebola schválená.', suspended: 'Váš účet je pozastavený.',
  clicks: 'Kliky', conversions: 'Konverzie', commissions: 'Provízie', payouts: 'Výplaty', noPayouts: 'Zatiaľ žiadne výplaty.', statement: 'Výpis (PDF)',
  links: 'Váš odkaz', target: 'Odkaz na', home_target: 'Úvod obchodu', product: 'Produkt (kód)', category: 'Kategóriu (id)', campaign: 'Kampaň', generate: 'Vytvoriť odkaz',
  linkHere: 'Vo vývoji obsluhovaný tu', codes: 'Zľavové kódy', requestCode: 'Požiadať o kód', code: 'Kód', codeRequested: 'Žiadosť o kód bola odoslaná.',
  iban: 'IBAN', accountHolder: 'Majiteľ účtu', taxId: 'DIČ', save: 'Uložiť', saved: 'Uložené.', detailsNote: 'Uložené šifrovane; zobrazujeme ich len maskované.',
  notFound: 'Nenájdené', notFoundText: 'Taká stránka neexistuje.', notPossible: 'Nie je možné', signedOut: 'Odhlásené', signedOutText: 'Relácia skončila. Prihláste sa znova.',
  formRefused: 'Formulár odmietnutý', amount: 'Suma', period: 'Obdobie', period_state: 'Stav', noAccount: 'Ešte nemáte účet?', haveAccount: 'Už ste zaregistrovaný?',
};

export type Labels = typeof en;
export const LABELS: Record<PortalLanguage, Labels> = { sk, en };
