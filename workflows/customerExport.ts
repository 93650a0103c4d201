/**
 * A large customer export (issue 25.1), ID `customer-export-<id>`: one activity walks the directory and stores the
 * file; the page reads the progress it records. A worker lost mid-way is noticed by the missed heartbeat and the
 * activity starts over (the export is still `running`, nothing half-made is kept).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { runCustomerExport } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5, nonRetryableErrorTypes: ['AppError'] },
});

/** Makes one large customer export's file. */
export async function customerExportWorkflow(input: { exportId: string }): Promise<{ status: 'ready' | 'failed'; rows: number }> {
  return runCustomerExport(input.exportId);
}
