import { LRUCache } from 'lru-cache';
import { WindowSpec, WindowState } from './rate-limit.storage';

/**
 * Leases of a tracker's budget, taken from the shared counters so that a busy key does not cost a
 * Redis round trip on every request.
 *
 * When a request is admitted by Redis and every window of its tracker still has plenty of room,
 * the same atomic step also counts a small block of further requests (the lease) against the
 * windows. This instance then admits up to that many requests of the tracker on its own, with no
 * round trip, for at most {@link LEASE_MS} (topped up in the background before it runs out, while
 * the tracker keeps sending and has room). The counters in Redis always include every leased
 * request, so instances together never admit more than a limit; a lease's unused requests are
 * handed back (when it lapses, or the process stops), so nothing is lost either.
 *
 * A lease is only granted where it is a small share of what remains (see LEASE_SHARE): keys with
 * modest limits (every plan but the large enterprise ones, and every anonymous client) are counted
 * one request at a time, exactly as before, across instances.
 */

/** Longest a lease is used before its unused requests are handed back. */
export const LEASE_MS = 1_000;
/** Most requests one lease covers. */
export const MAX_LEASE = 100;
/**
 * A lease is at most 1 / LEASE_SHARE of what remains in each window after the request, and none
 * is granted below LEASE_FLOOR remaining: the unused requests another instance may hold are then
 * at most 1% of what remains, while it holds them. (Decided in Redis, in the same atomic step.)
 */
export const LEASE_SHARE = 100;
export const LEASE_FLOOR = LEASE_SHARE * 10;

/** Requests a lapsed (or replaced) lease hands back to the windows it was taken from. */
export interface LeaseReturn {
  tracker: string;
  unused: number;
  /** The windows, with their reset as the lease knew it: a window that reset since gets nothing. */
  windows: WindowState[];
}

interface Lease {
  left: number;
  /** Requests of the last grant: below half of it left, a top-up is asked for. */
  size: number;
  /** The windows as counted in Redis when granted: every leased request included. */
  windows: WindowState[];
  expiresAtMs: number;
}

/**
 * Whether the lease's windows are these specs' (a window's length follows from its name; its
 * limit changes with a key's plan). Compared in place: this is on every leased request.
 */
const sameLimits = (states: WindowState[], specs: WindowSpec[]): boolean =>
  states.length === specs.length &&
  states.every((w, i) => w.name === specs[i].name && w.limit === specs[i].limit);

/** Slack on a window's reset when telling it from the next one (clocks, time in flight). */
export const RESET_TOLERANCE_MS = 1_000;

/** Whether two states are of the same windows (the same resets), not of a window and its next. */
const sameWindows = (a: WindowState[], b: WindowState[]): boolean =>
  a.length === b.length &&
  a.every((w, i) => Math.abs(w.resetAtMs - b[i].resetAtMs) <= RESET_TOLERANCE_MS);

/** Trackers whose last request this instance remembers, to tell a busy one from an idle one. */
const MAX_RECENT_TRACKERS = 10_000;

/** This instance's leases, by tracker. */
export class BudgetLeases {
  private readonly leases = new Map<string, Lease>();
  /** When each tracker last went to Redis from here (ms since the epoch). */
  private readonly lastAsked = new LRUCache<string, number>({ max: MAX_RECENT_TRACKERS });
  /** Trackers with a lease asked for and not answered yet: one at a time is enough. */
  private readonly asking = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Admits one request from the tracker's lease, if it holds a live one for these windows: the
   * windows' state as it would be had the request been counted in Redis. Else `undefined`, and
   * a lease that can no longer be used is given up (its return, if any, through `onLapsed`).
   */
  take(
    tracker: string,
    windows: WindowSpec[],
    onLapsed: (back: LeaseReturn) => void,
  ): WindowState[] | undefined {
    const lease = this.leases.get(tracker);
    if (!lease) return undefined;
    if (lease.left > 0 && this.now() < lease.expiresAtMs && sameLimits(lease.windows, windows)) {
      lease.left--;
      return lease.windows.map((w) => ({ ...w, count: w.count - lease.left }));
    }
    this.leases.delete(tracker);
    if (lease.left > 0) onLapsed({ tracker, unused: lease.left, windows: lease.windows });
    return undefined;
  }

  /**
   * Whether to ask for a lease with this request: only for a tracker that went to Redis from here
   * within the last lease period. An idle key's lease would mostly be handed back unused, a second
   * round trip for nothing.
   */
  wants(tracker: string): boolean {
    const now = this.now();
    const last = this.lastAsked.get(tracker);
    this.lastAsked.set(tracker, now);
    if (last === undefined || now - last >= LEASE_MS || this.asking.has(tracker)) return false;
    this.asking.add(tracker);
    return true;
  }

  /**
   * Whether to top the tracker's lease up now, in the background: it is down to half of its last
   * grant, and no lease is asked for already. Under steady load the lease is refilled before it
   * runs out, so requests keep being admitted here, none waiting on Redis.
   */
  wantsTopUp(tracker: string): boolean {
    const lease = this.leases.get(tracker);
    if (!lease || lease.left * 2 > lease.size || this.asking.has(tracker)) return false;
    this.asking.add(tracker);
    return true;
  }

  /**
   * Records the answer to a lease asked for (`wants`, `wantsTopUp`): `counted` as Redis counted
   * the windows, the `granted` requests included (0 when none was granted, or Redis did not
   * answer). Added to a lease still held of the same windows; a lease of other windows (they
   * have reset since) or other limits is replaced, and handed back through `onReplaced`.
   */
  grant(
    tracker: string,
    windows: WindowSpec[],
    counted: WindowState[],
    granted: number,
    onReplaced: (back: LeaseReturn) => void,
  ): void {
    this.asking.delete(tracker);
    if (granted <= 0) return;
    const expiresAtMs = Math.min(this.now() + LEASE_MS, ...counted.map((w) => w.resetAtMs));
    const held = this.leases.get(tracker);
    if (held && sameLimits(held.windows, windows) && sameWindows(held.windows, counted)) {
      // Redis' counts include the requests still held here: the next one is counted after them.
      Object.assign(held, {
        left: held.left + granted,
        size: granted,
        windows: counted,
        expiresAtMs,
      });
      return;
    }
    if (held && held.left > 0) onReplaced({ tracker, unused: held.left, windows: held.windows });
    this.leases.set(tracker, {
      left: granted,
      size: granted,
      windows: counted,
      expiresAtMs,
    });
  }

  /** Gives up every lease that has lapsed (or every lease, with `all`): what to hand back. */
  release(all = false): LeaseReturn[] {
    const now = this.now();
    const back: LeaseReturn[] = [];
    for (const [tracker, lease] of this.leases) {
      if (!all && lease.expiresAtMs > now) continue;
      this.leases.delete(tracker);
      if (lease.left > 0) back.push({ tracker, unused: lease.left, windows: lease.windows });
    }
    return back;
  }
}
