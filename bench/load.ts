import autocannon from 'autocannon';

/**
 * Same load for every server and scenario: closed loop, keep-alive, no pipelining. The measured
 * time is cut into slices, the servers taking turns (A B C, C B A, A B C, …): this machine's speed
 * drifts by tens of per cent over seconds (other tenants of the host), and a drift then weighs on
 * every server alike instead of on whichever ran last.
 */
export const LOAD = { connections: 10, warmupSeconds: 2, seconds: 8, slices: 4 } as const;

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

  constructor(
    private readonly url: string,
    private readonly scenario: Scenario,
  ) {}

  /** One run of `seconds`; `measured` false for a warm-up. Fails on any other status. */
  async run(headers: Record<string, string>, seconds: number, measured: boolean): Promise<void> {
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: `${this.url}${this.scenario.path}`,
          method: this.scenario.method,
          headers,
          connections: LOAD.connections,
          duration: seconds,
          timeout: 10,
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
        `${this.scenario.name} against ${this.url}: ${result.errors} errors, ` +
          `statuses ${JSON.stringify(statuses)}`,
      );
    }
    if (measured) {
      this.requests += result.requests.total;
      this.seconds += result.duration;
    }
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
  urls: Record<Name, string>,
  headers: Record<string, string>,
  scenario: Scenario,
): Promise<Record<Name, LoadResult>> {
  const names = Object.keys(urls) as Name[];
  const tallies = new Map(names.map((name) => [name, new Tally(urls[name], scenario)]));
  for (const tally of tallies.values()) await tally.run(headers, LOAD.warmupSeconds, false);
  const slice = LOAD.seconds / LOAD.slices;
  for (let i = 0; i < LOAD.slices; i++) {
    const turn = i % 2 === 0 ? names : [...names].reverse();
    for (const name of turn) await tallies.get(name)?.run(headers, slice, true);
  }
  return Object.fromEntries(
    names.map((name) => [name, (tallies.get(name) as Tally).result()]),
  ) as Record<Name, LoadResult>;
}
