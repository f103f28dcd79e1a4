import { authSettings } from './auth.settings';
import { isTrusted, KEY_CACHE_MAX_AGE_MS } from './key-cache-trust';

/** KEY_CACHE_TTL_MS's default: 5 s. */
const { KEY_CACHE_TTL_MS } = authSettings.read({});

describe('isTrusted', () => {
  const lookedUpAt = 1_000_000;
  const entry = { lookedUpAt, epoch: 3 };
  /** The feed listening since before the lookup, in the same epoch, confirmed `ago` ms before `now`. */
  const up = (now: number, ago = 100) => ({ epoch: 3, listening: true, confirmedAt: now - ago });

  it('trusts an entry for 5 s after its lookup, whatever the feed', () => {
    const now = lookedUpAt + KEY_CACHE_TTL_MS - 1;
    for (const feed of [
      { epoch: 3, listening: false, confirmedAt: -Infinity },
      { epoch: 4, listening: true, confirmedAt: now },
      up(now),
    ]) {
      expect(isTrusted(entry, feed, now, KEY_CACHE_TTL_MS)).toBe(true);
    }
  });

  it('trusts it past 5 s, up to the long bound, while the feed has listened since and confirms', () => {
    for (const now of [lookedUpAt + KEY_CACHE_TTL_MS, lookedUpAt + KEY_CACHE_MAX_AGE_MS - 1]) {
      expect(isTrusted(entry, up(now), now, KEY_CACHE_TTL_MS)).toBe(true);
    }
    const tooOld = lookedUpAt + KEY_CACHE_MAX_AGE_MS;
    expect(isTrusted(entry, up(tooOld), tooOld, KEY_CACHE_TTL_MS)).toBe(false);
  });

  it('trusts it only 5 s when the feed is down', () => {
    const now = lookedUpAt + KEY_CACHE_TTL_MS;
    expect(isTrusted(entry, { ...up(now), listening: false }, now, KEY_CACHE_TTL_MS)).toBe(false);
  });

  it('trusts it only 5 s when the feed was lost since its lookup, even if it listens again', () => {
    const now = lookedUpAt + KEY_CACHE_TTL_MS;
    // Two epochs on: lost, then listening again. Notifications between the two were missed.
    expect(isTrusted(entry, { ...up(now), epoch: 5 }, now, KEY_CACHE_TTL_MS)).toBe(false);
  });

  it('trusts it only 5 s when the feed has not confirmed the last 5 s (a silent connection)', () => {
    const now = lookedUpAt + 60_000;
    expect(isTrusted(entry, up(now, KEY_CACHE_TTL_MS - 1), now, KEY_CACHE_TTL_MS)).toBe(true);
    expect(isTrusted(entry, up(now, KEY_CACHE_TTL_MS), now, KEY_CACHE_TTL_MS)).toBe(false);
  });

  it('trusts it for KEY_CACHE_TTL_MS as set, shorter than 5 s: after its lookup, and since the feed confirmed', () => {
    const { KEY_CACHE_TTL_MS: ttl } = authSettings.read({ KEY_CACHE_TTL_MS: '1000' });
    const down = { epoch: 3, listening: false, confirmedAt: -Infinity };
    expect(isTrusted(entry, down, lookedUpAt + ttl - 1, ttl)).toBe(true);
    expect(isTrusted(entry, down, lookedUpAt + ttl, ttl)).toBe(false);
    const now = lookedUpAt + 60_000;
    expect(isTrusted(entry, up(now, ttl - 1), now, ttl)).toBe(true);
    expect(isTrusted(entry, up(now, ttl), now, ttl)).toBe(false);
  });

  it('is never set longer than 5 s', () => {
    expect(authSettings.problems({ KEY_CACHE_TTL_MS: '5001' })).toEqual([
      'KEY_CACHE_TTL_MS must be an integer between 500 and 5000',
    ]);
  });
});
