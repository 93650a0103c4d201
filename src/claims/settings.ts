/**
 * The claims module's settings of a shop: the service's own data (not synced), one validated document per shop.
 * Demo shops get realistic defaults when their history is loaded. Bank accounts are held masked only (CC2).
 */
import { z } from 'zod';
import { CARRIERS, CLAIM_STATUSES, PEOPLE, type ShopDefinition } from '../platforms/demo/catalogue.js';
import { DEMO_CLAIM_EMAILS, DEMO_CLAIM_PROCESSES, DEMO_CLAIM_TAGS, demoIban } from '../platforms/demo/claimDetails.js';
import { createRandom } from '../platforms/demo/random.js';
import { maskAccount, MASKED_ACCOUNT } from './accounts.js';

const maskedAccount = z.string().regex(MASKED_ACCOUNT).describe('Masked account: country and the last four characters, e.g. `SK****5678`; never the whole number.');
const caseType = z.enum(['withdrawal', 'complaint']).describe('`withdrawal`: return within the withdrawal period; `complaint`: warranty claim.');

export const claimStatusSchema = z.object({ id: z.number().int(), name: z.string(), closes: z.boolean().describe('Reaching this status closes the claim.') });

export const processSchema = z.object({
  id: z.number().int().describe('Process id, as `processId` on claims.'),
  name: z.string(),
  type: caseType,
  steps: z.array(z.object({ position: z.number().int(), name: z.string() })).describe('The steps staff go through, in order.'),
  statuses: z.array(claimStatusSchema).describe('Statuses a claim of this process can have.'),
  deadlineDays: z.number().int().describe('Days from opening by which the claim must be settled (legal deadline).'),
});

export const tagSchema = z.object({ id: z.string(), name: z.string(), color: z.string() });

const customFieldSchema = z.object({
  id: z.string(), name: z.string(), type: z.enum(['text', 'select', 'date', 'checkbox']), required: z.boolean(),
  options: z.array(z.string()).describe('Choices of a `select` field; empty otherwise.'),
});

const addressSchema = z.object({ id: z.string(), name: z.string(), street: z.string(), city: z.string(), zip: z.string(), country: z.string().length(2) });

export const routesSchema = z.object({
  routes: z.array(z.object({
    id: z.string(), name: z.string(), caseTypes: z.array(caseType), carrierCode: z.string(), carrierProfileId: z.string(), addressId: z.string(),
    paidBy: z.enum(['shop', 'customer']).describe('Who pays the return postage.'),
  })).describe('Return transport routes: which carrier profile brings which case type to which address.'),
  addresses: z.array(addressSchema).describe('Where returned goods go.'),
  carrierProfiles: z.array(z.object({
    id: z.string().describe('Carrier profile id, as in shipping_carriers.'), carrierCode: z.string(), name: z.string(),
    supportsReturns: z.boolean().describe('Whether the carrier offers return labels with this profile.'),
  })),
  caseTypes: z.array(z.object({ id: caseType, name: z.string(), processId: z.number().int() })),
});

export const configurationSchema = z.object({
  tags: z.array(tagSchema),
  customFields: z.array(customFieldSchema).describe('Extra fields staff or the form fill on a claim.'),
  returnTransport: routesSchema,
  form: z.object({
    enabled: z.boolean().describe('Whether customers can file claims through the shop\'s form.'),
    url: z.string().nullable(),
    requiresOrderNumber: z.boolean(),
    allowsPhotos: z.boolean(),
  }).describe('The shop\'s claim form.'),
  formTypes: z.array(z.object({ id: z.string(), name: z.string(), caseType, processId: z.number().int(), enabled: z.boolean() })),
});

export const refundOptionsSchema = z.object({
  variableSymbolSource: z.enum(['order', 'claim']).describe('The payment reference of a refund: the order\'s variable symbol or the digits of the claim code.'),
  refundCouponValidityDays: z.number().int().describe('How long a coupon issued as a refund is valid.'),
  couponInForm: z.boolean().describe('Whether the claim form offers a coupon instead of money.'),
  askAccountNumber: z.enum(['always', 'cash_on_delivery_and_transfer', 'never']).describe('When the form asks the customer for an account number.'),
});

export const refundSettingsSchema = z.object({
  refundMode: z.enum(['manual', 'payment_order', 'automatic']).describe('`manual`: staff pay; `payment_order`: the service prepares a bank payment order; `automatic`: the payment gateway refunds.'),
  bankAccounts: z.array(z.object({
    id: z.string(), name: z.string(), currency: z.string().length(3), account: maskedAccount,
    suitableForPaymentOrders: z.boolean().describe('Whether the bank accepts payment orders (batch files) from this account.'),
  })).describe('The shop\'s own accounts refunds are paid from; masked.'),
  defaultAccountId: z.string().nullable().describe('Account used unless staff pick another.'),
  manualAccountId: z.string().nullable().describe('Account used for refunds paid by hand.'),
});

export const templatesSchema = z.object({
  emails: z.array(z.object({
    id: z.string(), name: z.string(), subject: z.string(), text: z.string(),
    when: z.object({ statusId: z.number().int().nullable(), description: z.string() }).describe('When it is sent: on reaching a status, or on demand (statusId null).'),
    automatic: z.boolean(),
  })).describe('Claim e-mail templates; `{claim_code}` and similar placeholders are not substituted.'),
  protocols: z.array(z.object({ id: z.string(), name: z.string(), caseType, text: z.string() })).describe('Protocol (claim record) templates.'),
});

export const claimsSettingsSchema = z.object({
  processes: z.array(processSchema),
  configuration: configurationSchema,
  refundOptions: refundOptionsSchema,
  refundSettings: refundSettingsSchema,
  templates: templatesSchema,
});

export type ClaimsSettings = z.infer<typeof claimsSettingsSchema>;

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

/** Writes the shop's default settings if it has none; validated, so nothing unmasked can slip in. */
export async function ensureClaimsSettings(query: (sql: string, values: unknown[]) => Promise<unknown>, shopId: string, settings: ClaimsSettings): Promise<void> {
  const valid = claimsSettingsSchema.parse(settings);
  await query('insert into claims_settings (shop_id, settings) values ($1, $2) on conflict (shop_id) do nothing', [shopId, JSON.stringify(valid)]);
}
