/** Workflow that loads the demo tenants' data shop by shop; deterministic code, activities imported as types only. */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ShopDataCounts } from '../src/platforms/registry.js';

const { ensureDemoAccounts, loadDemoShop, analyzeDemoData } = proxyActivities<Activities>({
  // A demo shop takes seconds; the limit leaves room for a slow machine, and the load is one transaction per shop.
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

export interface LoadDemoDataInput {
  seed: number;
  /** The simulation's "now"; fixed by the caller so the workflow (and every retry) generates the same data. */
  endDateIso: string;
  /** Account codes to load; default `demo` and `acme`. */
  accountCodes?: string[];
}

export interface LoadDemoDataResult {
  accountCode: string;
  shopCode: string;
  counts: ShopDataCounts;
}

/** Loads the demo accounts: ensures accounts and shops, then loads the shops of each account in parallel. */
export async function loadDemoDataWorkflow(input: LoadDemoDataInput): Promise<LoadDemoDataResult[]> {
  const accounts = await ensureDemoAccounts({ accountCodes: input.accountCodes });
  const results: LoadDemoDataResult[] = [];
  for (const account of accounts) {
    // Shops of one account are independent transactions; a handful in parallel is well within the pool.
    const counts = await Promise.all(
      account.shops.map((shopCode) => loadDemoShop({ accountCode: account.accountCode, shopCode, seed: input.seed, endDateIso: input.endDateIso })),
    );
    account.shops.forEach((shopCode, i) => results.push({ accountCode: account.accountCode, shopCode, counts: counts[i] }));
  }
  await analyzeDemoData();
  return results;
}
