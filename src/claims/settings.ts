/**
 * The claims module's settings of a shop: the service's own data (not synced), one validated document per shop.
 * Demo shops get realistic defaults when their history is loaded (src/platforms/demo/seeders/claimsSettings.ts). Bank accounts are held masked only (CC2).
 */
import { z } from 'zod';
import { MASKED_ACCOUNT } from './accounts.js';

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

/** Writes the shop's default settings if it has none; validated, so nothing unmasked can slip in. */
export async function ensureClaimsSettings(query: (sql: string, values: unknown[]) => Promise<unknown>, shopId: string, settings: ClaimsSettings): Promise<void> {
  const valid = claimsSettingsSchema.parse(settings);
  await query('insert into claims_settings (shop_id, settings) values ($1, $2) on conflict (shop_id) do nothing', [shopId, JSON.stringify(valid)]);
}
