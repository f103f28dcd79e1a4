import {
  closedLoop,
  goodputOf,
  openLoop,
  p99Of,
  served as isServed,
  type Answer,
  type LoadRun,
  type Shot,
} from '../support/open-loop';
import { sleep } from './stack';

/**
 * An overload through nginx, kept short for CI: the rate the stack sustains on one route (closed
 * loop, after a warm-up that also puts the key in both instances' caches), then `factor` times it,
 * open loop, then half the sustained rate, cut in windows, to see how soon every answer is
 * served again.
 */
export const OVERLOAD = {
  connections: 10,
  warmupMs: 2_000,
  sustainedMs: 4_000,
  factor: 3,
  overloadMs: 15_000,
  recoveryMs: 12_000,
  windowMs: 250,
} as const;

export interface OverloadRun {
  sustained: { rate: number; p99Ms: number; statuses: Record<string, number> };
  /** The open loop's rate: what it was asked to send a second, and what it sent. */
  offered: { rate: number; sent: number };
  overload: LoadRun;
  recovery: LoadRun;
}

/** How many times each value occurs. */
export function countBy(values: (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/** How many answers of each status (or connection error) a run had. */
export const statusesOf = (answers: Answer[]): Record<string, number> =>
  countBy(answers.map((a) => a.status));

/** What nginx's access log says of a request: the instances it tried, and what each answered. */
export interface NginxLine {
  status: number;
  /** Each instance tried, in turn, comma-separated; the upstream's name when none was live. */
  upstream: string;
  upstreamStatus: string;
}

/** nginx's access-log lines (docker/nginx.conf's `store_orders` format) logged from `from` on. */
export function nginxLinesSince(log: string, from: Date): NginxLine[] {
  const since = from.toISOString().slice(0, 19);
  return log.split('\n').flatMap((line) => {
    if (!line.startsWith('{"time"')) return [];
    const entry = JSON.parse(line) as {
      time: string;
      status: number;
      upstream: string;
      upstream_status: string;
    };
    if (entry.time.slice(0, 19) < since) return [];
    return [
      { status: entry.status, upstream: entry.upstream, upstreamStatus: entry.upstream_status },
    ];
  });
}

export async function overloadThrough(
  target: { url: string; headers: Record<string, string> },
  shot: Shot,
): Promise<OverloadRun> {
  const driven = { ...target, next: () => shot };
  await closedLoop(driven, OVERLOAD.connections, OVERLOAD.warmupMs);
  const steady = await closedLoop(driven, OVERLOAD.connections, OVERLOAD.sustainedMs);
  const served = steady.answers.filter(isServed);
  const sustainedRate = goodputOf(steady);
  const rate = Math.round(OVERLOAD.factor * sustainedRate);
  const [overload, recovery] = await Promise.all([
    openLoop(driven, rate, OVERLOAD.overloadMs),
    // From the end of the overload's schedule, its backlog still in flight.
    sleep(OVERLOAD.overloadMs).then(() => openLoop(driven, sustainedRate / 2, OVERLOAD.recoveryMs)),
  ]);
  return {
    sustained: {
      rate: sustainedRate,
      p99Ms: p99Of(served),
      statuses: statusesOf(steady.answers),
    },
    offered: { rate, sent: overload.sent },
    overload,
    recovery,
  };
}

/**
 * How long after the overload's end the stack answered every request again: the end of the last
 * window of the recovery load that had an answer not 2xx (0 when none had).
 */
export function recoveredAfterMs(recovery: LoadRun): number {
  const failed = recovery.answers.filter((a) => !isServed(a));
  if (failed.length === 0) return 0;
  const last = Math.max(...failed.map((a) => Math.floor(a.at / OVERLOAD.windowMs)));
  return (last + 1) * OVERLOAD.windowMs;
}

/** An error answer's `code`, or its body when that is not the service's JSON. */
export function codeOf(a: Answer): string {
  const body = a.error?.body ?? '';
  try {
    return String((JSON.parse(body) as { code?: unknown }).code);
  } catch {
    return body;
  }
}

/**
 * What a refusal looked like to the client, for the comparison of them all: its status, whether
 * its Retry-After was whole seconds, its body's fields and code (or the body itself when it
 * was not the service's JSON).
 */
export function refusalShape(a: Answer): string {
  const retryAfter = a.error?.retryAfter;
  const body = a.error?.body ?? '';
  let shape: unknown = body;
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    shape = {
      fields: Object.keys(parsed).sort(),
      code: parsed.code,
      status: parsed.status,
      message: typeof parsed.message === 'string' && parsed.message.length > 0,
    };
  } catch {
    // Not JSON: nginx's own page, shown as it is.
  }
  return JSON.stringify({
    status: a.status,
    retryAfter: retryAfter !== undefined && /^[1-9]\d*$/.test(retryAfter) ? 'seconds' : retryAfter,
    body: shape,
  });
}
