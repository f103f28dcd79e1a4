import { setTimeout as sleep } from 'node:timers/promises';
import { withClient } from '../test/setup/clusters';
import {
  closedLoop,
  goodputOf,
  openLoop,
  p99Of,
  served,
  type Answer,
  type LoadRun,
  type Shot,
} from '../test/support/open-loop';
import { rssBytes, watchPeakRss } from './process-memory';
import { MB, type Check } from './report';

/**
 * `npm run bench -- overload`: each route at its sustained rate, then at three times it for a
 * minute (open loop), then at its sustained rate again, against one instance: what is served, how
 * fast, what is refused and how fast, the memory, and how soon it is back to its unloaded figures.
 */

/** The sustained rate: closed loop, this many connections, after a warm-up. */
const SUSTAINED = { connections: 10, warmupMs: 3_000, measureMs: 8_000 };
/** The unloaded figures: open loop at the sustained rate, this long. */
const UNLOADED_MS = 10_000;
const OVERLOAD_FACTOR = 3;
/** After the overload: open loop at the sustained rate, cut in windows to see the recovery. */
const RECOVERY = { ms: 5_000, windowMs: 250 };

export const OVERLOAD_TARGETS = {
  /** At least: successful answers a second at 3×, ÷ the sustained rate. */
  goodput: 0.8,
  /** At most: admitted requests' p99 at 3× ÷ the p99 at the sustained rate. */
  admittedP99: 3,
  /** At most, ms: the refusals' p99. */
  shedP99Ms: 50,
  rssGrowthBytes: 50 * MB,
  recoveryMs: 2_000,
} as const;

/** Pending orders cancelled by the cancel scenarios start here, one new order per request. */
const PENDING_FROM = 10_000_000;

export interface Route {
  name: string;
  next: (i: number) => Shot;
}

/** A route of a GET, the same every time. */
export const getRoute = (name: string, path: string): Route => ({
  name,
  next: () => ({ method: 'GET', path }),
});

/** Seeds `count` pending orders for the cancels, and a route that cancels a new one each time. */
export async function pendingCancels(databaseUrl: string, count: number): Promise<Route> {
  await withClient(databaseUrl, async (c) => {
    await c.query(
      `INSERT INTO orders (id, pet_id, quantity, status)
       SELECT g, g, 1, 'pending' FROM generate_series($1::bigint, $2::bigint) AS g`,
      [PENDING_FROM, PENDING_FROM + count - 1],
    );
    await c.query('VACUUM ANALYZE orders');
  });
  let next = PENDING_FROM;
  return {
    name: 'cancel of a pending order',
    next: () => ({ method: 'DELETE', path: `/v1/store/orders/${String(next++)}` }),
  };
}

/** Routes in turn, one request each. */
export const mixOf = (name: string, routes: Route[]): Route => ({
  name,
  next: (i) => routes[i % routes.length].next(Math.floor(i / routes.length)),
});

export interface OverloadResult {
  route: string;
  sustainedRate: number;
  unloaded: { goodput: number; p99Ms: number };
  overloaded: {
    rate: number;
    goodput: number;
    admittedP99Ms: number;
    shed: number;
    shedP99Ms: number;
    /** Answers neither 2xx nor 503 OVERLOADED, and connection errors, by status. */
    other: Record<string, number>;
  };
  rssGrowthBytes: number;
  recoveryMs: number;
}

/** A run's answers cut in windows of {@link RECOVERY}'s length, by their scheduled send. */
function windowsOf(run: LoadRun): Answer[][] {
  const windows: Answer[][] = Array.from(
    { length: Math.ceil(run.durationMs / RECOVERY.windowMs) },
    () => [],
  );
  for (const a of run.answers) {
    windows[Math.min(windows.length - 1, Math.floor(a.at / RECOVERY.windowMs))].push(a);
  }
  return windows.filter((answers) => answers.length > 0);
}

const servedShare = (answers: Answer[]): number => answers.filter(served).length / answers.length;

/** What the unloaded phase itself achieved, window by window: the bar of "back to unloaded". */
export interface UnloadedBar {
  /** The lowest share of 2xx answers in any of its windows. */
  servedShare: number;
  /** A window's p99 at most: twice the phase's p99 (or 5 ms more), or its worst window's. */
  p99Ms: number;
}

function unloadedBarOf(run: LoadRun): UnloadedBar {
  const windows = windowsOf(run);
  const p99Ms = p99Of(run.answers.filter(served));
  return {
    servedShare: Math.min(...windows.map(servedShare)),
    p99Ms: Math.max(2 * p99Ms, p99Ms + 5, ...windows.map((w) => p99Of(w.filter(served)))),
  };
}

/**
 * How long after the overload's end every window of the recovery load is served as the
 * unloaded phase was served: a share of 2xx answers and a p99 no worse than its worst window
 * (the same load at the same rate: a recovered instance's windows vary as much as its own).
 */
function recoveryMsOf(run: LoadRun, bar: UnloadedBar): number {
  let recoveredFrom = 0;
  for (const answers of windowsOf(run)) {
    const w = Math.floor(answers[0].at / RECOVERY.windowMs);
    const unloaded =
      servedShare(answers) >= bar.servedShare && p99Of(answers.filter(served)) <= bar.p99Ms;
    if (!unloaded) recoveredFrom = (w + 1) * RECOVERY.windowMs;
  }
  return recoveredFrom;
}

