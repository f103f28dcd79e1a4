/**
 * A value some parts have at once and others only later: the in-process rate limiter's counters,
 * a Redis lease and the key cache answer at once; a Redis round trip or a database lookup later.
 */
export type NowOrLater<T> = T | Promise<T>;

/**
 * `next(value)`: at once when `value` is already there, else once its promise resolves (a
 * rejection passes through, and so does an error `next` throws). The guard chain and the rate
 * limiter continue with it where `await` would do: an `async` step makes a promise and waits a
 * microtask turn even when its value is there, and on a cancel, whose answer needs nothing from
 * outside the process but its one statement, those steps cost a measurable share of the requests
 * per second (docs/performance.md). Everywhere else, `await`.
 */
export function whenReady<T, R>(
  value: NowOrLater<T>,
  next: (value: T) => NowOrLater<R>,
): NowOrLater<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
