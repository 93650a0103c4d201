/**
 * OpenTelemetry traces (issue 29 point 4), off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: one tracer provider per
 * process exporting over OTLP/HTTP (JSON), the W3C `traceparent` propagator, and Postgres queries as spans. HTTP
 * requests get their spans from our own middleware (api/http/requestContext.ts) and Temporal from its interceptors
 * (src/tracing/temporal.ts); no auto-instrumentation of Node's http (an ESM loader hook would be needed, OT2).
 */
import { createRequire } from 'node:module';
import { trace } from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Instrumentation from '@opentelemetry/instrumentation';
import type * as InstrumentationPg from '@opentelemetry/instrumentation-pg';
import type { Resource } from '@opentelemetry/resources';
import type * as Resources from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import type * as SdkTraceNode from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config/index.js';

// The SDK is loaded only when tracing is on: it costs every process start about 0.3 s of CPU otherwise (decision Q16).
const require = createRequire(import.meta.url);

/** The process's tracing: what the Temporal worker needs to export workflow spans, and the flush on stop. */
export interface Tracing {
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Exports what is buffered and stops the provider (the root's close runs it after the worker has stopped). */
  shutdown(): Promise<void>;
}

let installed: Tracing | null = null;

/** Whether this process exports traces (the HTTP middleware and the MCP router start spans only then). */
export function tracingInstalled(): boolean {
  return installed !== null;
}

/**
 * Installs the process's tracer provider when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else returns null and installs
 * nothing (every span is then a no-op). Once per process: a second call returns the first provider. Must run before
 * the database is built, so the pg driver is instrumented when knex loads it.
 */
export function startTracing(config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>): Tracing | null {
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  if (installed) return installed;
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof Instrumentation;
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof InstrumentationPg;
  const { Resource } = require('@opentelemetry/resources') as typeof Resources;
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof SdkTraceNode;
  const resource = new Resource({ 'service.name': config.OTEL_SERVICE_NAME });
  // The endpoint is the collector's base address; OTLP/HTTP puts traces under /v1/traces (the OTel environment rule).
  const url = new URL('v1/traces', config.OTEL_EXPORTER_OTLP_ENDPOINT.endsWith('/') ? config.OTEL_EXPORTER_OTLP_ENDPOINT : `${config.OTEL_EXPORTER_OTLP_ENDPOINT}/`).href;
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 1000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator (the provider's defaults).
  provider.register();
  // SQL spans carry the statement with its placeholders ($1, …), never the bound values (enhancedDatabaseReporting off);
  // only queries inside a traced request or activity, not the pool's own chatter.
  const unregister = registerInstrumentations({ tracerProvider: provider, instrumentations: [new PgInstrumentation({ requireParentSpan: true })] });
  installed = {
    resource,
    spanProcessor,
    async shutdown() {
      unregister();
      await provider.shutdown();
      trace.disable();
      installed = null;
    },
  };
  return installed;
}
