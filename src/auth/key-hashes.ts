import { ChangesFeedState, KEY_CACHE_MAX_AGE_MS } from './key-cache-trust';

/** A key's hash as the `api_keys` trigger announces it: anything else on the channel is not one. */
const KEY_HASH = /^[0-9a-f]{64}$/;

/**
 * Every hash is loaded again this often anyway: a key inserted with the trigger bypassed (never
 * announced) is known within it, as a change is used from the key cache (`isTrusted`), and hashes
 * of keys revoked meanwhile are dropped.
 */
export const REFRESH_INTERVAL_MS = KEY_CACHE_MAX_AGE_MS;

/** A load of every hash: when it started (`Clock.monotonic()`), and the feed then. */
interface Load {
  startedAt: number;
  epoch: number;
  listening: boolean;
}

interface Waiter {
  /** Satisfied once every key committed before this instant is in the set. */
  at: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The hashes of the keys in the database that are not revoked, in memory (its cost per key is in
 * docs/performance.md): whether a presented key can be a key at all, decided without asking the
 * database. It is a superset: an announced hash is added whatever the change was (a revocation,
 * a deletion), and dropped at the next load or when a lookup finds no key with it.
 *
 * Kept current by the key changes feed: loaded whole when the feed starts listening (so a change
 * missed while it was down is caught up), then every key issued, changed or deleted is announced
 * by the `api_keys` triggers. While the feed is listening without a break since the last load,
 * the set holds every key committed before the feed's last confirmation (its heartbeat, every
 * second); otherwise before the last load started.
 *
 * A hash that is not in the set may still be a key issued a moment ago whose announcement has not
 * arrived: {@link contains} waits until the set is current as of the request, so a key issued
 * before the request, by any process, is never refused.
 */
export class KnownKeyHashes {
  private hashes = new Set<string>();
  /** The last load that completed. */
  private loaded: Load | undefined;
  private loading: Promise<void> | undefined;
  /** Another load was asked for while one was under way: the feed began listening meanwhile. */
  private loadAgain = false;
  /** Hashes announced while a load is under way: its answer may predate them. */
  private announcedDuringLoad: Set<string> | undefined;
  private lastLoadStartedAt = -Infinity;
  private reloadTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private waiters: Waiter[] = [];

  /**
   * @param reloadIntervalMs least time between two loads that waiting requests ask for while the
   *   feed cannot keep the set current (down, or never up): a flood of made-up keys costs the
   *   database one load per interval at most, whatever its size. The key cache's KEY_CACHE_TTL_MS.
   */
  constructor(
    private readonly readHashes: () => Promise<string[]>,
    private readonly feed: ChangesFeedState,
    private readonly reloadIntervalMs: number,
    private readonly onLoadFailed: (error: unknown) => void,
    /** The key cache's clock (`Clock.monotonic()`). */
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.hashes.size;
  }

  /** Whether a key may have this hash: synchronous, from memory. */
  has(hash: string): boolean {
    return this.hashes.has(hash);
  }

  /**
   * Whether a key may have this hash, once the set holds every key committed before `at`: at once
   * when the hash is in the set or the set is current already; else after the feed's next
   * heartbeat (about a second), or the next load while the feed cannot keep the set current.
   * Rejects if that load fails (the database is unreachable).
   */
  async contains(hash: string, at: number): Promise<boolean> {
    if (this.hashes.has(hash)) return true;
    if (this.currentAsOf() >= at) return false;
    await new Promise<void>((resolve, reject) => {
      this.waiters.push({ at, resolve, reject });
      this.catchUp();
    });
    return this.hashes.has(hash);
  }

  /** The feed announced a change to this key (issued, changed or deleted): it may be valid. */
  announced(hash: string): void {
    if (!KEY_HASH.test(hash)) return;
    this.hashes.add(hash);
    this.announcedDuringLoad?.add(hash);
  }

  /** A lookup found a key with this hash. */
  found(hash: string): void {
    this.hashes.add(hash);
  }

  /** A lookup found no valid key with this hash, and no announcement of it can have been missed. */
  notFound(hash: string): void {
    this.hashes.delete(hash);
  }

  /** The feed listens (again): notifications may have been missed before, so load everything. */
  feedListening(): void {
    void this.load();
    this.settle();
  }

  /** The feed confirmed that every change committed before its heartbeat has arrived. */
  feedConfirmed(): void {
    this.settle();
  }

  /** The feed is down: waiting requests are served by loads until it returns. */
  feedLost(): void {
    if (this.waiters.length > 0) this.catchUp();
  }

  /** Loads every hash (at start, each time the feed listens again, and every 10 minutes). */
  load(): Promise<void> {
    if (this.loading) {
      this.loadAgain = true;
      return this.loading;
    }
    const load: Load = {
      startedAt: this.now(),
      epoch: this.feed.epoch,
      listening: this.feed.listening,
    };
    this.lastLoadStartedAt = load.startedAt;
    const announced = new Set<string>();
    this.announcedDuringLoad = announced;
    this.loading = this.readHashes()
      .then(
        (rows) => {
          const hashes = new Set(rows);
          for (const hash of announced) hashes.add(hash);
          this.hashes = hashes;
          this.loaded = load;
        },
        (error: unknown) => {
          this.onLoadFailed(error);
          this.failWaiters(error);
        },
      )
      .finally(() => {
        this.loading = undefined;
        this.announcedDuringLoad = undefined;
        this.scheduleRefresh();
        if (this.loadAgain) {
          this.loadAgain = false;
          void this.load();
        }
        this.settle();
      });
    return this.loading;
  }

  /** Stops the timers of the loads to come (at shutdown). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.reloadTimer);
    clearTimeout(this.refreshTimer);
    this.reloadTimer = undefined;
  }

  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    if (this.stopped) return;
    this.refreshTimer = setTimeout(() => void this.load(), REFRESH_INTERVAL_MS);
    this.refreshTimer.unref();
  }

  /** Every key committed before this instant (`Clock.monotonic()`) is in the set. */
  private currentAsOf(): number {
    const { loaded, feed } = this;
    if (!loaded) return -Infinity;
    return this.feedKeepsCurrent()
      ? Math.max(loaded.startedAt, feed.confirmedAt)
      : loaded.startedAt;
  }

  /** The feed has listened without a break since the last load started: nothing was missed. */
  private feedKeepsCurrent(): boolean {
    const { loaded, feed } = this;
    return (
      loaded !== undefined && loaded.listening && feed.listening && loaded.epoch === feed.epoch
    );
  }

  /** Lets the waiting requests that the set is now current for go on. */
  private settle(): void {
    if (this.waiters.length === 0) return;
    const current = this.currentAsOf();
    const ready = this.waiters.filter((w) => w.at <= current);
    if (ready.length > 0) this.waiters = this.waiters.filter((w) => w.at > current);
    for (const waiter of ready) waiter.resolve();
    if (this.waiters.length > 0) this.catchUp();
  }

  /**
   * Makes sure the waiting requests will be let go: by the feed's next heartbeat when it keeps the
   * set current, else by a load, at most one per `reloadIntervalMs`.
   */
  private catchUp(): void {
    if (this.loading || this.reloadTimer || this.feedKeepsCurrent()) return;
    const wait = this.lastLoadStartedAt + this.reloadIntervalMs - this.now();
    if (wait <= 0) {
      void this.load();
      return;
    }
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      if (this.waiters.length > 0) this.catchUp();
    }, wait);
    this.reloadTimer.unref();
  }

  private failWaiters(error: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }
}
