/** Starting a workflow with the service's search attributes, falling back to none on a namespace lacking them (O13). */
import type { TypedSearchAttributes } from '@temporalio/common';
import { logger } from '../logger.js';
import { isUnknownSearchAttribute, opsAttributes, type OpsLabels } from './searchAttributes.js';

export type { OpsLabels } from './searchAttributes.js';

/** Whether the namespace has the Ops attributes: assumed until a start says otherwise (then for the process). */
let opsLabelsAccepted = true;

/** Turns the labels off for this process: Temporal's time-skipping test server accepts them but loses the workflow (tests). */
export function disableOpsLabels(): void {
  opsLabelsAccepted = false;
}

/**
 * Runs `start` with the attributes of `labels`; when the namespace lacks them (a cluster where the operator commands
 * were not run, or Temporal's time-skipping test server) it warns once and starts without them — a missing label
 * must never stop a proposal or a sync.
 */
export async function startLabelled<T>(labels: OpsLabels | null, start: (attributes: TypedSearchAttributes | undefined) => Promise<T>): Promise<T> {
  if (!labels || !opsLabelsAccepted) return start(undefined);
  try {
    return await start(opsAttributes(labels));
  } catch (error) {
    if (!isUnknownSearchAttribute(error)) throw error;
    if (opsLabelsAccepted) logger.warn({ component: 'temporal', err: error }, 'the Temporal namespace lacks the Ops search attributes (docs/operations.md); workflows start without them');
    opsLabelsAccepted = false;
    return start(undefined);
  }
}
