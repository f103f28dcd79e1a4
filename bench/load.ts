import autocannon from 'autocannon';

/**
 * Same load for every server and scenario: closed loop, keep-alive, no pipelining. The measured
 * time is cut into slices, the servers taking turns (A B C, C B A, A B C, …): this machine's speed
 * drifts by tens of per cent over seconds (other tenants of the host), and a drift then weighs on
 * every server alike instead of on whichever ran last.
 */
export const LOAD = {
  connections: 10,
  /**
   * Before anything is measured, each server serves each request shape for this long (list 100,
   * cancel, and v2's page on the service): servers run for days, and what is compared is their
   * steady state, not how soon V8 has compiled them. Measured on this machine: the JIT was still
   * compiling hundreds of the service's functions 5 to 10 s into a list load, and the service's
   * CPU per list of 100 was still falling after 20 s (docs/performance.md).
   */
  steadyStateSeconds: { 'list 100': 20, cancel: 10, 'v2 page of 100': 10 },
  /** Per scenario, each server's warm-up before its measured slices (pool, caches). */
  warmupSeconds: 2,
  seconds: 8,
  slices: 4,
} as const;

/** A server (or a way to drive it) that takes its turns in a scenario. */
export interface Contender {
  url: string;
  headers: Record<string, string>;
  /** The path this contender is driven on, when not the scenario's (a route of another version). */
  path?: string;
  /**
   * Authorization header values, one per request, in turn (each connection takes the next): to
   * drive many keys. Set it for every contender that is compared with one that uses it, so the
   * client does the same work for both.
   */
  authorizations?: readonly string[];
  /**
   * Paths, one per request, in turn (each connection takes the next, across its runs): to cancel
   * a new order with every request, as long as the list lasts (then from its start again).
   */
  paths?: readonly string[];
  /** Awaited after each of its runs, before the next server's (e.g. to let a backlog drain). */
  afterRun?: () => Promise<void>;
}

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

/** What a series of runs against one server adds up to. */
class Tally {
  private requests = 0;
  private seconds = 0;
  private readonly latenciesMs: number[] = [];
  /** Where the next run starts in the contender's `paths`: each path serves one request. */
  private readonly nextPath = { index: 0 };

  constructor(
    private readonly contender: Contender,
    private readonly scenario: Scenario,
  ) {}

  /** One run of `seconds`; `measured` false for a warm-up. Fails on any other status. */
  async run(seconds: number, measured: boolean): Promise<void> {
    const { url, headers, authorizations, paths, path = this.scenario.path } = this.contender;
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: `${url}${path}`,
          method: this.scenario.method,
          headers,
          connections: LOAD.connections,
          duration: seconds,
          timeout: 10,
          requests:
            authorizations || paths
              ? [{ setupRequest: inTurn(authorizations, paths, this.nextPath) }]
              : undefined,
        },
        (error: Error | null, done: autocannon.Result) => (error ? reject(error) : resolve(done)),
      );
      if (measured) {
        instance.on('response', (_client, _status, _bytes, ms) => this.latenciesMs.push(ms));
      }
    });
    const statuses = result.statusCodeStats ?? {};
    const wrong = Object.entries(statuses).filter(([s]) => Number(s) !== this.scenario.status);
    if (result.errors > 0 || wrong.length > 0 || result.requests.total === 0) {
      throw new Error(
        `${this.scenario.name} against ${url}: ${result.errors} errors, ` +
          `statuses ${JSON.stringify(statuses)}`,
      );
    }
    if (measured) {
      this.requests += result.requests.total;
      this.seconds += result.duration;
    }
    await this.contender.afterRun?.();
  }

  result(): LoadResult {
    const sorted = Float64Array.from(this.latenciesMs).sort();
    const at = (q: number): number =>
      sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return {
      requestsPerSecond: this.requests / this.seconds,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      requests: this.requests,
    };
  }
}

/**
 * Drives `scenario` against each server, never two at once: a short warm-up of each (discarded:
 * JIT, pool, caches), then the measured slices in turns, the order reversed every other round.
 * Fails if any answer is not the scenario's status: a benchmark of errors measures nothing.
 */
export async function driveInTurns<Name extends string>(
  contenders: Record<Name, Contender>,
  scenario: Scenario,
): Promise<Record<Name, LoadResult>> {
  const names = Object.keys(contenders) as Name[];
  const tallies = new Map(names.map((name) => [name, new Tally(contenders[name], scenario)]));
  for (const tally of tallies.values()) await tally.run(LOAD.warmupSeconds, false);
  const slice = LOAD.seconds / LOAD.slices;
  for (let i = 0; i < LOAD.slices; i++) {
    const turn = i % 2 === 0 ? names : [...names].reverse();
    for (const name of turn) await tallies.get(name)?.run(slice, true);
  }
  return Object.fromEntries(
    names.map((name) => [name, (tallies.get(name) as Tally).result()]),
  ) as Record<Name, LoadResult>;
}

/**
 * Serves `scenario` on each server in turn for `seconds`, discarded: to bring every server to
 * its steady state before the first measurement. Fails if any answer is not the scenario's status.
 */
export async function warmUp(
  contenders: readonly Contender[],
  scenario: Scenario,
  seconds: number,
): Promise<void> {
  for (const contender of contenders) await new Tally(contender, scenario).run(seconds, false);
}

type SetupRequest = (request: autocannon.Request) => autocannon.Request;

/**
 * autocannon's per-request hook: the next Authorization value of the list, and the next path of
 * `paths` (from `cursor`, which it advances), for any connection.
 */
function inTurn(
  authorizations: readonly string[] | undefined,
  paths?: readonly string[],
  cursor = { index: 0 },
): SetupRequest {
  let next = 0;
  return (request) => {
    let changed = request;
    if (authorizations) {
      const authorization = authorizations[next];
      next = (next + 1) % authorizations.length;
      changed = { ...changed, headers: { ...changed.headers, authorization } };
    }
    if (paths) {
      changed = { ...changed, path: paths[cursor.index++ % paths.length] };
    }
    return changed;
  };
}

/**
 * Sends `path` once with each of `authorizations` (10 connections, each taking the next value):
 * as many distinct clients as values. Fails on any answer but `status`.
 */
export async function sendOnceEach(
  url: string,
  scenario: Scenario,
  authorizations: readonly string[],
): Promise<{ seconds: number }> {
  const result = await autocannon({
    url: `${url}${scenario.path}`,
    method: scenario.method,
    connections: LOAD.connections,
    amount: authorizations.length,
    timeout: 10,
    requests: [{ setupRequest: inTurn(authorizations) }],
  });
  const wrong = Object.keys(result.statusCodeStats ?? {}).filter(
    (s) => Number(s) !== scenario.status,
  );
  if (result.errors > 0 || wrong.length > 0 || result.requests.total < authorizations.length) {
    throw new Error(
      `${scenario.name} once per key: ${result.errors} errors, ` +
        `statuses ${JSON.stringify(result.statusCodeStats)}, ${result.requests.total} requests`,
    );
  }
  return { seconds: result.duration };
}
