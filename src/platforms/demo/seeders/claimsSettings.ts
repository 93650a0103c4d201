/** Realistic claims-module settings of a demo shop, written when its history is loaded (the service's own data). */
import { maskAccount } from '../../../claims/accounts.js';
import type { ClaimsSettings } from '../../../claims/settings.js';
import { CARRIERS, CLAIM_STATUSES, PEOPLE, type ShopDefinition } from '../catalogue.js';
import { DEMO_CLAIM_EMAILS, DEMO_CLAIM_PROCESSES, DEMO_CLAIM_TAGS, demoIban } from '../claimDetails.js';
import { createRandom } from '../random.js';

const STATUSES = Object.values(CLAIM_STATUSES);

/** Realistic defaults of a demo shop's claims module; deterministic per shop seed (already mixed with account and shop). */
export function defaultClaimsSettings(shop: ShopDefinition, shopSeed: number): ClaimsSettings {
  const rng = createRandom(shopSeed, 'claims-settings', shop.code);
  const carriers = [...new Set(shop.shippingMethods.map((m) => m.carrier))];
  const city = PEOPLE[shop.country].cities[0];
  const warehouse = { id: 'warehouse', name: `${shop.name} – returns`, street: `${PEOPLE[shop.country].streets[0]} 12`, city: city.name, zip: city.zip, country: shop.country };
  const carrierProfiles = carriers.flatMap((code) => CARRIERS[code].profiles.map((p) => ({
    id: p.id, carrierCode: code, name: p.name, supportsReturns: p.service !== 'home_delivery' || code === 'dpd' || code === 'gls',
  })));
  const returnable = carrierProfiles.filter((p) => p.supportsReturns);
  // The shop's own accounts are generated and masked at once: the full number never exists outside this function.
  const account = (id: string, name: string, suitable: boolean) => ({
    id, name, currency: shop.currency, account: maskAccount(demoIban(rng, shop.country), shop.country), suitableForPaymentOrders: suitable,
  });
  const bankAccounts = [account('main', 'Main account', true), account('refunds', 'Refunds account', rng.chance(0.5))];
  return {
    processes: DEMO_CLAIM_PROCESSES.map((p) => ({
      id: p.id, name: p.name, type: p.type, deadlineDays: p.deadlineDays,
      steps: p.steps.map((name, i) => ({ position: i + 1, name })),
      statuses: STATUSES.filter((s) => (p.statusIds as number[]).includes(s.id)).map((s) => ({ id: s.id, name: s.name, closes: s.closes })),
    })),
    configuration: {
      tags: DEMO_CLAIM_TAGS.map((t) => ({ ...t })),
      customFields: [
        { id: 'serial-number', name: 'Serial number', type: 'text', required: false, options: [] },
        { id: 'purchase-channel', name: 'Bought in', type: 'select', required: false, options: ['e-shop', 'marketplace', 'phone'] },
        { id: 'defect-noticed', name: 'Defect noticed on', type: 'date', required: false, options: [] },
      ],
      returnTransport: {
        routes: returnable.map((p, i) => ({
          id: `route-${i + 1}`, name: `${p.name} → ${warehouse.name}`, caseTypes: ['withdrawal', 'complaint'] as Array<'withdrawal' | 'complaint'>,
          carrierCode: p.carrierCode, carrierProfileId: p.id, addressId: warehouse.id, paidBy: i === 0 ? 'shop' as const : 'customer' as const,
        })),
        addresses: [warehouse],
        carrierProfiles,
        caseTypes: DEMO_CLAIM_PROCESSES.map((p) => ({ id: p.type, name: p.type === 'withdrawal' ? 'Withdrawal' : 'Complaint', processId: p.id })),
      },
      form: { enabled: true, url: `${shop.baseUrl}/claims`, requiresOrderNumber: true, allowsPhotos: true },
      formTypes: DEMO_CLAIM_PROCESSES.map((p) => ({ id: `form-${p.type}`, name: p.type === 'withdrawal' ? 'Return goods' : 'Report a defect', caseType: p.type, processId: p.id, enabled: true })),
    },
    refundOptions: {
      variableSymbolSource: rng.chance(0.5) ? 'order' : 'claim',
      refundCouponValidityDays: rng.pick([90, 180, 365]),
      couponInForm: true,
      askAccountNumber: 'cash_on_delivery_and_transfer',
    },
    refundSettings: { refundMode: rng.pick(['manual', 'payment_order'] as const), bankAccounts, defaultAccountId: 'main', manualAccountId: 'refunds' },
    templates: {
      emails: [
        ...DEMO_CLAIM_EMAILS.map((e) => ({
          id: e.id, name: e.id.replace(/-/g, ' '), subject: e.subject,
          text: `Hello {customer_first_name},\n\n${e.subject}.\n\n${shop.name}`,
          when: { statusId: e.statusId, description: `On reaching status ${STATUSES.find((s) => s.id === e.statusId)!.name}` }, automatic: true,
        })),
        {
          id: 'request-account', name: 'request account', subject: 'Claim {claim_code}: where should we send the money?',
          text: 'Hello {customer_first_name},\n\nplease tell us the account for your refund.', when: { statusId: null, description: 'Sent by staff on demand' }, automatic: false,
        },
      ],
      protocols: DEMO_CLAIM_PROCESSES.map((p) => ({
        id: `protocol-${p.type}`, name: `${p.name} – protocol`, caseType: p.type,
        text: `Claim {claim_code} of order {order_code}, opened {opened_at}. Goods: {items}. Decision: {resolution}.`,
      })),
    },
  };
}

