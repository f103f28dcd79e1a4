import { isTrusted, KEY_CACHE_MAX_AGE_MS, KEY_CACHE_TTL_MS } from './key-cache-trust';

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
      expect(isTrusted(entry, feed, now)).toBe(true);
    }
  });

  it('trusts it past 5 s, up to the long bound, while the feed has listened since and confirms', () => {
    for (const now of [lookedUpAt + KEY_CACHE_TTL_MS, lookedUpAt + KEY_CACHE_MAX_AGE_MS - 1]) {
      expect(isTrusted(entry, up(now), now)).toBe(true);
    }
    const tooOld = lookedUpAt + KEY_CACHE_MAX_AGE_MS;
    expect(isTrusted(entry, up(tooOld), tooOld)).toBe(false);
  });

  it('trusts it only 5 s when the feed is down', () => {
    const now = lookedUpAt + KEY_CACHE_TTL_MS;
    expect(isTrusted(entry, { ...up(now), listening: false }, now)).toBe(false);
  });

  it('trusts it only 5 s when the feed was lost since its lookup, even if it listens again', () => {
    const now = lookedUpAt + KEY_CACHE_TTL_MS;
    // Two epochs on: lost, then listening again. Notifications between the two were missed.
    expect(isTrusted(entry, { ...up(now), epoch: 5 }, now)).toBe(false);
  });

  it('trusts it only 5 s when the feed has not confirmed the last 5 s (a silent connection)', () => {
    const now = lookedUpAt + 60_000;
    expect(isTrusted(entry, up(now, KEY_CACHE_TTL_MS - 1), now)).toBe(true);
    expect(isTrusted(entry, up(now, KEY_CACHE_TTL_MS), now)).toBe(false);
  });
});
