import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppProcess } from '../test/support/app-process';
import { driveInTurns, type LoadResult, type Scenario } from './load';

/**
 * An OTLP/HTTP endpoint that takes every export (protobuf, the exporter's default) and drops it:
 * what a collector costs the service on the wire, without a collector's own CPU in the figures.
 */
async function startTraceSink(): Promise<{
  endpoint: string;
  exports: () => number;
  close: () => Promise<void>;
}> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const n = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/**
 * Tracing off (the service as benchmarked above: no OTLP endpoint, the SDK not loaded) against
 * a second instance with tracing on (every request sampled, exported to a sink), in turns like
 * the other comparisons. Returns the BENCHMARKS.md section.
 */
export async function compareTracing(
  databaseUrl: string,
  untracedUrl: string,
  headers: Record<string, string>,
  scenarios: Scenario[],
  log: (message: string) => void,
): Promise<string> {
  const sink = await startTraceSink();
  let traced: AppProcess | undefined;
  try {
    const started = await AppProcess.start(['node', 'dist/main.js'], {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
    });
    traced = started.app;
    traced.discardOutput();
    const rows: string[] = [];
    for (const scenario of scenarios) {
      log(`${scenario.name}: tracing off and on in turns…`);
      const { off, on } = await driveInTurns(
        { off: { url: untracedUrl, headers }, on: { url: started.url, headers } },
        scenario,
      );
      const cell = (r: LoadResult): string =>
        `${n(r.requestsPerSecond)} | ${n(r.p50Ms)} | ${n(r.p99Ms)}`;
      rows.push(
        `| ${scenario.name} | ${cell(off)} | ${cell(on)} | ${n(on.requestsPerSecond / off.requestsPerSecond, 2)}× |`,
      );
    }
    if (sink.exports() === 0) throw new Error('the traced service exported no spans');
    return `## Tracing off and on

The service as above (no \`OTEL_EXPORTER_OTLP_ENDPOINT\`: the OpenTelemetry SDK is not even
loaded) against a second instance with tracing on: every request sampled (the default
\`parentbased_always_on\`), its spans (http, Express handler, pg, and the pino log correlation)
exported over OTLP/HTTP protobuf to a sink in the bench process (${n(sink.exports())} exports).
Same load and turns as above.

| scenario | off req/s | p50 ms | p99 ms | on req/s | p50 ms | p99 ms | on / off |
|---|--:|--:|--:|--:|--:|--:|--:|
${rows.join('\n')}
`;
  } finally {
    await traced?.stop();
    await sink.close();
  }
}
