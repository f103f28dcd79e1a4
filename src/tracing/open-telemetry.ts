import type { IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Request } from 'express';

/** `service.name` when OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) does not set one. */
const DEFAULT_SERVICE_NAME = 'store-orders-service';

/** Probes from load balancers and orchestrators, every few seconds: not worth a trace each. */
const ignoreProbes = (req: IncomingMessage): boolean => req.url?.startsWith('/health/') ?? false;

/**
 * The API key's id and plan on the server span, once the guard has authenticated the request.
 * Never the key itself: it is not on the request object at all (only its id).
 */
function addKeyAttributes(span: Span, request: unknown): void {
  const auth = (request as Request).auth;
  if (auth) span.setAttributes({ 'api_key.id': auth.keyId, 'api_key.plan': auth.plan });
}

/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables (exporter endpoint and
 * protocol, service name, sampler, batch processor, resource attributes, propagators), with the
 * official instrumentations of what the service uses:
 *
 * - http: the server span, named `METHOD /route/pattern` (the route from the Express
 *   instrumentation), continuing the client's W3C `traceparent`; the status, and the key's id
 *   and plan (above);
 * - express: a span per route handler (middleware and routers skipped: a dozen spans per request
 *   that tell an operator nothing);
 * - pg and ioredis: every query and command as a child span (none outside a request: pool
 *   housekeeping and the rate limiter's timers would each start a trace of their own);
 * - pino: `trace_id` and `span_id` on every log line written while a span is active. Its log
 *   sending is off: the logs go to stdout, as without tracing.
 *
 * Traces only: metrics are Prometheus' (METRICS_PORT), so OTLP metrics and logs stay off.
 */
export function startOpenTelemetry(): NodeSDK {
  const named =
    Boolean(process.env.OTEL_SERVICE_NAME?.trim()) ||
    /(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    serviceName: named ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: ignoreProbes,
        applyCustomAttributesOnSpan: addKeyAttributes,
      }),
      new ExpressInstrumentation({
        ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER],
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  sdk.start();
  return sdk;
}
