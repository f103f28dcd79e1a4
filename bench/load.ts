import autocannon from 'autocannon';

/** Same load for every server and scenario: closed loop, keep-alive, no pipelining. */
export const LOAD = { connections: 10, warmupSeconds: 2, seconds: 8 } as const;

export interface Scenario {
  name: string;
  method: 'GET' | 'DELETE';
  path: string;
  /** The only status a request of this scenario may get. */
  status: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
}

/**
 * Drives `scenario` against the server at `url` for a short warm-up (discarded: JIT, pool,
 * caches), then for the measured run. Fails if any answer is not the scenario's status: a
 * benchmark of errors measures nothing.
 */
export async function drive(
  url: string,
  headers: Record<string, string>,
  scenario: Scenario,
): Promise<LoadResult> {
  const run = (seconds: number) =>
    autocannon({
      url: `${url}${scenario.path}`,
      method: scenario.method,
      headers,
      connections: LOAD.connections,
      duration: seconds,
      timeout: 10,
    });
  await run(LOAD.warmupSeconds);
  const result = await run(LOAD.seconds);
  const statuses = result.statusCodeStats ?? {};
  const wrong = Object.entries(statuses).filter(([s]) => Number(s) !== scenario.status);
  if (result.errors > 0 || wrong.length > 0 || result.requests.total === 0) {
    throw new Error(
      `${scenario.name} against ${url}: ${result.errors} errors, statuses ${JSON.stringify(statuses)}`,
    );
  }
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
  };
}
