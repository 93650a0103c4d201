/**
 * Temporal in the trace: the client's interceptor puts the caller's span into the workflow's headers (`StartWorkflow:…`),
 * the workflow interceptors continue it inside the workflow (`RunWorkflow:…`, `StartActivity:…`, child workflows) and
 * export those spans through a sink, the activity interceptor continues it in the activity (`RunActivity:…`). The stable
 * interceptors, not the experimental OpenTelemetryPlugin (OT3).
 */
import { createRequire } from 'node:module';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import type { Tracing } from './setup.js';

const require = createRequire(import.meta.url);
/** The interceptors load only with tracing on, as the SDK does (src/tracing/setup.ts, decision Q16). */
const interceptors = (): typeof TemporalOtel => require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel;

/** The workflow client's interceptors: none without tracing. */
export function tracingClientInterceptors(tracing: Tracing | null): WorkflowClientInterceptor[] {
  return tracing ? [new (interceptors().OpenTelemetryWorkflowClientInterceptor)()] : [];
}

/**
 * A worker's interceptors and sinks: none without tracing. The workflow interceptors are bundled into the workflow code
 * only with tracing on, so a worker without it runs the workflows exactly as before.
 */
export function tracingWorkerOptions(tracing: Tracing | null): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!tracing) return {};
  const { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } = interceptors();
  return {
    interceptors: {
      workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
