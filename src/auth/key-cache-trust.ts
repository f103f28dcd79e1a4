/**
 * How long a cached key is used at most while the feed is up: changes to it arrive as
 * notifications and drop it at once, so this bound only limits what a lost notification could cost.
 */
export const KEY_CACHE_MAX_AGE_MS = 10 * 60_000;

/** What this instance knows of the key changes feed (`KeyChangesFeed`). Times: `Clock.monotonic()`. */
export interface ChangesFeedState {
  /** Changes at every connect and every loss: notifications may have been missed between two. */
  epoch: number;
  /** Listening now. */
  listening: boolean;
  /**
   * Every change committed before this instant has been received: when the last heartbeat that
   * came back was sent (or when the feed began listening).
   */
  confirmedAt: number;
}

/** A cached key's provenance. */
export interface CachedLookup {
  /** When its lookup started (the database read it then or later). */
  lookedUpAt: number;
  /** The feed's epoch when its lookup started. */
  epoch: number;
}

/**
 * Whether a cached key may be used at `now` without asking the database again.
 *
 * Always for `ttlMs` (KEY_CACHE_TTL_MS) after its lookup. Beyond that, up to
 * {@link KEY_CACHE_MAX_AGE_MS}, only while the feed has listened without interruption since the
 * lookup started (same epoch, still listening), and has confirmed that it received every change
 * committed up to `ttlMs` ago: a change to the key would have dropped it from the cache. So a
 * change reaches this instance within `ttlMs` whatever the feed does (down, reconnecting, or
 * silently cut off), and within milliseconds while it is up.
 */
export function isTrusted(
  entry: CachedLookup,
  feed: ChangesFeedState,
  now: number,
  ttlMs: number,
): boolean {
  const age = now - entry.lookedUpAt;
  if (age < ttlMs) return true;
  return (
    age < KEY_CACHE_MAX_AGE_MS &&
    feed.listening &&
    entry.epoch === feed.epoch &&
    now - feed.confirmedAt < ttlMs
  );
}