/** One route: sustained, unloaded, overloaded for `overloadMs`, and the recovery after. */
export async function measureOverload(
  target: { url: string; headers: Record<string, string>; pid: number },
  route: Route,
  overloadMs: number,
  log: (message: string) => void,
): Promise<OverloadResult> {
  const { url, headers, pid } = target;
  const driven = { url, headers, next: route.next };
  await closedLoop(driven, SUSTAINED.connections, SUSTAINED.warmupMs);
  const sustainedRate = goodputOf(
    await closedLoop(driven, SUSTAINED.connections, SUSTAINED.measureMs),
  );
  log(`${route.name}: sustains ${sustainedRate.toFixed(0)}/s; unloaded, then ×${OVERLOAD_FACTOR}…`);
  const unloadedRun = await openLoop(driven, sustainedRate, UNLOADED_MS);
  const unloadedP99 = p99Of(unloadedRun.answers.filter(served));
  const bar = unloadedBarOf(unloadedRun);

  const rssBefore = rssBytes(pid);
  const peak = watchPeakRss(pid, 100);
  const rate = OVERLOAD_FACTOR * sustainedRate;
  const [overloadRun, recoveryRun] = await Promise.all([
    openLoop(driven, rate, overloadMs),
    // The recovery load starts when the overload's schedule ends, its backlog still in flight.
    sleep(overloadMs).then(() => openLoop(driven, sustainedRate, RECOVERY.ms)),
  ]);
  const rssGrowthBytes = peak.stop() - rssBefore;

  const shed = overloadRun.answers.filter((a) => a.status === 503);
  const other: Record<string, number> = {};
  for (const a of overloadRun.answers) {
    if (!served(a) && a.status !== 503) other[a.status] = (other[a.status] ?? 0) + 1;
  }
  return {
    route: route.name,
    sustainedRate,
    unloaded: { goodput: goodputOf(unloadedRun), p99Ms: unloadedP99 },
    overloaded: {
      rate,
      goodput: goodputOf(overloadRun),
      admittedP99Ms: p99Of(overloadRun.answers.filter(served)),
      shed: shed.length,
      shedP99Ms: p99Of(shed),
      other,
    },
    rssGrowthBytes,
    recoveryMs: recoveryMsOf(recoveryRun, bar),
  };
}

const ms = (value: number): string => `${value.toFixed(value < 10 ? 1 : 0)} ms`;

/** The figures, unloaded beside overloaded, one line per route. */
export function overloadTable(results: OverloadResult[], overloadMs: number): string {
  const rows = results.map((r) => {
    const o = r.overloaded;
    const other = Object.entries(o.other).map(([status, n]) => `${String(n)} × ${status}`);
    return (
      `| ${r.route} | ${r.sustainedRate.toFixed(0)}/s | ${r.unloaded.goodput.toFixed(0)}/s, p99 ` +
      `${ms(r.unloaded.p99Ms)} | ${o.rate.toFixed(0)}/s | ${o.goodput.toFixed(0)}/s ` +
      `(${((100 * o.goodput) / r.sustainedRate).toFixed(0)} %) | ${ms(o.admittedP99Ms)} ` +
      `(${(o.admittedP99Ms / r.unloaded.p99Ms).toFixed(1)}×) | ${String(o.shed)}, p99 ` +
      `${ms(o.shedP99Ms)} | ${other.join(', ') || 'none'} | ` +
      `${(r.rssGrowthBytes / MB).toFixed(0)} MB | ${String(r.recoveryMs)} ms |`
    );
  });
  return [
    `Overload: each route sustained (closed loop, ${String(SUSTAINED.connections)} connections), ` +
      `unloaded (open loop at that rate), then ×${String(OVERLOAD_FACTOR)} for ` +
      `${String(overloadMs / 1000)} s (open loop), then at its rate again.`,
    '',
    '| route | sustained | unloaded | ×3 sent | served at ×3 | admitted p99 | 503 OVERLOADED | other answers | RSS growth | back to unloaded |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export function overloadChecks(results: OverloadResult[]): Check[] {
  const t = OVERLOAD_TARGETS;
  return results.flatMap((r) => {
    const o = r.overloaded;
    const others = Object.values(o.other).reduce((sum, n) => sum + n, 0);
    return [
      {
        name: `${r.route}: served at ×3 ÷ sustained`,
        target: `≥ ${t.goodput.toFixed(2)}`,
        actual: (o.goodput / r.sustainedRate).toFixed(2),
        pass: o.goodput >= t.goodput * r.sustainedRate,
      },
      {
        name: `${r.route}: admitted p99 at ×3 ÷ unloaded p99`,
        target: `≤ ${String(t.admittedP99)}`,
        actual: (o.admittedP99Ms / r.unloaded.p99Ms).toFixed(2),
        pass: o.admittedP99Ms <= t.admittedP99 * r.unloaded.p99Ms,
      },
      {
        name: `${r.route}: 503 p99`,
        target: `< ${String(t.shedP99Ms)} ms`,
        actual: ms(o.shedP99Ms),
        pass: o.shedP99Ms < t.shedP99Ms,
      },
      {
        name: `${r.route}: answers neither served nor 503, resets included`,
        target: '0',
        actual: String(others),
        pass: others === 0,
      },
      {
        name: `${r.route}: RSS growth`,
        target: `< ${String(t.rssGrowthBytes / MB)} MB`,
        actual: `${(r.rssGrowthBytes / MB).toFixed(0)} MB`,
        pass: r.rssGrowthBytes < t.rssGrowthBytes,
      },
      {
        name: `${r.route}: back to unloaded after`,
        target: `≤ ${String(t.recoveryMs)} ms`,
        actual: `${String(r.recoveryMs)} ms`,
        pass: r.recoveryMs <= t.recoveryMs,
      },
    ];
  });
}
