import autocannon from 'autocannon';

/**
 * nginx closes a client's keep-alive connection after `keepalive_requests` (1,000) requests; a
 * next request sent as that close arrives is reset, which autocannon counts as an error though no
 * request was refused (6 in 29,000 on a quiet stack). The load reconnects itself sooner.
 */
export const RECONNECT_RATE = 500;

export interface LoadResult {
  requests: number;
  /** Answers outside 2xx, connection errors and client timeouts. */
  failed: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
  /** Each answer's end (epoch ms) and latency (ms), in the order they came. */
  samples: [at: number, ms: number][];
}

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  connections?: number;
  /** autocannon's requests: a mix, each with its own method and path. */
  requests?: autocannon.Request[];
  /** Requests per second across all connections; unset: as fast as answered. */
  overallRate?: number;
  /** A request unanswered this long counts as a timeout (a hung request). */
  timeoutSec?: number;
}

function summarize(r: autocannon.Result, samples: [number, number][]): LoadResult {
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) {
    statuses[code] = stat.count ?? 0;
  }
  return {
    requests: r.requests.total,
    failed: r.errors + r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    statuses,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    samples,
  };
}

/** The load, started: autocannon's instance, its result to come and each answer's sample. */
interface RunningLoad {
  instance: autocannon.Instance;
  done: Promise<autocannon.Result>;
  samples: [number, number][];
}

/** Starts a load through `url` that autocannon stops after `durationSec`, if nothing stops it first. */
function startLoad(options: LoadOptions, durationSec: number): RunningLoad {
  let finish: (result: autocannon.Result) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const instance = autocannon(
    {
      url: options.url,
      headers: options.headers,
      connections: options.connections ?? 8,
      requests: options.requests,
      overallRate: options.overallRate,
      timeout: options.timeoutSec ?? 10,
      reconnectRate: RECONNECT_RATE,
      // With a rate, autocannon corrects for coordinated omission with an expected interval of
      // `ceil(1 / rate)`, a connection's requests per second read as milliseconds: 1 ms, so each
      // answer of n ms is counted about n times and a few slow ones make the p99. Each answer is
      // counted once, as the samples below are.
      ignoreCoordinatedOmission: options.overallRate !== undefined,
      duration: durationSec,
    },
    (error: Error | null, result: autocannon.Result) => (error ? fail(error) : finish(result)),
  );
  const samples: [number, number][] = [];
  instance.on('response', (_client, _status, _bytes, ms: number) => samples.push([Date.now(), ms]));
  return { instance, done, samples };
}

/**
 * A bounded load through `url` while `during` runs: it starts, `during` runs after a second of
 * steady load, then the load goes on for `afterMs` more and stops. Nothing runs past that.
 */
export async function loadDuring(
  options: LoadOptions,
  during: () => Promise<void>,
  afterMs = 2_000,
): Promise<LoadResult> {
  // An hour at most: `during` ends it long before.
  const { instance, done, samples } = startLoad(options, 3_600);
  try {
    await new Promise((r) => setTimeout(r, 1_000));
    await during();
    await new Promise((r) => setTimeout(r, afterMs));
  } finally {
    instance.stop();
  }
  return summarize(await done, samples);
}

/** A load through `url` for `durationMs`, nothing else happening: a steady load to measure. */
export async function loadFor(options: LoadOptions, durationMs: number): Promise<LoadResult> {
  const { done, samples } = startLoad(options, durationMs / 1_000);
  return summarize(await done, samples);
}

export function describeLoad(r: LoadResult): string {
  return (
    `${r.requests} requests, failed ${r.failed} (errors ${r.errors}, timeouts ${r.timeouts}, ` +
    `non-2xx ${r.non2xx}), statuses ${JSON.stringify(r.statuses)}, ` +
    `latency p50 ${r.p50} ms p99 ${r.p99} ms max ${r.max} ms`
  );
}

/** A mix of what the store's clients send, and the cancels it made. */
export interface StoreMix {
  requests: autocannon.Request[];
  /** The orders the mix cancelled (answered 204), in the order they were answered. */
  cancelled: string[];
}

/**
 * Clients' mix, one of each in turn on every connection: the first page of a filtered list, the
 * page after it (`nextPage`, a path with its cursor), a cancel of the next order of `pending`
 * (each cancelled once, so each answer 204 is one change and one audit event), and a key check:
 * the smallest page with a second key (`otherKey`), mostly authentication and rate limiting.
 */
export function storeMix(
  paths: { list: string; nextPage: string },
  pending: string[],
  otherKey: Record<string, string>,
): StoreMix {
  const cancelled: string[] = [];
  let next = 0;
  const requests: autocannon.Request[] = [
    { method: 'GET', path: paths.list },
    { method: 'GET', path: paths.nextPage },
    {
      method: 'DELETE',
      setupRequest: (request, context: { orderId?: string }) => {
        if (next === pending.length) throw new Error(`the mix ran out of its ${next} orders`);
        context.orderId = pending[next++];
        return { ...request, path: `/v2/store/orders/${context.orderId}` };
      },
      onResponse: (status, _body, context: { orderId?: string }) => {
        if (status === 204 && context.orderId !== undefined) cancelled.push(context.orderId);
      },
    },
    { method: 'GET', path: '/v2/store/orders?limit=1', headers: otherKey },
  ];
  return { requests, cancelled };
}

/** The nearest-rank percentile `p` (0–100) of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * The latencies of a load cut at `marks` (each the epoch ms a step began): per step, its answers,
 * p50, p99 and max, to tell which step the slow answers came in.
 */
export function latencyBySteps(
  samples: [number, number][],
  marks: { what: string; at: number }[],
): string[] {
  return marks.map(({ what, at }, i) => {
    const end = marks[i + 1]?.at ?? Number.POSITIVE_INFINITY;
    const ms = samples.filter(([t]) => t >= at && t < end).map(([, l]) => Math.round(l));
    return (
      `${what}: ${ms.length} answers, p50 ${percentile(ms, 50)} ms, p99 ${percentile(ms, 99)} ms, ` +
      `max ${ms.length ? Math.max(...ms) : 0} ms`
    );
  });
}
