import { retryAfterSeconds } from './errors.js';

/** How the client retries answers that say "later": 429, and 503 where a retry is safe. */
export interface RetryOptions {
  /** Tries of one request in all, the first included (default 3). 1 never retries. */
  maxTries?: number;
  /**
   * The longest wait the client accepts (seconds, default 60). An answer asking for longer (a
   * day's limit reached: hours) is returned at once, as an error carrying `retryAfter`.
   */
  maxWaitSeconds?: number;
}

export type Fetch = (request: Request) => Promise<Response>;

/** Methods whose retry cannot do a thing twice: a 503 of anything else is never retried. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Without a `Retry-After`: 1 s, then 2 s, 4 s … */
const backoffSeconds = (retry: number): number => 2 ** retry;

const sleep = (seconds: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/**
 * `send`, retrying an answer 429 (a refused request counted nothing, so any method is safe to
 * send again) and 503 of an idempotent method, after the answer's `Retry-After`, at most
 * `maxTries` tries. Any other answer, every other 4xx included, is returned as it is.
 */
export function retrying(send: Fetch, options: RetryOptions | false | undefined): Fetch {
  if (options === false) return send;
  const maxTries = options?.maxTries ?? 3;
  const maxWaitSeconds = options?.maxWaitSeconds ?? 60;
  return async (request) => {
    for (let tries = 1; ; tries++) {
      const last = tries >= maxTries;
      // A body can be sent once: each try but the last sends a copy.
      const response = await send(last ? request : request.clone());
      const retryable =
        response.status === 429 || (response.status === 503 && IDEMPOTENT.has(request.method));
      if (last || !retryable) return response;
      const wait =
        retryAfterSeconds(response.headers.get('Retry-After')) ?? backoffSeconds(tries - 1);
      if (wait > maxWaitSeconds) return response;
      await response.body?.cancel();
      await sleep(wait);
    }
  };
}
