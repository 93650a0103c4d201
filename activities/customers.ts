/** Activities of large customer exports (issue 25.1). */
import { Context } from '@temporalio/activity';
import type { Db } from '../src/db/knex.js';
import { runExport } from '../src/customers/exportRuns.js';

export function createCustomerActivities(deps: { db: Db }) {
  return {
    /** Makes one export's file; heartbeats the rows so far, so a dead worker's attempt is retried soon (and starts over). */
    async runCustomerExport(exportId: string): Promise<{ status: 'ready' | 'failed'; rows: number }> {
      const context = Context.current();
      return runExport(deps.db, exportId, (rows) => context.heartbeat(rows));
    },
  };
}
