/** All Temporal activities of the service, built from their dependencies (the worker registers this object). */
import type { Db } from '../src/db/knex.js';
import { createAffiliateActivities } from './affiliate.js';
import { createCustomerActivities } from './customers.js';
import { createAutomationActivities, type AutomationActivityDeps } from './automations.js';
import { createDemoDataActivities } from './demoData.js';
import { createProposalActivities, type ProposalActivityDeps } from './proposals.js';
import { createSyncActivities, type SyncActivityDeps } from './sync.js';
import { createWebhookActivities, type WebhookActivityDeps } from './webhooks.js';

/** Builds every activity bound to the given dependencies. */
export function createActivities(deps: { db: Db } & WebhookActivityDeps & SyncActivityDeps & AutomationActivityDeps & ProposalActivityDeps) {
  return { ...createDemoDataActivities(deps), ...createWebhookActivities(deps), ...createSyncActivities({ ...deps, secretKeys: deps.secretKeys ?? { current: deps.webhooks.secretsKey, previous: deps.webhooks.previousSecretsKey } }), ...createAutomationActivities(deps), ...createProposalActivities(deps), ...createAffiliateActivities(deps), ...createCustomerActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
