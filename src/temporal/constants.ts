/** Temporal names in one place: task queues and workflow-ID builders (IDs are business IDs, so starts are idempotent). */

/** The task queue every worker of this service polls. */
export const TASK_QUEUE = 'store-ops';

export const workflowIds = {
  /** Loading the demo data of one account, e.g. `demo-data-load-demo`. */
  demoDataLoad: (accountCode: string) => `demo-data-load-${accountCode}`,
  /** The sync of one shop, e.g. `sync-demo-sk`; also the ID of that shop's sync Schedule (runs get the scheduled time appended). */
  shopSync: (accountCode: string, shopCode: string) => `sync-${accountCode}-${shopCode}`,
  /** The near-real-time sync a shop's forwarded platform events start (one at a time per shop). */
  shopEventSync: (accountCode: string, shopCode: string) => `sync-events-${accountCode}-${shopCode}`,
  /** One webhook delivery through its states, e.g. `webhook-delivery-42` (42 = the X-Service-Delivery id). */
  webhookDelivery: (deliveryId: string) => `webhook-delivery-${deliveryId}`,
  /** The actor of one webhook endpoint (pausing, resuming), e.g. `webhook-endpoint-7`. */
  webhookEndpoint: (endpointId: string) => `webhook-endpoint-${endpointId}`,
  /** The outbox dispatcher of the workers on one task queue, e.g. `webhook-dispatcher-store-ops`. */
  webhookDispatcher: (taskQueue: string) => `webhook-dispatcher-${taskQueue}`,
  /** One partition of that dispatcher (WS1), e.g. `webhook-dispatcher-store-ops-p3`: a child of the one above. */
  webhookDispatcherPartition: (taskQueue: string, index: number) => `webhook-dispatcher-${taskQueue}-p${index}`,
};

/** Schedule IDs. */
export const scheduleIds = {
  /** Removes delivery log entries older than 30 days. */
  webhookLogRetention: 'webhook-log-retention',
  /** Keeps one sync Schedule per live shop (the per-shop Schedules are `workflowIds.shopSync`). */
  syncScheduleReconcile: 'shop-sync-reconcile',
};

/** Signal names of the webhook workflows (shared by workflows and the activities that send them). */
export const webhookSignals = {
  /** To a delivery workflow: the endpoint may be sendable again (re-enabled, plan restored) — look again now. */
  wake: 'wake',
  /** To an endpoint actor: a failure count or the pending count may have crossed a pause limit (D14). */
  check: 'check',
  /** To an endpoint actor: a person changed the endpoint (enabled, disabled, deleted). */
  changed: 'changed',
} as const;
