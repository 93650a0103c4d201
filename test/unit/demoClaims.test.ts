/** Demo claim details and account masking: valid IBANs that are only ever stored masked, requests that fit the payment, e-mails per status. */
import test from 'ava';
import { maskAccount, MASKED_ACCOUNT } from '../../src/claims/accounts.js';
import { claimsSettingsSchema } from '../../src/claims/settings.js';
import { defaultClaimsSettings } from '../../src/platforms/demo/seeders/claimsSettings.js';
import { SHOPS } from '../../src/platforms/demo/catalogue.js';
import { demoIban } from '../../src/platforms/demo/claimDetails.js';
import { claimAt, OrderTimeline } from '../../src/platforms/demo/generator.js';
import { createRandom } from '../../src/platforms/demo/random.js';
import { claimRow } from '../../src/sync/rows.js';

const endDate = new Date('2026-03-15T10:30:00.000Z');

/** ISO 13616: move the first four characters to the end, letters to numbers, the whole is 1 mod 97. */
function ibanValid(iban: string): boolean {
  let rest = 0;
  for (const ch of iban.slice(4) + iban.slice(0, 4)) for (const d of /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55)) rest = (rest * 10 + Number(d)) % 97;
  return rest === 1;
}

test('When accounts are masked, then only the country and the last four characters remain, whatever the input form', (t) => {
  t.is(maskAccount('SK31 1200 0000 1987 4263 7541', 'SK'), 'SK****7541');
  t.is(maskAccount('cz6508000000192000145399', 'SK'), 'CZ****5399');
  t.is(maskAccount('19-2000145399/0800', 'CZ'), 'CZ****0800');
  t.is(maskAccount('12', 'HU'), 'HU****0012');
  for (const country of ['SK', 'CZ', 'HU', 'PL'] as const) {
    const iban = demoIban(createRandom(7, country), country);
    t.true(ibanValid(iban), iban);
    t.regex(maskAccount(iban, country), MASKED_ACCOUNT);
  }
});

test('When claims are generated, then requests fit the payment, refunds to an account carry an IBAN that reaches the row masked, and e-mails follow the statuses', (t) => {
  const shop = SHOPS.sk;
  const timeline = new OrderTimeline(5, shop, { orders: 6000, days: 365, endDate });
  const kinds = new Set<string>();
  let accounts = 0;
  for (const plan of timeline.plans(-Infinity, endDate.getTime())) {
    const claim = claimAt(plan, endDate.getTime());
    if (!claim) continue;
    const request = claim.customerRequest;
    kinds.add(`${claim.type}:${request.type}:${request.refundTo}`);
    if (claim.type === 'withdrawal') t.is(request.type, 'refund');
    if (request.refundTo === 'original_payment') t.true(plan.paymentKind === 'card' || plan.paymentKind === 'wallet');
    t.is(request.bankAccount !== null, request.refundTo === 'bank_account');
    if (request.bankAccount) {
      accounts++;
      t.true(ibanValid(request.bankAccount));
      const row = claimRow('1', claim);
      t.is(row.refund_account_masked, `${request.bankAccount.slice(0, 2)}****${request.bankAccount.slice(-4)}`);
      t.false(JSON.stringify(row).includes(request.bankAccount.slice(4)), 'the whole number never reaches the row');
    }
    t.deepEqual(claim.emails.map((e) => e.sentAt.getTime()), claim.statusHistory.filter((s) => s.statusId !== 4).map((s) => s.at.getTime()));
    if (!claim.closedAt) t.is(claim.rating, null);
    t.true(claim.deadline.getTime() > claim.openedAt.getTime());
  }
  t.true(accounts > 5, `${accounts} refunds to an account`);
  t.true(kinds.has('complaint:repair:null') && kinds.has('withdrawal:refund:original_payment') && kinds.has('withdrawal:refund:bank_account'), [...kinds].join(' '));
});

test('When the default claims settings are built, then they validate, are the same for the same seed, and hold masked accounts only', (t) => {
  for (const shop of Object.values(SHOPS)) {
    const settings = defaultClaimsSettings(shop, 99);
    t.notThrows(() => claimsSettingsSchema.parse(settings));
    t.deepEqual(defaultClaimsSettings(shop, 99), settings);
    t.true(settings.refundSettings.bankAccounts.every((a) => MASKED_ACCOUNT.test(a.account) && a.account.startsWith(shop.country)));
    t.true(settings.configuration.returnTransport.routes.length > 0);
  }
});
