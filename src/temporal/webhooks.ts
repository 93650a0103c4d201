/** The long-lived webhook pieces on Temporal, started by the entry points; and the CLI's way to reach an endpoint actor. */
import { ScheduleAlreadyRunning, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { TemporalAccess } from './access.js';
import type { DeliveryWorkflows, StartableDelivery } from '../webhooks/dispatch.js';
import type { WebhookWorkflowStatus } from './searchAttributes.js';
import type { WebhookDeliveryInput } from '../../workflows/webhookDelivery.js';
import type { WebhookEndpointInput } from '../../workflows/webhookEndpoint.js';
import { scheduleIds, TASK_QUEUE, webhookSignals, workflowIds } from './constants.js';
import { isUnknownSearchAttribute, webhookSearchAttributes } from './searchAttributes.js';
import { TypedSearchAttributes } from '@temporalio/common';
import { logger } from '../logger.js';
import { DEFAULT_WEBHOOK_PARTITIONS } from '../webhooks/partitions.js';

/**
 * Starts the outbox dispatcher of `taskQueue` with `partitions` partitions unless it runs (WS1), and creates the hourly
 * delivery-log retention Schedule unless it exists. Safe to call from every process at every start. A dispatcher that
 * runs with another partition count (WEBHOOK_PARTITIONS changed, or one from before partitions) is replaced: its
 * partitions end and the new ones start.
 */
export async function ensureWebhookWorkflows(client: Client, taskQueue: string = TASK_QUEUE, opts: { retentionSchedule?: boolean; partitions?: number } = {}): Promise<void> {
  const partitions = opts.partitions ?? DEFAULT_WEBHOOK_PARTITIONS;
  const workflowId = workflowIds.webhookDispatcher(taskQueue);
  const handle = client.workflow.getHandle(workflowId);
  try {
    const running = await handle.describe();
    if (running.status.name === 'RUNNING' && running.memo?.partitions !== partitions) {
      logger.info({ component: 'webhooks', workflowId, from: running.memo?.partitions ?? null, to: partitions }, 'webhook dispatcher partitions changed; restarting the dispatcher');
      await handle.terminate(`partitions changed to ${partitions}`);
    }
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  await client.workflow.start('webhookDispatcherWorkflow', {
    taskQueue, workflowId, args: [{ partitions }], memo: { partitions }, workflowIdConflictPolicy: 'USE_EXISTING',
  });
  if (opts.retentionSchedule === false) return;
  try {
    await client.schedule.create({
      scheduleId: scheduleIds.webhookLogRetention,
      spec: { intervals: [{ every: '1 hour' }] },
      action: { type: 'startWorkflow', workflowType: 'webhookLogRetentionWorkflow', taskQueue, args: [] },
      policies: { overlap: 'SKIP' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}

/**
 * Tells a running endpoint actor that a person changed its endpoint, so it acts at once (wakes held deliveries after a
 * re-enable, ends after a delete). Best effort: Postgres already holds the change and the dispatcher acts on it
 * within a second either way, so an unreachable Temporal or an actor that does not run loses nothing.
 * Returns whether Temporal was reached.
 */
export async function notifyEndpointActor(temporal: TemporalAccess, endpointId: string): Promise<boolean> {
  let client: Client;
  try {
    client = await temporal.client();
  } catch {
    return false;
  }
  try {
    await client.workflow.getHandle(workflowIds.webhookEndpoint(endpointId)).signal(webhookSignals.changed);
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return true;
    return false;
  }
}

/** Whether the namespace has our search attributes: assumed until a start says otherwise (then for the process). */
let labelsAccepted = true;


/** A delivery workflow's search attributes (W3). */
export function deliveryAttributes(d: StartableDelivery, status: WebhookWorkflowStatus): TypedSearchAttributes {
  const labels = d.labels!;
  return new TypedSearchAttributes([
    { key: webhookSearchAttributes.account, value: labels.account },
    { key: webhookSearchAttributes.shop, value: labels.shop ?? '-' },
    { key: webhookSearchAttributes.endpoint, value: d.endpointId },
    { key: webhookSearchAttributes.eventType, value: labels.eventType },
    { key: webhookSearchAttributes.status, value: status },
  ]);
}

/** Starts, wakes and signals the webhook workflows of `taskQueue` (the dispatcher's and the actor's reach into Temporal). */
export function webhookWorkflowsClient(client: Client, taskQueue: string, retryScheduleMs: number[], opts: { searchAttributes?: boolean } = {}): DeliveryWorkflows & { checkEndpoint(endpointId: string): Promise<void> } {
  // Off for Temporal's time-skipping test server, which knows no custom search attributes (W3).
  const withAttributes = opts.searchAttributes ?? true;
  const deliveryArgs = (d: StartableDelivery, labelled: boolean): [WebhookDeliveryInput] => [{
    deliveryId: d.deliveryId, endpointId: d.endpointId, firstAttempt: d.firstAttempt, retryScheduleMs,
    ...(d.firstRetryAt !== undefined ? { firstRetryAt: d.firstRetryAt } : {}), ...(d.firstRetryDelayMs !== undefined ? { firstRetryDelayMs: d.firstRetryDelayMs } : {}),
    ...(labelled ? { searchAttributes: true } : {}),
  }];
  const startOnce = async (d: StartableDelivery, labelled: boolean) => {
    await client.workflow.start('webhookDeliveryWorkflow', {
      taskQueue, workflowId: workflowIds.webhookDelivery(d.deliveryId), args: deliveryArgs(d, labelled), workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      ...(labelled && d.labels ? { typedSearchAttributes: deliveryAttributes(d, d.firstRetryAt !== undefined || d.firstRetryDelayMs !== undefined ? 'RETRYING' : 'ATTEMPTING') } : {}),
    });
  };
  return {
    async start(d) {
      try {
        await startOnce(d, withAttributes && labelsAccepted && d.labels !== undefined);
      } catch (error) {
        // Already running: started before a crash hid it, or by another dispatcher.
        if (error instanceof WorkflowExecutionAlreadyStartedError) return;
        // A namespace without our search attributes (not registered on that cluster): start without them.
        if (!isUnknownSearchAttribute(error)) throw error;
        if (labelsAccepted) logger.warn({ component: 'webhooks', err: error }, 'the Temporal namespace lacks the webhook search attributes (docs/webhooks.md); delivery workflows start without them');
        labelsAccepted = false;
        try {
          await startOnce(d, false);
        } catch (again) {
          if (!(again instanceof WorkflowExecutionAlreadyStartedError)) throw again;
        }
      }
    },
    async wake(d) {
      const workflowId = workflowIds.webhookDelivery(d.deliveryId);
      if (d.pending) {
        // Starts it when none runs (the attempt number continues from Postgres), else just wakes it.
        await client.workflow.signalWithStart('webhookDeliveryWorkflow', { taskQueue, workflowId, args: deliveryArgs(d, false), signal: webhookSignals.wake, signalArgs: [] });
        return;
      }
      try {
        await client.workflow.getHandle(workflowId).signal(webhookSignals.wake);
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    },
    async checkEndpoint(endpointId) {
      const args: [WebhookEndpointInput] = [{ endpointId }];
      await client.workflow.signalWithStart('webhookEndpointWorkflow', {
        taskQueue, workflowId: workflowIds.webhookEndpoint(endpointId), args, signal: webhookSignals.check, signalArgs: [],
      });
    },
  };
}
