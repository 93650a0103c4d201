/** Activities that load the demo platform's data (D20); thin, idempotent wrappers over the demo's loader (src/platforms/demo/load.ts, reached through the platform registry). */
import type { Db } from '../src/db/knex.js';
import {
  analyzeLoadedTables, DEMO_ACCOUNTS, demoAccountSpec, ensureDemoAccount, loadShopData, type ShopDataCounts,
} from '../src/platforms/registry.js';

export interface EnsureDemoAccountsInput {
  /** Account codes to create (default: `demo` and `acme`); `bench` is allowed too. */
  accountCodes?: string[];
}

export interface LoadDemoShopInput {
  accountCode: string;
  shopCode: string;
  seed: number;
  /** The simulation's "now" as ISO 8601; passed in so retries and replays generate the same data. */
  endDateIso: string;
}

/** Builds the demo-data activities bound to their dependencies. */
export function createDemoDataActivities(deps: { db: Db }) {
  return {
    /** Creates the demo accounts and their shops if missing; returns which shops each account has. */
    async ensureDemoAccounts(input: EnsureDemoAccountsInput = {}): Promise<{ accountCode: string; shops: string[] }[]> {
      const codes = input.accountCodes ?? DEMO_ACCOUNTS.map((a) => a.code);
      const result: { accountCode: string; shops: string[] }[] = [];
      for (const code of codes) {
        const spec = demoAccountSpec(code);
        await ensureDemoAccount(deps.db, spec);
        result.push({ accountCode: code, shops: spec.shops.map((s) => s.code) });
      }
      return result;
    },

    /** Loads one shop's demo data; a retry after success (or after a rolled-back crash) is harmless. */
    async loadDemoShop(input: LoadDemoShopInput): Promise<ShopDataCounts> {
      const spec = demoAccountSpec(input.accountCode);
      // Ensuring again makes the activity self-sufficient if it runs without the ensure step.
      const accountId = await ensureDemoAccount(deps.db, spec);
      return loadShopData(deps.db, {
        accountId, shopCode: input.shopCode, seed: input.seed,
        orders: spec.ordersPerShop, days: spec.days, endDate: new Date(input.endDateIso),
      });
    },

    /** Refreshes the planner's statistics once the shops are loaded (a bulk load leaves them stale). */
    async analyzeDemoData(): Promise<void> {
      await analyzeLoadedTables(deps.db);
    },
  };
}
