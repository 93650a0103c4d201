/** `secrets re-encrypt`: the last step of a SECRETS_KEY rotation (docs/webhooks.md "Rotating SECRETS_KEY"). */
import { parseArgs } from 'node:util';
import type { Config } from '../config/index.js';
import type { Db } from '../db/knex.js';
import { loadSecrets } from '../secrets.js';
import { reencryptEndpointSecrets } from '../webhooks/endpoints.js';
import { reencryptShopCredentials } from '../setup/credentials.js';
import { reencryptPayoutDetails } from '../affiliate/portal/payoutDetails.js';
import { print, UsageError } from './output.js';

export const secretsUsage = `  secrets re-encrypt    (after setting SECRETS_KEY to the new key and SECRETS_KEY_PREVIOUS to the old one)
`;

export async function secretsCommand(db: Db, config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } } });
  if (action !== 're-encrypt') throw new UsageError(secretsUsage);
  const secrets = loadSecrets(config);
  let result;
  let shops;
  let partners;
  try {
    result = await reencryptEndpointSecrets(db, { current: secrets.secretsKey, previous: secrets.previousSecretsKey });
    shops = await reencryptShopCredentials(db, { current: secrets.secretsKey, previous: secrets.previousSecretsKey });
    partners = await reencryptPayoutDetails(db, { current: secrets.secretsKey, previous: secrets.previousSecretsKey });
  } catch (error) {
    // Nothing was written (one transaction): say which key is missing rather than print a stack.
    throw new UsageError(`Nothing re-encrypted: ${(error as Error).message}`);
  }
  print(values.json!, { ...result, shopCredentials: shops, partnerPayoutDetails: partners }, `${result.reencrypted} of ${result.endpoints} endpoint secrets, ${shops.reencrypted} of ${shops.shops} shop credentials and ${partners.reencrypted} of ${partners.partners} partners' payout details re-encrypted under the current SECRETS_KEY; SECRETS_KEY_PREVIOUS can now be removed.`);
}
