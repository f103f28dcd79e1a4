/**
 * How long a cached key may be used without asking the database whether it changed, when nothing
 * says that it did not: the bound on how long a revocation, ban, unban or expiry change takes to
 * reach every instance while the key changes feed is down ("within 5 seconds", docs/keys.md).
 */
export const KEY_CACHE_TTL_MS = 5_000;

/**
 * How long a cached key is used at most while the feed is up: changes to it arrive as
 * notifications and drop it at once, so this bound only limits what a lost notification could cost.
 */
export const KEY_CACHE_MAX_AGE_MS = 10 * 60_000;

/** What this instance knows of the key changes feed (`KeyChangesFeed`). Times: `performance.now()`. */
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
 * Always for {@link KEY_CACHE_TTL_MS} after its lookup. Beyond that, up to
 * {@link KEY_CACHE_MAX_AGE_MS}, only while the feed has listened without interruption since the
 * lookup started (same epoch, still listening), and has confirmed that it received every change
 * committed up to {@link KEY_CACHE_TTL_MS} ago: a change to the key would have dropped it from the
 * cache. So a change reaches this instance within {@link KEY_CACHE_TTL_MS} whatever the feed does
 * (down, reconnecting, or silently cut off), and within milliseconds while it is up.
 */
export function isTrusted(entry: CachedLookup, feed: ChangesFeedState, now: number): boolean {
  const age = now - entry.lookedUpAt;
  if (age < KEY_CACHE_TTL_MS) return true;
  return (
    age < KEY_CACHE_MAX_AGE_MS &&
    feed.listening &&
    entry.epoch === feed.epoch &&
    now - feed.confirmedAt < KEY_CACHE_TTL_MS
  );
}
