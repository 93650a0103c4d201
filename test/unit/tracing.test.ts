/** Traces are off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (issue 29 point 4), and their settings are validated at start-up. */
import test from 'ava';
import { trace } from '@opentelemetry/api';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { compose } from '../../src/entry/compose.js';
import { startTracing } from '../../src/tracing/setup.js';

test('When no OTLP endpoint is configured, then the root installs no tracer provider and every span is a non-recording no-op', async (t) => {
  const config = loadConfig({ NODE_ENV: 'test', CURSOR_SECRET: 'c'.repeat(32), SECRETS_KEY: 'ab'.repeat(32) });
  t.is(config.OTEL_EXPORTER_OTLP_ENDPOINT, undefined);
  t.is(startTracing(config), null);
  // Nothing connects: knex and Temporal connect on first use.
  const service = compose(config, { databaseUrl: 'postgres://nobody@127.0.0.1:1/none', temporalAddress: '127.0.0.1:1' });
  try {
    t.is(service.tracing, null);
    const span = trace.getTracer('probe').startSpan('probe');
    t.false(span.isRecording());
    t.is(span.spanContext().traceId, '00000000000000000000000000000000', 'the API\'s no-op: no provider is registered');
    span.end();
  } finally {
    await service.close();
  }
});

test('When the OTLP settings are bad, then start-up is refused naming the variable', (t) => {
  t.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), { instanceOf: ConfigError, message: /OTEL_EXPORTER_OTLP_ENDPOINT: an http:\/\/ or https:\/\/ URL/ });
  t.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector:4318' }), { instanceOf: ConfigError, message: /OTEL_EXPORTER_OTLP_ENDPOINT/ });
  t.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), { instanceOf: ConfigError, message: /OTEL_EXPORTER_OTLP_PROTOCOL: http\/json/ });
  t.throws(() => loadConfig({ OTEL_SERVICE_NAME: ' ' }), { instanceOf: ConfigError, message: /OTEL_SERVICE_NAME/ });
  const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  t.is(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'http://collector:4318');
  t.is(config.OTEL_SERVICE_NAME, 'store-ops');
});
