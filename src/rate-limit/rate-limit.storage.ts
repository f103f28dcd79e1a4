/** One rate-limit window of a request: its name, its limit and its length. */
export interface WindowSpec {
  name: string;
  limit: number;
  ttlMs: number;
}

/** A window's state after a request: used for the X-RateLimit-* headers. */
export interface WindowState {
  name: string;
  limit: number;
  /** Requests counted in the current window. */
  count: number;
  /** When the window's count returns to zero (ms since the epoch). */
  resetAtMs: number;
}

export type HitOutcome =
  /** Every window had room; the request counts in all of them. */
  | 'admitted'
  /** A window is full; nothing was counted but the rejection. */
  | 'rejected'
  /** Rejected, and this rejection is more than the ban threshold: ban now. */
  | 'ban'
  /** The tracker is banned in this storage; nothing was counted. */
  | 'banned';

export interface HitResult {
  outcome: HitOutcome;
  windows: WindowState[];
  /** For 'banned': when the ban ends (ms since the epoch). */
  bannedUntilMs?: number;
}

export interface BanPolicy {
  /** Rejections tolerated within the blocking window before a ban. */
  after: number;
  /**
   * Length of a ban recorded in this storage (anonymous clients); 0 when the caller records it
   * elsewhere (API keys: in the database, where `keys unban` can lift it).
   */
  storeForMs: number;
}

/**
 * Fixed-window counters, one per tracker and window, anchored at the tracker's first request in
 * the window. A request is admitted only if every window has room, and then counts in all of them;
 * a rejected request counts only as a rejection (toward a ban). Both steps are one atomic
 * operation per request.
 */
export interface RateLimitStorage {
  hit(tracker: string, windows: WindowSpec[], ban: BanPolicy): Promise<HitResult>;
  /** The windows' state without counting anything (for the headers of a banned request). */
  peek(tracker: string, windows: WindowSpec[]): Promise<WindowState[]>;
}

/**
 * The tracker of a valid key's rotation family. Keys' trackers are told apart from anonymous ones
 * (`ip:`, `lookup:`) by this prefix: a storage must never let anonymous traffic evict them.
 */
export function keyTracker(familyId: string): string {
  return `key:${familyId}`;
}

export function isKeyTracker(tracker: string): boolean {
  return tracker.startsWith('key:');
}

export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');
