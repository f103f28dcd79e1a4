import { retryAfterSeconds } from './errors.js';

/** How the client retries answers that say "later" (429, 503) and failed connections. */
export interface RetryOptions {
  /** Tries of one request in all, the first included: a whole number from 1 to 100 (default 3). */
  maxTries?: number;
  /**
   * The longest wait the client accepts (seconds, from 0 to 86400, default 60). An answer asking for longer (a
   * day's limit reached: hours) is returned at once, as an error carrying `retryAfter`.
   */
  maxWaitSeconds?: number;
}

export type Fetch = (request: Request) => Promise<Response>;

/**
 * What the client waits with and draws its jitter from: timers and `Math.random` unless a test
 * drives its own clock. `sleep` ends early, rejecting with the signal's reason, when it aborts.
 */
export interface Timing {
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  random: () => number;
}

export const realTiming: Timing = {
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const aborted = (): void => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', aborted);
        resolve();
      }, ms);
      signal.addEventListener('abort', aborted, { once: true });
    }),
  random: () => Math.random(),
};

export const DEFAULT_MAX_TRIES = 3;
export const MAX_TRIES = 100;
export const DEFAULT_MAX_WAIT_SECONDS = 60;

/**
 * Methods whose repetition changes nothing more: a 503 or a failed connection of anything else
 * (a POST, which might then be done twice) is never retried.
 */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** The wait before retry `retry` (1, 2 …) without a `Retry-After`: 1 s, then 2 s, 4 s … */
const backoffSeconds = (retry: number): number => 2 ** (retry - 1);

/**
 * A backoff in ms with equal jitter: half of it fixed, half drawn at random, so that clients
 * failed together do not come back together.
 */
const jittered = (seconds: number, random: () => number): number =>
  500 * seconds + 500 * seconds * random();

/**
 * The wait an answer asked for (seconds) in ms, plus up to a second drawn at random: never
 * earlier than asked (sending while refused can get a key banned), and not all at once.
 */
const askedMs = (seconds: number, random: () => number): number => 1000 * (seconds + random());

export interface Sending {
  /** Retries as {@link RetryOptions} say; `false`: none. */
  retry: RetryOptions | false | undefined;
  /** The longest a try may take, in ms, its answer's body included; none unless given. */
  timeoutMs?: number;
  timing?: Timing;
}

/**
 * `send`, with each try bounded by `timeoutMs`, retrying at most `maxTries` tries in all:
 * - an answer 429 (a refused request counted nothing, so any method is safe to send again), or
 *   503 of an idempotent method, after the answer's `Retry-After` (else the backoff), unless it
 *   asks for more than `maxWaitSeconds`: both the same way;
 * - a try that failed to get an answer (the network, or the try's timeout) of an idempotent
 *   method, after the backoff.
 * Any other answer, every other 4xx included, is returned as it is. An abort of the request's
 * own signal ends it at once, during a try or a wait, with the signal's reason.
 */
export function retrying(send: Fetch, { retry, timeoutMs, timing = realTiming }: Sending): Fetch {
  const maxTries = retry === false ? 1 : (retry?.maxTries ?? DEFAULT_MAX_TRIES);
  const maxWaitSeconds = (retry || {}).maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS;
  const bounded = (request: Request): Request =>
    timeoutMs === undefined
      ? request
      : new Request(request, {
          signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]),
        });
  return async (request) => {
    const idempotent = IDEMPOTENT.has(request.method);
    for (let tries = 1; ; tries++) {
      const last = tries >= maxTries;
      // A body can be sent once: each try but the last sends a copy.
      let response: Response;
      try {
        response = await send(bounded(last ? request : request.clone()));
      } catch (error) {
        const again = !last && idempotent && !request.signal.aborted;
        if (!again || backoffSeconds(tries) > maxWaitSeconds) throw error;
        await timing.sleep(jittered(backoffSeconds(tries), timing.random), request.signal);
        continue;
      }
      const retryable = response.status === 429 || (response.status === 503 && idempotent);
      if (last || !retryable) return response;
      const asked = retryAfterSeconds(response.headers.get('Retry-After'));
      if ((asked ?? backoffSeconds(tries)) > maxWaitSeconds) return response;
      await response.body?.cancel();
      const wait =
        asked === undefined
          ? jittered(backoffSeconds(tries), timing.random)
          : askedMs(asked, timing.random);
      await timing.sleep(wait, request.signal);
    }
  };
}
