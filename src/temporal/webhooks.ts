/** The long-lived webhook pieces on Temporal, started by the entry points; and the CLI's way to reach an endpoint actor. */
import { ScheduleAlreadyRunning, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { TemporalAccess } from './access.js';
import type { DeliveryWorkflows } from '../webhooks/dispatch.js';
import type { WebhookDeliveryInput } from '../../workflows/webhookDelivery.js';
import type { WebhookEndpointInput } from '../../workflows/webhookEndpoint.js';
import { scheduleIds, TASK_QUEUE, webhookSignals, workflowIds } from './constants.js';

/**
 * Starts the outbox dispatcher of `taskQueue` unless it runs, and creates the hourly delivery-log retention Schedule
 * unless it exists. Safe to call from every process at every start.
 */
export async function ensureWebhookWorkflows(client: Client, taskQueue: string = TASK_QUEUE, opts: { retentionSchedule?: boolean } = {}): Promise<void> {
  await client.workflow.start('webhookDispatcherWorkflow', {
    taskQueue, workflowId: workflowIds.webhookDispatcher(taskQueue), args: [], workflowIdConflictPolicy: 'USE_EXISTING',
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

/** Starts, wakes and signals the webhook workflows of `taskQueue` (the dispatcher's and the actor's reach into Temporal). */
export function webhookWorkflowsClient(client: Client, taskQueue: string, retryScheduleMs: number[]): DeliveryWorkflows & { checkEndpoint(endpointId: string): Promise<void> } {
  const deliveryArgs = (d: { deliveryId: string; endpointId: string; firstAttempt: number; firstRetryAt?: number }): [WebhookDeliveryInput] => [{ ...d, retryScheduleMs }];
  return {
    async start(d) {
      try {
        await client.workflow.start('webhookDeliveryWorkflow', {
          taskQueue, workflowId: workflowIds.webhookDelivery(d.deliveryId), args: deliveryArgs(d), workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        });
      } catch (error) {
        // Already running: started before a crash hid it, or by another dispatcher.
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
    async wake(d) {
      const workflowId = workflowIds.webhookDelivery(d.deliveryId);
      if (d.pending) {
        // Starts it when none runs (the attempt number continues from Postgres), else just wakes it.
        await client.workflow.signalWithStart('webhookDeliveryWorkflow', { taskQueue, workflowId, args: deliveryArgs(d), signal: webhookSignals.wake, signalArgs: [] });
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
