import type * as OpenTelemetry from './open-telemetry';

/**
 * Whether traces are to be exported: an OTLP endpoint is configured (the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and the SDK is not
 * disabled (`OTEL_SDK_DISABLED=true`).
 */
export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim(),
  );
}

/**
 * OpenTelemetry tracing, started when this module is first imported: `main.ts` imports it before
 * anything else, because the instrumentations can only patch http, Express, pg, ioredis and pino
 * if they are loaded after it. Without an endpoint the SDK is not even loaded, so tracing that is
 * off costs nothing: no module, no hook, no context manager.
 */
const sdk = tracingConfigured(process.env)
  ? // A conditional require: an `import` would load the SDK whether tracing is on or off.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./open-telemetry') as typeof OpenTelemetry).startOpenTelemetry()
  : undefined;

/** Exports the spans still buffered and stops the SDK: the last step of a graceful shutdown. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown();
}
