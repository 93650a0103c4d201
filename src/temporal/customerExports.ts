/** Starting a large customer export's workflow (issue 25.1) by its business id `customer-export-<id>`. */
import type { Client } from '@temporalio/client';
import { customerExportWorkflowId } from '../customers/exportRuns.js';
import { startLabelled } from './labelledStart.js';
import { TASK_QUEUE } from './constants.js';

export async function startCustomerExport(client: Client, exportId: string, labels: { account: string; shop: string }, taskQueue: string = TASK_QUEUE): Promise<void> {
  await startLabelled({ account: labels.account, shop: labels.shop, kind: 'customer-export', key: exportId }, (typedSearchAttributes) => client.workflow.start('customerExportWorkflow', {
    taskQueue, workflowId: customerExportWorkflowId(exportId), args: [{ exportId }], workflowIdReusePolicy: 'REJECT_DUPLICATE',
    ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
  }));
}
